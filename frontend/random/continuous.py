"""Continuous families drawn from uniform and normal samples: exponential, Cauchy,
Laplace, logistic, Maxwell, Gumbel, lognormal, Pareto, Rayleigh, Wald, triangular,
Weibull (JAX: jax.random.exponential, ..., weibull_min)."""
from __future__ import annotations

import numpy as np

from mjax.specs import dtypes
from mjax import lax
from mjax import numpy as jnp
from mjax.config import config
from mjax.lax.prng import staged
from mjax.random.arguments import (_SHAPE_DTYPE, _as, _broadcast_shape, _canon_shape,
                                   _check_float, _check_safe_cast, _const, _finfo, _jit,
                                   _laid_out, _no_sharding, _shape_of, _user_dtype)
from mjax.random.discrete import _rademacher
from mjax.random.front_doors import _float_sampler, _param_call
from mjax.random.keys import _check_prng_key, _random_bits, _split
from mjax.random.uniform_normal import _normal_in, _uniform_in


def _exponential_body(key, shape, dtype):
    u = _uniform_in(key, shape, dtype)
    return jnp.negative(jnp.log1p(jnp.negative(u)))


def _cauchy_body(key, shape, dtype):
    u = _uniform_in(key, shape, dtype, np.array(_finfo(dtype).eps, dtype), 1.0)
    return jnp.tan(_const(dtype, np.pi) * (u - _const(dtype, 0.5)))


def _laplace_body(key, shape, dtype):
    u = _uniform_in(key, shape, dtype, np.array(-1.0 + float(_finfo(dtype).epsneg), dtype),
                    1.0)
    return jnp.sign(u) * jnp.log1p(jnp.negative(jnp.abs(u)))


def _logistic_body(key, shape, dtype):
    x = _uniform_in(key, shape, dtype, np.array(_finfo(dtype).tiny, dtype), 1.0)
    return jnp.log(x) - jnp.log1p(jnp.negative(x))


def _maxwell_body(key, shape, dtype):
    z = _normal_in(key, tuple(shape) + (3,), dtype)
    return jnp.linalg.norm(z, axis=-1)


exponential, _exponential = _float_sampler(
    "exponential", _exponential_body,
    "Exponential(1) samples. JAX: jax.random.exponential.")
cauchy, _cauchy = _float_sampler(
    "cauchy", _cauchy_body, "Standard Cauchy samples. JAX: jax.random.cauchy.")
laplace, _laplace = _float_sampler(
    "laplace", _laplace_body, "Standard Laplace samples. JAX: jax.random.laplace.")
logistic, _logistic = _float_sampler(
    "logistic", _logistic_body, "Standard logistic samples. JAX: jax.random.logistic.")
maxwell, _maxwell = _float_sampler(
    "maxwell", _maxwell_body,
    "Maxwell samples (norm of 3 normals). JAX: jax.random.maxwell.")


@_laid_out
def gumbel(key, shape=(), dtype=None, mode=None, *, out_sharding=None):
    """Standard Gumbel samples. JAX: jax.random.gumbel."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("gumbel", key)
    dtype = _user_dtype(dtype, float)
    _check_float("gumbel", dtype)
    shape = _canon_shape(shape)
    if mode is None:
        try:
            high = config.read("jax_high_dynamic_range_gumbel")
        except AttributeError:
            high = False
        mode = "high" if high else "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return staged(_gumbel, key, shape=shape, dtype=dtype, mode=mode)


def _u64_pair_to_float32(bits):
    """(hi, lo) uint32 words of a 64-bit fraction -> the float32 nearest below it, with
    the exponent from the leading zeros (JAX: random._safe_int_to_float)."""
    u32 = np.uint32
    hi, lo = bits[0], bits[1]
    hiclz, loclz = lax.clz(hi), lax.clz(lo)
    top = hiclz == u32(32)
    mant = lax.shift_left(hi, hiclz) | jnp.where(top, lax.shift_left(lo, loclz),
                                                 lax.shift_right_logical(lo, u32(32) - hiclz))
    mant = lax.shift_right_logical(mant, jnp.full(mant.shape, 8, u32))
    mant = mant & u32((1 << 23) - 1)
    exp = u32(126) - jnp.where(top, u32(32) + loclz, hiclz)
    exp = lax.shift_left(exp, jnp.full(exp.shape, 23, u32)) & u32((1 << 30) - (1 << 22))
    return lax.bitcast_convert_type(exp | mant, np.float32)


@_jit(("shape", "dtype", "mode"))
def _gumbel(key, shape, dtype, mode):
    info = _finfo(dtype)
    if dtype == np.float32 and mode == "highest":
        # 64 random bits become one float in (0, 1) with full precision near 0 and 1:
        # values below 1/2 from the bits, values above from their 64-bit negation.
        u32 = np.uint32
        b = _random_bits(key, 32, (2,) + tuple(shape))
        neg = lax.bitwise_not(b)
        lo = neg[1]
        carry = (lo == np.uint32(2**32 - 1)).astype(u32)
        neg = jnp.stack([neg[0] + carry, lo + np.uint32(1)])
        flip = b[0] < np.uint32(2**31)
        x = _u64_pair_to_float32(jnp.where(flip, b, neg))
        return jnp.where(flip, -jnp.log(-jnp.log1p(-x)), -jnp.log(-jnp.log(x)))
    if mode in ("high", "highest"):
        both = _uniform_in(key, (2,) + tuple(shape), dtype)
        high, low = both[0], both[1]
        x = jnp.where(high >= 0.5, high,
                      high + _const(dtype, 2.0 ** -info.nmant) * low + _const(dtype, info.tiny))
        return jnp.negative(jnp.log(jnp.negative(jnp.log1p(jnp.negative(x)))))
    u = _uniform_in(key, shape, dtype, np.array(info.tiny, dtype), 1.0)
    return jnp.negative(jnp.log(jnp.negative(jnp.log(u))))


@_laid_out
def lognormal(key, sigma=np.float32(1), shape=None, dtype=None, *, out_sharding=None):
    """exp(sigma * normal). JAX: jax.random.lognormal."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("lognormal", key)
    dtype = _user_dtype(dtype, float)
    if not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"dtype argument to `lognormal` must be a float or complex dtype, "
                         f"got {dtype}")
    shape = _broadcast_shape("lognormal", shape, sigma)
    _check_safe_cast("lognormal", dtype, sigma)
    return staged(_lognormal, key, sigma, shape=shape, dtype=dtype)


@_jit(("shape", "dtype"))
def _lognormal(key, sigma, shape, dtype):
    sigma = lax.convert_element_type(jnp.asarray(sigma), dtype)
    return jnp.exp(_normal_in(key, shape, dtype) * sigma)


def _pareto_body(key, b, shape, dtype):
    b = _as(b, dtype)
    e = staged(_exponential, key, shape=shape, dtype=dtype)
    return jnp.exp(e / b)


def _rayleigh_body(key, scale, shape, dtype):
    u = _uniform_in(key, shape, dtype)
    scale = _as(scale, dtype, shape)
    return scale * jnp.sqrt(jnp.log(u) * _const(dtype, -2))


def _wald_body(key, mean, shape, dtype):
    k1, k2 = _split(key, 2)
    mean = _as(mean, dtype, shape)
    v = _normal_in(k1, shape, dtype)
    z = _uniform_in(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = jnp.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return jnp.where(z <= mean / (mean + x), x, mean_sq / x)


def _triangular_body(key, left, mode, right, shape, dtype):
    left, right, mode = _as(left, dtype, shape), _as(right, dtype, shape), _as(mode, dtype,
                                                                               shape)
    fc = (mode - left) / (right - left)
    u = _uniform_in(key, shape, dtype)
    out1 = left + jnp.sqrt(u * (right - left) * (mode - left))
    out2 = right - jnp.sqrt((1 - u) * (right - left) * (right - mode))
    return jnp.where(u < fc, out1, out2)


_pareto = _jit(_SHAPE_DTYPE)(_pareto_body)


_rayleigh = _jit(_SHAPE_DTYPE)(_rayleigh_body)


_wald = _jit(_SHAPE_DTYPE)(_wald_body)


_triangular = _jit(_SHAPE_DTYPE)(_triangular_body)


@_laid_out
def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
    """Pareto samples with shape b. JAX: jax.random.pareto."""
    return _param_call("pareto", _pareto, key, (b,), shape, dtype, out_sharding)


@_laid_out
def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
    """Rayleigh samples with a scale. JAX: jax.random.rayleigh."""
    return _param_call("rayleigh", _rayleigh, key, (scale,), shape, dtype, out_sharding)


@_laid_out
def wald(key, mean, shape=None, dtype=None, *, out_sharding=None):
    """Wald (inverse Gaussian) samples with a mean. JAX: jax.random.wald."""
    return _param_call("wald", _wald, key, (mean,), shape, dtype, out_sharding)


@_laid_out
def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
    """Triangular samples on [left, right]. JAX: jax.random.triangular."""
    return _param_call("triangular", _triangular, key, (left, mode, right), shape, dtype,
                       out_sharding)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell samples. JAX: jax.random.double_sided_maxwell."""
    key, _ = _check_prng_key("double_sided_maxwell", key)
    dtype = _user_dtype(dtype, float)
    _check_float("double_sided_maxwell", dtype)
    shape = _canon_shape(shape)
    return staged(_double_sided_maxwell, key, loc, scale, shape=shape, dtype=dtype)


@_jit(("shape", "dtype"))
def _double_sided_maxwell(key, loc, scale, shape, dtype):
    params = tuple(jnp.broadcast_shapes(_shape_of(loc), _shape_of(scale)))
    if not shape:
        shape = params
    shape = tuple(shape) + params
    mkey, rkey = _split(key)
    m = staged(_maxwell, mkey, shape=shape, dtype=dtype)
    sign = staged(_rademacher, rkey, shape=shape, dtype=dtype)
    return sign * m * scale + loc


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples. JAX: jax.random.weibull_min."""
    key, _ = _check_prng_key("weibull_min", key)
    dtype = _user_dtype(dtype, float)
    _check_float("weibull_min", dtype)
    shape = _canon_shape(shape)
    return staged(_weibull_min, key, scale, concentration, shape=shape, dtype=dtype)


@_jit(("shape", "dtype"))
def _weibull_min(key, scale, concentration, shape, dtype):
    u = _uniform_in(key, shape, dtype, 0, 1)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale
