"""The multivariate normal distribution (JAX's `jax.scipy.stats.multivariate_normal`)."""
from __future__ import annotations

import functools
import math

from mjax import lax
from mjax import numpy as jnp


def logpdf(x, mean, cov, allow_singular=None):
    """log N(x; mean, cov) over the last axis, batched over leading axes; a scalar or
    vector-free mean takes the 1-D form, a scalar cov scales the identity.
    JAX: jax.scipy.stats.multivariate_normal.logpdf."""
    if allow_singular is not None:
        raise NotImplementedError("jax.scipy.stats.multivariate_normal.logpdf does not "
                                  "support the allow_singular argument.")
    x, mean, cov = jnp._promote("scipy.stats.multivariate_normal.logpdf", x, mean, cov,
                                inexact=True, broadcast=False)
    # (JAX's composition, op for op: log(2 pi) is a traced log of a float32 scalar, the
    # quadratic form an einsum, the terms subtracted in JAX's order, so the results agree
    # to the bit)
    if not mean.shape:
        return (-0.5 * jnp.square(x - mean) / cov
                - 0.5 * (jnp.log(2 * math.pi) + jnp.log(cov)))
    n = mean.shape[-1]
    if not jnp.shape(cov):
        y = x - mean
        return (-0.5 * jnp.einsum("...i,...i->...", y, y) / cov
                - n / 2 * (jnp.log(2 * math.pi) + jnp.log(cov)))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    chol = lax.linalg.cholesky(cov)
    # (L^-1 (x - mean) per vector: a row solved against L^T, batched as JAX batches it)
    y = jnp.vectorize(functools.partial(lax.linalg.triangular_solve, lower=True,
                                        transpose_a=True),
                      signature="(n,n),(n)->(n)")(chol, x - mean)
    return (-0.5 * jnp.einsum("...i,...i->...", y, y) - n / 2 * jnp.log(2 * math.pi)
            - jnp.log(jnp.diagonal(chol, axis1=-1, axis2=-2)).sum(-1))


def pdf(x, mean, cov):
    """JAX: jax.scipy.stats.multivariate_normal.pdf."""
    return jnp.exp(logpdf(x, mean, cov))
