"""The normal distribution (JAX's `jax.scipy.stats.norm`)."""
from __future__ import annotations

import math

from mjax import lax, numpy as jnp
from mjax.scipy import special
from mjax.scipy.stats._util import const, promote



def logpdf(x, loc=0, scale=1):
    """log N(x; loc, scale^2) = -(log(2 pi scale^2) + (x - loc)^2 / scale^2) / 2, JAX's
    formula op for op (so XLA computes and folds it as JAX's: the same bits). JAX:
    jax.scipy.stats.norm.logpdf."""
    x, loc, scale = promote("norm.logpdf", x, loc, scale)
    scale_sqrd = lax.square(scale)
    log_normalizer = lax.log(lax.mul(const(x, 2 * math.pi), scale_sqrd))
    quadratic = lax.div(lax.square(lax.sub(x, loc)), scale_sqrd)
    return lax.div(lax.add(log_normalizer, quadratic), const(x, -2))


def pdf(x, loc=0, scale=1):
    """N(x; loc, scale^2). JAX: jax.scipy.stats.norm.pdf."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """P(X <= x). JAX: jax.scipy.stats.norm.cdf."""
    x, loc, scale = promote("norm.cdf", x, loc, scale)
    return special.ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    """log P(X <= x), accurate in the tails. JAX: jax.scipy.stats.norm.logcdf."""
    x, loc, scale = promote("norm.logcdf", x, loc, scale)
    return special.log_ndtr((x - loc) / scale)


def sf(x, loc=0, scale=1):
    """P(X > x). JAX: jax.scipy.stats.norm.sf."""
    x, loc, scale = promote("norm.sf", x, loc, scale)
    return special.ndtr((loc - x) / scale)


def logsf(x, loc=0, scale=1):
    """log P(X > x). JAX: jax.scipy.stats.norm.logsf."""
    x, loc, scale = promote("norm.logsf", x, loc, scale)
    return special.log_ndtr((loc - x) / scale)


def ppf(q, loc=0, scale=1):
    """The quantile function (inverse cdf). JAX: jax.scipy.stats.norm.ppf."""
    # (as JAX's: q goes to ndtri unpromoted, so integers raise its TypeError, and the
    # result is cast to the default float dtype)
    return jnp.asarray(special.ndtri(q) * scale + loc, float)


def isf(q, loc=0, scale=1):
    """The inverse survival function. JAX: jax.scipy.stats.norm.isf."""
    q = jnp.asarray(q)
    return ppf(lax.sub(const(q, 1), q), loc, scale)     # JAX's ppf(1 - q)
