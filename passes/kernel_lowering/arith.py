"""The `arith` ops of binary jaxpr primitives, by dtype, as both kernel lowerings emit
them (JAX: pallas/mosaic/lowering.py and pallas/triton/lowering.py, the binary lax rules).
"""
from __future__ import annotations

from jaxlib.mlir.dialects import arith

from mjax.passes.kernel_lowering.types import is_float, is_unsigned

# primitive -> (float op, signed int op, unsigned int op); bool takes the unsigned one.
ARITH_BINARY = {
    "add": (arith.addf, arith.addi, arith.addi),
    "sub": (arith.subf, arith.subi, arith.subi),
    "mul": (arith.mulf, arith.muli, arith.muli),
    "div": (arith.divf, arith.divsi, arith.divui),
    "rem": (arith.remf, arith.remsi, arith.remui),
    "max": (arith.maximumf, arith.maxsi, arith.maxui),
    "min": (arith.minimumf, arith.minsi, arith.minui),
    "and": (None, arith.andi, arith.andi),
    "or": (None, arith.ori, arith.ori),
    "xor": (None, arith.xori, arith.xori),
}


def op_for_dtype(ops: tuple, dtype):
    """The op of a (float, signed, unsigned) row for `dtype` (None: there is none)."""
    f, s, u = ops
    return f if is_float(dtype) else (u if is_unsigned(dtype) else s)


__all__ = ["ARITH_BINARY", "op_for_dtype"]
