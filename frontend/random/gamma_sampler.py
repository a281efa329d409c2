"""The gamma sampler: Marsaglia-Tsang rejection per element, in linear or log space,
differentiable in `a` through the implicit derivative (JAX: jax.random.gamma, loggamma)."""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from mjax.specs import dtypes
from mjax import lax
from mjax import numpy as jnp
from mjax.ad import custom_jvp
from mjax.vmap.batching import vmap
from mjax.lax.prng import staged
from mjax.random.arguments import (_canon_shape, _check_float, _check_shape, _const,
                                   _finfo, _jit, _laid_out, _no_sharding, _user_dtype)
from mjax.random.continuous import _exponential
from mjax.random.keys import _check_prng_key, _split
from mjax.random.uniform_normal import _normal_in, _uniform_in
from mjax.random.gamma_grad import random_gamma_grad


def _gamma_one(key, alpha, log_space):
    """One Gamma(alpha) sample by Marsaglia-Tsang. JAX: random._gamma_one."""
    dtype = np.dtype(alpha.dtype)
    zero, one = _const(dtype, 0), _const(dtype, 1)
    minus_one, two = _const(dtype, -1), _const(dtype, 2)
    half, third = _const(dtype, 0.5), _const(dtype, 1.0 / 3.0)
    squeeze = _const(dtype, 0.0331)
    boost_mask = alpha >= one
    alpha_orig = alpha
    alpha = jnp.where(boost_mask, alpha, alpha + one)
    d = alpha - third
    c = third / jnp.sqrt(d)

    def cond_fn(kXVU):
        _, X, V, U = kXVU
        return ((U >= one - squeeze * (X * X)) &
                (jnp.log(U) >= X * half + d * (one - V + jnp.log(V))))

    def body_fn(kXVU):
        def next_kxv(kxv):
            k = kxv[0]
            k, sub = _split(k)
            x = _normal_in(sub, (), dtype)
            return k, x, one + x * c
        k = kXVU[0]
        ks = _split(k, 3)
        k, x_key, u_key = ks[0], ks[1], ks[2]
        _, x, v = lax.while_loop(lambda kxv: kxv[2] <= zero, next_kxv,
                                 (x_key, jnp.asarray(zero), jnp.asarray(minus_one)))
        X = x * x
        V = v * v * v
        U = _uniform_in(u_key, (), dtype)
        return k, X, V, U

    key, subkey = _split(key)
    _, _, V, _ = lax.while_loop(cond_fn, body_fn, (key, jnp.asarray(zero),
                                                   jnp.asarray(one), jnp.asarray(two)))
    if log_space:
        log_samples = jnp.negative(staged(_exponential, subkey, shape=(), dtype=dtype))
        log_boost = jnp.where(boost_mask | (log_samples == 0), zero,
                              log_samples * (one / alpha_orig))
        return jnp.log(d) + jnp.log(V) + log_boost
    samples = 1 - _uniform_in(subkey, (), dtype)
    boost = jnp.where(boost_mask, one, jnp.power(samples, one / alpha_orig))
    return d * V * boost


def _gamma_impl(key, a, log_space):
    """Samples of Gamma(a) for every element of a (key split per element, as JAX)."""
    shape = tuple(a.shape)
    n = math.prod(shape)
    keys = _split(key, (n,))
    alphas = jnp.reshape(a, (n,))
    # One rejection loop per element, vectorized (as JAX lowers random_gamma_p).
    samples = vmap(partial(_gamma_one, log_space=log_space))(keys, alphas)
    return jnp.reshape(samples, shape)


def _gamma_grad(sample, a, log_space):
    """d sample / d a, by implicit differentiation (JAX: random._gamma_grad)."""
    if log_space:
        x = jnp.exp(sample)
        x = jnp.where(x == 0, _const(x.dtype, _finfo(x.dtype).tiny), x)
        return random_gamma_grad(a, x) / x
    return random_gamma_grad(a, sample)


def _gamma_sampler(log_space):
    def make(key):
        @custom_jvp
        def sample(a):
            return _gamma_impl(key, a, log_space)

        @sample.defjvp
        def _jvp(primals, tangents):
            (a,), (t,) = primals, tangents
            ans = sample(a)
            return ans, t * _gamma_grad(ans, a, log_space)
        return sample
    return make


_gamma_fn = {False: _gamma_sampler(False), True: _gamma_sampler(True)}


@_jit(("shape", "dtype", "log_space"))
def _gamma(key, a, shape, dtype, log_space=False):
    if shape is None:
        shape = tuple(jnp.shape(a))
    else:
        _check_shape("gamma", shape, tuple(jnp.shape(a)))
    a = lax.convert_element_type(jnp.asarray(a), dtype)
    if tuple(a.shape) != tuple(shape):
        a = jnp.broadcast_to(a, shape)
    return _gamma_fn[log_space](key)(a)


@_laid_out
def gamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """Gamma(a, 1) samples, differentiable in a. JAX: jax.random.gamma."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("gamma", key)
    dtype = _user_dtype(dtype, float)
    _check_float("gamma", dtype)
    if shape is not None:
        shape = _canon_shape(shape)
    return staged(_gamma, key, a, shape=shape, dtype=dtype)


@_laid_out
def loggamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """log of Gamma(a, 1) samples, accurate for small a. JAX: jax.random.loggamma."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("loggamma", key)
    dtype = _user_dtype(dtype, float)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `gamma` must be a float dtype, got {dtype}")
    if shape is not None:
        shape = _canon_shape(shape)
    return staged(_gamma, key, a, shape=shape, dtype=dtype, log_space=True)


def _loggamma_in(key, a, shape, dtype):
    return staged(_gamma, key, a, shape=tuple(shape), dtype=np.dtype(dtype), log_space=True)
