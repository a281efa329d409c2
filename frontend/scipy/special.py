"""`mjax.scipy.special`: SciPy's special functions over `mjax.lax` (JAX's
`jax.scipy.special`). erf, lgamma, digamma and polygamma are primitives; the rest compose.
"""
from __future__ import annotations

from mjax import lax
from mjax import numpy as jnp

__all__ = ["logsumexp", "erf", "erfc", "erfinv", "gammaln", "digamma", "polygamma",
           "expit", "logit", "xlogy", "xlog1py", "entr", "ndtr", "log_ndtr"]


def _float(name, *args):
    return jnp._promote(name, *args, inexact=True)


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
logit = _unary("logit", lambda x: lax.log(lax.div(x, lax.sub(lax.full_like(x, 1), x))),
               "log(x / (1 - x)), the inverse of expit.")


def polygamma(n, x):
    """The n-th derivative of digamma, for integer n >= 0. JAX: jax.scipy.special.polygamma."""
    n, x = _float("polygamma", n, x)
    return lax.polygamma(n, x)


def ndtr(x):
    """The standard normal CDF. JAX: jax.scipy.special.ndtr."""
    (x,) = _float("ndtr", x)
    return 0.5 * lax.erfc(-x * (1 / 2 ** 0.5))


def log_ndtr(x):
    """log(ndtr(x)), accurate in both tails: an asymptotic series below `lower`, where
    ndtr underflows, and log1p(-ndtr(-x)) above `upper`, where it rounds to 1.
    JAX: jax.scipy.special.log_ndtr."""
    (x,) = _float("log_ndtr", x)
    lower, upper = (-20.0, 8.0) if x.dtype.itemsize == 8 else (-10.0, 5.0)
    # log ndtr(x) ~ -x^2/2 - log(-x) - log(sqrt(2 pi)) + log(1 + sum_k (-1)^k (2k-1)!! / x^2k)
    xl = jnp.minimum(x, lower)
    z = 1 / (xl * xl)
    series, term = jnp.ones_like(z), jnp.ones_like(z)
    for k in range(1, 10):
        term = term * (-(2 * k - 1)) * z
        series = series + term
    tail = -0.5 * xl * xl - jnp.log(-xl) - 0.9189385332046727 + jnp.log(series)
    middle = jnp.log(ndtr(jnp.clip(x, lower, upper)))
    high = jnp.log1p(-ndtr(-jnp.maximum(x, upper)))
    return jnp.where(x < lower, tail, jnp.where(x > upper, high, middle))


def _x_f_y(name, x, y, fy):
    """x * f(y), defined as 0 where x == 0 (even where f(y) is infinite). The masked
    entries see a safe y, so that gradients stay finite elsewhere."""
    x, y = _float(name, x, y)
    zero = x == 0
    safe_y = jnp.where(zero, jnp.ones_like(y), y)
    return jnp.where(zero, jnp.zeros_like(x), x * fy(safe_y))


def xlogy(x, y):
    """x * log(y), 0 where x == 0. JAX: jax.scipy.special.xlogy."""
    return _x_f_y("xlogy", x, y, jnp.log)


def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0. JAX: jax.scipy.special.xlog1py."""
    return _x_f_y("xlog1py", x, y, jnp.log1p)


def entr(x):
    """-x log x for x > 0, 0 at 0, -inf for x < 0. JAX: jax.scipy.special.entr."""
    (x,) = _float("entr", x)
    positive = x > 0
    safe = jnp.where(positive, x, jnp.ones_like(x))
    return jnp.where(positive, -(safe * jnp.log(safe)),
                     jnp.where(x == 0, jnp.zeros_like(x), jnp.full_like(x, -jnp.inf)))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over `axis`, shifted by the max for stability.

    With return_sign, returns (log|s|, sign(s)); otherwise a negative sum gives NaN.
    Masked-out entries (where=False) are left out. JAX: jax.scipy.special.logsumexp."""
    if b is None:
        (a,) = _float("logsumexp", a)
    else:
        a, b = _float("logsumexp", a, b)
    axes = jnp._axes(axis, a.ndim)
    masked = a if where is None else jnp.where(where, a, -jnp.inf)
    amax = jnp.max(masked, axis=axes, keepdims=True)
    # An infinite max (all -inf, or some +inf) would give inf - inf: shift by 0 instead.
    amax = lax.stop_gradient(jnp.where(jnp.isfinite(amax), amax, jnp.zeros_like(amax)))
    e = jnp.exp(a - amax)
    if b is not None:
        e = e * b
    if where is not None:
        e = jnp.where(where, e, jnp.zeros_like(e))
    total = jnp.sum(e, axis=axes, keepdims=keepdims)
    sign = jnp.sign(total)
    shift = amax if keepdims else lax.squeeze(amax, axes)
    out = jnp.log(jnp.abs(total)) + shift
    if return_sign:
        return out, sign
    if b is not None:
        out = jnp.where(sign < 0, jnp.full_like(out, jnp.nan), out)
    return out
