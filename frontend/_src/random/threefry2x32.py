"""JAX-private: jax._src.random.threefry2x32, the threefry implementation's functions on
one key's uint32 data (shape (2,)), which a PRNG implementation defined from Python
functions reuses (JAX's Pallas threefry kernel takes its seed, split and fold_in), and
the hash's primitive. Each is mjax's built-in threefry2x32 key operation."""
from __future__ import annotations

from mjax import random as _random
from mjax.lax import prng as _prng
from mjax.extend.random import threefry2x32_p, threefry_2x32  # noqa: F401

_IMPL = "threefry2x32"
threefry_prng_impl = _prng.impl_of(_IMPL)


def threefry_seed(seed):
    return _random.key_data(_random.key(seed, impl=_IMPL))


def threefry_split(key, shape):
    keys = _random.split(_random.wrap_key_data(key, impl=_IMPL), tuple(shape))
    return _random.key_data(keys)


def threefry_fold_in(key, data):
    return _random.key_data(_random.fold_in(_random.wrap_key_data(key, impl=_IMPL), data))


def threefry_random_bits(key, bit_width, shape):
    return _random.bits(_random.wrap_key_data(key, impl=_IMPL), tuple(shape),
                        dtype=f"uint{bit_width}")
