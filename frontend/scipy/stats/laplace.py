"""The Laplace distribution (JAX's `jax.scipy.stats.laplace`)."""
from __future__ import annotations

import math

from mjax import numpy as jnp
from mjax.scipy.stats._util import promote


def logpdf(x, loc=0, scale=1):
    """-|x - loc| / scale - log(2 scale). JAX: jax.scipy.stats.laplace.logpdf."""
    x, loc, scale = promote("laplace.logpdf", x, loc, scale)
    return -jnp.abs((x - loc) / scale) - jnp.log(scale) - math.log(2)


def pdf(x, loc=0, scale=1):
    """JAX: jax.scipy.stats.laplace.pdf."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """JAX: jax.scipy.stats.laplace.cdf."""
    x, loc, scale = promote("laplace.cdf", x, loc, scale)
    y = (x - loc) / scale
    half = 0.5 * jnp.exp(-jnp.abs(y))
    return jnp.where(y <= 0, half, 1 - half)
