"""The base samplers: uniform floats, normal floats (real and complex) and the truncated
normal (JAX: jax.random.uniform, normal, truncated_normal)."""
from __future__ import annotations

import numpy as np

from mjax.specs import dtypes
from mjax import lax
from mjax import numpy as jnp
from mjax.random.arguments import (_UINT, _canon_shape, _check_float, _check_shape,
                                   _const, _finfo, _jit, _laid_out, _no_sharding,
                                   _shape_of, _user_dtype)
from mjax.random.arguments import nested as staged
from mjax.random.keys import _check_prng_key, _random_bits, _split


@_laid_out
def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None):
    """Uniform floats in [minval, maxval). JAX: jax.random.uniform."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("uniform", key)
    dtype = _user_dtype(dtype, float)
    shape = _canon_shape(shape)
    _check_float("uniform", dtype)
    return staged(_uniform, key, minval, maxval, shape=shape, dtype=dtype)


def _uniform(key, minval, maxval, shape, dtype):   # (JAX's jit name)
    _check_shape("uniform", shape)
    minval = lax.convert_element_type(jnp.asarray(minval), dtype)
    maxval = lax.convert_element_type(jnp.asarray(maxval), dtype)
    minval = lax.broadcast_to_rank(minval, len(shape))
    maxval = lax.broadcast_to_rank(maxval, len(shape))
    fi = _finfo(dtype)
    nbits, nmant = fi.bits, fi.nmant
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}.")
    rng_bits = 8 if nmant < 8 else nbits
    bits_ = _random_bits(key, rng_bits, shape)
    uint = _UINT[nbits]
    if rng_bits != nbits:
        bits_ = lax.convert_element_type(bits_, uint)
    float_bits = lax.shift_right_logical(bits_, jnp.full(shape, rng_bits - nmant, uint))
    one_bits = np.array(1.0, dtype).view(uint)
    float_bits = lax.bitwise_or(float_bits, jnp.full(shape, one_bits, uint))
    floats = lax.bitcast_convert_type(float_bits, dtype) - _const(dtype, 1.0)
    return jnp.maximum(minval, jnp.reshape(floats * (maxval - minval) + minval, shape))


_uniform = _jit(("shape", "dtype"))(_uniform)


def _uniform_in(key, shape, dtype, minval=0.0, maxval=1.0):
    """uniform() from inside another sampler (arguments already checked)."""
    return staged(_uniform, key, minval, maxval, shape=tuple(shape), dtype=np.dtype(dtype))


@_laid_out
def normal(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard normal floats (complex: unit variance). JAX: jax.random.normal."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("normal", key)
    shape = _canon_shape(shape)
    dtype = _user_dtype(dtype, float)
    if not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"dtype argument to `normal` must be a float or complex dtype, "
                         f"got {dtype}")
    return staged(_normal, key, shape=shape, dtype=dtype)


@_jit(("shape", "dtype"))
def _normal(key, shape, dtype):
    if dtypes.issubdtype(dtype, np.complexfloating):
        sqrt2 = np.array(np.sqrt(2), dtype)
        key_re, key_im = _split(key)
        real = np.array(0, dtype).real.dtype
        re = _normal_real(key_re, shape, real).astype(dtype)
        im = _normal_real(key_im, shape, real).astype(dtype)
        return (re + 1j * im) / sqrt2
    return _normal_real(key, shape, dtype)


@_jit(("shape", "dtype"))
def _normal_real(key, shape, dtype):
    lo = np.array(-1.0 + float(_finfo(dtype).epsneg), dtype)  # nextafter(-1, 0)
    u = _uniform_in(key, shape, dtype, lo, np.array(1.0, dtype))
    return lax.mul(np.array(np.sqrt(2), dtype), lax.erf_inv(u))


def _normal_in(key, shape, dtype):
    return staged(_normal, key, shape=tuple(shape), dtype=np.dtype(dtype))


@_laid_out
def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
    """Normal samples truncated to (lower, upper). JAX: jax.random.truncated_normal."""
    _no_sharding(out_sharding)
    if shape is not None:
        shape = _canon_shape(shape)
    key, _ = _check_prng_key("truncated_normal", key)
    dtype = _user_dtype(dtype, float)
    _check_float("truncated_normal", dtype)
    return staged(_truncated_normal, key, lower, upper, shape=shape, dtype=dtype)


def _nextafter(x, direction: float):
    """The next float after x (an array of a float dtype) toward +inf/-inf, by bits."""
    dtype = np.dtype(x.dtype)
    uint = _UINT[dtype.itemsize * 8]
    b = lax.bitcast_convert_type(x, uint)
    one = jnp.full(x.shape, 1, uint)
    sign_bit = jnp.full(x.shape, 1 << (dtype.itemsize * 8 - 1), uint)
    negative = (b & sign_bit) != 0
    is_zero = (b & ~sign_bit) == 0
    up = direction > 0
    grow = negative != up   # away from zero in magnitude when moving outward
    nb = jnp.where(grow, b + one, b - one)
    tiny = jnp.full(x.shape, 1, uint) | (jnp.full(x.shape, 0, uint) if up else sign_bit)
    nb = jnp.where(is_zero, tiny, nb)
    out = lax.bitcast_convert_type(nb, dtype)
    inf = np.array(direction, dtype)
    return jnp.where(jnp.isnan(x) | (x == inf), x, out)


@_jit(("shape", "dtype"))
def _truncated_normal(key, lower, upper, shape, dtype):
    if shape is None:
        shape = tuple(jnp.broadcast_shapes(_shape_of(lower), _shape_of(upper)))
    else:
        _check_shape("truncated_normal", shape, _shape_of(lower), _shape_of(upper))
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = lax.convert_element_type(jnp.asarray(lower), dtype)
    upper = lax.convert_element_type(jnp.asarray(upper), dtype)
    a = lax.erf(lower / sqrt2)
    b = lax.erf(upper / sqrt2)
    u = _uniform_in(key, shape, dtype, a, b)
    out = sqrt2 * lax.erf_inv(u)
    lo = _nextafter(lax.stop_gradient(lower), np.inf)
    hi = _nextafter(lax.stop_gradient(upper), -np.inf)
    return jnp.clip(out, lo, hi)
