"""Student's t distribution (JAX's `jax.scipy.stats.t`)."""
from __future__ import annotations

import math

from mjax import lax
from mjax import numpy as jnp
from mjax.scipy.stats._util import promote


def logpdf(x, df, loc=0, scale=1):
    """log of the t density with `df` degrees of freedom. JAX: jax.scipy.stats.t.logpdf."""
    x, df, loc, scale = promote("t.logpdf", x, df, loc, scale)
    z = (x - loc) / scale
    half = (df + 1) / 2
    norm = (lax.lgamma(half) - lax.lgamma(df / 2) - 0.5 * jnp.log(df * math.pi)
            - jnp.log(scale))
    return norm - half * jnp.log1p(z * z / df)


def pdf(x, df, loc=0, scale=1):
    """The t density. JAX: jax.scipy.stats.t.pdf."""
    return jnp.exp(logpdf(x, df, loc, scale))
