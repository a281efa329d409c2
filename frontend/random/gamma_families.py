"""Families drawn from gamma samples: beta, chi-square, Student's t, F and the
generalized normal (JAX: jax.random.beta, chisquare, t, f, generalized_normal)."""
from __future__ import annotations

import numpy as np

from mjax import numpy as jnp
from mjax.lax.prng import staged
from mjax.random.arguments import (_SHAPE_DTYPE, _as, _broadcast_shape, _canon_shape,
                                   _check_float, _check_safe_cast, _const, _jit, _laid_out,
                                   _no_sharding, _user_dtype)
from mjax.random.discrete import _rademacher
from mjax.random.front_doors import _param_call
from mjax.random.gamma_sampler import _gamma, _loggamma_in
from mjax.random.keys import _check_prng_key, _split
from mjax.random.uniform_normal import _normal_in


@_laid_out
def beta(key, a, b, shape=None, dtype=None, *, out_sharding=None):
    """Beta(a, b) samples. JAX: jax.random.beta."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("beta", key)
    dtype = _user_dtype(dtype, float)
    _check_float("beta", dtype)
    _check_safe_cast("beta", dtype, a, b)
    shape = _broadcast_shape("beta", shape, a, b)
    return staged(_beta, key, a, b, shape=shape, dtype=dtype)


@_jit(("shape", "dtype"))
def _beta(key, a, b, shape, dtype):
    a, b = _as(a, dtype, shape), _as(b, dtype, shape)
    key_a, key_b = _split(key)
    log_ga = _loggamma_in(key_a, a, shape, dtype)
    log_gb = _loggamma_in(key_b, b, shape, dtype)
    log_max = jnp.maximum(log_ga, log_gb)
    ga = jnp.exp(log_ga - log_max)
    gb = jnp.exp(log_gb - log_max)
    return ga / (ga + gb)


def _t_body(key, df, shape, dtype):
    df = _as(df, dtype)
    key_n, key_g = _split(key)
    n = _normal_in(key_n, shape, dtype)
    half_df = df / _const(dtype, 2)
    g = staged(_gamma, key_g, half_df, shape=tuple(shape), dtype=np.dtype(dtype))
    return n * jnp.sqrt(half_df / g)


def _chisquare_body(key, df, shape, dtype):
    df = _as(df, dtype)
    half_df = df / _const(dtype, 2)
    return jnp.exp(_loggamma_in(key, half_df, shape, dtype)) * _const(dtype, 2)


def _f_body(key, dfnum, dfden, shape, dtype):
    dfden, dfnum = _as(dfden, dtype), _as(dfnum, dtype)
    key_dfd, key_dfn = _split(key)
    chi_n = _chisquare_body(key_dfn, dfnum, shape, dtype)
    chi_d = _chisquare_body(key_dfd, dfden, shape, dtype)
    return (chi_n / dfnum) / (chi_d / dfden)


_t = _jit(_SHAPE_DTYPE)(_t_body)


_chisquare = _jit(_SHAPE_DTYPE)(_chisquare_body)


_f = _jit(_SHAPE_DTYPE)(_f_body)


@_laid_out
def t(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Student's t samples with df degrees of freedom. JAX: jax.random.t."""
    return _param_call("t", _t, key, (df,), shape, dtype, out_sharding)


@_laid_out
def chisquare(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Chi-square samples with df degrees of freedom. JAX: jax.random.chisquare."""
    return _param_call("chisquare", _chisquare, key, (df,), shape, dtype, out_sharding)


@_laid_out
def f(key, dfnum, dfden, shape=None, dtype=None, *, out_sharding=None):
    """F-distribution samples. JAX: jax.random.f."""
    return _param_call("f", _f, key, (dfnum, dfden), shape, dtype, out_sharding)


@_laid_out
def generalized_normal(key, p, shape=(), dtype=None, *, out_sharding=None):
    """Generalized normal samples with exponent p. JAX: jax.random.generalized_normal."""
    _no_sharding(out_sharding)
    shape = _canon_shape(shape)
    key, _ = _check_prng_key("generalized_normal", key)
    dtype = _user_dtype(dtype, float)
    return staged(_generalized_normal, key, p, shape=shape, dtype=dtype)


@_jit(("shape", "dtype"))
def _generalized_normal(key, p, shape, dtype):
    keys = _split(key)
    g = staged(_gamma, keys[0], 1 / p, shape=tuple(shape), dtype=dtype)
    r = staged(_rademacher, keys[1], shape=tuple(shape), dtype=dtype)
    return r * g ** (1 / p)
