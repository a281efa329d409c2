"""Keys: making, splitting, folding and unwrapping them, and their raw bits (JAX:
jax.random.key, split, fold_in, key_data, bits, ...). Typed key arrays themselves live in
`mjax.lax.prng`."""
from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence

import numpy as np

from mjax.specs import dtypes
from mjax import lax
from mjax import numpy as jnp
from mjax.config import config
from mjax.dialect.types import KeyType
from mjax.lax.prng import (PRNGKeyArray, impl_of, random_bits, random_clone, random_fold_in,
                           random_seed, random_split, resolve_impl)
from mjax.random.arguments import _canon_shape, _laid_out, _no_sharding, _user_dtype


def _is_key(x) -> bool:
    return isinstance(x, PRNGKeyArray)


def _check_prng_key(name: str, key, *, allow_batched=False) -> tuple[PRNGKeyArray, bool]:
    """(typed key, whether it was a raw uint32 key). JAX: random._check_prng_key."""
    if _is_key(key):
        typed, wrapped = key, False
    elif hasattr(key, "shape") and hasattr(key, "dtype") or isinstance(key, (list, tuple)):
        typed, wrapped = wrap_key_data(jnp.asarray(key) if isinstance(key, (list, tuple))
                                       else key), True
        mode = config.read("jax_legacy_prng_key")
        if mode != "allow":
            msg = ("Legacy uint32 key array passed as key to jax.random function. Please "
                   "create keys using jax.random.key(). If use of a raw key array was "
                   "intended, set jax_legacy_prng_key=\"allow\".")
            if mode == "error":
                raise ValueError(msg)
            warnings.warn(msg, stacklevel=3)
    else:
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data to have "
                        f"ndim, shape, and dtype attributes. Got {key}")
    if not allow_batched and typed.ndim:
        raise ValueError(f"{name} accepts a single key, but was given a key array of "
                         f"shape {typed.shape} != (). Use jax.vmap for batching.")
    return typed, wrapped


def _return_keys(wrapped: bool, keys: PRNGKeyArray):
    return keys._base if wrapped else keys


def key_dtype(impl_spec=None):
    """The key dtype of an impl (default: the configured one). JAX: random.key_dtype."""
    return KeyType(resolve_impl(impl_spec))


def _make_key(ctor, seed, impl):
    impl = resolve_impl(impl)
    if _is_key(seed):
        raise TypeError(f"{ctor} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(f"{ctor} accepts a scalar seed, but was given an array of shape "
                        f"{np.shape(seed)} != (). Use jax.vmap for batching")
    if isinstance(seed, (bool, np.bool_)):
        seed = int(seed)
    if isinstance(seed, int):
        # JAX: a Python int goes through int64 (truncated to int32 without x64), so
        # Python hashes work as seeds.
        seed = np.int64(seed) if dtypes.x64_enabled() else np.int64(seed).astype(np.int32)
    seed_arr = jnp.asarray(seed)
    if not dtypes.issubdtype(seed_arr.dtype, np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    return random_seed(seed_arr, impl)


def key(seed, *, impl=None, dtype=None) -> PRNGKeyArray:
    """A typed PRNG key from an integer seed. JAX: jax.random.key."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.key")
        impl = dtype
    return _make_key("key", seed, impl)


def PRNGKey(seed, *, impl=None):
    """A raw (legacy) key: uint32[2] for threefry2x32; a typed key under
    jax_enable_custom_prng. JAX: jax.random.PRNGKey."""
    typed = _make_key("PRNGKey", seed, impl)
    return typed if config.read("jax_enable_custom_prng") else typed._base


def key_data(keys):
    """The uint32 data of typed keys (raw keys are returned as they are)."""
    typed, _ = _check_prng_key("key_data", keys, allow_batched=True)
    return typed._base


def wrap_key_data(key_bits_array, *, impl=None, dtype=None) -> PRNGKeyArray:
    """Typed keys from uint32 data of shape (..., *key_shape). JAX:
    jax.random.wrap_key_data."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.wrap_key_data")
        impl = dtype
    impl = resolve_impl(impl)
    if _is_key(key_bits_array):
        raise TypeError("wrap_key_data: argument is already a key array")
    data = key_bits_array if hasattr(key_bits_array, "dtype") else jnp.asarray(
        key_bits_array)
    ks = impl_of(impl).key_shape
    if np.dtype(data.dtype) != np.uint32:
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.dtype "
                        f"= uint32; got dtype={np.dtype(data.dtype)}")
    shape = tuple(data.shape)
    if len(shape) < len(ks) or shape[len(shape) - len(ks):] != ks:
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.shape "
                        f"to end with {ks}; got shape={shape} for impl={impl_of(impl)}")
    if not hasattr(data, "aval"):
        data = jnp.asarray(data)
    return PRNGKeyArray(impl, data)


def key_impl(keys):
    """The keys' implementation: a built-in's name, or a user-defined one's PRNGImpl."""
    typed, _ = _check_prng_key("key_impl", keys, allow_batched=True)
    impl = impl_of(typed.impl)
    return typed.impl if impl.seed is None else impl


def split(key, num=2):
    """`num` new keys (an int or a shape). JAX: jax.random.split."""
    typed, wrapped = _check_prng_key("split", key)
    return _return_keys(wrapped, _split(typed, num))


def _split(key: PRNGKeyArray, num=2) -> PRNGKeyArray:
    if key.ndim:
        raise TypeError(f"split accepts a single key, but was given a key array of shape "
                        f"{key.shape} != (). Use jax.vmap for batching.")
    shape = tuple(num) if isinstance(num, Sequence) else (operator.index(num),)
    return random_split(key, shape)


def fold_in(key, data):
    """A new key from `key` and the integer `data`. JAX: jax.random.fold_in."""
    typed, wrapped = _check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError(f"fold_in accepts a scalar, but was given an array of"
                        f"shape {np.shape(data)} != (). Use jax.vmap for batching.")
    msgs = jnp.asarray(data, dtype=np.uint32)  # as JAX: range-checked, any int
    return _return_keys(wrapped, random_fold_in(typed, msgs))


def clone(key):
    """The same key (JAX: jax.random.clone)."""
    if _is_key(key):
        return random_clone(key)
    return key


def _random_bits(key: PRNGKeyArray, bit_width: int, shape):
    return random_bits(key, bit_width, tuple(shape))


@_laid_out
def bits(key, shape=(), dtype=None, *, out_sharding=None):
    """Raw random bits of an unsigned dtype. JAX: jax.random.bits."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("bits", key)
    dtype = np.dtype(np.uint32 if dtype is None and not dtypes.x64_enabled() else
                     np.uint64 if dtype is None else _user_dtype(dtype, None))
    if not dtypes.issubdtype(dtype, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got "
                         f"{dtype}")
    return _random_bits(key, dtype.itemsize * 8, _canon_shape(shape))
