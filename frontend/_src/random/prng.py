"""JAX-private: jax._src.random.prng's PRNGImpl and register_prng, as JAX's Pallas PRNG
kernels (ops/tpu/random/threefry.py, philox.py) use them: a new implementation from
functions on one key's uint32 data, then its name registered."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from mjax import numpy as jnp
from mjax.dialect.types import KeyType
from mjax.specs import dtypes
from mjax.lax import prng as _prng
from mjax.random import keys as _keys

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


class _Registered(Mapping):
    """JAX's `prngs`: name -> implementation for the built-in ones and those a user
    registered (register_prng); an implementation only defined is not in it, as in JAX."""

    def _live(self) -> dict:
        out = {n: p for n, p in _prng._IMPLS.items() if p.seed is None}
        out.update((label, _prng._IMPLS[n]) for label, n in _prng._NAMES.items())
        return out

    def __getitem__(self, name):
        return self._live()[name]

    def __iter__(self):
        return iter(self._live())

    def __len__(self):
        return len(self._live())

    def __repr__(self):
        return repr(self._live())


# (JAX's tests check key arrays' class and draw raw bits from keys)
PRNGKeyArray = _prng.PRNGKeyArray
KeyTy = KeyType
random_bits = _prng.random_bits
prngs = _Registered()


def random_seed(seeds, impl):
    """Keys of `impl` from integer seeds of any shape, one key per seed (JAX's
    random_seed; a Python int goes through int64, truncated to int32 without x64)."""
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        seeds = np.int64(seeds)
        seeds = seeds if dtypes.x64_enabled() else seeds.astype(np.int32)
    return _prng.random_seed(jnp.asarray(seeds), _prng.resolve_impl(impl))


def random_wrap(base_arr, *, impl):
    """Keys of `impl` (a PRNGImpl) over uint32 data (JAX's random_wrap)."""
    return _keys.wrap_key_data(base_arr, impl=impl)


def random_unwrap(keys):
    """The uint32 data of a key array (JAX's random_unwrap); other arrays raise JAX's
    TypeError."""
    if not isinstance(keys, _prng.PRNGKeyArray):
        raise TypeError(f"random_unwrap takes key array operand, got "
                        f"keys.dtype={getattr(keys, 'dtype', type(keys).__name__)}")
    return keys._base
