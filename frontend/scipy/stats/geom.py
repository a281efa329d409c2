"""The geometric distribution on 1, 2, ... (JAX's `jax.scipy.stats.geom`)."""
from __future__ import annotations

from mjax import lax
from mjax import numpy as jnp
from mjax.scipy import special
from mjax.scipy.stats._util import const, promote


def logpmf(k, p, loc=0):
    """(k - 1) log(1 - p) + log p for integer k >= 1. JAX: jax.scipy.stats.geom.logpmf."""
    k, p, loc = promote("geom.logpmf", k, p, loc)
    # JAX's typed constants: the result is weak only if k is
    zero, one = const(k, 0), const(k, 1)
    x = lax.sub(k, loc)
    value = special.xlog1py(lax.sub(x, one), -p) + lax.log(p)
    return jnp.where(lax.le(x, zero), -jnp.inf, value)


def pmf(k, p, loc=0):
    """JAX: jax.scipy.stats.geom.pmf."""
    return jnp.exp(logpmf(k, p, loc))
