"""The wrapped Cauchy distribution on [0, 2 pi] (JAX's `jax.scipy.stats.wrapcauchy`)."""
from __future__ import annotations

import math

from mjax import numpy as jnp
from mjax.scipy.stats._util import promote


def logpdf(x, c):
    """log((1 - c^2) / (2 pi (1 + c^2 - 2 c cos x))); -inf off [0, 2 pi], nan unless
    0 < c < 1. JAX: jax.scipy.stats.wrapcauchy.logpdf."""
    x, c = promote("wrapcauchy.logpdf", x, c)
    value = (jnp.log1p(-c * c) - math.log(2 * math.pi)
             - jnp.log(1 + c * c - 2 * c * jnp.cos(x)))
    value = jnp.where((x >= 0) & (x <= 2 * math.pi), value, -jnp.inf)
    return jnp.where((c > 0) & (c < 1), value, jnp.nan)


def pdf(x, c):
    """The density. JAX: jax.scipy.stats.wrapcauchy.pdf."""
    return jnp.exp(logpdf(x, c))
