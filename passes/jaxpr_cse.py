"""`--jaxpr-cse`: merge identical pure `jaxpr` ops (same name, operands, attributes).

Upstream `cse` does not merge unregistered ops. Scope is one block; ops with regions and
`jaxpr.checkpoint` (which asks for the opposite) are left alone.

    %0 = "jaxpr.cos"(%x) : (tensor<f32>) -> tensor<f32>
    %1 = "jaxpr.cos"(%x) : (tensor<f32>) -> tensor<f32>
    %2 = "jaxpr.mul"(%0, %1) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  ==>
    %0 = "jaxpr.cos"(%x) : (tensor<f32>) -> tensor<f32>
    %2 = "jaxpr.mul"(%0, %0) : (tensor<f32>, tensor<f32>) -> tensor<f32>
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.core import JaxprOp
from mjax.passes.ir_util import has_effects
from mjax.passes.registry import Pass, register_pass


def _key(op):
    attrs = tuple(sorted((name, str(op.attributes[name])) for name in op.attributes))
    return (op.name, tuple(op.operands), attrs, tuple(str(r.type) for r in op.results))


def cse_block(block) -> int:
    seen, merged = {}, 0
    for op in list(block.operations):
        op = op.operation
        for region in op.regions:
            for inner in region.blocks:
                merged += cse_block(inner)
        view = op.opview
        if (not isinstance(view, JaxprOp) or not view.pure or len(op.regions)
                or op.name == "jaxpr.checkpoint"
                or ("callee" in op.attributes and has_effects(op))):
            continue
        key = _key(op)
        if key in seen:
            for old, new in zip(op.results, seen[key].results):
                old.replace_all_uses_with(new)
            op.erase()
            merged += 1
        else:
            seen[key] = op
    return merged


@register_pass("jaxpr-cse")
class JaxprCsePass(Pass):
    """Merge identical pure jaxpr ops within a block (upstream cse skips jaxpr ops)."""

    def run(self, module: ir.Module) -> None:
        for op in module.operation.regions[0].blocks[0].operations:
            for region in op.operation.regions:
                for block in region.blocks:
                    cse_block(block)
