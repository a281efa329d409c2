"""JAX-private: jax._src.random.prng's PRNGImpl and register_prng, as JAX's Pallas PRNG
kernels (ops/tpu/random/threefry.py, philox.py) use them: a new implementation from
functions on one key's uint32 data, then its name registered."""
from __future__ import annotations

from mjax.lax import prng as _prng

Shape = tuple


def PRNGImpl(key_shape, seed, split, random_bits, fold_in, name="<unnamed>",  # noqa: N802
             tag="?"):
    """A PRNG implementation from functions on one key's data (JAX: the PRNGImpl
    NamedTuple): mjax's user-defined implementation (jax.extend.random.define_prng_impl),
    usable as `impl=` of jax.random.key / wrap_key_data."""
    return _prng.define_impl(key_shape, seed, split, random_bits, fold_in, name, tag)


def register_prng(impl) -> None:
    """`impl`'s name (its `name=`) becomes a valid `impl=` string; a name already taken
    raises ValueError, as in JAX."""
    _prng.register_name(impl)


# (JAX's tests check key arrays' class and draw raw bits from keys)
PRNGKeyArray = _prng.PRNGKeyArray
random_bits = _prng.random_bits
prngs = _prng._IMPLS      # (name -> implementation, the live registry)
