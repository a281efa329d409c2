"""`--jaxpr-dce`: remove unused pure `jaxpr` ops and unreferenced private functions.

Upstream MLIR treats unregistered ops as side-effecting, so its DCE keeps them.

    func.func @f(%x: tensor<f32>) -> tensor<f32> {
      %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>     // unused
      return %x : tensor<f32>
    }
    func.func private @unused(...)
  ==>
    func.func @f(%x: tensor<f32>) -> tensor<f32> {
      return %x : tensor<f32>
    }
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.core import JaxprOp
from mjax.passes.autodiff import symbol_name
from mjax.passes.registry import Pass, register_pass


def _is_dead(op) -> bool:
    view = op.opview
    return (isinstance(view, JaxprOp) and type(view).pure
            and all(not list(r.uses) for r in op.results))


def remove_dead_ops(region_holder) -> int:
    """Erases dead pure jaxpr ops (iterating until none is left); returns the count."""
    removed = 0
    while True:
        dead = []

        def visit(op):
            if op.name.startswith("jaxpr.") and _is_dead(op):
                dead.append(op)
            return ir.WalkResult.ADVANCE
        region_holder.walk(visit, ir.WalkOrder.POST_ORDER)
        if not dead:
            return removed
        for op in reversed(dead):
            if _is_dead(op):
                op.erase()
                removed += 1


def _referenced_symbols(module_op) -> set[str]:
    names = set()

    def collect(attr):
        if isinstance(attr, ir.FlatSymbolRefAttr):
            names.add(ir.FlatSymbolRefAttr(attr).value)
        elif isinstance(attr, ir.SymbolRefAttr):
            names.add(str(attr).lstrip("@").split("::")[0].strip('"'))
        elif isinstance(attr, ir.ArrayAttr):
            for a in ir.ArrayAttr(attr):
                collect(a)
        elif isinstance(attr, ir.DictAttr):
            d = ir.DictAttr(attr)
            for i in range(len(d)):
                collect(d[i].attr)

    def visit(op):
        for name in op.attributes:
            collect(op.attributes[name])
        return ir.WalkResult.ADVANCE
    module_op.walk(visit)
    return names


def remove_dead_functions(module) -> int:
    body = module.operation.regions[0].blocks[0]
    removed = 0
    while True:
        used = _referenced_symbols(module.operation)
        dead = [op.operation for op in body.operations
                if op.operation.name == "func.func"
                and "sym_visibility" in op.operation.attributes
                and ir.StringAttr(op.operation.attributes["sym_visibility"]).value == "private"
                and symbol_name(op.operation) not in used]
        if not dead:
            return removed
        for fn in dead:
            fn.erase()
            removed += 1


@register_pass("jaxpr-dce")
class JaxprDcePass(Pass):
    """Remove unused pure jaxpr ops and unreferenced private functions."""

    def run(self, module: ir.Module) -> None:
        remove_dead_ops(module.operation)
        remove_dead_functions(module)
