"""Triton types of jaxpr values, kernel refs, and the error of the Triton lowering.

A rank-0 jaxpr tensor lowers to a Triton scalar (`f32`), any other to a `tensor<...>` of
a power-of-2 size; integers are signless (`ui32` -> `i32`, the rule picks the unsigned
op). A kernel ref is a `RefBlock`: the base `!tt.ptr` of the whole array and where this
program's block starts.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from jaxlib.mlir import ir

from mjax.passes.kernel_lowering.types import (aval_out, avals_in, element_type,
                                               is_float, is_unsigned)


class TritonLoweringError(NotImplementedError):
    """A kernel uses something the Triton lowering cannot express (the pass adds the
    op's location)."""


@dataclasses.dataclass
class RefBlock:
    """A kernel ref: the array's base pointer and this program's block of it.

    `block_shape` has one entry per array dim (-1: squeezed, the kernel's ref lacks that
    dim); `starts` are the block's first element per array dim (i32 scalars)."""
    ptr: ir.Value
    array_shape: tuple
    dtype: np.dtype
    block_shape: tuple
    starts: list

    @property
    def ref_dims(self) -> list[int]:
        """Array dim of each dim of the kernel's ref."""
        return [d for d, b in enumerate(self.block_shape) if b != -1]


# ---- types ---------------------------------------------------------------------------
def elt_type(dtype) -> ir.Type:
    """Triton's element type for a dtype (signless integers, i1 for bool)."""
    return element_type(dtype, TritonLoweringError, "Triton")


def ttype(shape, dtype) -> ir.Type:
    e = elt_type(dtype)
    return e if not shape else ir.RankedTensorType.get(list(shape), e)


def ptr_elt_type(dtype) -> ir.Type:
    """What a ref's pointer points to: booleans live in memory as bytes."""
    return ir.IntegerType.get_signless(8) if np.dtype(dtype) == np.bool_ else elt_type(dtype)


def shape_of(v: ir.Value) -> tuple:
    return tuple(ir.RankedTensorType(v.type).shape) if isinstance(
        v.type, ir.RankedTensorType) else ()


def check_pow2(shape, what: str) -> None:
    """Triton tensors have power-of-2 sizes (tt.make_range and most ops insist)."""
    for d in shape:
        if d & (d - 1):
            raise TritonLoweringError(
                f"the Triton lowering needs power-of-2 block dimensions, but {what} has "
                f"shape {tuple(shape)}; pad the block or use interpret=True")


# (aval_out, avals_in, is_float, is_unsigned: kernel_lowering/types.py, shared with Mosaic)
__all__ = ["RefBlock", "TritonLoweringError", "aval_out", "avals_in", "check_pow2",
           "elt_type", "is_float", "is_unsigned", "ptr_elt_type", "shape_of", "ttype"]
