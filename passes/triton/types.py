"""Triton types of jaxpr values, kernel refs, and the error of the Triton lowering.

A rank-0 jaxpr tensor lowers to a Triton scalar (`f32`), any other to a `tensor<...>` of
a power-of-2 size; integers are signless (`ui32` -> `i32`, the rule picks the unsigned
op). A kernel ref is a `RefBlock`: the base `!tt.ptr` of the whole array and where this
program's block starts.
"""
from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.types import aval_of


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
_FLOATS = {"float16": ir.F16Type, "bfloat16": ir.BF16Type, "float32": ir.F32Type,
           "float64": ir.F64Type, "float8_e4m3fn": ir.Float8E4M3FNType,
           "float8_e5m2": ir.Float8E5M2Type}


def elt_type(dtype) -> ir.Type:
    """Triton's element type for a dtype (signless integers, i1 for bool)."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return ir.IntegerType.get_signless(1)
    if dt.kind in "iu" and dt.itemsize * 8 in (8, 16, 32, 64) and dt.name not in (
            "int4", "uint4"):
        return ir.IntegerType.get_signless(dt.itemsize * 8)
    if dt.name in _FLOATS:
        return _FLOATS[dt.name].get()
    raise TritonLoweringError(f"the Triton lowering does not support dtype {dt.name}")


def ttype(shape, dtype) -> ir.Type:
    e = elt_type(dtype)
    return e if not shape else ir.RankedTensorType.get(list(shape), e)


def ptr_elt_type(dtype) -> ir.Type:
    """What a ref's pointer points to: booleans live in memory as bytes."""
    return ir.IntegerType.get_signless(8) if np.dtype(dtype) == np.bool_ else elt_type(dtype)


def shape_of(v: ir.Value) -> tuple:
    return tuple(ir.RankedTensorType(v.type).shape) if isinstance(
        v.type, ir.RankedTensorType) else ()


def is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f" or np.dtype(dtype) in (
        np.dtype(ml_dtypes.bfloat16), np.dtype(ml_dtypes.float8_e4m3fn),
        np.dtype(ml_dtypes.float8_e5m2))


def is_unsigned(dtype) -> bool:
    return np.dtype(dtype).kind in "ub"


def check_pow2(shape, what: str) -> None:
    """Triton tensors have power-of-2 sizes (tt.make_range and most ops insist)."""
    for d in shape:
        if d & (d - 1):
            raise TritonLoweringError(
                f"the Triton lowering needs power-of-2 block dimensions, but {what} has "
                f"shape {tuple(shape)}; pad the block or use interpret=True")


# ---- the jaxpr op being lowered --------------------------------------------------------
def avals_in(op):
    return [aval_of(v.type) for v in op.operands]


def aval_out(op, i=0):
    return aval_of(op.results[i].type)


def op_params(op: ir.Operation) -> dict:
    """The op's attributes as Python values: its class's decoding when it has one, else
    each attribute decoded on its own (ops parsed from text before their class exists)."""
    view = op.opview
    if isinstance(view, JaxprOp):
        return view.params
    params = {}
    for named in op.attributes:
        try:
            params[named.name] = A.decode(named.attr)
        except TypeError:
            params[named.name] = named.attr
    return params


__all__ = ["RefBlock", "TritonLoweringError", "aval_out", "avals_in", "check_pow2",
           "elt_type", "is_float", "is_unsigned", "op_params", "ptr_elt_type", "shape_of",
           "ttype"]
