"""The multinomial distribution (JAX's `jax.scipy.stats.multinomial`)."""
from __future__ import annotations

from mjax import lax
from mjax import numpy as jnp
from mjax.scipy import special


def logpmf(x, n, p):
    """log n! + sum_i (x_i log p_i - log x_i!) over the last axis; -inf unless the counts
    sum to n. x and n must be integers. As in JAX 0.10.2, the check sums x over all
    axes, so a batch of several count vectors is -inf throughout.
    JAX: jax.scipy.stats.multinomial.logpmf."""
    p, = jnp._promote("scipy.stats.multinomial.logpmf", p, inexact=True)
    x, n = jnp._promote("scipy.stats.multinomial.logpmf", x, n, broadcast=False)
    if x.ndim and n.ndim:   # (JAX's rank promotion: leading 1s, no broadcasting)
        rank = max(x.ndim, n.ndim)
        x, n = (v.reshape((1,) * (rank - v.ndim) + v.shape) for v in (x, n))
    if not jnp.issubdtype(x.dtype, jnp.integer):
        raise ValueError(f"multinomial.logpmf: the counts x and n must be integers, got "
                         f"{x.dtype} (after promoting x with n)")
    x, n = x.astype(p.dtype), n.astype(p.dtype)
    value = lax.lgamma(n + 1) + jnp.sum(special.xlogy(x, p) - lax.lgamma(x + 1), axis=-1)
    return jnp.where(jnp.sum(x) == n, value, -jnp.inf)


def pmf(x, n, p):
    """JAX: jax.scipy.stats.multinomial.pmf."""
    return jnp.exp(logpmf(x, n, p))
