"""The Cauchy distribution (JAX's `jax.scipy.stats.cauchy`)."""
from __future__ import annotations

import math

from mjax import numpy as jnp
from mjax.scipy.stats._util import promote


def logpdf(x, loc=0, scale=1):
    """-log(pi scale (1 + y^2)). JAX: jax.scipy.stats.cauchy.logpdf."""
    x, loc, scale = promote("cauchy.logpdf", x, loc, scale)
    y = (x - loc) / scale
    return -math.log(math.pi) - jnp.log(scale) - jnp.log1p(y * y)


def pdf(x, loc=0, scale=1):
    """JAX: jax.scipy.stats.cauchy.pdf."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """1/2 + atan(y) / pi. JAX: jax.scipy.stats.cauchy.cdf."""
    x, loc, scale = promote("cauchy.cdf", x, loc, scale)
    return 0.5 + jnp.arctan((x - loc) / scale) / math.pi


def logcdf(x, loc=0, scale=1):
    """JAX: jax.scipy.stats.cauchy.logcdf."""
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """cdf of the reflection. JAX: jax.scipy.stats.cauchy.sf."""
    x, loc, scale = promote("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """JAX: jax.scipy.stats.cauchy.logsf."""
    return jnp.log(sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    """loc + scale tan(pi (q - 1/2)); NaN outside [0, 1], +-inf at the ends.
    JAX: jax.scipy.stats.cauchy.ppf."""
    q, loc, scale = promote("cauchy.ppf", q, loc, scale)
    value = loc + scale * jnp.tan(math.pi * (q - 0.5))
    value = jnp.where(q == 0, -jnp.inf, jnp.where(q == 1, jnp.inf, value))
    return jnp.where((q < 0) | (q > 1), jnp.nan, value)


def isf(q, loc=0, scale=1):
    """ppf(1 - q). JAX: jax.scipy.stats.cauchy.isf."""
    q, loc, scale = promote("cauchy.isf", q, loc, scale)
    return ppf(1 - q, loc, scale)
