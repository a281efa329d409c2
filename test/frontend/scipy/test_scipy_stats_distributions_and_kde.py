"""mjax.scipy.stats beyond the first distributions: betabinom, gennorm, gumbel_l, gumbel_r,
multinomial, nbinom, pareto, truncnorm, vonmises, wrapcauchy, and mode, rankdata, sem and
gaussian_kde. Values are checked against scipy.stats; where JAX 0.10.2 differs from scipy
(edge cases, nan policies, a keyed resample) against the jax oracle."""
import math

import numpy as np
import pytest
import scipy.stats as sps

import jax
import mjax
from frontend_util import ON_TPU, x64
from mjax.scipy import stats as ms

js = jax.scipy.stats
RNG = np.random.default_rng(7)
X = RNG.uniform(-3, 3, 7)
POS = RNG.uniform(0.3, 3, 7)
UNIT = RNG.uniform(0.03, 0.97, 7)
COUNTS = np.array([0., 1, 2, 3, 5, 8, 13])


def _f32(*args):
    return tuple(np.asarray(a, np.float32) if np.ndim(a) else a for a in args)


def _reference(dist, fn, *args):
    """scipy.stats' float64 value; on a TPU JAX's on the chip (its exp, log and lgamma are
    not the host's: JAX's float32 program there is the one to match)."""
    if ON_TPU:
        return getattr(getattr(js, dist), fn)(*args)
    return getattr(getattr(sps, dist), fn)(*[np.asarray(a, np.float64) for a in args])


def _assert_close(got, want, rtol=2e-4, atol=2e-6, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


# (mjax "module.function", scipy callable, arguments): the interior of each distribution.
AGAINST_SCIPY = [
    ("betabinom.logpmf", sps.betabinom.logpmf, (COUNTS, 13., POS, POS[::-1])),
    ("betabinom.pmf", sps.betabinom.pmf, (COUNTS + 1, 15., 2.5, 0.7, 1.)),
    ("gennorm.logpdf", sps.gennorm.logpdf, (X, POS)),
    ("gennorm.pdf", sps.gennorm.pdf, (X, 1.5)),
    ("gennorm.cdf", sps.gennorm.cdf, (X, POS)),
    ("nbinom.logpmf", sps.nbinom.logpmf, (COUNTS, POS * 2, UNIT)),
    ("nbinom.pmf", sps.nbinom.pmf, (COUNTS + 2, 3.5, 0.4, 2.)),
    ("pareto.ppf", sps.pareto.ppf, (UNIT, POS, 0.5, 2.)),
    ("gumbel_l.ppf", sps.gumbel_l.ppf, (UNIT, 0.5, 2.)),
    ("gumbel_r.ppf", sps.gumbel_r.ppf, (UNIT, -1., 0.5)),
    ("vonmises.logpdf", sps.vonmises.logpdf, (X, POS)),
    ("vonmises.pdf", sps.vonmises.pdf, (X, 40.)),
    ("wrapcauchy.logpdf", sps.wrapcauchy.logpdf, (X + 3.1, UNIT)),
    ("wrapcauchy.pdf", sps.wrapcauchy.pdf, (X + 3.1, 0.3)),
] + [(f"{d}.{f}", getattr(getattr(sps, d), f), args)
     for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
     for d, args in (("gumbel_l", (X, 0.3, POS)), ("gumbel_r", (X * 3, -0.5, 2.)),
                     ("pareto", (POS + 1.2, POS, 0.2, 1.)),
                     ("truncnorm", (X / 2, -1.2, POS, 0.1, 0.8)))]


def test_distributions_match_scipy():
    for name, ref, args in AGAINST_SCIPY:
        dist, fn = name.split(".")
        got = getattr(getattr(ms, dist), fn)(*_f32(*args))
        assert got.dtype == np.float32, name
        _assert_close(got, ref(*args), rtol=5e-4, atol=1e-5, what=name)


def test_truncnorm_tails_match_scipy():
    # Far in either tail the normalizer and the cdf need the tail-aware formulas (float32
    # keeps its digits there; the length-7 points share the compiled ops of the tests above).
    for a, b in ((-30., -25.), (8., 9.5), (-2., 40.), (-np.inf, -6.), (5., np.inf)):
        x = np.linspace(a if np.isfinite(a) else b - 2, b if np.isfinite(b) else a + 2, 7)
        for fn in ("logpdf", "logcdf"):
            got = getattr(ms.truncnorm, fn)(x.astype(np.float32), a, b)
            _assert_close(got, getattr(sps.truncnorm, fn)(x.astype(np.float32), a, b),
                          rtol=2e-5, atol=1e-4, what=f"truncnorm.{fn} on [{a}, {b}]")


def test_multinomial_matches_scipy_and_requires_counts():
    p = UNIT / UNIT.sum()
    for x in ([1, 2, 3, 0, 0, 2, 1], [9, 0, 0, 0, 0, 0, 0], [0, 0, 1, 1, 2, 2, 3]):
        x = np.array(x)
        got = ms.multinomial.logpmf(x, 9, p.astype(np.float32))
        _assert_close(got, sps.multinomial.logpmf(x, 9, p), what=str(x))
        _assert_close(ms.multinomial.pmf(x, 9, p.astype(np.float32)),
                      sps.multinomial.pmf(x, 9, p), rtol=1e-4)
    # counts that do not sum to n have no mass
    assert ms.multinomial.logpmf(x, 8, p.astype(np.float32)) == -np.inf
    with pytest.raises(ValueError):
        ms.multinomial.logpmf(x.astype(np.float32), 9, p)
    # JAX 0.10.2 checks the total of all counts in a batch against n (not scipy's
    # per-vector check): mjax follows it, so a batch of valid vectors is -inf.
    x = np.stack([x, x[::-1]])
    p = p.astype(np.float32)
    for n in (9, 18):
        _assert_close(ms.multinomial.logpmf(x, n, p), js.multinomial.logpmf(x, n, p))


# Edge grids: out of support, bad parameters, infinities and nans, compared with the
# jax oracle (scipy's conventions differ in places, e.g. nan vs -inf for bad shapes; the
# first three, where the two agree, with scipy). Every grid is cycled to one length so that
# the compiled elementwise ops are shared between the functions.
_EDGE_X = [-np.inf, -40., -1., 0., 0.5, 1., 2.5, 7., 40., np.inf, np.nan]
_SCALES = [-1., 0., 0.5, 2., np.inf, np.nan]
_PROBS = [-0.1, 0., 0.3, 1., 1.5, np.nan]
_COUNT_EDGES = [-1., 0., 1., 2.5, 5., 6., np.nan]
EDGES = [
    ("gumbel_l.logpdf", [_EDGE_X, [0., 1.5], _SCALES]),
    ("gumbel_l.logcdf", [_EDGE_X, [0., 1.5], _SCALES]),
    ("gumbel_r.logsf", [_EDGE_X, [0., 1.5], _SCALES]),
    ("gumbel_l.ppf", [_PROBS, [0., 1.], _SCALES]),
    ("gumbel_r.ppf", [_PROBS, [0., 1.], _SCALES]),
    ("pareto.logpdf", [_EDGE_X, [-1., 0., 2., np.inf], [0., -1.], _SCALES]),
    ("pareto.cdf", [_EDGE_X, [-1., 0., 2., np.inf], [0., -1.], _SCALES]),
    ("pareto.ppf", [_PROBS, [-1., 0., 2.], [0., 1.], _SCALES]),
    ("truncnorm.logcdf", [_EDGE_X, [-np.inf, -1., 0.5, 10.], [-10., 1., 2., np.inf], [0., 1.],
                          [-1., 0.5]]),
    ("gennorm.logpdf", [_EDGE_X, [-1., 0., 0.5, 2., np.inf, np.nan]]),
    ("vonmises.logpdf", [_EDGE_X, [-1., 0., 1e-3, 2., 100., np.inf, np.nan]]),
    ("wrapcauchy.logpdf", [_EDGE_X + [2 * math.pi, 6.3], [-0.5, 0., 0.5, 1., np.nan]]),
    ("betabinom.logpmf", [_COUNT_EDGES, [-1., 0., 5.], [0., 0.5, 2.], [0., 3.], [0., 1.]]),
    ("nbinom.logpmf", [_COUNT_EDGES, [-1., 0., 3.], _PROBS, [0., 1.]])]


def test_edge_cases_follow_jax():
    grids = [[np.resize(g.ravel(), 768)
              for g in np.meshgrid(*[np.float32(a) for a in axes], indexing="ij")]
             for _, axes in EDGES]
    fns = [name.split(".") for name, _ in EDGES]
    # The jax oracle as one jitted program (its values equal JAX's eager ones here; not for
    # gumbel_l.logpdf, where XLA folds inf - exp(inf) to inf under jit: scipy takes those).
    jax_fns = [getattr(getattr(js, d), f) for d, f in fns[3:]]
    oracle = jax.jit(lambda gs: [f(*g) for f, g in zip(jax_fns, gs)])(grids[3:])
    with np.errstate(all="ignore"):
        oracle = [getattr(getattr(sps, d), f)(*[g.astype(np.float64) for g in grid])
                  for (d, f), grid in zip(fns[:3], grids[:3])] + oracle
    for (dist, fn), grid, want in zip(fns, grids, oracle):
        got = np.asarray(getattr(getattr(ms, dist), fn)(*grid))
        want = np.asarray(want)
        same = np.isclose(got, want, rtol=2e-4, atol=1e-5, equal_nan=True) | (got == want)
        bad = np.nonzero(~same)[0]
        assert not len(bad), (f"{dist}.{fn}", [([g[i] for g in grid], got[i], want[i])
                                               for i in bad[:4]])


def test_support_edges():
    # The conventions, spelled out on the functions the grid above leaves to exp().
    x = np.float32([-3., -0.1, 0.5, 1.5, 3., 7., np.nan])
    inside = np.array([False, False, False, True, True, True, False])
    np.testing.assert_array_equal(ms.pareto.pdf(x, 2.) > 0, inside)
    np.testing.assert_array_equal(ms.pareto.sf(x, 2.) == 1, x < 1)
    np.testing.assert_array_equal(ms.truncnorm.pdf(x, -0.5, 2.) > 0, (x >= -0.5) & (x <= 2))
    np.testing.assert_array_equal(np.asarray(ms.truncnorm.sf(x, -0.5, 2.))[[0, 4, 5]], [1, 0, 0])
    np.testing.assert_array_equal(ms.wrapcauchy.pdf(x, 0.5) > 0, (x >= 0) & (x < 6.3))
    np.testing.assert_array_equal(ms.nbinom.pmf(x, 3., 0.4) > 0, x >= 0)
    np.testing.assert_array_equal(ms.betabinom.pmf(x, 5., 2., 3.) > 0, (x >= 0) & (x < 6))
    np.testing.assert_array_equal(np.asarray(ms.gennorm.cdf(x * np.inf, 1.5))[[0, 2]], [0, 1])
    kappa = np.float32([-1., 0., 0.5, 2., 1e4, np.inf, np.nan])
    np.testing.assert_array_equal(np.isnan(ms.vonmises.pdf(1., kappa)),
                                  [True, True, False, False, False, True, True])
    np.testing.assert_array_equal(np.isnan(ms.gumbel_r.sf(1., 0., kappa)),
                                  [True, True, False, False, False, False, True])


def test_dtypes_and_int_inputs():
    # Integers and Python scalars promote as JAX does: to the default float, weakly typed
    # unless JAX's version commits the dtype (truncnorm; nbinom for an array k).
    calls = [("gumbel_r", "logpdf", (1,)), ("pareto", "logpdf", (np.int32(3), 2)),
             ("nbinom", "logpmf", (np.arange(4), 3, 0.5)), ("nbinom", "pmf", (2, 3, 0.5)),
             ("gennorm", "cdf", (1, 2)), ("truncnorm", "logpdf", (0, -1, 2)),
             ("pareto", "ppf", (np.float16(0.5), 2.)), ("vonmises", "pdf", (np.float32(1.), 2))]
    for dist, fn, args in calls:
        got = mjax.eval_shape(getattr(getattr(ms, dist), fn), *args)
        want = jax.eval_shape(getattr(getattr(js, dist), fn), *args)
        assert (got.shape, got.dtype, got.weak_type) == (want.shape, want.dtype,
                                                         want.weak_type), (dist, fn)
    for dist, fn, args in calls[:3]:
        got = getattr(getattr(ms, dist), fn)(*args)
        _assert_close(got, _reference(dist, fn, *args), rtol=1e-5, what=f"{dist}.{fn}")


def test_broadcasting():
    x = np.linspace(-2, 4, 5, dtype=np.float32)[:, None]
    scale = np.float32([0.5, 1., 3.])
    got = ms.gumbel_r.logcdf(x, 0.25, scale)
    assert got.shape == (5, 3)
    _assert_close(got, _reference("gumbel_r", "logcdf", x, 0.25, scale), rtol=1e-4)
    b, scale = np.float32([[1.], [2.5]]), np.float32([1., 2., 3.])
    got = ms.pareto.logsf(np.float32(3.5), b, 0.5, scale)
    assert got.shape == (2, 3)
    _assert_close(got, _reference("pareto", "logsf", np.float32(3.5), b, 0.5, scale),
                  rtol=1e-4)
    k = np.arange(4.)[:, None, None]
    got = ms.nbinom.logpmf(k, POS[:2, None], UNIT[:3])
    assert got.shape == (4, 2, 3)
    _assert_close(got, _reference("nbinom", "logpmf", k, POS[:2, None], UNIT[:3]), rtol=1e-4)


def test_jit_and_vmap():
    f = mjax.jit(lambda x, k: ms.vonmises.logpdf(x, k) + ms.gennorm.logpdf(x, k))
    x, k = _f32(X, POS)
    _assert_close(f(x, k), sps.vonmises.logpdf(X, POS) + sps.gennorm.logpdf(X, POS))
    g = mjax.vmap(lambda x, a: ms.truncnorm.logpdf(x, a, 2.))
    _assert_close(g(x / 4, -k), sps.truncnorm.logpdf(X / 4, -POS, 2.), rtol=1e-4)
    h = mjax.jit(ms.pareto.ppf)
    _assert_close(h(np.float32(UNIT), 2.5), sps.pareto.ppf(UNIT, 2.5), rtol=1e-4)


# (function, arguments, which argument to differentiate) for the finite-difference check.
GRADS = [(ms.gumbel_l.logpdf, (X, 0.3, 1.7), 0), (ms.gumbel_l.logpdf, (X, 0.3, 1.7), 2),
         (ms.pareto.logpdf, (POS + 1.5, 2.5, 0., 1.2), 1),
         (ms.truncnorm.logpdf, (X / 3, -1.5, 1.2), 1), (ms.vonmises.logpdf, (X, POS), 1)]


def test_grad_matches_finite_differences():
    # mjax's gradient (float32, under jit) against central differences of scipy's float64
    # function.
    for fn, args, argnum in GRADS:
        ref = getattr(getattr(sps, fn.__module__.rsplit(".", 1)[1]), fn.__name__)
        total = lambda *a: mjax.numpy.sum(fn(*a))  # noqa: E731
        got = mjax.jit(mjax.grad(total, argnum))(*_f32(*args))
        eps = 1e-6
        up, down = list(args), list(args)
        up[argnum], down[argnum] = args[argnum] + eps, args[argnum] - eps
        want = (ref(*up) - ref(*down)) / (2 * eps)
        if not np.ndim(args[argnum]):   # a scalar parameter: d/dp of the sum
            want = np.sum(want)
        _assert_close(got, want, rtol=2e-3, atol=1e-4, what=f"{fn.__module__}:{argnum}")


# ---- mode, rankdata, sem ---------------------------------------------------------------

def test_mode_matches_scipy():
    a = RNG.integers(0, 4, size=(6, 5))
    for axis, keepdims, jit in ((0, False, False), (-1, True, True), (None, False, False)):
        fn = mjax.jit(ms.mode, static_argnames=("axis", "keepdims")) if jit else ms.mode
        got = fn(a, axis=axis, keepdims=keepdims)
        want = sps.mode(a, axis=axis, keepdims=keepdims)
        assert isinstance(got, tuple) and got._fields == ("mode", "count")
        np.testing.assert_array_equal(got.mode, want.mode)
        np.testing.assert_array_equal(got.count, want.count)
    b = np.float32([2.5, -1., 2.5, 7., -1.])   # a tie goes to the smaller value
    assert ms.mode(b).mode == -1 and ms.mode(b).count == 2


def test_mode_follows_jax_on_nans_scalars_and_empty():
    cases = [(np.float32([[np.nan, 1., np.nan, 1.], [1., np.nan, np.nan, 2.]]), 1, False),
             (np.zeros((0, 3), np.float32), 0, True), (3., 0, True)]
    for a, axis, keepdims in cases:
        got = ms.mode(a, axis=axis, keepdims=keepdims)
        want = js.mode(a, axis=axis, keepdims=keepdims)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype, (a, g, w)
            assert g.weak_type == w.weak_type, (a, g, w)
            np.testing.assert_array_equal(g, w)


def test_nan_policies_and_bad_arguments():
    a = np.float32([1., 2.])
    for fn in (ms.mode, lambda x, nan_policy: ms.rankdata(x, nan_policy=nan_policy)):
        for policy, error in (("omit", NotImplementedError), ("raise", NotImplementedError),
                              ("foo", ValueError)):
            with pytest.raises(error):
                fn(a, nan_policy=policy)
    with pytest.raises(ValueError):
        ms.sem(a, nan_policy="raise")
    with pytest.raises(ValueError):
        ms.rankdata(a, "foo")
    with pytest.raises(ValueError):
        ms.mode(np.zeros((2, 3)), axis=2)
    for fn in (ms.mode, ms.rankdata, ms.sem):
        with pytest.raises(TypeError):
            fn([1., 2.])


def test_rankdata_matches_scipy():
    a = RNG.integers(0, 5, size=(4, 7)).astype(np.float32)
    for method, axis in (("average", None), ("min", 1), ("max", 1), ("dense", 1),
                         ("ordinal", 1)):
        got = ms.rankdata(a, method, axis=axis)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, sps.rankdata(a, method, axis=axis),
                                      err_msg=f"{method} axis={axis}")
    # A slice with a nan is all nan (scipy's 'propagate').
    b = a.copy()
    b[1, 3] = np.nan
    np.testing.assert_array_equal(ms.rankdata(b, axis=1), sps.rankdata(b, axis=1))
    got = mjax.jit(lambda x: ms.rankdata(x, "max", axis=0))(a)
    np.testing.assert_array_equal(got, sps.rankdata(a, "max", axis=0))


def test_rankdata_follows_jax_dtypes_and_shapes():
    for a, method in ((np.array([3, 1, 1]), "min"), (np.array(5.), "average"),
                      (np.float32([]), "dense")):
        got, want = ms.rankdata(a, method), js.rankdata(a, method)
        assert got.shape == want.shape and got.dtype == want.dtype, (a, method)
        np.testing.assert_array_equal(got, want)
    with x64():
        assert mjax.eval_shape(ms.rankdata, np.float32([2., 1.])).dtype == np.float64


def test_sem_matches_scipy():
    a = RNG.normal(size=(5, 4))
    a32 = a.astype(np.float32)
    for axis in (0, 1, None):
        for ddof in (0, 1):
            got = ms.sem(a32, axis=axis, ddof=ddof)
            _assert_close(got, sps.sem(a, axis=axis, ddof=ddof), rtol=1e-5,
                          what=f"axis={axis} ddof={ddof}")
    _assert_close(ms.sem(a32, axis=1, keepdims=True), sps.sem(a, axis=1, keepdims=True))
    b = a.copy()
    b[0, 1] = b[3, 2] = np.nan
    b32 = b.astype(np.float32)
    _assert_close(ms.sem(b32, axis=0), sps.sem(b, axis=0))
    _assert_close(ms.sem(b32, axis=0, nan_policy="omit"), sps.sem(b, axis=0, nan_policy="omit"),
                  rtol=1e-5)
    assert ms.sem(np.arange(6)).dtype == np.float32
    # the gradient, against finite differences of scipy's
    x = np.array([1., 2., 4., 7.])
    got = mjax.grad(lambda v: ms.sem(v))(x.astype(np.float32))
    eps = 1e-6
    want = [(sps.sem(x + eps * e) - sps.sem(x - eps * e)) / (2 * eps) for e in np.eye(4)]
    _assert_close(got, want, rtol=1e-4)


# ---- gaussian_kde ------------------------------------------------------------------------

DATA = RNG.normal(size=(2, 30))
WEIGHTS = RNG.uniform(0.5, 2., 30)
POINTS = RNG.normal(size=(2, 6)) * 1.5


def _kdes(data, **kw):
    weights = kw.pop("weights", None)
    mine = ms.gaussian_kde(data.astype(np.float32), weights=None if weights is None
                           else weights.astype(np.float32), **kw)
    return mine, sps.gaussian_kde(data, weights=weights, **kw)


def test_kde_matches_scipy():
    for bw, data, weights in ((None, DATA, None), ("scott", DATA[0], WEIGHTS),
                              ("silverman", DATA, WEIGHTS), (0.4, DATA, None),
                              (lambda k: 0.8 * k.neff ** (-1 / (k.d + 4)), DATA, WEIGHTS)):
        mine, ref = _kdes(data, bw_method=bw, weights=weights)
        what = f"bw={bw} d={ref.d} weighted={weights is not None}"
        assert (mine.d, mine.n) == (ref.d, ref.n)
        _assert_close(mine.neff, ref.neff, what=what)
        _assert_close(mine.covariance, ref.covariance, rtol=1e-4, what=what)
        _assert_close(mine.inv_cov, ref.inv_cov, rtol=1e-4, what=what)
        _assert_close(mine.weights, ref.weights, what=what)
        pts = POINTS[: ref.d]
        if bw == "silverman":
            _assert_close(mine.evaluate(pts), ref.evaluate(pts), rtol=1e-4, what=what)
            _assert_close(mine(pts), ref(pts), rtol=1e-4, what=what)
            _assert_close(mine.pdf(pts), ref.pdf(pts), rtol=1e-4, what=what)
        if bw in ("scott", "silverman"):
            _assert_close(mine.logpdf(pts), ref.logpdf(pts), rtol=1e-4, what=what)


def test_kde_integrals_match_scipy():
    mine, ref = _kdes(DATA, weights=WEIGHTS)
    mean, cov = np.array([0.3, -0.2]), np.array([[1.0, 0.3], [0.3, 0.5]])
    _assert_close(mine.integrate_gaussian(mean, cov), ref.integrate_gaussian(mean, cov),
                  rtol=1e-4)
    other_m, other_r = _kdes(DATA[::-1] + 0.5, bw_method=0.5)
    _assert_close(mine.integrate_kde(other_m), ref.integrate_kde(other_r), rtol=1e-4)
    one_m, one_r = _kdes(DATA[0], weights=WEIGHTS)
    _assert_close(one_m.integrate_box_1d(-0.5, 1.2), one_r.integrate_box_1d(-0.5, 1.2),
                  rtol=1e-4)
    _assert_close(one_m.integrate_gaussian(0.4, 2.), one_r.integrate_gaussian(0.4, 2.),
                  rtol=1e-4)
    with pytest.raises(ValueError):
        mine.integrate_box_1d(0., 1.)
    with pytest.raises(ValueError):
        mine.integrate_kde(one_m)
    with pytest.raises(ValueError):
        mine.integrate_gaussian(np.zeros(3), np.eye(3))
    with pytest.raises(NotImplementedError):
        mine.integrate_box([0., 0.], [1., 1.])
    with pytest.raises(NotImplementedError):
        mine.set_bandwidth("silverman")


def test_kde_points_and_arguments():
    mine, ref = _kdes(DATA)
    # one point as a row (1, d) or a flat (d,) vector; the far tail stays finite in logpdf
    for pts in (POINTS[:, :1].T, POINTS[:, 0], np.full((2, 1), 40.)):
        _assert_close(mine.logpdf(pts), ref.logpdf(pts), rtol=1e-4)
    with pytest.raises(ValueError):
        mine.evaluate(np.zeros((3, 2)))
    with pytest.raises(ValueError):
        ms.gaussian_kde(np.float32([[1.]]))
    with pytest.raises(ValueError):
        ms.gaussian_kde(DATA, weights=np.ones(3))
    with pytest.raises(ValueError):
        ms.gaussian_kde(DATA, bw_method="foo")
    with pytest.raises(NotImplementedError):
        ms.gaussian_kde(DATA.astype(np.complex64))
    assert ms.gaussian_kde(np.arange(5)).dataset.dtype == np.float32


def test_kde_is_a_pytree_under_jit_and_grad():
    mine, ref = _kdes(DATA, weights=WEIGHTS)
    leaves, tree = mjax.tree_util.tree_flatten(mine)
    assert len(leaves) == 5
    _assert_close(leaves[0], ref.neff)
    _assert_close(leaves[3], ref.covariance, rtol=1e-4)
    again = mjax.tree_util.tree_unflatten(tree, leaves)
    assert isinstance(again, ms.gaussian_kde) and again.d == 2
    got = mjax.jit(lambda k, p: k.logpdf(p))(mine, POINTS.astype(np.float32))
    _assert_close(got, ref.logpdf(POINTS), rtol=1e-4)
    built = mjax.jit(lambda d: ms.gaussian_kde(d).covariance)(DATA.astype(np.float32))
    _assert_close(built, sps.gaussian_kde(DATA).covariance, rtol=1e-4)
    # d/dx log density, against finite differences of scipy's
    x = np.float32([0.3])
    got = mjax.grad(lambda v: ms.gaussian_kde(DATA[0].astype(np.float32)).logpdf(v)[0])(x)
    one = sps.gaussian_kde(DATA[0])
    want = (one.logpdf(0.3 + 1e-5) - one.logpdf(0.3 - 1e-5)) / 2e-5
    _assert_close(got, want, rtol=1e-3)
    with pytest.raises(AttributeError):
        mine.neff = 3.


def test_kde_resample_follows_jax():
    # A key gives JAX's draws: the same key use (choice by weight, then kernel noise).
    data, weights = DATA.astype(np.float32), WEIGHTS.astype(np.float32)
    mine = ms.gaussian_kde(data, weights=weights)
    got = mine.resample(mjax.random.key(5), (2000,))
    want = jax.jit(lambda key: js.gaussian_kde(data, weights=weights).resample(key, (2000,)))(
        jax.random.key(5))
    assert got.shape == (2, 2000) == want.shape
    _assert_close(got, np.asarray(want), rtol=1e-5, atol=1e-5)
    assert mjax.eval_shape(mine.resample, mjax.random.key(5)).shape == (2,)
    # The draws follow the estimate: a Kolmogorov-Smirnov test of the first coordinate
    # against the estimate's marginal, a weighted mixture of normals.
    ref = sps.gaussian_kde(DATA, weights=WEIGHTS)
    sigma = math.sqrt(ref.covariance[0, 0])

    def cdf(t):
        return np.sum(ref.weights * sps.norm.cdf((np.asarray(t)[:, None] - DATA[0]) / sigma),
                      axis=1)
    assert sps.kstest(np.asarray(got[0], np.float64), cdf).pvalue > 1e-3
