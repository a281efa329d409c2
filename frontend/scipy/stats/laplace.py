"""The Laplace distribution (JAX's `jax.scipy.stats.laplace`)."""
from __future__ import annotations

import math

from mjax import lax, numpy as jnp
from mjax.scipy.stats._util import const, promote


def logpdf(x, loc=0, scale=1):
    """-|x - loc| / scale - log(2 scale). JAX: jax.scipy.stats.laplace.logpdf."""
    x, loc, scale = promote("laplace.logpdf", x, loc, scale)
    # -(|x - loc| / scale + log(2 scale)): JAX's ops in JAX's order (the same bits)
    linear_term = lax.div(lax.abs(lax.sub(x, loc)), scale)
    return lax.neg(lax.add(linear_term, lax.log(lax.mul(const(x, 2),
                                                        scale))))


def pdf(x, loc=0, scale=1):
    """JAX: jax.scipy.stats.laplace.pdf."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """JAX: jax.scipy.stats.laplace.cdf."""
    x, loc, scale = promote("laplace.cdf", x, loc, scale)
    y = (x - loc) / scale
    half = 0.5 * jnp.exp(-jnp.abs(y))
    return jnp.where(y <= 0, half, 1 - half)
