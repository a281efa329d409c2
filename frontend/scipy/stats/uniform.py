"""The uniform distribution on [loc, loc + scale] (JAX's `jax.scipy.stats.uniform`)."""
from __future__ import annotations

from mjax import numpy as jnp
from mjax.scipy.stats._util import promote


def logpdf(x, loc=0, scale=1):
    """-log(scale) inside [loc, loc + scale], -inf outside. JAX: jax.scipy.stats.uniform.logpdf."""
    x, loc, scale = promote("uniform.logpdf", x, loc, scale)
    value = jnp.broadcast_to(-jnp.log(scale), x.shape)
    return jnp.where((x < loc) | (x > loc + scale), -jnp.inf, value)


def pdf(x, loc=0, scale=1):
    """JAX: jax.scipy.stats.uniform.pdf."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """(x - loc) / scale clipped to [0, 1]. JAX: jax.scipy.stats.uniform.cdf."""
    x, loc, scale = promote("uniform.cdf", x, loc, scale)
    return jnp.clip((x - loc) / scale, 0, 1)


def ppf(q, loc=0, scale=1):
    """loc + q scale for q in [0, 1], NaN outside. JAX: jax.scipy.stats.uniform.ppf."""
    q, loc, scale = promote("uniform.ppf", q, loc, scale)
    return jnp.where((q < 0) | (q > 1), jnp.nan, loc + q * scale)
