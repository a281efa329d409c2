"""`lax.rng_bit_generator`: XLA's stateless RngBitGenerator as one jaxpr op (the rbg and
unsafe_rbg key implementations of mjax.random lower to the same StableHLO op)."""
from __future__ import annotations

import enum

import numpy as np

from mjax.specs import dtypes
from mjax.tracing.core import at_user_line, bind
from mjax.dialect.ops.random import RngBitGeneratorOp, RngUniformOp
from mjax.lax.sharding import apply_out_sharding


class RandomAlgorithm(enum.IntEnum):
    """XLA's RngBitGenerator algorithms. JAX: lax.RandomAlgorithm."""
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self):
        return self.name


_BIT_DTYPES = {np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)}


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT,
                      *, out_sharding=None):
    """(new key, random bits of `shape` and unsigned `dtype`) from a uint32[4] key (or
    uint64[2]) by XLA's RngBitGenerator with `algorithm`; the bits depend on the backend's
    implementation of the algorithm. JAX: lax.rng_bit_generator."""
    shape = tuple(int(d) for d in (shape if np.ndim(shape) else (shape,)))
    dtype = dtypes.check_user_dtype(dtype, "rng_bit_generator")
    if dtype not in _BIT_DTYPES:
        raise TypeError(at_user_line(f"rng_bit_generator: unsupported dtype {dtype}"))
    algorithm = RandomAlgorithm(algorithm)
    new_key, bits = bind(RngBitGeneratorOp, key, shape=shape, dtype=dtype,
                         algorithm=algorithm.name)
    if out_sharding is not None:
        bits = apply_out_sharding(bits, out_sharding)
    return new_key, bits


def rng_uniform(a, b, shape):
    """Numbers of `shape` uniform in [a, b) (scalars of one dtype) from XLA's stateful
    generator: each execution draws anew, and the values depend on the backend. Prefer
    mjax.random. JAX: lax.rng_uniform."""
    return bind(RngUniformOp, a, b, shape=tuple(int(d) for d in shape))
