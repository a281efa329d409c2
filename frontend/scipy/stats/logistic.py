"""The logistic distribution (JAX's `jax.scipy.stats.logistic`)."""
from __future__ import annotations

from mjax import lax, numpy as jnp
from mjax.scipy import special
from mjax.scipy.stats._util import const, promote


def logpdf(x, loc=0, scale=1):
    """-y - 2 softplus(-y) - log(scale), y = (x - loc) / scale.
    JAX: jax.scipy.stats.logistic.logpdf."""
    x, loc, scale = promote("logistic.logpdf", x, loc, scale)
    # -2 logaddexp(y/2, -y/2) - log(scale): JAX's ops in JAX's order (the same bits)
    y = lax.div(lax.sub(x, loc), scale)
    two = const(y, 2)
    half = lax.div(y, two)
    return lax.sub(lax.mul(lax.neg(two), jnp.logaddexp(half, lax.neg(half))), lax.log(scale))


def pdf(x, loc=0, scale=1):
    """JAX: jax.scipy.stats.logistic.pdf."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """expit(y). JAX: jax.scipy.stats.logistic.cdf."""
    x, loc, scale = promote("logistic.cdf", x, loc, scale)
    return special.expit((x - loc) / scale)


def sf(x, loc=0, scale=1):
    """expit(-y). JAX: jax.scipy.stats.logistic.sf."""
    x, loc, scale = promote("logistic.sf", x, loc, scale)
    return special.expit((loc - x) / scale)


def ppf(x, loc=0, scale=1):
    """logit(q) scale + loc. JAX: jax.scipy.stats.logistic.ppf."""
    x, loc, scale = promote("logistic.ppf", x, loc, scale)
    return special.logit(x) * scale + loc


def isf(x, loc=0, scale=1):
    """-logit(q) scale + loc. JAX: jax.scipy.stats.logistic.isf."""
    x, loc, scale = promote("logistic.isf", x, loc, scale)
    return -special.logit(x) * scale + loc
