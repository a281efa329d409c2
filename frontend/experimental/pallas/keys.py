"""PRNG keys in Pallas TPU kernels: `pltpu.to_pallas_key` (keys of the TPU kernel PRNG,
impl pallas_tpu: two uint32 words that seed the core's hardware generator) and the refs
a kernel reads keys from.

A key array passed to pallas_call is its key data (uint32[*S, *key_shape]) in memory,
as in JAX's Mosaic kernels; the kernel sees a `KeyRef`, whose `key_ref[...]` reads the
data and makes it a key again (`jaxpr.ref_get`, then `jaxpr.random_wrap`). jax.random's
functions then take it: on a Pallas key, `random_bits` seeds the hardware PRNG with the
key and draws (`tpu.prng_set_seed_32` / `tpu.prng_random_bits`), `fold_in` mixes a
message in with one threefry round; a Pallas key cannot be split. Mosaic lowers them
(passes/mosaic/random.py); interpret mode cannot draw the chip's bits. JAX:
pallas/mosaic/random.py.
"""
from __future__ import annotations

import functools

import numpy as np

from mjax import numpy as jnp
from mjax.lax import prng
from mjax import random as jrandom
from mjax.vmap.batching import vmap
from mjax.dialect.ops import random as R
from mjax.dialect.types import KeyType
from mjax.experimental.pallas.core import BlockSpec
from mjax.experimental.pallas.primitives import program_id

PALLAS_IMPL = "pallas_tpu"
tpu_key_impl = prng.register_impl(PALLAS_IMPL, "pl")     # (as importing JAX's pltpu does)
STATEFUL_IMPL = "_pallas_internal_stateful"
tpu_internal_stateful_impl = prng.register_impl(STATEFUL_IMPL, "_pl_stateful")


def _stateful(sampler, name: str):
    def sample(*args, **kwargs):
        # (a placeholder key: its bits are the kernel PRNG's next, as pltpu.prng_seed set)
        return sampler(jrandom.key(0, impl=STATEFUL_IMPL), *args, **kwargs)
    sample.__name__ = sample.__qualname__ = name
    sample.__doc__ = (f"jax.random.{sampler.__name__} without a key: drawn from the TPU "
                      f"kernel's hardware PRNG as pltpu.prng_seed seeded it (a kernel "
                      f"compiled for a TPU only). JAX: pltpu.{name}.")
    return sample


stateful_bits = _stateful(jrandom.bits, "stateful_bits")
stateful_uniform = _stateful(jrandom.uniform, "stateful_uniform")
stateful_bernoulli = _stateful(jrandom.bernoulli, "stateful_bernoulli")
stateful_normal = _stateful(jrandom.normal, "stateful_normal")


def to_pallas_key(key):
    """A key of the TPU kernel PRNG made from a jax.random key (typed or legacy uint32;
    a batch of them gives a batch): its two words are `jax.random.bits(key, (1, 2))`.
    Pass it to a kernel in SMEM. JAX: pltpu.to_pallas_key."""
    generate = functools.partial(jrandom.bits, shape=R.KEY_SHAPES[PALLAS_IMPL],
                                 dtype=np.uint32)
    typed = isinstance(key, prng.PRNGKeyArray)
    batched = len(key.shape) > (0 if typed else 1)
    data = vmap(generate)(key) if batched else generate(key)
    return jrandom.wrap_key_data(data, impl=PALLAS_IMPL)


def _tile_index(block_index, block_tiles, total_tiles, tile_in_block):
    """The row-major number of a tile among all tiles of the array."""
    index, stride = 0, 1
    for d in range(len(block_index) - 1, -1, -1):
        index += (tile_in_block[d] + block_index[d] * block_tiles[d]) * stride
        stride *= total_tiles[d]
    return index


def sample_block(sampler_fn, global_key, block_size, tile_size, total_size,
                 block_index=None, **kwargs):
    """The `block_size` block at `block_index` (default: the program ids) of samples of
    a `total_size` array, the same whatever the block shape: the array is cut in
    `tile_size` tiles, each drawn by `sampler_fn(fold_in(global_key, its row-major tile
    number), shape=tile_size, **kwargs)`. JAX: pltpu.sample_block (its
    blocked_sampler)."""
    if len(block_size) != len(tile_size):
        raise ValueError(f"block_size ({len(block_size)}) and tile_size "
                         f"({len(tile_size)}) must have the same length.")
    if block_index is None:
        block_index = tuple(program_id(d) for d in range(len(block_size)))
    block_tiles = tuple(b // t for b, t in zip(block_size, tile_size))
    total_tiles = tuple(-(-n // t) for n, t in zip(total_size, tile_size))

    def keys(axis, at):          # (every tile's key first, then the draws, as JAX)
        if axis == len(block_tiles):
            return jrandom.fold_in(global_key, _tile_index(block_index, block_tiles,
                                                           total_tiles, at))
        return [keys(axis + 1, at + (i,)) for i in range(block_tiles[axis])]

    def draw(axis, tile_keys):
        if axis == len(block_tiles):
            return sampler_fn(tile_keys, shape=tile_size, **kwargs)
        return jnp.concatenate([draw(axis + 1, k) for k in tile_keys], axis=axis)
    return draw(0, keys(0, ()))


def is_pallas_impl(impl) -> bool:
    """Whether `impl` is the Pallas kernel PRNG's. JAX: pltpu's is_pallas_impl."""
    return (prng.resolve_impl(impl) in (PALLAS_IMPL, STATEFUL_IMPL) if impl is not None
            else False)


class KeyRef:
    """A kernel's ref of PRNG keys (of `shape`): `key_ref[idx]` reads keys. Its memory
    holds their data. JAX: a Ref of a key dtype."""

    __slots__ = ("ref", "impl")
    _inline_in_jit = True      # (a jit called on it runs in place: mjax/jit/jitted.py)

    def __init__(self, ref, impl: str):
        self.ref, self.impl = ref, impl

    @property
    def _key_rank(self) -> int:
        return len(R.KEY_SHAPES[self.impl])

    @property
    def shape(self) -> tuple:
        return tuple(self.ref.shape[:len(self.ref.shape) - self._key_rank])

    @property
    def dtype(self):
        return KeyType(self.impl)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self):
        return f"Ref<key<{prng.impl_of(self.impl).tag}>[{','.join(map(str, self.shape))}]>"

    def __getitem__(self, idx):
        idx = idx if isinstance(idx, tuple) else (idx,)
        if not any(i is Ellipsis for i in idx):
            idx = idx + (Ellipsis,)
        data = self.ref[idx + (slice(None),) * self._key_rank]
        # (wrapped where it is read: Mosaic reads a Pallas key's words there, as JAX does)
        return prng.PRNGKeyArray(self.impl, prng.unwrap(prng.wrap(data, self.impl)))

    def __setitem__(self, idx, value):
        raise NotImplementedError("storing PRNG keys into a kernel ref is not supported by "
                                  "mjax's Pallas")

    def get(self, idx=()):
        return self[idx if idx != () else ...]


def key_block_spec(spec, impl: str):
    """The BlockSpec of a key array's data: the key dims are whole blocks at 0."""
    if spec is None or spec.block_shape is None:
        return spec
    extra = R.KEY_SHAPES[impl]
    imap = spec.index_map
    n = len(tuple(spec.block_shape))

    def index_map(*args):
        idx = (0,) * n if imap is None else imap(*args)
        idx = tuple(idx) if isinstance(idx, (tuple, list)) else (idx,)
        return idx + (0,) * len(extra)
    return BlockSpec(tuple(spec.block_shape) + extra, index_map,
                     memory_space=spec.memory_space, pipeline_mode=spec.pipeline_mode)


__all__ = ["KeyRef", "is_pallas_impl", "key_block_spec", "sample_block", "stateful_bernoulli",
           "stateful_bits", "stateful_normal", "stateful_uniform", "to_pallas_key",
           "tpu_internal_stateful_impl", "tpu_key_impl"]
