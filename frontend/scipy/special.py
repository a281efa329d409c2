"""`mjax.scipy.special`: SciPy's special functions over `mjax.lax` (JAX's
`jax.scipy.special`). erf, lgamma, digamma and polygamma are primitives; the rest compose.
"""
from __future__ import annotations

import math

import numpy as np

from mjax import lax
from mjax import numpy as jnp
from mjax.ad import custom_jvp
from mjax.nn import functions as nn_functions
from mjax.nn.functions import logsumexp  # noqa: F401  (JAX: jax.scipy.special.logsumexp)
from mjax.scipy.special_hyp import bessel_jn, hyp1f1, hyp2f1, sph_harm_y  # noqa: F401
from mjax.scipy.special_erf_and_integrals import (  # noqa: F401
    dawsn, erfcx, exp1, expi, expn, fresnel, owens_t, sici, spence, wofz)
from mjax.staging import jit_eagerly

__all__ = ["logsumexp", "erf", "erfc", "erfinv", "gammaln", "digamma", "polygamma",
           "expit", "logit", "xlogy", "xlog1py", "entr", "ndtr", "log_ndtr"]


def _float(name, *args):
    return jnp._promote(name, *args, inexact=True)


def _f32_or_f64(name, x):
    """x as an array, which must be float32 or float64 (JAX's ndtr, ndtri and log_ndtr
    take no other dtype: integers are not promoted, half floats not computed)."""
    x = jnp.asarray(x)
    if x.dtype not in (jnp.float32, jnp.float64):
        raise TypeError(f"{name}: x.dtype={x.dtype} is not supported (float32 or float64 "
                        "only)")
    return lax.convert_element_type(x, x.dtype)  # (strong: JAX computes with its dtype)


def _unary(name, lax_fn, doc):
    def f(x):
        (x,) = _float(name, x)
        return lax_fn(x)
    f.__name__ = name
    f.__doc__ = f"{doc} JAX: jax.scipy.special.{name}."
    return f


erf = _unary("erf", lax.erf, "The error function.")
erfc = _unary("erfc", lax.erfc, "1 - erf(x), accurate for large x.")
erfinv = _unary("erfinv", lax.erf_inv, "The inverse of erf on (-1, 1).")
gammaln = _unary("gammaln", lax.lgamma, "log|Gamma(x)|.")
digamma = _unary("digamma", lax.digamma, "d/dx log Gamma(x).")
expit = _unary("expit", lax.logistic, "The logistic sigmoid 1 / (1 + exp(-x)).")


@custom_jvp
def _logit(x):
    return lax.log(lax.div(x, lax.sub(lax.full_like(x, 1, shape=()), x)))


@_logit.defjvp
def _logit_jvp(primals, tangents):
    # d logit = t / (x (1 - x)), JAX's custom derivative (the same bits)
    (x,), (t,) = primals, tangents
    return _logit(x), lax.div(t, lax.mul(x, lax.sub(lax.full_like(x, 1, shape=()), x)))


logit = _unary("logit", _logit, "log(x / (1 - x)), the inverse of expit.")


def polygamma(n, x):
    """The n-th derivative of digamma, for integer n >= 0. JAX: jax.scipy.special.polygamma."""
    n_dtype = jnp.asarray(n).dtype
    if not jnp.issubdtype(n_dtype, jnp.integer):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype "
                         f"{n_dtype}.")
    n, x = _float("polygamma", n, x)
    return lax.polygamma(n, x)


def ndtr(x):
    """The standard normal CDF. JAX: jax.scipy.special.ndtr."""
    x = _f32_or_f64("ndtr", x)
    # (1 + erf(x / sqrt 2)) / 2 near 0, erfc in the tails: the same roundings as JAX's
    dt = x.dtype.type
    half_sqrt_2 = dt(0.5) * np.sqrt(dt(2))
    w = x * half_sqrt_2
    z = lax.abs(w)
    tails = jnp.where(w > 0, dt(2) - lax.erfc(z), lax.erfc(z))
    return dt(0.5) * jnp.where(z < half_sqrt_2, dt(1) + lax.erf(w), tails)


def log_ndtr(x, series_order=3):
    """log(ndtr(x)), accurate in both tails: an asymptotic series below `lower`, where
    ndtr underflows, and log1p(-ndtr(-x)) above `upper`, where it rounds to 1.
    JAX: jax.scipy.special.log_ndtr."""
    series_order = int(series_order)
    if not 0 <= series_order <= 30:
        raise ValueError(f"log_ndtr: series_order must be in [0, 30], got {series_order}")
    x = _f32_or_f64("log_ndtr", x)
    lower, upper = (-20.0, 8.0) if x.dtype.itemsize == 8 else (-10.0, 5.0)
    # log ndtr(x) ~ -x^2/2 - log(-x) - log(sqrt(2 pi)) + log(1 + sum_k (-1)^k (2k-1)!! / x^2k)
    xl = jnp.minimum(x, lower)
    z = 1 / (xl * xl)
    series, term = jnp.ones_like(z), jnp.ones_like(z)
    for k in range(1, series_order + 1):
        term = term * (-(2 * k - 1)) * z
        series = series + term
    tail = -0.5 * xl * xl - jnp.log(-xl) - 0.9189385332046727 + jnp.log(series)
    middle = jnp.log(ndtr(jnp.clip(x, lower, upper)))
    high = jnp.log1p(-ndtr(-jnp.maximum(x, upper)))
    return jnp.where(x < lower, tail, jnp.where(x > upper, high, middle))


def _x_f_y(fy, dfy):
    """x * f(y), 0 where x == 0 unless y is NaN, with JAX's custom derivative
    t_x f(y) + t_y x f'(y) (JAX's ops in JAX's order: the same bits)."""
    @custom_jvp
    def x_f_y(x, y):
        keep = lax.or_(lax.ne(x, lax.full_like(x, 0, shape=())), lax.ne(y, y))
        return jnp.where(keep, lax.mul(x, fy(y)), jnp.zeros_like(x))

    @x_f_y.defjvp
    def x_f_y_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return x_f_y(x, y), tx * fy(y) + ty * x / dfy(y)
    return x_f_y


_xlogy = _x_f_y(lax.log, lambda y: y)
_xlog1py = _x_f_y(lax.log1p, lambda y: 1 + y)


def xlogy(x, y):
    """x * log(y), 0 where x == 0 (unless y is NaN). JAX: jax.scipy.special.xlogy."""
    return _xlogy(*_float("xlogy", x, y))


def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0 (unless y is NaN). JAX: jax.scipy.special.xlog1py."""
    return _xlog1py(*_float("xlog1py", x, y))


def entr(x):
    """-x log x for x >= 0 (0 at 0), -inf for x < 0, NaN for NaN; as JAX, via xlogy, so
    the gradient below 0 is NaN too. JAX: jax.scipy.special.entr."""
    (x,) = _float("entr", x)
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        raise ValueError("entr does not support complex-valued inputs.")
    return lax.select(lax.lt(x, lax.full_like(x, 0, shape=())), lax.full_like(x, -np.inf),
                      lax.neg(_xlogx(x)))


@custom_jvp
def _xlogx(x):
    return _xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    # d(x log x) = t (log x + 1), JAX's custom derivative
    (x,), (t,) = primals, tangents
    return _xlogx(x), t * (lax.log(x) + 1)


# ---- computed by series, continued fractions and Newton steps ----------------------------
# (The series are mjax.lax's special functions, with NumPy's promotion of the arguments.
# Called eagerly, each runs as one compiled program (`jit_eagerly`), as JAX jits them,
# instead of dispatching its many small ops one by one.)
def _tiny(x):
    return jnp.finfo(x.dtype).tiny


@jit_eagerly("a", "x")
def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x).
    JAX: jax.scipy.special.gammainc."""
    return lax.igamma(*_float("gammainc", a, x))


@jit_eagerly("a", "x")
def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).
    JAX: jax.scipy.special.gammaincc."""
    return lax.igammac(*_float("gammaincc", a, x))


@jit_eagerly("a", "b", "x")
def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b).
    JAX: jax.scipy.special.betainc."""
    return lax.betainc(*_float("betainc", a, b, x))


@jit_eagerly("x")
def i0e(x):
    """exp(-|x|) I0(x). JAX: jax.scipy.special.i0e."""
    return lax.bessel_i0e(*_float("i0e", x))


@jit_eagerly("x")
def i1e(x):
    """exp(-|x|) I1(x), odd in x. JAX: jax.scipy.special.i1e."""
    return lax.bessel_i1e(*_float("i1e", x))


@jit_eagerly("x")
def i0(x):
    """The modified Bessel function I0(x). JAX: jax.scipy.special.i0."""
    (x,) = _float("i0", x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i0e(x)


@jit_eagerly("x")
def i1(x):
    """The modified Bessel function I1(x). JAX: jax.scipy.special.i1."""
    (x,) = _float("i1", x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i1e(x)


@jit_eagerly("x", "q")
def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (k + q)^-x (Riemann's for q=None), for x > 1.
    JAX: jax.scipy.special.zeta."""
    if q is None:
        (x,) = _float("zeta", x)
        q = jnp.ones_like(x)
    else:
        x, q = _float("zeta", x, q)
    return lax.zeta(x, q)


@custom_jvp
def _ndtri(p):
    lower = p <= 0.5
    pl = jnp.where(lower, p, 1 - p)  # the lower tail: solve ndtr(x) = pl with x <= 0
    pl = jnp.clip(pl, _tiny(pl), 0.5)
    # Abramowitz & Stegun 26.2.23 as the start, then Newton steps on log ndtr(x) = log pl.
    t = jnp.sqrt(-2 * jnp.log(pl))
    x = -(t - (2.515517 + 0.802853 * t + 0.010328 * t * t)
          / (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t))
    log_p = jnp.log(pl)
    for _ in range(4):
        log_cdf = log_ndtr(x)
        log_pdf = -0.5 * x * x - 0.5 * math.log(2 * math.pi)
        x = x - (log_cdf - log_p) * jnp.exp(log_cdf - log_pdf)
    x = jnp.where(lower, x, -x)
    x = jnp.where(p == 0.5, 0.0, x)
    x = jnp.where(p == 0, -jnp.inf, jnp.where(p == 1, jnp.inf, x))
    return jnp.where((p < 0) | (p > 1) | jnp.isnan(p), jnp.nan, x)


@_ndtri.defjvp
def _ndtri_jvp(primals, tangents):
    (p,), (t,) = primals, tangents
    x = _ndtri(p)
    return x, t * jnp.sqrt(2 * math.pi) * jnp.exp(0.5 * x * x)


@jit_eagerly("p")
def ndtri(p):
    """The inverse of the standard normal CDF. JAX: jax.scipy.special.ndtri."""
    p = _f32_or_f64("ndtri", p)
    return _ndtri(p)


__all__ += ["betainc", "gammainc", "gammaincc", "i0", "i0e", "i1", "i1e", "ndtri", "zeta",
            "gammasgn", "gamma", "loggamma", "beta", "betaln", "factorial", "comb", "poch",
            "multigammaln", "kl_div", "rel_entr", "boxcox", "boxcox1p", "softmax",
            "log_softmax", "bernoulli", "bessel_jn", "dawsn", "erfcx", "exp1", "expi", "expn",
            "fresnel", "hyp1f1", "hyp2f1", "owens_t", "sici", "spence", "sph_harm_y", "wofz"]


def gammasgn(x):
    """The sign of Gamma(x): 1 for x > 0, (-1)^ceil(-x) below, NaN at the poles.
    JAX: jax.scipy.special.gammasgn."""
    (x,) = _float("gammasgn", x)
    fl = jnp.floor(x)
    odd = jnp.remainder(fl, 2) != 0
    neg = jnp.where(odd, -1.0, 1.0).astype(x.dtype)
    out = jnp.where(x > 0, jnp.ones_like(x), neg)
    out = jnp.where((x < 0) & (x == fl), jnp.nan, out)
    return jnp.where(jnp.isnan(x), jnp.nan, out)


def gamma(x):
    """The gamma function. JAX: jax.scipy.special.gamma."""
    (x,) = _float("gamma", x)
    return gammasgn(x) * jnp.exp(lax.lgamma(x))


def loggamma(x):
    """log Gamma(x) on the principal branch: lgamma for x > 0, NaN otherwise (real input).
    JAX: jax.scipy.special.loggamma."""
    (x,) = _float("loggamma", x)
    if jnp.iscomplexobj(x):
        raise NotImplementedError("mjax.scipy.special.loggamma: complex input is not "
                                  "supported")
    return jnp.where(x <= 0, jnp.nan, lax.lgamma(x))


def betaln(a, b):
    """log|B(a, b)| = lgamma(a) + lgamma(b) - lgamma(a + b). JAX: jax.scipy.special.betaln."""
    a, b = _float("betaln", a, b)
    return lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)


def beta(a, b):
    """The beta function B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b).
    JAX: jax.scipy.special.beta."""
    a, b = _float("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * jnp.exp(betaln(a, b))


def factorial(n, exact=False):
    """n! = Gamma(n + 1) for n >= 0, 0 for n < 0. JAX: jax.scipy.special.factorial."""
    if exact:
        raise ValueError(f"factorial with exact=True is not supported (got exact={exact})")
    (n,) = _float("factorial", n)
    return jnp.where(n < 0, 0.0, jnp.exp(lax.lgamma(n + 1))).astype(n.dtype)


def comb(N, k, *, repetition=False):
    """N choose k (with repetition: N + k - 1 choose k), by log-gamma; 0 outside
    0 <= k <= N. JAX: jax.scipy.special.comb."""
    N, k = _float("comb", N, k)
    if repetition:
        N = N + k - 1
    value = jnp.exp(lax.lgamma(N + 1) - lax.lgamma(k + 1) - lax.lgamma(N - k + 1))
    return jnp.where((k < 0) | (k > N) | (N < 0), 0.0, value).astype(N.dtype)


def poch(z, m):
    """The rising factorial Gamma(z + m) / Gamma(z). JAX: jax.scipy.special.poch."""
    z, m = _float("poch", z, m)
    sign = gammasgn(z + m) * gammasgn(z)
    return jnp.where(m == 0, jnp.ones_like(z),
                     sign * jnp.exp(lax.lgamma(z + m) - lax.lgamma(z)))


def multigammaln(a, d):
    """The log multivariate gamma function of dimension d (a static int).
    JAX: jax.scipy.special.multigammaln."""
    import math

    import numpy as _onp
    d = int(d) if isinstance(d, (int, _onp.integer)) else d
    if not isinstance(d, int):
        raise TypeError(f"mjax.scipy.special.multigammaln: d must be a static int, got {d!r}")
    (a,) = _float("multigammaln", a)
    const = d * (d - 1) / 4 * math.log(math.pi)
    terms = sum(lax.lgamma(a - j / 2) for j in range(d)) if d else jnp.zeros_like(a)
    return const + terms


def rel_entr(p, q):
    """p log(p / q) for p, q > 0; 0 at p == 0 (q >= 0); inf otherwise.
    JAX: jax.scipy.special.rel_entr."""
    p, q = _float("rel_entr", p, q)
    both = (p > 0) & (q > 0)
    sp, sq = jnp.where(both, p, 1), jnp.where(both, q, 1)
    value = sp * jnp.log(sp / sq)
    return jnp.where(both, value, jnp.where((p == 0) & (q >= 0), 0.0, jnp.inf))


def kl_div(p, q):
    """p log(p / q) - p + q for p, q > 0; q at p == 0 (q >= 0); inf otherwise.
    JAX: jax.scipy.special.kl_div."""
    p, q = _float("kl_div", p, q)
    both = (p > 0) & (q > 0)
    sp, sq = jnp.where(both, p, 1), jnp.where(both, q, 1)
    value = sp * jnp.log(sp / sq) - sp + sq
    return jnp.where(both, value, jnp.where((p == 0) & (q >= 0), q, jnp.inf))


def boxcox(x, lmbda):
    """(x^lmbda - 1) / lmbda, log(x) at lmbda == 0. JAX: jax.scipy.special.boxcox."""
    x, lmbda = _float("boxcox", x, lmbda)
    zero = lmbda == 0
    safe = jnp.where(zero, 1, lmbda)
    return jnp.where(zero, jnp.log(x), jnp.expm1(safe * jnp.log(x)) / safe)


def boxcox1p(x, lmbda):
    """((1 + x)^lmbda - 1) / lmbda, log1p(x) at lmbda == 0. JAX: jax.scipy.special.boxcox1p."""
    x, lmbda = _float("boxcox1p", x, lmbda)
    zero = lmbda == 0
    safe = jnp.where(zero, 1, lmbda)
    return jnp.where(zero, jnp.log1p(x), jnp.expm1(safe * jnp.log1p(x)) / safe)


def softmax(x, /, *, axis=None):
    """exp(x) / sum(exp(x)) over `axis` (all axes by default). JAX: jax.scipy.special.softmax."""
    return nn_functions.softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """x - logsumexp(x) over `axis` (all axes by default).
    JAX: jax.scipy.special.log_softmax."""
    return nn_functions.log_softmax(x, axis=axis)


def bernoulli(n):
    """The Bernoulli numbers B_0..B_n (B_1 = -1/2, as JAX), computed exactly on the host.
    JAX: jax.scipy.special.bernoulli."""
    import operator
    from fractions import Fraction
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    b = [Fraction(0)] * (n + 1)
    for m in range(n + 1):  # Akiyama-Tanigawa: B_m with B_1 = +1/2
        a = [Fraction(0)] * (m + 1)
        for j in range(m + 1):
            a[j] = Fraction(1, j + 1)
            for i in range(j, 0, -1):
                a[i - 1] = i * (a[i - 1] - a[i])
        b[m] = a[0]
    if n >= 1:
        b[1] = -b[1]  # the algorithm gives the B_1 = +1/2 convention
    return jnp.asarray([float(v) for v in b], dtype=jnp.zeros(()).dtype)

