"""The one process-wide MLIR context every part of mjax uses."""
from __future__ import annotations

import functools

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo, sdy, stablehlo
from jaxlib.mlir._mlir_libs import _jax_mlir_ext


@functools.cache
def context() -> ir.Context:
    """Returns the shared context: func/arith/stablehlo/chlo/sdy loaded, `jaxpr` allowed.

    `jaxpr.*` ops are unregistered-dialect ops given structure by Python (see core.py).
    Multithreading is off: Python callbacks from MLIR worker threads are unsafe.
    """
    ctx = ir.Context()
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)
    chlo.register_dialect(ctx)
    sdy.register_dialect(ctx)
    ctx.allow_unregistered_dialects = True
    ctx.enable_multithreading(False)
    return ctx
