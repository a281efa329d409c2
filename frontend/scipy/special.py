"""`mjax.scipy.special`: SciPy's special functions over `mjax.lax` (JAX's
`jax.scipy.special`). erf, lgamma, digamma and polygamma are primitives; the rest compose.
"""
from __future__ import annotations

import functools
import math
import operator
import warnings
from fractions import Fraction

import numpy as np

from mjax import lax
from mjax import numpy as jnp
from mjax.ad import custom_jvp, jvp
from mjax.nn import functions as nn_functions
from mjax.nn.functions import logsumexp  # noqa: F401  (JAX: jax.scipy.special.logsumexp)
from mjax.scipy.special_hyp import bessel_jn, hyp1f1, hyp2f1, sph_harm_y  # noqa: F401
from mjax.scipy.special_erf_and_integrals import (  # noqa: F401
    dawsn, erfcx, fresnel, owens_t, sici, spence, wofz)
from mjax.scipy.special_expint import exp1, expi, expn  # noqa: F401
from mjax.scipy import special_legendre as _legendre
from mjax.tracing.staging import jit_eagerly

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


def _one(x):
    """1 of x's dtype, as JAX's _lax_const: a Python scalar for a weakly typed scalar x
    (the result stays weak), else a typed NumPy constant."""
    if getattr(x, "weak_type", False) and np.ndim(x) == 0:
        return 1.0 if jnp.issubdtype(x.dtype, np.floating) else 1 + 0j
    return np.array(1, x.dtype)


@custom_jvp
def _logit(x):
    return lax.log(lax.div(x, lax.sub(_one(x), x)))


@_logit.defjvp
def _logit_jvp(primals, tangents):
    # d logit = t / (x (1 - x)), JAX's custom derivative (the same bits)
    (x,), (t,) = primals, tangents
    return _logit(x), lax.div(t, lax.mul(x, lax.sub(_one(x), x)))


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
    return _ndtr(_f32_or_f64("ndtr", x))


def _ndtr(x):
    # (1 + erf(x / sqrt 2)) / 2 near 0, erfc in the tails: JAX's ops (the same bits)
    dt = x.dtype.type
    half_sqrt_2 = dt(0.5) * np.sqrt(2.0, dtype=dt)
    w = x * half_sqrt_2
    z = lax.abs(w)
    tails = lax.select(lax.gt(w, np.array(0, dt)), dt(2.0) - lax.erfc(z), lax.erfc(z))
    return dt(0.5) * lax.select(lax.lt(z, half_sqrt_2), dt(1.0) + lax.erf(w), tails)


def log_ndtr(x, series_order=3):
    """log(ndtr(x)), accurate in both tails: an asymptotic series below `lower`, where
    ndtr underflows, and -ndtr(-x) above `upper`, where it rounds to 1. JAX's ops in JAX's
    order (the same bits), and JAX's derivative exp(log N(x) - log_ndtr(x)).
    JAX: jax.scipy.special.log_ndtr."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    return _log_ndtr(_f32_or_f64("log_ndtr", x), series_order)


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def _log_ndtr(x, series_order):
    dt = x.dtype.type
    lower, upper = (np.array(-20, dt), np.array(8, dt)) if dt == np.float64 else \
        (np.array(-10, dt), np.array(5, dt))
    above = lax.gt(x, upper)
    ndtr_res = _ndtr(jnp.where(above, -x, lax.max(x, lower)))
    return jnp.where(above, -ndtr_res,
                     jnp.where(lax.gt(x, lower), lax.log(ndtr_res),
                               _log_ndtr_lower(lax.min(x, lower), series_order)))


@_log_ndtr.defjvp
def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    ans = _log_ndtr(x, series_order)
    return ans, lax.mul(t, lax.exp(lax.sub(_norm_logpdf(x), ans)))


def _norm_logpdf(x):
    dt = x.dtype.type
    return lax.sub(lax.mul(np.array(-0.5, dt), lax.square(x)),
                   np.array(0.5 * np.log(2 * np.pi), dt))


def _log_ndtr_lower(x, series_order):
    # -x^2/2 - log(-x) - log(sqrt(2 pi)) + log(the asymptotic series)
    dt = x.dtype.type
    x_2 = lax.square(x)
    log_scale = -dt(0.5) * x_2 - lax.log(-x) - dt(0.5 * np.log(2.0 * np.pi))
    return log_scale + lax.log(_log_ndtr_series(x, series_order))


def _log_ndtr_series(x, series_order):
    # 1 + sum_n (-1)^n (2n-1)!! / x^2n, the even and odd terms summed apart (as JAX)
    dt = x.dtype.type
    if series_order <= 0:
        return np.array(1, dt)
    x_2 = lax.square(x)
    even_sum, odd_sum = jnp.zeros_like(x), jnp.zeros_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        y = np.array(np.prod(np.arange(2 * n - 1, 1, -2)), dt) / x_2n
        if n % 2:
            odd_sum += y
        else:
            even_sum += y
        x_2n *= x_2
    return dt(1.0) + even_sum - odd_sum


def _x_f_y(name, fy, dfy):
    """x * f(y), 0 where x == 0 unless y is NaN, with JAX's custom derivative
    t_x f(y) + t_y x / f'(y)^-1 (JAX's ops in JAX's order: the same bits). As in JAX, the
    arguments are promoted inside the function, so an integer x's tangent is a float0,
    which the derivative refuses (TypeError), as JAX's does."""
    @custom_jvp
    def x_f_y(x, y):
        x, y = _float(name, x, y)
        keep = lax.or_(lax.ne(x, np.array(0, x.dtype)), lax.ne(y, y))
        return jnp.where(keep, lax.mul(x, fy(y)), jnp.zeros_like(x))

    @x_f_y.defjvp
    def x_f_y_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        out = x_f_y(x, y)
        return out, (tx * fy(y) + ty * x / dfy(y)).astype(out.dtype)
    return x_f_y


_xlogy = _x_f_y("xlogy", lax.log, lambda y: y)
_xlog1py = _x_f_y("xlog1py", lax.log1p, lambda y: 1 + y)


def xlogy(x, y):
    """x * log(y), 0 where x == 0 (unless y is NaN). JAX: jax.scipy.special.xlogy."""
    return _xlogy(x, y)


def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0 (unless y is NaN). JAX: jax.scipy.special.xlog1py."""
    return _xlog1py(x, y)


def entr(x):
    """-x log x for x >= 0 (0 at 0), -inf for x < 0, NaN for NaN; as JAX, via xlogy, so
    the gradient below 0 is NaN too. JAX: jax.scipy.special.entr."""
    (x,) = _float("entr", x)
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        raise ValueError("entr does not support complex-valued inputs.")
    return lax.select(lax.lt(x, np.array(0, x.dtype)), lax.full_like(x, -np.inf),
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


def i0(x):
    """The modified Bessel function I0(x). JAX: jax.scipy.special.i0 (op by op when
    called eagerly, as JAX's: one fused program rounds differently)."""
    (x,) = _float("i0", x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i0e(x)


def i1(x):
    """The modified Bessel function I1(x). JAX: jax.scipy.special.i1."""
    (x,) = _float("i1", x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i1e(x)


_NO_RIEMANN = ("Riemann zeta function not implemented; pass q != None to compute the "
               "Hurwitz Zeta function.")


def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (k + q)^-x (q is required: JAX has no Riemann
    zeta); differentiated through a series (`_zeta_series`), as JAX's.
    JAX: jax.scipy.special.zeta."""
    if q is None:
        raise NotImplementedError(_NO_RIEMANN)
    return _zeta(x, q)


@custom_jvp
def _zeta(x, q):
    return lax.zeta(*_float("zeta", x, q))


@functools.cache
def _zeta_coefs(count):
    """(2j + 2)! / B_{2j + 2} for j < count, each rounded once to a double."""
    bern = _bernoulli_fractions(2 * count)
    return [float(math.factorial(2 * j + 2) / bern[2 * j + 2]) for j in range(count)]


def _zeta_series(x, q):
    """zeta(x, q) by Euler-Maclaurin summation (Johansson 2015, formula 5): the first N
    terms, the integral of the tail and M correction terms; N = M = 8 in float32, else
    16. Its derivatives are zeta's (the op has none)."""
    s, a = _float("zeta", x, q)
    dt = a.dtype.type
    n = m = dt(8) if a.dtype == np.float32 else dt(16)
    s_, a_ = jnp.expand_dims(s, -1), jnp.expand_dims(a, -1)
    k = jnp.expand_dims(np.arange(n, dtype=n.dtype), tuple(range(a.ndim)))
    head = jnp.sum((a_ + k) ** -s_, -1)
    integral = lax.div((a + n) ** (dt(1) - s), s - dt(1))
    first = (a + n) ** -s
    j = jnp.expand_dims(np.arange(2 * m, dtype=m.dtype), tuple(range(s.ndim)))
    rising = jnp.cumprod((s_ + j) / (a_ + n), -1)[..., ::2]
    rising = jnp.clip(rising, max=jnp.finfo(dt).max)
    coefs = np.array(_zeta_coefs(rising.shape[-1]), dtype=dt)
    rising = rising / jnp.expand_dims(coefs, tuple(range(a.ndim)))
    return head + integral + first * (dt(0.5) + rising.sum(-1))


_zeta.defjvp(lambda primals, tangents: jvp(_zeta_series, primals, tangents))


# Cephes' ndtri: a rational approximation in w = p - 1/2 for the middle, and in 1/z,
# z = sqrt(-2 log p), for the tails (P0/Q0, P1/Q1, P2/Q2 of Cephes' ndtri.c; the Q's with
# their leading 1). The same ops as JAX's, so results and gradients agree to the bit.
_NDTRI_P0 = (-5.99633501014107895267e1, 9.80010754185999661536e1, -5.66762857469070293439e1,
             1.39312609387279679503e1, -1.23916583867381258016e0)
_NDTRI_Q0 = (1.0, 1.95448858338141759834e0, 4.67627912898881538453e0,
             8.63602421390890590575e1, -2.25462687854119370527e2, 2.00260212380060660359e2,
             -8.20372256168333339912e1, 1.59056225126211695515e1, -1.18331621121330003142e0)
_NDTRI_P1 = (4.05544892305962419923e0, 3.15251094599893866154e1, 5.71628192246421288162e1,
             4.40805073893200834700e1, 1.46849561928858024014e1, 2.18663306850790267539e0,
             -1.40256079171354495875e-1, -3.50424626827848203418e-2,
             -8.57456785154685413611e-4)
_NDTRI_Q1 = (1.0, 1.57799883256466749731e1, 4.53907635128879210584e1,
             4.13172038254672030440e1, 1.50425385692907503408e1, 2.50464946208309415979e0,
             -1.42182922854787788574e-1, -3.80806407691578277194e-2,
             -9.33259480895457427372e-4)
_NDTRI_P2 = (3.23774891776946035970e0, 6.91522889068984211695e0, 3.93881025292474443415e0,
             1.33303460815807542389e0, 2.01485389549179081538e-1, 1.23716634817820021358e-2,
             3.01581553508235416007e-4, 2.65806974686737550832e-6,
             6.23974539184983293730e-9)
_NDTRI_Q2 = (1.0, 6.02427039364742014255e0, 3.67983563856160859403e0,
             1.37702099489081330271e0, 2.16236993594496635890e-1, 1.34204006088543189037e-2,
             3.28014464682127739104e-4, 2.89247864745380683936e-6,
             6.79019408009981274425e-9)


def _ndtri(p, mcp=None, flip=None, zero=None, one=None):
    # (mcp, flip, zero, one: JAX's complement and masks, where computed ahead in NumPy)
    dt = p.dtype.type
    shape = p.shape
    coef = [np.array(c, dt) for c in (_NDTRI_P0, _NDTRI_Q0, _NDTRI_P1, _NDTRI_Q1, _NDTRI_P2,
                                      _NDTRI_Q2)]
    p0, q0, p1, q1, p2, q2 = coef
    # The lower half (p <= 1 - e^-2, complemented above), 0 read as 1/2 (masked later).
    if mcp is None:
        mcp = jnp.where(p > dt(-np.expm1(-2.0)), dt(1.0) - p, p)
        flip, zero, one = p > dt(1.0 - np.exp(-2.0)), p == dt(0.0), p == dt(1.0)
    mcp = jnp.where(mcp == dt(0.0), jnp.full(shape, dt(0.5)), mcp)
    w = mcp - dt(0.5)
    ww = lax.square(w)
    big = w + w * ww * (jnp.polyval(p0, ww) / jnp.polyval(q0, ww))
    big *= -dt(np.sqrt(2.0 * np.pi))
    z = lax.sqrt(dt(-2.0) * lax.log(mcp))
    first = z - lax.log(z) / z
    small = first - jnp.polyval(p2, 1 / z) / jnp.polyval(q2, 1 / z) / z
    other = first - jnp.polyval(p1, 1 / z) / jnp.polyval(q1, 1 / z) / z
    x = jnp.where(mcp > dt(np.exp(-2.0)), big, jnp.where(z >= dt(8.0), small, other))
    x = jnp.where(flip, x, -x)
    inf = jnp.full(shape, dt(np.inf))
    return jnp.where(zero, -inf, jnp.where(one, inf, x))


def ndtri(p):
    """The inverse of the standard normal CDF. JAX: jax.scipy.special.ndtri."""
    if isinstance(p, (np.ndarray, np.floating)) and np.asarray(p).dtype == np.float64 \
            and jnp.asarray(p).dtype != np.float64:
        # A NumPy float64 with x64 off: JAX's ndtri compares and complements it in NumPy,
        # in float64, before its jnp ops canonicalize it; so do we.
        p64 = np.asarray(p)
        above = p64 > -np.expm1(-2.0)
        return _ndtri_given(p64.astype(np.float32), np.where(above, 1.0 - p64, p64),
                            p64 > 1.0 - np.exp(-2.0), p64 == 0.0, p64 == 1.0)
    return _ndtri_eager(p)


def _ndtri_eager(p):
    # (op by op when called eagerly, as JAX's ndtri: one fused program rounds differently)
    return _ndtri(_f32_or_f64("ndtri", p))


def _ndtri_given(p, mcp, flip, zero, one):
    return _ndtri(jnp.asarray(p), jnp.asarray(mcp), flip, zero, one)


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


# The coefficients of the asymptotic series of del(x) = ln Gamma(x) - ((x - 1/2) ln x - x +
# ln(2 pi) / 2) in 1/x^2 (cdflib's algdiv, TOMS 708), lowest first.
_DEL_SERIES = (0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03,
               -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02)


def _log_gamma_ratio(a, b):
    """ln(Gamma(b) / Gamma(a + b)) for b >= 8 and a <= b, by cdflib's algdiv (TOMS 708),
    evaluated in JAX's order (its betaln): del(b) - del(a + b) from the series, with the
    rest of Stirling's form split so as not to cancel."""
    h = a / b
    c = h / (1 + h)
    x = h / (1 + h)
    d = b + (a - 0.5)
    # s[n] = (1 - x^n) / (1 - x) for n = 3, 5, ..., 11
    x2 = x * x
    s = [1.0 + (x + x2)]
    for _ in range(4):
        s.append(1.0 + (x + x2 * s[-1]))
    t = (1.0 / b) ** 2
    c0, c1, c2, c3, c4, c5 = _DEL_SERIES
    w = c5 * s[4] * t + c4 * s[3]
    for ck, sk in ((c3, s[2]), (c2, s[1]), (c1, s[0])):
        w = w * t + ck * sk
    w = (w * t + c0) * (c / b)
    u = d * lax.log1p(a / b)
    v = a * (lax.log(b) - 1.0)
    return jnp.where(u <= v, (w - v) - u, (w - u) - v)


def betaln(a, b):
    """log|B(a, b)|: lgamma(a) + lgamma(b) - lgamma(a + b), or for b >= 8 (b the larger)
    lgamma(a) + ln(Gamma(b) / Gamma(a + b)) by cdflib's series, which does not lose the
    digits the difference of large lgammas does (as JAX). JAX: jax.scipy.special.betaln."""
    a, b = _float("betaln", a, b)
    a, b = jnp.minimum(a, b), jnp.maximum(a, b)
    small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    large_b = lax.lgamma(a) + _log_gamma_ratio(a, b)
    return jnp.where(b < 8, small_b, large_b)


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
    """The rising factorial Gamma(z + m) / Gamma(z), as the ratio of gamma functions
    (1 where m == 0), differentiated by JAX's rules. JAX: jax.scipy.special.poch."""
    z, m = _float("poch", z, m)
    if jnp.iscomplexobj(z):
        raise ValueError("jnp.poch does not support complex-valued inputs.")
    return _poch(z, m)


@custom_jvp
def _poch(z, m):
    return jnp.where(m == 0., jnp.array(1, dtype=z.dtype), gamma(z + m) / gamma(z))


@_poch.defjvp
def _poch_jvp(primals, tangents):
    (z, m), (dz, dm) = primals, tangents
    out = _poch(z, m)
    return out, ((digamma(z + m) - digamma(z)) * _poch(z, m) * dz
                 + digamma(z + m) * _poch(z, m) * dm)


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
    zero = lax.full_like(p, 0)
    both = lax.bitwise_and(lax.gt(p, zero), lax.gt(q, zero))
    one_zero = lax.bitwise_and(lax.eq(p, zero), lax.ge(q, zero))
    sp, sq = jnp.where(both, p, 1), jnp.where(both, q, 1)
    # (p log p - p log q, JAX's form: p log(p / q) rounds otherwise, and its derivative
    # is xlogy's)
    value = lax.sub(_xlogx(sp), xlogy(sp, sq))
    return jnp.where(both, value, jnp.where(one_zero, zero, np.inf))


def kl_div(p, q):
    """p log(p / q) - p + q for p, q > 0; q at p == 0 (q >= 0); inf otherwise.
    JAX: jax.scipy.special.kl_div."""
    p, q = _float("kl_div", p, q)
    return rel_entr(p, q) - p + q


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
    """The Bernoulli numbers B_0..B_n (B_1 = -1/2), by JAX's floating-point route (Chowla
    and Hartung: B_2k from the cumulative product of -(2k-1) 2k / (4 pi^2) times
    1 + sum_{j=2}^{49} j^-2k), so the values are JAX's, not the exact ratios rounded.
    JAX: jax.scipy.special.bernoulli."""
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    first = jnp.array([1, -1 / 2, 1 / 6])
    if n < 3:
        return first[:n + 1]
    out = jnp.zeros(n + 1).at[:3].set(first)
    m = jnp.arange(4, n + 1, 2, dtype=out.dtype)
    # (pi^2 as an array: JAX divides by its Python float at run time, eagerly; a constant
    # in the program XLA turns into a multiplication by its rounded reciprocal)
    pi2 = jnp.asarray(np.pi ** 2, dtype=out.dtype)
    q1 = (1. / np.pi ** 2) * jnp.cumprod(-(m - 1) * m / 4 / pi2)
    k = jnp.arange(2, 50, dtype=out.dtype)
    q2 = jnp.sum(k[:, None] ** -m[None, :], axis=0)
    return out.at[4::2].set(q1 * (1 + q2))


def _bernoulli_fractions(n):
    """B_0..B_n as Fractions (B_1 = -1/2)."""
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
    return b


# Deprecated names, as JAX's module __getattr__: lpmn and lpmn_values warn once each;
# sph_harm is gone (removed in JAX 0.10.0).
_DEPRECATED = {
    "lpmn": ("jax.scipy.special.lpmn is deprecated; no replacement is planned.",
             _legendre.lpmn),
    "lpmn_values": ("jax.scipy.special.lpmn_values is deprecated; no replacement is "
                    "planned.", _legendre.lpmn_values),
    "sph_harm": ("jax.scipy.special.sph_harm was deprecated in v0.7.0 and removed in "
                 "v0.10.0. Use jax.scipy.special.sph_harm_y instead.", None),
}


@functools.cache
def __getattr__(name):
    if name in _DEPRECATED:
        message, fn = _DEPRECATED[name]
        if fn is None:
            raise AttributeError(message)
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return fn
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
