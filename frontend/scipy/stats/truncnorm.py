"""The normal distribution truncated to [a, b] in standard units, i.e. to
[loc + a scale, loc + b scale] (JAX's `jax.scipy.stats.truncnorm`).

The log normalizer is scipy's: log(Phi(b) - Phi(a)) evaluated in whichever tail keeps its
digits. Every function is nan when a >= b. As in JAX, results are never weakly typed."""
from __future__ import annotations

import math

from mjax import numpy as jnp
from mjax.scipy import special
from mjax.scipy.stats._util import not_weak, promote

_LOG_2PI = math.log(2 * math.pi)


def _log_sub_exp(u, v):
    """log(exp(u) - exp(v)), -inf when both are -inf."""
    ones = jnp.ones_like(u)
    return special.logsumexp(jnp.stack([u, v]), axis=0, b=jnp.stack([ones, -ones]))


def _log_gauss_mass(a, b):
    """log(Phi(b) - Phi(a)) for a <= b."""
    a, b = jnp.broadcast_arrays(a, b)
    left, right = b <= 0, a > 0
    # A tail interval is a difference of two small log_ndtr values; the right tail is
    # mirrored onto the left one, where log_ndtr is accurate.
    lo, hi = jnp.where(right, -b, a), jnp.where(right, -a, b)
    tail = _log_sub_exp(special.log_ndtr(hi), special.log_ndtr(lo))
    # Straddling zero the mass is near 1: subtract the two small tails from it.
    central = jnp.log1p(-special.ndtr(a) - special.ndtr(-b))
    return jnp.where(left | right, tail, central)


def logpdf(x, a, b, loc=0, scale=1):
    """log N(x; loc, scale^2) - log(Phi(b) - Phi(a)); -inf off the interval.
    JAX: jax.scipy.stats.truncnorm.logpdf."""
    x, a, b, loc, scale = promote("truncnorm.logpdf", x, a, b, loc, scale)
    z = (x - loc) / scale
    # (scale enters squared, so a negative scale gives the mirrored density, as in JAX)
    value = -0.5 * z * z - 0.5 * (_LOG_2PI + jnp.log(scale * scale)) - _log_gauss_mass(a, b)
    value = jnp.where((z < a) | (z > b), -jnp.inf, value)
    return not_weak(jnp.where(a >= b, jnp.nan, value))


def pdf(x, a, b, loc=0, scale=1):
    """The density. JAX: jax.scipy.stats.truncnorm.pdf."""
    return jnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    """log((Phi(z) - Phi(a)) / (Phi(b) - Phi(a))), z = (x - loc) / scale: 0 above b, -inf
    below a, 0 for a nan x (as in JAX). JAX: jax.scipy.stats.truncnorm.logcdf."""
    x, a, b, loc, scale = promote("truncnorm.logcdf", x, a, b, loc, scale)
    z, a, b = jnp.broadcast_arrays((x - loc) / scale, a, b)
    log_mass = _log_gauss_mass(a, b)
    inside_z = jnp.clip(z, a, b)           # (keeps the masses of unselected lanes finite)
    log_cdf = _log_gauss_mass(a, inside_z) - log_mass
    log_sf = _log_gauss_mass(inside_z, b) - log_mass
    # Near 1 the cdf is better computed from the small sf.
    value = jnp.select([z >= b, z <= a, log_cdf > -0.1, z > a],
                       [jnp.zeros_like(z), jnp.full_like(z, -jnp.inf),
                        jnp.log1p(-jnp.exp(log_sf)), log_cdf])
    return not_weak(jnp.where(a >= b, jnp.nan, value))


def cdf(x, a, b, loc=0, scale=1):
    """JAX: jax.scipy.stats.truncnorm.cdf."""
    return jnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    """log P(X > x), the logcdf of the mirrored distribution.
    JAX: jax.scipy.stats.truncnorm.logsf."""
    x, a, b, loc, scale = promote("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x, a, b, loc=0, scale=1):
    """JAX: jax.scipy.stats.truncnorm.sf."""
    return jnp.exp(logsf(x, a, b, loc, scale))
