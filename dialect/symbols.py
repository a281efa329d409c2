"""A module's functions by symbol: its body, a function's name and visibility, `@main`.

    functions(module)              # {name: func.func}, in module order
    main_function(module)          # func.func @main, or None
    symbol_name(fn), is_private(fn)

The passes (passes/ir_util.py re-exports these), the frontend and the ops that read a
module given as text (`jaxpr.call_exported`) all look functions up here.
"""
from __future__ import annotations

from jaxlib.mlir import ir


def module_body(module) -> ir.Block:
    """The one block of a builtin.module (given an ir.Module or its operation)."""
    return module.operation.regions[0].blocks[0]


def symbol_name(fn: ir.Operation) -> str:
    return ir.StringAttr(fn.attributes["sym_name"]).value


def is_private(fn: ir.Operation) -> bool:
    attrs = fn.attributes
    return ("sym_visibility" in attrs
            and ir.StringAttr(attrs["sym_visibility"]).value == "private")


def functions(module) -> dict[str, ir.Operation]:
    """The module's func.func ops by name, in module order."""
    return {symbol_name(op.operation): op.operation for op in module_body(module).operations
            if op.operation.name == "func.func"}


def main_function(module) -> ir.Operation | None:
    """The module's func.func @main (None when it has none)."""
    for op in module_body(module).operations:
        op = op.operation
        if op.name == "func.func" and symbol_name(op) == "main":
            return op
    return None


__all__ = ["functions", "is_private", "main_function", "module_body", "symbol_name"]
