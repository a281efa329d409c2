"""`mjax.nn.initializers`: weight initializers (JAX's `jax.nn.initializers`).

Each builder returns `init(key, shape, dtype=<builder's dtype>)`. They draw through
`mjax.random` the same way JAX does, so a key gives the same weights as in JAX.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable

import numpy as _onp

from mjax.specs import dtypes as _dt
from mjax import lax
from mjax import numpy as jnp
from mjax import random
from mjax.lax.sharding import apply_out_sharding

__all__ = ["Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
           "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
           "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
           "variance_scaling", "xavier_normal", "xavier_uniform", "zeros"]

Initializer = Callable[..., Any]


def _dtype(dtype):
    return _dt.default_float() if dtype is None else _dt.canonicalize_dtype(dtype)


def _laid_out(init):
    """`init` taking JAX's `out_sharding=`: its result laid out so (the values are the
    same: mjax's random bits do not depend on the layout, as JAX's partitionable
    threefry's do not)."""
    @functools.wraps(init)
    def with_layout(key, shape, dtype=None, out_sharding=None):
        out = init(key, shape, dtype) if dtype is not None else init(key, shape)
        return apply_out_sharding(out, out_sharding)
    return with_layout


def _shape(shape):
    if isinstance(shape, (int, _onp.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def zeros(key, shape, dtype=None, out_sharding=None):
    """An array of zeros (the key is unused). JAX: jax.nn.initializers.zeros."""
    return jnp.zeros(shape, _dtype(dtype), out_sharding=out_sharding)


def ones(key, shape, dtype=None, out_sharding=None):
    """An array of ones (the key is unused). JAX: jax.nn.initializers.ones."""
    return jnp.ones(shape, _dtype(dtype), out_sharding=out_sharding)


def constant(value, dtype=None):
    """Initializer filling with `value`. JAX: jax.nn.initializers.constant."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        return jnp.full(shape, value, dtype=_dtype(dtype), out_sharding=out_sharding)
    return init


def uniform(scale=1e-2, dtype=None):
    """Initializer drawing uniformly from [0, scale). JAX: jax.nn.initializers.uniform."""
    @_laid_out
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.uniform(key, shape, dtype) * jnp.array(scale, dtype)
    return init


def normal(stddev=1e-2, dtype=None):
    """Initializer drawing from N(0, stddev^2). JAX: jax.nn.initializers.normal."""
    @_laid_out
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.normal(key, shape, dtype) * jnp.array(stddev, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """Initializer drawing a standard normal truncated to [lower, upper], times stddev.
    JAX: jax.nn.initializers.truncated_normal."""
    @_laid_out
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, shape, dtype) * jnp.array(stddev,
                                                                                   dtype)
    return init


def _size(shape, axis):
    if isinstance(axis, (int, _onp.integer)):
        return shape[axis]
    return math.prod(shape[i] for i in axis)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out): in/out sizes times the receptive field (every axis that is
    neither input, output nor batch)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional"
                         " weights tensor with default in_axis. Must be at least 2D or "
                         "specify in_axis explicitly.")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    receptive = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * receptive, out_size * receptive


# Standard deviation of a standard normal truncated to (-2, 2).
_TRUNC_STD = .87962566103423978


# Standard deviation of the complex standard normal truncated to modulus 2.
_COMPLEX_TRUNC_STD = .95311164380491208


def _complex_polar(key, shape, dtype, distribution):
    """Complex values r*e^(i*theta), theta uniform on [0, 2pi), of unit variance: r from a
    uniform u by sqrt(2u) (uniform in the disc of radius sqrt 2) or, for
    truncated_normal, by inverting the Rayleigh distribution cut at modulus 2 (the caller
    scales it to unit variance) - as JAX draws them (the same keys and operations)."""
    key_r, key_theta = random.split(key)
    real = _onp.zeros((), dtype).real.dtype
    u = random.uniform(key_r, shape, real).astype(dtype)
    if distribution == "uniform":
        r = jnp.sqrt(2 * u)
    else:
        t = (1 - jnp.exp(jnp.array(-4.0, dtype))) * u
        r = jnp.sqrt(-jnp.log(1 - t))
    theta = 2 * jnp.pi * random.uniform(key_theta, shape, real).astype(dtype)
    return r * jnp.exp(1j * theta)


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """Initializer with variance scale / fan (fan per `mode`: fan_in, fan_out, fan_avg,
    fan_geo_avg), drawn from `distribution`: truncated_normal, normal or uniform.
    JAX: jax.nn.initializers.variance_scaling."""
    @_laid_out
    def init(key, shape, dtype=dtype):
        shape = _shape(shape)
        dtype = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominators = {"fan_in": lambda: fan_in, "fan_out": lambda: fan_out,
                        "fan_avg": lambda: (fan_in + fan_out) / 2,
                        "fan_geo_avg": lambda: (fan_in * fan_out) ** 0.5}
        if mode not in denominators:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        if distribution not in ("truncated_normal", "normal", "uniform"):
            raise ValueError("invalid distribution for variance scaling initializer: "
                             f"{distribution}")
        variance = jnp.array(scale / denominators[mode](), dtype=dtype)
        if _dt.issubdtype(dtype, _onp.complexfloating) and distribution != "normal":
            stddev = jnp.sqrt(variance)
            if distribution == "truncated_normal":    # (JAX's order: scaled once)
                stddev = stddev / jnp.array(_COMPLEX_TRUNC_STD, dtype)
            return _complex_polar(key, shape, dtype, distribution) * stddev
        if distribution == "truncated_normal":
            stddev = jnp.sqrt(variance) / jnp.array(_TRUNC_STD, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * jnp.sqrt(variance)
        return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
    return init


def _scaled(scale, mode, distribution, doc):
    def builder(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis=in_axis,
                                out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)
    builder.__doc__ = doc
    return builder


glorot_uniform = _scaled(1.0, "fan_avg", "uniform",
                         "variance_scaling(1, fan_avg, uniform). "
                         "JAX: jax.nn.initializers.glorot_uniform.")
glorot_normal = _scaled(1.0, "fan_avg", "truncated_normal",
                        "variance_scaling(1, fan_avg, truncated_normal). "
                        "JAX: jax.nn.initializers.glorot_normal.")
lecun_uniform = _scaled(1.0, "fan_in", "uniform",
                        "variance_scaling(1, fan_in, uniform). "
                        "JAX: jax.nn.initializers.lecun_uniform.")
lecun_normal = _scaled(1.0, "fan_in", "truncated_normal",
                       "variance_scaling(1, fan_in, truncated_normal). "
                       "JAX: jax.nn.initializers.lecun_normal.")
he_uniform = _scaled(2.0, "fan_in", "uniform",
                     "variance_scaling(2, fan_in, uniform). "
                     "JAX: jax.nn.initializers.he_uniform.")
he_normal = _scaled(2.0, "fan_in", "truncated_normal",
                    "variance_scaling(2, fan_in, truncated_normal). "
                    "JAX: jax.nn.initializers.he_normal.")
for _f, _n in ((glorot_uniform, "glorot_uniform"), (glorot_normal, "glorot_normal"),
               (lecun_uniform, "lecun_uniform"), (lecun_normal, "lecun_normal"),
               (he_uniform, "he_uniform"), (he_normal, "he_normal")):
    _f.__name__ = _f.__qualname__ = _n
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Initializer giving a (scaled) matrix with orthonormal rows or columns, the other
    axes flattened into rows. JAX: jax.nn.initializers.orthogonal."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:   # (as JAX's orthogonal)
            raise NotImplementedError("orthogonal initializer: out_sharding is not supported")
        shape = _shape(shape)
        dtype = _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if 0 in shape:
            return jnp.zeros(shape, dtype)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        rest = tuple(_onp.delete(_onp.array(shape), column_axis))
        q = jnp.moveaxis(jnp.reshape(q, rest + (n_cols,)), -1, column_axis)
        return jnp.array(scale, dtype) * q
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Initializer for 3-5D convolution kernels: zero except an orthogonal matrix at the
    spatial centre. JAX: jax.nn.initializers.delta_orthogonal."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:   # (as JAX's delta_orthogonal)
            raise NotImplementedError("delta_orthogonal initializer: out_sharding is not supported")
        shape = _shape(shape)
        dtype = _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key,
                                                                              shape[-2:])
        # Zero-pad the matrix out to the kernel, placed at the spatial centre.
        config = [((k - 1) // 2, k - 1 - (k - 1) // 2, 0) for k in shape[:-2]]
        ortho = jnp.reshape(ortho, (1,) * (len(shape) - 2) + tuple(shape[-2:]))
        return lax.pad(ortho, jnp.zeros((), dtype), config + [(0, 0, 0)] * 2)
    return init
