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
from mjax.passes.ir_util import has_effects, symbol_name
from mjax.passes.registry import Pass, register_pass


def _is_dead(op) -> bool:
    view = op.opview
    return (isinstance(view, JaxprOp) and len(op.results) > 0
            and all(not list(r.uses) for r in op.results) and not has_effects(op))


def _dce_block(block: ir.Block) -> int:
    # Backwards, so an op whose only users were just erased is dead when reached; an
    # erased op takes its regions with it, a kept one is cleaned inside.
    removed = 0
    for op in reversed(list(block.operations)):
        op = op.operation
        if op.name.startswith("jaxpr.") and _is_dead(op):
            op.erase()
            removed += 1
            continue
        for region in op.regions:
            for inner in region.blocks:
                removed += _dce_block(inner)
    return removed


def remove_dead_ops(region_holder) -> int:
    """Erases dead pure jaxpr ops (in nested regions too) until none is left; returns
    the count."""
    removed = 0
    while True:
        n = sum(_dce_block(block) for region in region_holder.regions
                for block in region.blocks)
        if not n:
            return removed
        removed += n


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
