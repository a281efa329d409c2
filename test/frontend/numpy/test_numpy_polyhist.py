"""histogram2d/histogramdd, roots, polyfit, polydiv and frompyfunc: against NumPy, and
against jax.numpy for dtypes, shapes and JAX's own choices (NaN roots with
strip_zeros=False, the untrimmed polydiv remainder, integer counts without weights)."""
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from frontend_util import ON_TPU, check

RNG = np.random.default_rng(7)
X = RNG.standard_normal(60).astype(np.float32)
Y = RNG.standard_normal(60).astype(np.float32)
W = RNG.random(60).astype(np.float32)


def check_all(got, want, **kw):
    assert len(got) == len(want), (len(got), len(want))
    for g, w in zip(got, want):
        check(g, w, **kw)


# ---- histograms ---------------------------------------------------------------------------
HIST2D_CASES = [
    {}, {"bins": 5}, {"bins": [3, 4]},
    {"bins": [np.linspace(-2, 2, 5), np.linspace(-1, 1, 3)]},
    {"bins": np.linspace(-3, 3, 7)},               # one edge array for both axes
    {"weights": W}, {"density": True}, {"weights": W, "density": True},
    {"range": [(-1, 1), (-2, 2)], "bins": 4},
]


@pytest.mark.parametrize("kw", HIST2D_CASES, ids=range(len(HIST2D_CASES)))
def test_histogram2d_matches_numpy_and_jax(kw):
    got = jnp.histogram2d(X, Y, **kw)
    jax_out = jjnp.histogram2d(X, Y, **kw)
    np_out = np.histogram2d(X, Y, **kw)
    for g, j, n in zip(got, jax_out, np_out):
        check(g, np.asarray(n).astype(j.dtype), rtol=1e-5, atol=1e-6)


def test_histogram2d_counts_points_on_the_last_edge():
    x = np.array([0.0, 1.0, 1.0, 0.5], np.float32)
    h, _, _ = jnp.histogram2d(x, x, bins=2)
    np.testing.assert_array_equal(h, np.histogram2d(x, x, bins=2)[0])
    assert h.dtype == jjnp.histogram2d(x, x, bins=2)[0].dtype


def test_histogramdd_matches_numpy():
    s = RNG.standard_normal((50, 3)).astype(np.float32)
    h, edges = jnp.histogramdd(s, bins=(2, 3, 4))
    hn, edges_n = np.histogramdd(s, bins=(2, 3, 4))
    check(h, hn.astype(jjnp.histogramdd(s, bins=(2, 3, 4))[0].dtype))
    assert len(edges) == 3
    for e, en in zip(edges, edges_n):
        check(e, en.astype(np.float32))
    hw, _ = jnp.histogramdd(s, bins=3, weights=W[:50], density=True)
    check(hw, np.histogramdd(s, bins=3, weights=W[:50], density=True)[0].astype(np.float32),
          rtol=1e-4)


def test_histogramdd_under_jit_with_static_bins_and_range():
    s = RNG.standard_normal((40, 2)).astype(np.float32)
    rng = [(-1.0, 1.0), (-2.0, 2.0)]
    got = mjax.jit(lambda s: jnp.histogramdd(s, bins=4, range=rng)[0])(s)
    np.testing.assert_array_equal(got, np.histogramdd(s, bins=4, range=rng)[0])


def test_histogramdd_bad_input():
    s = np.zeros((5, 2), np.float32)
    with pytest.raises(ValueError, match="one weight for each sample"):
        jnp.histogramdd(s, weights=np.ones(4))
    with pytest.raises(ValueError, match="a bin for each dimension"):
        jnp.histogramdd(s, bins=[2, 3, 4])
    with pytest.raises(ValueError, match="range must"):
        jnp.histogramdd(s, range=[(0, 1)])


# ---- roots --------------------------------------------------------------------------------
ROOT_CASES = [[1, -3, 2], [0, 0, 1, 2], [1, 0, 0], [2.0], [0, 0, 0], [1, 2, 3, 4, 5],
              [3, -1, 0.5, 2]]


# roots are the eigenvalues of the companion matrix: LAPACK's eig, which JAX has no TPU
# rule for (degree 0 and all-zero cases need none)
NO_TPU_EIG = "MLIR translation rule for primitive 'eig' not found for platform tpu"


def _roots_or_jaxs_error(m, j):
    """(mjax's roots, jax's): both computed, or, on a TPU where JAX's raises for want of
    eig, None after checking mjax raises the same."""
    if not ON_TPU:
        return m(), j()
    try:
        want = j()
    except NotImplementedError as e:
        assert NO_TPU_EIG in str(e), e
        with pytest.raises(NotImplementedError, match=NO_TPU_EIG):
            m()
        return None
    return m(), want


@pytest.mark.parametrize("p", ROOT_CASES, ids=range(len(ROOT_CASES)))
def test_roots_matches_numpy(p):
    p = np.array(p, np.float32)
    both = _roots_or_jaxs_error(lambda: jnp.roots(p), lambda: jjnp.roots(p))
    if both is None:
        return
    got, want = both
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    np.testing.assert_allclose(np.sort_complex(np.asarray(got)),
                               np.sort_complex(np.roots(p).astype(np.complex64)), atol=1e-4)


@pytest.mark.parametrize("p", ROOT_CASES, ids=range(len(ROOT_CASES)))
def test_roots_without_stripping_gives_nans_like_jax(p):
    p = np.array(p, np.float32)
    both = _roots_or_jaxs_error(lambda: jnp.roots(p, strip_zeros=False),
                                lambda: jjnp.roots(p, strip_zeros=False))
    if both is None:
        return
    got, want = both
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(np.asarray(want))
    np.testing.assert_allclose(np.sort_complex(np.asarray(got)[finite]),
                               np.sort_complex(np.asarray(want)[finite]), atol=1e-4)


def test_roots_under_jit_needs_strip_zeros_false():
    p = np.array([0.0, 1.0, -3.0, 2.0], np.float32)
    if ON_TPU:      # (JAX's error there: eig is LAPACK's, CPU only)
        with pytest.raises(NotImplementedError, match=NO_TPU_EIG):
            mjax.jit(lambda p: jnp.roots(p, strip_zeros=False))(p)
    else:
        got = mjax.jit(lambda p: jnp.roots(p, strip_zeros=False))(p)
        np.testing.assert_allclose(np.sort_complex(np.asarray(got)[:2]), [1, 2], atol=1e-5)
        assert np.isnan(np.asarray(got)[2])
    with pytest.raises(mjax.errors.ConcretizationTypeError):
        mjax.jit(jnp.roots)(p)
    with pytest.raises(ValueError, match="rank-1"):
        jnp.roots(np.ones((2, 2)))


# ---- polyfit ------------------------------------------------------------------------------
XF = np.linspace(0, 1, 20)
YF = np.stack([XF ** 2 + 1 + 0.01 * np.sin(9 * XF), 3 * XF - 2 + 0.01 * np.cos(7 * XF)], 1)
FIT_CASES = [{}, {"full": True}, {"cov": True}, {"cov": "unscaled"},
             {"w": np.linspace(1, 2, 20)}]


@pytest.mark.parametrize("kw", FIT_CASES, ids=range(len(FIT_CASES)))
@pytest.mark.parametrize("cols", [1, 2])
def test_polyfit_matches_numpy(kw, cols):
    y = YF[:, 0] if cols == 1 else YF
    got = jnp.polyfit(XF, y, 2, **kw)
    want_np = np.polyfit(XF, y, 2, **kw)
    want_jax = jjnp.polyfit(XF, y, 2, **kw)
    got = got if isinstance(got, tuple) else (got,)
    want_np = want_np if isinstance(want_np, tuple) else (want_np,)
    want_jax = want_jax if isinstance(want_jax, tuple) else (want_jax,)
    assert len(got) == len(want_jax)
    for g, j, n in zip(got, want_jax, want_np):
        assert g.shape == j.shape and g.dtype == j.dtype, (g.shape, j.shape, g.dtype, j.dtype)
        if kw.get("full") and np.ndim(n) == 0 and not np.issubdtype(np.asarray(n).dtype,
                                                                   np.floating):
            assert int(g) == int(n)                # the rank
            continue
        # (float32 with x64 off: compare to NumPy's float64 fit loosely, to jax tightly)
        np.testing.assert_allclose(np.asarray(g), np.asarray(j), rtol=1e-3, atol=1e-5)
        if not kw.get("full"):                     # (NumPy's rcond default is different)
            np.testing.assert_allclose(np.asarray(g), np.asarray(n, np.float32), rtol=1e-2,
                                       atol=1e-4)


def test_polyfit_bad_input():
    with pytest.raises(ValueError, match="deg >= 0"):
        jnp.polyfit(XF, XF, -1)
    with pytest.raises(TypeError, match="same length"):
        jnp.polyfit(XF, XF[:5], 1)
    with pytest.raises(TypeError, match="1D vector"):
        jnp.polyfit(YF, XF, 1)


# ---- polydiv ------------------------------------------------------------------------------
DIV_CASES = [([3.0, 5, 7, 9], [2.0, 1]), ([1.0, 2], [1.0, 2, 3]), ([4.0, 0, 1], [2.0]),
             ([1.0, -6, 11, -6], [1.0, -1])]


@pytest.mark.parametrize("u,v", DIV_CASES)
def test_polydiv_matches_jax_and_numpy(u, v):
    u, v = np.array(u, np.float32), np.array(v, np.float32)
    check_all(jnp.polydiv(u, v), [np.asarray(a) for a in jjnp.polydiv(u, v)])
    q, r = jnp.polydiv(u, v, trim_leading_zeros=True)
    qn, rn = np.polydiv(u, v)
    np.testing.assert_allclose(q, qn, rtol=1e-5)
    if np.any(np.abs(rn) > 1e-3):                  # (NumPy keeps one zero, JAX none)
        np.testing.assert_allclose(r, rn, rtol=1e-5)
    # the product plus the remainder gives u back
    back = np.polyadd(np.polymul(np.asarray(q), v), np.asarray(r))
    np.testing.assert_allclose(np.trim_zeros(back, "f"), u, atol=1e-5)


# ---- frompyfunc ---------------------------------------------------------------------------
def test_frompyfunc_is_a_ufunc_with_its_methods():
    f = jnp.frompyfunc(lambda a, b: a * b + 1, 2, 1, identity=1)
    fj = jjnp.frompyfunc(lambda a, b: a * b + 1, 2, 1, identity=1)
    assert isinstance(f, jnp.ufunc) and (f.nin, f.nout, f.identity) == (2, 1, 1)
    x = np.arange(5, dtype=np.int32)
    check(f(x, x[:, None]), np.asarray(fj(x, x[:, None])))
    check(f.outer(x, x), np.asarray(fj.outer(x, x)))
    check(f.reduce(x), np.asarray(fj.reduce(x)))
    check(f.accumulate(x), np.asarray(fj.accumulate(x)))
    idx = np.array([0, 1, 1])
    check(f.at(x, idx, 2, inplace=False), np.asarray(fj.at(x, idx, 2, inplace=False)))


def test_frompyfunc_with_two_outputs():
    f = jnp.frompyfunc(lambda a: (a + 1, a * 2), 1, 2)
    a, b = f(np.arange(3.0, dtype=np.float32))
    check(a, np.arange(3.0, dtype=np.float32) + 1)
    check(b, np.arange(3.0, dtype=np.float32) * 2)


_BOX = np.zeros((4, 5), np.float32)
_BOX[1:3, 1:4] = 1


@pytest.mark.parametrize("x,kwargs", [
    (_BOX, {}), (_BOX, {"trim": "f"}), (_BOX, {"trim": "b", "axis": 0}), (_BOX, {"axis": 1}),
    (_BOX, {"axis": (-1, 0)}), (_BOX, {"trim": ""}), (np.zeros((3, 4)), {}),
    (np.array([0, 0, 2, 0, 1, 4, 3, 0, 0, 0]), {"trim": "b"})])
def test_trim_zeros_along_axes_matches_jax(x, kwargs):
    want, got = jjnp.trim_zeros(x, **kwargs), jnp.trim_zeros(x, **kwargs)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("name", ["polyadd", "polysub"])
@pytest.mark.parametrize("a,b", [
    ([2, 3], [5, 4, 1]), ([[2, 3, 1]], [[5, 7, 3], [8, 2, 6]]), ([[5, 7, 9], [8, 6, 4]], [2]),
    (np.float32([1, 2]), np.int32([3]))])
def test_polyadd_polysub_of_2d_coefficients_match_jax(name, a, b):
    want = getattr(jjnp, name)(np.asarray(a), np.asarray(b))
    got = getattr(jnp, name)(np.asarray(a), np.asarray(b))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_polyadd_of_a_longer_1d_and_a_2d_array_raises_as_jax():
    for lib in (jjnp, jnp):
        with pytest.raises(ValueError):
            lib.polyadd(np.array([1, 3, 5]), np.array([[5, 7, 9], [8, 6, 4]]))
