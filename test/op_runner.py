"""Test helper: build a one-op `jaxpr` module, lower it to StableHLO, run it with XLA.

    (y,) = run_op("sin", np.linspace(0, 1, 5, dtype=np.float32))
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func

from mjax.dialect import Builder, ShapedArray, context, tensor_type
from mjax.passes import run_pipeline
from mjax.runtime import get_backend


def op_module(op: str, avals, **params) -> ir.Module:
    """`func.func @main(<avals>)` holding one `jaxpr.<op>` and returning its results."""
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            types = [tensor_type(a) for a in avals]
            f = func.FuncOp("main", (types, []))
            block = f.add_entry_block()
            with ir.InsertionPoint(block):
                results = Builder(ir.InsertionPoint(block)).emit(op, *block.arguments, **params)
                func.ReturnOp(results)
            f.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(types, [r.type for r in results]))
    return module


def lower_op_module(op: str, avals, **params) -> str:
    module = op_module(op, avals, **params)
    with context():
        run_pipeline(module, "builtin.module(jaxpr-verify,jaxpr-to-stablehlo,canonicalize)")
    return str(module)


def run_op(op: str, *arrays, **params) -> list[np.ndarray]:
    """Runs `jaxpr.<op>` on numpy arrays through --jaxpr-to-stablehlo and XLA."""
    arrays = [np.asarray(a) for a in arrays]
    text = lower_op_module(op, [ShapedArray(a.shape, a.dtype) for a in arrays], **params)
    return get_backend().compile(text).run_numpy(*arrays)
