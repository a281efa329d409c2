"""JAX-private: jax._src.random.core, where JAX defines jax.random's functions; JAX's
random_lax_test imports two helpers from it. Its public names are mjax.random's."""
from __future__ import annotations

import numpy as np

from mjax import random as _random
from mjax.random.arguments import _broadcast_shape
from mjax.random.continuous import _u64_pair_to_float32


def _safe_int_to_float(bits, dtype):
    """uint32[2, ...] (the high and low words of a 64-bit fraction) -> float32[...] in
    (0, 1), as gumbel's mode='highest' converts them."""
    if np.dtype(bits.dtype) != np.uint32 or np.dtype(dtype) != np.float32:
        raise RuntimeError("_safe_int_to_float only works for u32 -> f32")
    return _u64_pair_to_float32(bits)


def _check_broadcast_shapes(name: str, shape, *args):
    """`shape` (None: the parameters' broadcast shape), checked against the parameters'
    shapes."""
    return _broadcast_shape(name, shape, *args)


def __getattr__(name):
    return getattr(_random, name)
