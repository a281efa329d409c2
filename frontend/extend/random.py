"""JAX: jax.extend.random: PRNG implementations and the raw threefry hash."""
from __future__ import annotations

import numpy as np

from mjax import numpy as jnp
from mjax import lax
from mjax.lax import prng

__all__ = ["threefry_prng_impl", "rbg_prng_impl", "unsafe_rbg_prng_impl", "random_seed",
           "seed_with_impl", "threefry_2x32", "threefry2x32_p", "define_prng_impl"]

# the hash's primitive (JAX exports it here and in jax.extend.core.primitives): operands
# that broadcast, as JAX's (dialect/ops/random.py Threefry2x32Op)
threefry2x32_p = lax.threefry2x32_p

threefry_prng_impl = prng.impl_of("threefry2x32")
rbg_prng_impl = prng.impl_of("rbg")
unsafe_rbg_prng_impl = prng.impl_of("unsafe_rbg")


def random_seed(seeds, impl):
    """Typed keys made from integer `seeds` with PRNG implementation `impl`."""
    return prng.random_seed(seeds, prng.resolve_impl(impl))


def seed_with_impl(impl, seed):
    return random_seed(seed, impl)


def threefry_2x32(keypair, count):
    """The Threefry-2x32 hash of counters `count` (any shape, uint32) under the key
    `keypair` (a pair of uint32 scalars), as JAX's: the key words stay scalars."""
    key1, key2 = keypair
    key1, key2, count = jnp.asarray(key1), jnp.asarray(key2), jnp.asarray(count)
    dtypes = [x.dtype for x in (key1, key2, count)]
    if any(d != np.uint32 for d in dtypes):
        raise TypeError(f"threefry_2x32 requires uint32 arguments, got {dtypes}")
    return prng.threefry_2x32_words(key1, key2, count.ravel()).reshape(count.shape)


def define_prng_impl(*, key_shape, seed, split, random_bits, fold_in, name="<unnamed>",
                     tag="?"):
    """A new PRNG implementation from functions on one key's uint32 data; pass it as
    `impl=` to jax.random.key / PRNGKey / wrap_key_data (see prng.define_impl)."""
    return prng.define_impl(key_shape, seed, split, random_bits, fold_in, name, tag)
