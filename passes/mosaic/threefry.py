"""threefry2x32 inside a TPU kernel, as JAX's Pallas TPU lowering emits it: the hash as
ordinary `arith` ops on scalars (the key words) and vectors (the counters), unrolled.

A threefry key in a kernel is its data, `vector<2xi32>` (a key ref's `key_ref[...]`
loads it as any vector; wrapping and unwrapping pass it on). `random_bits` on it is JAX's
partitionable bits (`jax_threefry_partitionable`):

    "jaxpr.random_bits"(%key) {bit_width = 32, shape = [16, 128]}
  ==>
    k1, k2 = the key's words          (vector.extract_strided_slice + vector.extract)
    hi, lo = the counters of [16, 128] (zeros; the flat index: tpu.iota per dim, scaled)
    tpu.trace_start "threefry2x32"
    x1, x2 = 20 threefry rounds of (k1, k2, hi, lo)   (scalars broadcast where added)
    tpu.trace_stop
    %bits = arith.xori x1, x2

JAX: pallas/mosaic/lowering.py (random_bits_lowering, _iota_2x32_shape_lowering,
_threefry2x32_lowering) over random/threefry2x32.py (_threefry2x32_lowering with
use_rolled_loops=False, _threefry_random_bits_partitionable). The op order is JAX's, so
the kernel prints as JAX's does.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith, vector
from jaxlib.mosaic.python import tpu

from mjax.passes.mosaic.types import Const, MosaicLoweringError, materialize, shape_of, vtype
from mjax.passes.rules.random import threefry_rounds


def _u32(value, shape) -> ir.Value:
    """A uint32 literal over `shape`, emitted as JAX emits one (constant, broadcast)."""
    return materialize(Const(np.full(shape, value, np.uint32)))


def _lift(x, shape) -> ir.Value:
    """`x` broadcast to `shape` where its shape differs (a scalar, or size-1 dimensions:
    lax's implicit broadcasting, which JAX's Pallas rules emit as vector.broadcast)."""
    if tuple(shape) != shape_of(x):
        element = x.type.element_type if isinstance(x.type, ir.VectorType) else x.type
        return vector.broadcast(ir.VectorType.get(list(shape), element), x)
    return x


def _broadcasting(op):
    """`op` on two operands broadcast to their common shape first, as JAX's Pallas TPU
    rules of binary ops do (_bcast)."""
    def apply(x, y) -> ir.Value:
        shape = tuple(np.broadcast_shapes(shape_of(x), shape_of(y)))
        return op(_lift(x, shape), _lift(y, shape))
    return apply


_add = _broadcasting(arith.addi)
_xor = _broadcasting(arith.xori)


def _rotate_left(x, d: int) -> ir.Value:
    shape = shape_of(x)
    left = arith.shli(x, _u32(d, shape))
    right = arith.shrui(x, _u32(32 - d, shape))
    return arith.ori(left, right)


def threefry2x32(k1, k2, x1, x2) -> list[ir.Value]:
    """The hash of counters (x1, x2) under key words (k1, k2), i32 scalars or vectors,
    bracketed by the named scope JAX's rule opens ("threefry2x32")."""
    tpu.trace_start(message="threefry2x32", level=10)
    x = threefry_rounds(k1, k2, x1, x2, add=_add, xor=_xor, rotl=_rotate_left,
                        const=lambda value, like: _u32(value, shape_of(like)))
    tpu.trace_stop()
    return x


def iota_2x32(shape: tuple, iota) -> tuple[ir.Value, ir.Value]:
    """The (hi, lo) counter words of each element of `shape`: hi zeros, lo the
    row-major flat index, as JAX's Pallas rule builds it (zeros, then per dim from the
    last: an iota times its stride added)."""
    if not shape:
        raise MosaicLoweringError("jax.random's threefry bits inside a TPU kernel need "
                                  "a shape of rank >= 1")
    if int(np.prod(shape)) > np.iinfo(np.int32).max:
        raise MosaicLoweringError(f"Iota with >{np.iinfo(np.int32).max} items.")
    lo = materialize(Const(np.zeros(shape, np.int32)))
    stride = 1
    for dim in range(len(shape) - 1, -1, -1):
        scaled = arith.muli(iota(shape, np.int32, dim),
                            materialize(Const(np.full(shape, stride, np.int32))))
        lo = arith.addi(lo, scaled)
        stride *= shape[dim]
    hi = materialize(Const(np.zeros(shape, np.int32)))
    return hi, lo


def key_words(data) -> list[ir.Value]:
    """A threefry key's two words (i32 scalars) from its data, `vector<2xi32>`: JAX's
    `k1, k2 = key`, a slice and a squeeze each."""
    data = materialize(data, np.uint32)
    if shape_of(data) != (2,):
        raise MosaicLoweringError(
            f"jax.random inside a TPU kernel takes one threefry key at a time (key data "
            f"of shape (2,)); got data of shape {shape_of(data)}")
    words = []
    for i in range(2):
        piece = vector.extract_strided_slice(vtype((1,), np.uint32), data, [i], [1], [1])
        words.append(vector.extract(piece, [], [0]))
    return words


def seed(value) -> ir.Value:
    """A threefry key's data from an integer scalar (JAX's threefry_seed: the words
    `value >> 32` and `value & 0xFFFFFFFF`, each expanded to a vector<1xi32>, joined)."""
    one = ir.VectorType.get([1], value.type)
    hi = vector.broadcast(one, arith.shrui(value, _u32(32, ())))
    lo = vector.broadcast(one, arith.andi(value, _u32(0xFFFFFFFF, ())))
    return tpu.concatenate([hi, lo], 0, results=[vtype((2,), np.uint32)])


def fold_in(data, msg) -> ir.Value:
    """A threefry key's data with scalar `msg` folded in: JAX's threefry_2x32(key,
    threefry_seed(msg)), the seeded pair split in halves, hashed, joined."""
    count = seed(msg)
    k1, k2 = key_words(data)
    x1, x2 = (vector.extract_strided_slice(vtype((1,), np.uint32), count, [i], [1], [1])
              for i in range(2))
    y1, y2 = threefry2x32(k1, k2, x1, x2)
    return tpu.concatenate([y1, y2], 0, results=[vtype((2,), np.uint32)])


def random_bits(data, bit_width: int, shape: tuple, iota) -> ir.Value:
    """`bit_width` random bits over `shape` from a threefry key's data."""
    if int(bit_width) != 32:
        raise MosaicLoweringError("Only 32-bit PRNG supported.")
    k1, k2 = key_words(data)
    hi, lo = iota_2x32(tuple(shape), iota)
    b1, b2 = threefry2x32(k1, k2, hi, lo)
    return arith.xori(b1, b2)


__all__ = ["fold_in", "iota_2x32", "key_words", "random_bits", "seed", "threefry2x32"]
