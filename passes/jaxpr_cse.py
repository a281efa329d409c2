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


def mergeable(op) -> bool:
    """Whether two copies of `op` with the same operands and attributes may become one:
    pure jaxpr ops without regions; never checkpoints (their copies are what rematerializes)
    nor calls of functions with effects."""
    view = op.opview
    return (isinstance(view, JaxprOp) and view.pure and not len(op.regions)
            and op.name != "jaxpr.checkpoint"
            and not ("callee" in op.attributes and has_effects(op)))


def cse_block(block) -> int:
    seen, merged = {}, 0
    for op in list(block.operations):
        op = op.operation
        for region in op.regions:
            for inner in region.blocks:
                merged += cse_block(inner)
        if not mergeable(op):
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
