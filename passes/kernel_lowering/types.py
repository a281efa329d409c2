"""Element types, dtype classes and views of the jaxpr op being lowered, as both kernel
lowerings (Mosaic, Triton) use them.

A kernel computes on signless integers (`ui32` -> `i32`; rules pick the unsigned op by
`is_unsigned`) and on `i1` for booleans; each backend's `elt_type` names the error it
raises for other dtypes.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.dtype_rules import bitwidth
from mjax.dialect.types import aval_of

_FLOATS = {"float16": ir.F16Type, "bfloat16": ir.BF16Type, "float32": ir.F32Type,
           "float64": ir.F64Type, "float8_e4m3fn": ir.Float8E4M3FNType,
           "float8_e5m2": ir.Float8E5M2Type, "float8_e4m3b11fnuz": ir.Float8E4M3B11FNUZType}
# ml_dtypes' sub-byte integers (numpy kind "V"): their signedness (widths: bitwidth)
_NARROW_INTS = {"int4": "i", "uint4": "u", "int2": "i", "uint2": "u"}


def element_type(dtype, error: type[Exception], backend: str,
                 narrow: bool = False) -> ir.Type:
    """The element type kernels compute `dtype` in: i1 for bool, a signless integer, a
    float; `error` names `backend` for any other dtype. With `narrow`, ml_dtypes'
    int4/uint4/int2/uint2 are i4/i2 (Mosaic's; Triton's lowering takes none)."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return ir.IntegerType.get_signless(1)
    if dt.kind in "iu" or (narrow and dt.name in _NARROW_INTS):
        return ir.IntegerType.get_signless(bitwidth(dt))
    if dt.name in _FLOATS:
        return _FLOATS[dt.name].get()
    raise error(f"the {backend} lowering does not support dtype {dt.name}")


def is_float(dtype) -> bool:
    dt = np.dtype(dtype)
    return dt.kind == "f" or dt.name in _FLOATS


def kind(dtype) -> str:
    """NumPy's kind letter, with ml_dtypes' sub-byte integers as "i"/"u"."""
    dt = np.dtype(dtype)
    return _NARROW_INTS.get(dt.name, dt.kind)


def is_unsigned(dtype) -> bool:
    return kind(dtype) in "ub"


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


__all__ = ["aval_out", "avals_in", "element_type", "is_float", "is_unsigned", "op_params"]
