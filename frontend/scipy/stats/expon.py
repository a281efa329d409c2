"""The exponential distribution (JAX's `jax.scipy.stats.expon`), in JAX's operations and
order (y = (loc - x) / scale; below loc the density is 0), so values match to the bit."""
from __future__ import annotations

import numpy as np

from mjax import lax
from mjax import numpy as jnp
from mjax.scipy.stats._util import promote


def logpdf(x, loc=0, scale=1):
    """-((x - loc) / scale + log(scale)), -inf below loc. JAX: jax.scipy.stats.expon.logpdf."""
    x, loc, scale = promote("expon.logpdf", x, loc, scale)
    log_probs = lax.neg(lax.add(lax.div(lax.sub(x, loc), scale), lax.log(scale)))
    return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x, loc=0, scale=1):
    """JAX: jax.scipy.stats.expon.pdf."""
    return lax.exp(logpdf(x, loc, scale))


def _neg_scaled(name, x, loc, scale):
    x, loc, scale = promote(name, x, loc, scale)
    return x, loc, lax.div(lax.sub(loc, x), scale)


def cdf(x, loc=0, scale=1):
    """-expm1((loc - x) / scale), 0 below loc. JAX: jax.scipy.stats.expon.cdf."""
    x, loc, y = _neg_scaled("expon.cdf", x, loc, scale)
    return jnp.where(lax.lt(x, loc), jnp.zeros_like(y), lax.neg(lax.expm1(y)))


def logcdf(x, loc=0, scale=1):
    """log1p(-sf). JAX: jax.scipy.stats.expon.logcdf."""
    return lax.log1p(lax.neg(sf(x, loc, scale)))


def logsf(x, loc=0, scale=1):
    """(loc - x) / scale, 0 below loc. JAX: jax.scipy.stats.expon.logsf."""
    x, loc, y = _neg_scaled("expon.sf", x, loc, scale)
    return jnp.where(lax.lt(x, loc), jnp.zeros_like(y), y)


def sf(x, loc=0, scale=1):
    """exp(logsf). JAX: jax.scipy.stats.expon.sf."""
    return lax.exp(logsf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    """loc - scale log1p(-q); NaN outside [0, 1]. JAX: jax.scipy.stats.expon.ppf."""
    q, loc, scale = promote("expon.ppf", q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan,
                     lax.sub(loc, lax.mul(scale, lax.log1p(lax.neg(q)))))
