"""The multivariate normal distribution (JAX's `jax.scipy.stats.multivariate_normal`)."""
from __future__ import annotations

import math

from mjax import numpy as jnp
from mjax.scipy import linalg

_LOG_2PI = math.log(2 * math.pi)


def logpdf(x, mean, cov, allow_singular=None):
    """log N(x; mean, cov) over the last axis, batched over leading axes; a scalar or
    vector-free mean takes the 1-D form, a scalar cov scales the identity.
    JAX: jax.scipy.stats.multivariate_normal.logpdf."""
    if allow_singular is not None:
        raise NotImplementedError("jax.scipy.stats.multivariate_normal.logpdf does not "
                                  "support the allow_singular argument.")
    x, mean, cov = jnp._promote("scipy.stats.multivariate_normal.logpdf", x, mean, cov,
                                inexact=True, broadcast=False)
    if not mean.shape:
        return -0.5 * (x - mean) ** 2 / cov - 0.5 * (_LOG_2PI + jnp.log(cov))
    n = mean.shape[-1]
    if not jnp.shape(cov):
        y = x - mean
        return (-0.5 * jnp.einsum("...i,...i->...", y, y) / cov
                - 0.5 * n * (_LOG_2PI + jnp.log(cov)))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    chol = jnp.linalg.cholesky(cov)
    y = x - mean
    batch = jnp.broadcast_shapes(y.shape[:-1], chol.shape[:-2])
    y = jnp.broadcast_to(y, batch + (n,))
    chol_b = jnp.broadcast_to(chol, batch + (n, n))
    z = linalg.solve_triangular(chol_b, y[..., None], lower=True)[..., 0]
    log_det = jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * jnp.sum(z * z, axis=-1) - log_det - 0.5 * n * _LOG_2PI


def pdf(x, mean, cov):
    """JAX: jax.scipy.stats.multivariate_normal.pdf."""
    return jnp.exp(logpdf(x, mean, cov))
