"""Multivariate samplers: multivariate normal vectors, Haar-random orthogonal matrices,
Dirichlet vectors and points in a p-ball (JAX: jax.random.multivariate_normal,
orthogonal, dirichlet, ball)."""
from __future__ import annotations

import operator

from mjax import lax
from mjax import numpy as jnp
from mjax.lax.prng import staged
from mjax.random.arguments import (_canon_shape, _check_float, _check_shape, _jit,
                                   _laid_out, _no_sharding, _promote_inexact, _user_dtype)
from mjax.random.continuous import _exponential
from mjax.random.gamma_families import _generalized_normal
from mjax.random.gamma_sampler import _loggamma_in
from mjax.random.keys import _check_prng_key, _split
from mjax.random.uniform_normal import _normal_in


@_laid_out
def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky", *,
                        out_sharding=None):
    """Multivariate normal samples. JAX: jax.random.multivariate_normal."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("multivariate_normal", key)
    mean, cov = _promote_inexact(mean, cov)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = mean.dtype if dtype is None else _user_dtype(dtype, float)
    _check_float("multivariate_normal", dtype)
    if shape is not None:
        shape = _canon_shape(shape)
    return staged(_multivariate_normal, key, mean, cov, shape=shape, dtype=dtype,
                  method=method)


@_jit(("shape", "dtype", "method"))
def _multivariate_normal(key, mean, cov, shape, dtype, method):
    if not mean.ndim >= 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if not cov.ndim >= 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {cov.shape}.")
    if shape is None:
        shape = tuple(jnp.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        _check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    if method == "svd":
        u, s, _ = jnp.linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = jnp.linalg.cholesky(cov)
    z = _normal_in(key, shape + mean.shape[-1:], dtype)
    return mean + jnp.einsum("...ij,...j->...i", factor, z)


@_laid_out
def orthogonal(key, n, shape=(), dtype=None, m=None, *, out_sharding=None):
    """Haar-random orthogonal (unitary) matrices. JAX: jax.random.orthogonal."""
    _no_sharding(out_sharding)
    m = n if m is None else m
    shape = _canon_shape(shape)
    key, _ = _check_prng_key("orthogonal", key)
    dtype = _user_dtype(dtype, float)
    return staged(_orthogonal, key, n=operator.index(n), m=operator.index(m), shape=shape,
                  dtype=dtype)


@_jit(("n", "m", "shape", "dtype"))
def _orthogonal(key, n, m, shape, dtype):
    z = _normal_in(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return jnp.swapaxes(x, -1, -2) if n < m else x


@_laid_out
def dirichlet(key, alpha, shape=None, dtype=None, *, out_sharding=None):
    """Dirichlet(alpha) samples over alpha's last axis. JAX: jax.random.dirichlet."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("dirichlet", key)
    dtype = _user_dtype(dtype, float)
    _check_float("dirichlet", dtype)
    if shape is not None:
        shape = _canon_shape(shape)
    return staged(_dirichlet, key, alpha, shape=shape, dtype=dtype)



def _softmax(x, axis):
    """exp(x) normalized along axis, as JAX's random module computes it for dirichlet (its
    own, not jax.nn.softmax: the shift is not differentiated)."""
    e = jnp.exp(x - lax.stop_gradient(x.max(axis, keepdims=True)))
    return e / e.sum(axis, keepdims=True)


@_jit(("shape", "dtype"))
def _dirichlet(key, alpha, shape, dtype):
    alpha = jnp.asarray(alpha)
    if not alpha.ndim >= 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{alpha.ndim}")
    if shape is None:
        shape = tuple(alpha.shape[:-1])
    else:
        _check_shape("dirichlet", shape, tuple(alpha.shape[:-1]))
    alpha = lax.convert_element_type(alpha, dtype)
    log_g = _loggamma_in(key, alpha, tuple(shape) + tuple(alpha.shape[-1:]), dtype)
    return _softmax(log_g, -1)


@_laid_out
def ball(key, d, p=2, shape=(), dtype=None, *, out_sharding=None):
    """Uniform samples from the unit p-ball in d dimensions. JAX: jax.random.ball."""
    _no_sharding(out_sharding)
    shape = _canon_shape(shape)
    key, _ = _check_prng_key("ball", key)
    dtype = _user_dtype(dtype, float)
    return staged(_ball, key, p, d=operator.index(d), shape=shape, dtype=dtype)


@_jit(("d", "shape", "dtype"))
def _ball(key, p, d, shape, dtype):
    k1, k2 = _split(key)
    g = staged(_generalized_normal, k1, p, shape=(*shape, d), dtype=dtype)
    e = staged(_exponential, k2, shape=tuple(shape), dtype=dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]
