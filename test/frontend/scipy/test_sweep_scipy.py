"""Differential sweep of mjax.scipy (special, stats, linalg, signal, optimize) against
jax.scipy: values, dtypes, errors, eager and under jit, grad and vmap."""
import numpy as np
import pytest

import jax
import jax.scipy.optimize  # noqa: F401  (lazily loaded in jax)
import mjax
from sweep_util import compare

RNG = np.random.default_rng(2)
X = RNG.uniform(-3, 3, 12).astype(np.float32)
POS = RNG.uniform(0.2, 12, 12).astype(np.float32)
UNIT = RNG.uniform(0.02, 0.98, 12).astype(np.float32)
EDGE = np.array([0.0, -1.0, 1.0, np.inf, -np.inf, np.nan], np.float32)

ms, js = mjax.scipy.special, jax.scipy.special

UNARY = [("gammaln", POS), ("digamma", POS), ("erf", X), ("erfc", X), ("erfinv", UNIT * 2 - 1),
         ("expit", X), ("logit", UNIT), ("ndtr", X), ("log_ndtr", X * 4), ("ndtri", UNIT),
         ("i0", X), ("i0e", X * 5), ("i1", X), ("i1e", X * 5), ("entr", X),
         ("gamma", X + 0.5), ("gammasgn", X), ("loggamma", POS), ("factorial", POS)]


@pytest.mark.parametrize("name,x", UNARY, ids=[u[0] for u in UNARY])
def test_special_unary(name, x):
    compare(getattr(ms, name), getattr(js, name), (x,), modes=("eager", "grad"),
            rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name", ["i0e", "i1e", "ndtri", "erfinv", "gammaln", "entr", "logit",
                                  "loggamma", "gammasgn", "ndtr", "log_ndtr"])
def test_special_unary_edges(name):
    compare(getattr(ms, name), getattr(js, name), (EDGE,), modes=("eager",))


@pytest.mark.parametrize("name", ["i0e", "ndtri", "gammaln", "ndtr"])
def test_special_unary_x64(name, x64_mode):
    x = UNIT.astype(np.float64) if x64_mode else UNIT
    compare(getattr(ms, name), getattr(js, name), (x,), modes=("jit",), rtol=1e-12 if x64_mode
            else 2e-6, atol=1e-13 if x64_mode else 1e-6)


BINARY = [("xlogy", X, POS), ("xlog1py", X, UNIT), ("gammainc", POS, POS[::-1]),
          ("gammaincc", POS, POS[::-1]), ("polygamma", np.int32([0, 1, 2] * 4), POS),
          ("zeta", POS + 1.1, POS), ("beta", POS, POS[::-1]), ("betaln", POS, POS[::-1]),
          ("poch", POS, X), ("rel_entr", UNIT, UNIT[::-1]), ("kl_div", UNIT, UNIT[::-1]),
          ("boxcox", POS, X), ("boxcox1p", POS, X), ("comb", np.round(POS), np.round(UNIT * 5))]


@pytest.mark.parametrize("name,x,y", BINARY, ids=[b[0] for b in BINARY])
def test_special_binary(name, x, y):
    modes = ("eager",) if name == "comb" else ("eager", "grad")
    compare(getattr(ms, name), getattr(js, name), (x, y), modes=modes, rtol=1e-4, atol=1e-5,
            argnums=1 if name in ("gammainc", "gammaincc", "zeta", "polygamma") else 0)


@pytest.mark.parametrize("name", ["gammainc", "zeta", "xlogy"])
def test_special_vmap(name):
    compare(getattr(ms, name), getattr(js, name), (POS.reshape(3, 4) + 1.1, POS.reshape(3, 4)),
            modes=("vmap",), rtol=1e-4, atol=1e-5)


def test_polygamma_needs_integer_order():
    compare(ms.polygamma, js.polygamma, (np.float32(1.0), POS))


def test_incomplete_gamma_grad_in_a():
    compare(lambda a: ms.gammainc(a, 3.0), lambda a: js.gammainc(a, 3.0), (POS,),
            modes=("grad",), rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("a,x", [(0.0, 1.0), (1.0, 0.0), (-1.0, 1.0), (1.0, -1.0),
                                 (2.0, np.inf), (np.nan, 1.0)])
def test_gammainc_edges(a, x):
    for name in ("gammainc", "gammaincc"):
        compare(getattr(ms, name), getattr(js, name), (np.float32(a), np.float32(x)),
                modes=("eager",))


def test_betainc():
    a, b = POS[:6], POS[6:]
    compare(ms.betainc, js.betainc, (a, b, UNIT[:6]), rtol=2e-4, atol=2e-5,
            modes=("eager", "vmap"))
    compare(ms.betainc, js.betainc, (a, b, UNIT[:6]), rtol=2e-3, atol=2e-5, modes=("grad",),
            argnums=2)
    edge = np.float32([0.0, 1.0, 1.5, -0.5])
    compare(ms.betainc, js.betainc, (np.float32(2.0), np.float32(3.0), edge), modes=("eager",))


@pytest.mark.parametrize("kw", [{}, {"axis": 0}, {"b": UNIT.reshape(3, 4)},
                                {"b": X.reshape(3, 4), "return_sign": True},
                                {"axis": 1, "keepdims": True},
                                {"where": X.reshape(3, 4) > 0, "axis": 1}])
def test_logsumexp(kw):
    compare(lambda a: ms.logsumexp(a, **kw), lambda a: js.logsumexp(a, **kw),
            (X.reshape(3, 4),), modes=("eager", "jit"))


def test_logsumexp_all_masked_and_inf():
    a = np.float32([[-np.inf, -np.inf], [np.inf, 1.0]])
    compare(lambda a: ms.logsumexp(a, axis=1), lambda a: js.logsumexp(a, axis=1), (a,))


def test_softmax_multigammaln_bernoulli():
    compare(lambda x: ms.softmax(x, axis=1), lambda x: js.softmax(x, axis=1), (X.reshape(3, 4),))
    compare(lambda x: ms.log_softmax(x), lambda x: js.log_softmax(x), (X.reshape(3, 4),))
    compare(lambda a: ms.multigammaln(a, 3), lambda a: js.multigammaln(a, 3), (POS + 2,))
    compare(lambda: ms.bernoulli(8), lambda: js.bernoulli(8), (), modes=("eager",))


STATS = [("norm", "logpdf", (X, 0.5, 1.5)), ("norm", "cdf", (X,)), ("norm", "logcdf", (X * 3,)),
         ("norm", "sf", (X, 1.0)), ("norm", "ppf", (UNIT, 1.0, 2.0)), ("norm", "isf", (UNIT,)),
         ("t", "logpdf", (X, 3.0, 0.5, 2.0)), ("t", "pdf", (X, 5.0)),
         ("beta", "logpdf", (UNIT, 2.0, 3.0)), ("beta", "cdf", (UNIT, 2.0, 3.0)),
         ("beta", "sf", (UNIT, 0.5, 1.5)), ("gamma", "logpdf", (POS, 2.5, 0.0, 1.5)),
         ("gamma", "cdf", (POS, 2.5)), ("gamma", "logsf", (POS, 2.5)),
         ("chi2", "cdf", (POS, 3.0)), ("poisson", "logpmf", (np.round(POS), 4.0)),
         ("poisson", "cdf", (np.round(POS), 4.0)), ("poisson", "entropy", (POS,)),
         ("bernoulli", "logpmf", (np.float32([0, 1, 2, -1]), 0.3)),
         ("bernoulli", "cdf", (np.float32([-1, 0, 0.5, 1]), 0.3)),
         ("bernoulli", "ppf", (UNIT, 0.3)), ("uniform", "logpdf", (X, -1.0, 2.0)),
         ("uniform", "ppf", (UNIT,)), ("expon", "logpdf", (X,)), ("expon", "ppf", (UNIT,)),
         ("laplace", "cdf", (X,)), ("logistic", "logpdf", (X,)), ("logistic", "ppf", (UNIT,)),
         ("cauchy", "logpdf", (X,)), ("cauchy", "ppf", (UNIT,)),
         ("geom", "logpmf", (np.round(POS), 0.3)),
         ("binom", "logpmf", (np.round(UNIT * 6), 6.0, 0.3))]


@pytest.mark.parametrize("dist,fn,args", STATS, ids=[f"{d}.{f}" for d, f, _ in STATS])
def test_stats(dist, fn, args):
    m = getattr(getattr(mjax.scipy.stats, dist), fn)
    j = getattr(getattr(jax.scipy.stats, dist), fn)
    discrete = dist in ("poisson", "bernoulli", "geom", "binom")  # no gradient in the count
    compare(m, j, args, rtol=2e-4, atol=2e-5, modes=("eager",) if discrete else ("eager", "grad"))


@pytest.mark.parametrize("shapes", [((4, 3), (3,), (3, 3)), ((3,), (3,), ()), ((), (), ()),
                                    ((2, 4, 3), (4, 3), (3, 3)), ((3,), (3,), (3,))])
def test_multivariate_normal(shapes):
    xs, ms_, cs = shapes
    x = RNG.normal(size=xs)
    mean = RNG.normal(size=ms_)
    if len(cs) == 2:
        a = RNG.normal(size=cs)
        cov = a @ a.T + np.eye(cs[0])
    else:
        cov = RNG.uniform(1, 2, size=cs)
    f = "logpdf"
    compare(getattr(mjax.scipy.stats.multivariate_normal, f),
            getattr(jax.scipy.stats.multivariate_normal, f), (x, mean, cov), rtol=1e-4,
            atol=1e-5, modes=("eager", "grad"))


def test_multivariate_normal_x64(x64_mode):
    a = RNG.normal(size=(3, 3))
    compare(mjax.scipy.stats.multivariate_normal.logpdf,
            jax.scipy.stats.multivariate_normal.logpdf,
            (RNG.normal(size=(4, 3)), RNG.normal(size=3), a @ a.T + np.eye(3)),
            rtol=1e-10 if x64_mode else 1e-4, atol=1e-10 if x64_mode else 1e-5, modes=("jit",))


def test_dirichlet():
    x = np.float32([[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]])
    alpha = np.float32([1.0, 2.0, 3.0])
    compare(mjax.scipy.stats.dirichlet.logpdf, jax.scipy.stats.dirichlet.logpdf, (x, alpha))
    compare(mjax.scipy.stats.dirichlet.logpdf, jax.scipy.stats.dirichlet.logpdf,
            (x[:2, 0], alpha))


SIGNAL = [((7,), (3,)), ((3,), (7,)), ((6, 5), (3, 2)), ((2, 3), (4, 5)), ((4, 5, 3), (2, 3, 3))]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("s1,s2", SIGNAL)
def test_signal(s1, s2, mode):
    a = RNG.normal(size=s1).astype(np.float32)
    b = RNG.normal(size=s2).astype(np.float32)
    names = ["convolve", "correlate", "fftconvolve"]
    if len(s1) == 2:
        names += ["convolve2d", "correlate2d"]
    for name in names:
        compare(lambda x, y: getattr(mjax.scipy.signal, name)(x, y, mode),
                lambda x, y: getattr(jax.scipy.signal, name)(x, y, mode), (a, b), rtol=1e-4,
                atol=1e-4, modes=("eager",))


def test_signal_errors_and_ints():
    compare(lambda x, y: mjax.scipy.signal.convolve(x, y),
            lambda x, y: jax.scipy.signal.convolve(x, y), (np.arange(5), np.arange(3)))
    compare(lambda x, y: mjax.scipy.signal.convolve(x, y, "bogus"),
            lambda x, y: jax.scipy.signal.convolve(x, y, "bogus"), (X, X[:3]))
    compare(lambda x, y: mjax.scipy.signal.convolve(x, y),
            lambda x, y: jax.scipy.signal.convolve(x, y), (X, X.reshape(3, 4)))
    compare(lambda x, y: mjax.scipy.signal.convolve2d(x, y, boundary="wrap"),
            lambda x, y: jax.scipy.signal.convolve2d(x, y, boundary="wrap"),
            (X.reshape(3, 4), X.reshape(3, 4)))


def test_minimize_bfgs():
    def fm(x, c):
        return mjax.numpy.sum((x - c) ** 2) + mjax.numpy.sum(x ** 4) * 0.1

    def fj(x, c):
        return jax.numpy.sum((x - c) ** 2) + jax.numpy.sum(x ** 4) * 0.1
    x0 = np.zeros(3, np.float32)
    c = np.float32([1.0, -2.0, 0.5])
    got = mjax.jit(lambda x0: mjax.scipy.optimize.minimize(fm, x0, (c,), method="BFGS"))(x0)
    want = jax.scipy.optimize.minimize(fj, x0, (c,), method="BFGS")
    assert type(got).__name__ == "OptimizeResults" and got._fields == want._fields
    np.testing.assert_allclose(np.asarray(got.x), np.asarray(want.x), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(got.fun), np.asarray(want.fun), rtol=1e-5)
    assert bool(got.success) and int(got.status) == 0
    assert np.asarray(got.x).dtype == np.asarray(want.x).dtype
    with pytest.raises(ValueError):
        mjax.scipy.optimize.minimize(fm, x0, (c,), method="nelder-mead")
    with pytest.raises(TypeError):
        mjax.scipy.optimize.minimize(fm, x0, c, method="BFGS")


@pytest.mark.parametrize("module", ["special", "stats", "signal", "optimize", "linalg"])
def test_public_names(module):
    jm, mm = getattr(jax.scipy, module), getattr(mjax.scipy, module)
    missing = [n for n in dir(jm) if not n.startswith("_") and not hasattr(mm, n)]
    known = {"stats": {"betabinom", "gennorm", "gumbel_l", "gumbel_r", "multinomial",
                       "nbinom", "pareto", "truncnorm", "vonmises", "wrapcauchy",
                       "gaussian_kde", "mode", "rankdata", "sem"},
             }.get(module, set())
    assert set(missing) <= known, sorted(set(missing) - known)


LINALG = [("polar", lambda L, a: L.polar(a)), ("expm_frechet", lambda L, a: L.expm_frechet(
    a * 0.3, a.T)), ("convolution_matrix", lambda L, a: L.convolution_matrix(a[0], 5)),
    ("convolution_matrix_same", lambda L, a: L.convolution_matrix(a[0], 3, "same")),
    ("convolution_matrix_valid", lambda L, a: L.convolution_matrix(a[0], 2, "valid")),
    ("pascal", lambda L, a: L.pascal(5, "lower")), ("invpascal", lambda L, a: L.invpascal(4)),
    ("hadamard", lambda L, a: L.hadamard(8)), ("hadamard_bad", lambda L, a: L.hadamard(6)),
    ("invhilbert", lambda L, a: L.invhilbert(4)),
    ("cho_solve", lambda L, a: L.cho_solve(L.cho_factor(a @ a.T + 4 * np.eye(4)), a[:, :2])),
    ("lu_solve_trans", lambda L, a: L.lu_solve(L.lu_factor(a), a[:, :2], trans=1)),
    ("solve_triangular", lambda L, a: L.solve_triangular(a.T, a[:, 0], lower=True,
                                                         trans="T")),
    ("block_diag", lambda L, a: L.block_diag(a, a[:2, :3], np.float32(3)))]


@pytest.mark.parametrize("name,fn", LINALG, ids=[n for n, _ in LINALG])
def test_scipy_linalg_functions(name, fn):
    a = (RNG.normal(size=(4, 4)) + 3 * np.eye(4)).astype(np.float32)
    compare(lambda x: fn(mjax.scipy.linalg, x), lambda x: fn(jax.scipy.linalg, x), (a,),
            rtol=2e-4, atol=2e-4, modes=("eager",))
