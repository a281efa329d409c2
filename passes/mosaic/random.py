"""Mosaic lowering rules of jax.random in TPU kernels, as JAX's Pallas TPU lowering emits
them. On Pallas keys (`pltpu.to_pallas_key`: impl pallas_tpu, key data uint32[1, 2]), a
key lives in scalar registers, as the two i32 words JAX's KeyScalarBundle holds.

- Reading a key from its SMEM ref (`key_ref[...]`: a `jaxpr.ref_get` of the key data that
  only `jaxpr.random_wrap`s use) loads the two words with `memref.load`
  (`KeyBundle`); wrapping, unwrapping and cloning pass the bundle on.
- `random_bits` seeds the core's generator with the words and draws a vector:

    "jaxpr.random_bits"(%key) {bit_width = 32, shape = [8, 128]}
  ==>
    "tpu.prng_set_seed_32"(%k0, %k1) : (i32, i32) -> ()
    %bits = "tpu.prng_random_bits"() : () -> vector<8x128xi32>

- `random_fold_in` mixes the message into the words with one threefry round (word 1
  plus the message; word 0 plus that; word 1 rotated left by 13, xor word 0), scalar
  `arith` ops.
- pltpu.stateful_*'s placeholder key (impl _pallas_internal_stateful, seeded in the
  kernel) draws `tpu.prng_random_bits` without seeding: the generator as
  pltpu.prng_seed left it.

- threefry2x32 keys are their data, `vector<2xi32>` (wrapping, unwrapping and cloning
  pass it on); `random_bits`, `random_fold_in`, `random_seed` (jax.random.key in the
  kernel) and the raw `threefry2x32` hash run the hash as scalar and vector `arith` ops
  (threefry.py).

Keys of other implementations (rbg, unsafe_rbg) inside a kernel, splitting a key, a
Pallas key's `key_data` and `jax.random.key(..., impl="pallas_tpu")` inside a kernel are
errors, as in JAX's lowering. JAX: pallas/mosaic/random.py (tpu_key_impl) and
lowering.py (_prng_key_load_lowering_rule, random_bits/random_fold_in/random_wrap/
random_seed/threefry2x32 lowerings).
"""
from __future__ import annotations

import dataclasses

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith, memref
from jaxlib.mosaic.python import tpu

from mjax.dialect.ops import random as R
from mjax.dialect.types import KeyType
from mjax.passes.mosaic import threefry
from mjax.passes.mosaic.structural import iota
from mjax.passes.mosaic.table import MOSAIC
from mjax.passes.mosaic.types import (Const, MosaicLoweringError, avals_in, expand_ref,
                                      full, index, ref_space, vtype)

PALLAS = "pallas_tpu"
THREEFRY = "threefry2x32"
STATEFUL = "_pallas_internal_stateful"     # (pltpu.stateful_*'s placeholder key)
_OTHER_KEYS = ("jax.random on {impl} keys inside a TPU kernel is not supported (JAX "
               "lowers threefry2x32 keys and Pallas keys there): use a threefry2x32 "
               "key, one made by pltpu.to_pallas_key (the kernel PRNG), or pass random "
               "bits in")


@dataclasses.dataclass
class KeyBundle:
    """A Pallas key in a kernel: its words as i32 scalars. JAX: KeyScalarBundle."""
    scalars: list


class StatefulKey:
    """pltpu.stateful_*'s placeholder key: its bits are the generator's next, as seeded
    by pltpu.prng_seed."""


def _impl_of(aval) -> str | None:
    return aval.dtype.impl if isinstance(aval.dtype, KeyType) else None


def loads_keys(op) -> bool:
    """Whether a ref read feeds only Pallas key wraps (it reads key data)."""
    uses = list(op.results[0].uses)
    owners = [u.owner.operation for u in uses]
    return bool(owners) and all(
        o.name == "jaxpr.random_wrap" and "impl" in o.attributes
        and ir.StringAttr(o.attributes["impl"]).value == PALLAS for o in owners)


def key_load(ref, starts, sizes, squeezed) -> KeyBundle:
    """One key's words read from its SMEM ref (the ref's last two dims are the key
    data's (1, 2)): a `memref.load` per word, indices made per load as JAX makes them."""
    ref, starts, sizes, squeezed = expand_ref(ref, starts, sizes, squeezed)
    if ref_space(ref) != "smem":
        raise MosaicLoweringError("PRNG keys must be loaded from SMEM. Did you set the "
                                  "memory space to MemorySpace.SMEM in the BlockSpec for "
                                  "the PRNG key input?")
    key_shape = R.KEY_SHAPES[PALLAS]
    lead = len(sizes) - len(key_shape)
    if any(int(s) != 1 for s in sizes[:lead]) or tuple(sizes[lead:]) != key_shape:
        raise MosaicLoweringError("Can only load a single key per load.")
    words = []
    for i in range(key_shape[1]):
        idx = []
        for s in list(starts[:lead]) + [Const(np.asarray(0)), Const(np.asarray(i))]:
            idx.append(index(int(s.value)) if isinstance(s, Const)
                       else arith.index_cast(ir.IndexType.get(), s))
        words.append(memref.load(ref, idx))
    return KeyBundle(words)


def _bundle(op, keys, what: str) -> KeyBundle:
    impl = _impl_of(avals_in(op)[0])
    if impl == STATEFUL and isinstance(keys, StatefulKey):
        return keys
    if impl != PALLAS:
        raise MosaicLoweringError(_OTHER_KEYS.format(impl=impl))
    if not isinstance(keys, KeyBundle):
        raise MosaicLoweringError(f"{what} of a Pallas key that was not read from its SMEM "
                                  f"ref (key_ref[...]) is not supported")
    return keys


@MOSAIC.register(R.RandomWrapOp)
def _random_wrap(kl, op, data, *, impl, **params):
    if impl == THREEFRY:          # (a threefry key is its data: JAX's rule passes it on)
        return [data]
    if impl == STATEFUL and isinstance(data, StatefulKey):
        return [data]
    if impl != PALLAS:
        raise MosaicLoweringError(_OTHER_KEYS.format(impl=impl))
    if not isinstance(data, KeyBundle):
        raise MosaicLoweringError("wrap_key_data not support for Pallas PRNG keys. Use "
                                  "wrap_pallas_seed instead.")
    return [data]


@MOSAIC.register(R.RandomUnwrapOp, R.RandomCloneOp)
def _random_unwrap(kl, op, keys, **params):
    if _impl_of(avals_in(op)[0]) == THREEFRY:
        return [keys]
    # (mjax's key arrays keep their data and wrap it for each key op: the bundle passes
    # through; a use of it as data is an error where a rule materializes it)
    return [_bundle(op, keys, "key_data")]


@MOSAIC.register(R.RandomBitsOp)
def _random_bits(kl, op, keys, *, bit_width, shape, **params):
    if _impl_of(avals_in(op)[0]) == THREEFRY:
        return [threefry.random_bits(keys, bit_width, tuple(shape), iota)]
    keys = _bundle(op, keys, "random bits")
    if int(bit_width) != 32:
        raise MosaicLoweringError("Bit width must be 32")
    if len(shape) <= 1:
        raise MosaicLoweringError("random_bits only supports rank>=2 outputs.")
    if isinstance(keys, KeyBundle):
        tpu.prng_set_seed_32(keys.scalars)
    return [tpu.prng_random_bits(vtype(tuple(shape), np.int32))]


@MOSAIC.register(R.RandomFoldInOp)
def _random_fold_in(kl, op, keys, msgs, **params):
    if _impl_of(avals_in(op)[0]) == THREEFRY:
        if avals_in(op)[1].shape:
            raise MosaicLoweringError("fold_in of a threefry key inside a TPU kernel "
                                      "takes one key and one scalar message")
        return [threefry.fold_in(keys, kl.value(msgs, np.uint32))]
    keys = _bundle(op, keys, "fold_in")
    if not isinstance(keys, KeyBundle):
        raise MosaicLoweringError("the placeholder key of pltpu.stateful_* cannot be "
                                  "folded")
    key0, key1 = keys.scalars
    if avals_in(op)[1].shape:
        raise MosaicLoweringError("fold_in of a Pallas key takes one scalar message")
    key1 = arith.addi(key1, kl.value(msgs, np.uint32))
    key0 = arith.addi(key0, key1)                       # (threefry's apply_round, 13)
    left = arith.shli(key1, full(13, np.uint32))
    right = arith.shrui(key1, arith.subi(full(32, np.uint32), full(13, np.uint32)))
    key1 = arith.xori(key0, arith.ori(left, right))
    return [KeyBundle([key0, key1])]


@MOSAIC.register(R.RandomSeedOp)
def _random_seed(kl, op, seeds, *, impl, **params):
    if impl == THREEFRY:
        if avals_in(op)[0].shape:
            raise MosaicLoweringError("jax.random.key inside a TPU kernel takes one "
                                      "scalar seed")
        if np.dtype(avals_in(op)[0].dtype).itemsize != 4:
            raise MosaicLoweringError("jax.random.key inside a TPU kernel takes a 32-bit "
                                      "seed")
        return [threefry.seed(kl.value(seeds, avals_in(op)[0].dtype))]
    if impl == STATEFUL:
        # (JAX: the seed, then its impl's seed function's unused int32 scalar)
        kl.value(seeds, avals_in(op)[0].dtype)
        full(0, np.int32)
        return [StatefulKey()]
    if impl != PALLAS:
        raise MosaicLoweringError(_OTHER_KEYS.format(impl=impl))
    raise MosaicLoweringError("jax.random.key(..., impl='pallas_tpu') inside a kernel is "
                              "not supported (JAX's seeds a vector the kernel PRNG cannot "
                              "take); pass a key made by pltpu.to_pallas_key in SMEM")


@MOSAIC.register(R.Threefry2x32Op)
def _threefry2x32(kl, op, k1, k2, x1, x2, **params):
    return threefry.threefry2x32(*(kl.value(v, np.uint32) for v in (k1, k2, x1, x2)))


MOSAIC.unsupported(R.RandomSplitOp, "splitting keys inside a TPU kernel is not supported "
                                    "(JAX's lowering has no rule for it): use fold_in")

__all__ = ["KeyBundle", "StatefulKey", "key_load", "loads_keys"]
