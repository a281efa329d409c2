"""Pallas TPU value ops on narrow element types: stochastic rounding and elementwise
(sub-word) packing.

    %y = "jaxpr.stochastic_round"(%x: f32[s], %bits: ui32[s]) {target_dtype = bf16}
        -> bf16[s]
        x rounded to `target_dtype` (bf16 or an 8-bit float) up or down in magnitude
        at random: away from zero with probability equal to x's distance from the
        value below it in magnitude over the gap to the value above, `bits` giving the
        randomness (Mosaic's tpu.stochastic_convert; interpret mode: see
        passes/rules/pallas_tpu_packing.py).
    %p = "jaxpr.pack_elementwise"(%x0, ..., %x{k-1}: T[s]) {packed_dtype = P} -> uN[s]
        k = bits(T) / bits(P) arrays converted to P (integers truncated, f32 rounded to
        bf16) and their bits interleaved into one N = bits(T)-bit word per element,
        x0 in the lowest bits (Mosaic's tpu.pack_elementwise).
    %y = "jaxpr.unpack_elementwise"(%p: W[s]) {index, packed_dtype = P,
                                               unpacked_dtype = U} -> U[s]
        the index-th P-wide field of each element's bits (index 0: the lowest),
        converted to U (sign-extended where P is signed; bf16 -> f32 for floats)
        (Mosaic's tpu.unpack_elementwise).

JAX: pallas/mosaic/primitives.py (stochastic_round_p, pack_elementwise_p,
unpack_elementwise_p); JAX's TPU interpret mode has no rule for them.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.dtype_rules import bitwidth, is_int as is_integer
from mjax.dialect.types import RefAval, ShapedArray

STOCHASTIC_TARGETS = tuple(np.dtype(t) for t in (
    ml_dtypes.bfloat16, ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fn,
    ml_dtypes.float8_e4m3b11fnuz))


def packing_factor(unpacked, packed) -> int:
    """How many `packed` elements fit in one `unpacked` (JAX's ValueError otherwise)."""
    u, p = bitwidth(unpacked), bitwidth(packed)
    if u % p:
        raise ValueError(f"Unpacked bitwidth must be a multiple of packed bitwidth, got "
                         f"{u} and {p}")
    return u // p


def _arrays(name, *xs):
    for x in xs:
        if isinstance(x, RefAval):
            raise TypeError(f"jaxpr.{name} takes arrays, got {x.str_short()}")


class StochasticRoundOp(JaxprOp, name="stochastic_round"):
    """f32 `x` rounded to `target_dtype` up or down at random by `bits` (u32, x's
    shape). JAX: pltpu.stochastic_round (stochastic_round_p)."""

    num_operands = 2
    attributes = {"target_dtype": A.DType()}

    @classmethod
    def infer(cls, x, bits, *, target_dtype):
        _arrays("stochastic_round", x, bits)
        if bits.shape != x.shape:
            raise TypeError(f"The shape of `random_bits` must match the shape of `x` for "
                            f"stochastic_round, but got {bits.shape} and {x.shape}")
        if bits.dtype != np.uint32:
            raise TypeError(f"The dtype of `random_bits` must be uint32 for "
                            f"stochastic_round, but got {bits.dtype}")
        if x.dtype != np.float32 or np.dtype(target_dtype) not in STOCHASTIC_TARGETS:
            raise TypeError(f"jaxpr.stochastic_round rounds f32 to bfloat16 or an 8-bit "
                            f"float, got {x.str_short()} to {np.dtype(target_dtype).name}")
        return (ShapedArray(x.shape, np.dtype(target_dtype)),)


class PackElementwiseOp(JaxprOp, name="pack_elementwise"):
    """The bits of k arrays converted to `packed_dtype`, interleaved into one unsigned
    word per element (the first array lowest). JAX: pltpu.pack_elementwise."""

    num_operands = None
    attributes = {"packed_dtype": A.DType()}

    @classmethod
    def infer(cls, *xs, packed_dtype):
        _arrays("pack_elementwise", *xs)
        if not xs:
            raise TypeError("At least one source is required")
        first, packed = xs[0], np.dtype(packed_dtype)
        if any(x.shape != first.shape for x in xs):
            raise TypeError("All sources must have the same shape")
        if any(x.dtype != first.dtype for x in xs):
            raise TypeError("All sources must have the same dtype")
        if not ((first.dtype == np.float32 and packed == ml_dtypes.bfloat16)
                or (is_integer(first.dtype) and is_integer(packed))):
            raise TypeError(f"Only f32 -> bf16 and int -> int are supported. Got "
                            f"{first.dtype} and {packed}")
        k = packing_factor(first.dtype, packed)
        if len(xs) != k:
            raise TypeError(f"The number of sources must match the packing factor ({k}), "
                            f"got {len(xs)}")
        return (ShapedArray(first.shape, np.dtype(f"uint{bitwidth(first.dtype)}")),)


class UnpackElementwiseOp(JaxprOp, name="unpack_elementwise"):
    """The `index`-th `packed_dtype` field of each element's bits, as `unpacked_dtype`.
    JAX: pltpu.unpack_elementwise (unpack_elementwise_p)."""

    num_operands = 1
    attributes = {"index": A.Int(), "packed_dtype": A.DType(),
                  "unpacked_dtype": A.DType()}

    @classmethod
    def infer(cls, x, *, index, packed_dtype, unpacked_dtype):
        _arrays("unpack_elementwise", x)
        if bitwidth(x.dtype) != bitwidth(unpacked_dtype):
            raise TypeError(f"The bitwidth of `x` must match the bitwidth of "
                            f"`unpacked_dtype` for unpack_elementwise, but got {x.dtype} "
                            f"and {np.dtype(unpacked_dtype)}")
        k = packing_factor(unpacked_dtype, packed_dtype)
        if not 0 <= index < k:
            raise TypeError(f"Index {index} is out of bounds for packing factor {k}")
        return (ShapedArray(x.shape, np.dtype(unpacked_dtype)),)
