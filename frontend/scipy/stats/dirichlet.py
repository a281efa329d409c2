"""The Dirichlet distribution (JAX's `jax.scipy.stats.dirichlet`)."""
from __future__ import annotations

from mjax import lax
from mjax import numpy as jnp
from mjax.scipy import special


def logpdf(x, alpha):
    """log density of x on the simplex (x's first axis is the category axis, as SciPy;
    K-1 components get the last from sum-to-one). JAX: jax.scipy.stats.dirichlet.logpdf."""
    x, alpha = jnp._promote("scipy.stats.dirichlet.logpdf", x, alpha, inexact=True,
                            broadcast=False)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or "
                         f"one entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, 1 - jnp.sum(x, 0, keepdims=True)], axis=0)
    a = alpha.reshape((-1,) + (1,) * (x.ndim - 1))
    norm = jnp.sum(lax.lgamma(alpha)) - lax.lgamma(jnp.sum(alpha))
    value = jnp.sum(special.xlogy(a - 1, x), axis=0) - norm
    inside = jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < 1e-4)
    return jnp.where(inside, value, -jnp.inf)


def pdf(x, alpha):
    """JAX: jax.scipy.stats.dirichlet.pdf."""
    return jnp.exp(logpdf(x, alpha))
