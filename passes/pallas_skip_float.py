"""pltpu.InterpretParams(skip_floating_point_ops=True): JAX's TPU interpreter computes
no floating-point value in the kernel; every one reads as inf (what it loads from a
ref, what an op gives), while DMAs still copy the buffers' contents. A copy of the
kernel where every floating-point result of an op other than a DMA's is replaced by
inf (the ops left unused are removed by DCE later: a matmul is never computed).

JAX: pallas/mosaic/interpret/interpret_pallas_call.py (_interpret_jaxpr's sentinel).
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect.builder import Builder
from mjax.dialect.dtype_rules import is_float
from mjax.dialect.types import aval_of
from mjax.passes.ir_util import FunctionTable, nested_ops

# (ops whose float results are not values of the kernel's: constants stay, as inf
# replaces them anyway; a region's own block arguments are fed by its yields)
_KEEP = ("jaxpr.constant", "func.return", "jaxpr.yield")


def _float_result(v: ir.Value) -> bool:
    if not isinstance(v.type, ir.RankedTensorType):
        return False            # (refs are memrefs; tokens, keys)
    return is_float(aval_of(v.type).dtype)


def skipping_float_ops(fns: FunctionTable, callee: str) -> str:
    """The name of a copy of kernel @callee with its floating-point values inf."""
    fn = fns.get(callee)
    name = fns.fresh_name(f"{callee}_skip_float")
    with ir.InsertionPoint.after(fn):
        new = fn.clone()
    new.attributes["sym_name"] = ir.StringAttr.get(name)
    fns.table[name] = new
    for op in nested_ops(new):
        if op.name in _KEEP or op.name.startswith("func."):
            continue
        for r in op.results:
            if not _float_result(r) or not list(r.uses):
                continue
            a = aval_of(r.type)
            b = Builder(ir.InsertionPoint.after(op), op.location)
            r.replace_all_uses_with(b.constant(np.full(a.shape, np.inf, a.dtype)))
    return name


__all__ = ["skipping_float_ops"]
