"""The exponential distribution (JAX's `jax.scipy.stats.expon`)."""
from __future__ import annotations

from mjax import numpy as jnp
from mjax.scipy.stats._util import promote


def logpdf(x, loc=0, scale=1):
    """-y - log(scale) for y = (x - loc) / scale >= 0. JAX: jax.scipy.stats.expon.logpdf."""
    x, loc, scale = promote("expon.logpdf", x, loc, scale)
    y = (x - loc) / scale
    return jnp.where(y < 0, -jnp.inf, -y - jnp.log(scale))


def pdf(x, loc=0, scale=1):
    """JAX: jax.scipy.stats.expon.pdf."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """1 - exp(-y). JAX: jax.scipy.stats.expon.cdf."""
    x, loc, scale = promote("expon.cdf", x, loc, scale)
    y = (x - loc) / scale
    return jnp.where(y < 0, 0.0, -jnp.expm1(-jnp.maximum(y, 0)))


def logcdf(x, loc=0, scale=1):
    """JAX: jax.scipy.stats.expon.logcdf."""
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """exp(-y). JAX: jax.scipy.stats.expon.sf."""
    return jnp.exp(logsf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """-y, 0 below loc. JAX: jax.scipy.stats.expon.logsf."""
    x, loc, scale = promote("expon.logsf", x, loc, scale)
    y = (x - loc) / scale
    return jnp.where(y < 0, 0.0, -y)


def ppf(q, loc=0, scale=1):
    """-log(1 - q) scale + loc; NaN outside [0, 1]. JAX: jax.scipy.stats.expon.ppf."""
    q, loc, scale = promote("expon.ppf", q, loc, scale)
    return jnp.where((q < 0) | (q > 1), jnp.nan, -jnp.log1p(-q) * scale + loc)
