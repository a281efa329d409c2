"""`--stablehlo-broadcast-per-use`: each use of an implicit broadcast gets its own
`stablehlo.broadcast_in_dim`, as JAX's lowering emits them (run after `cse`).

JAX's binary lax ops take a scalar or a same-rank operand with size-1 dims as it is, and
each op's lowering broadcasts its operands itself: a value used by several ops is
broadcast once per use. mjax stages the broadcast once (and `cse` merges copies), so
XLA would get one broadcast feeding several ops. That is not the same program: XLA's
algebraic simplifier rewrites `a / broadcast(b)` into `a * broadcast(1 / b)` when the
broadcast is the divide's own, so a shared one left a softmax's backward division a
division and the LM step's gradients differed from JAX's in the last bit.

    %b = stablehlo.broadcast_in_dim %s, dims = [0, 1, 2] : (tensor<2x3x1xf32>) -> ...
    %0 = stablehlo.divide %x, %b
    %1 = stablehlo.multiply %y, %b
  ==>
    %b = stablehlo.broadcast_in_dim %s, dims = [0, 1, 2] ...
    %0 = stablehlo.divide %x, %b
    %b1 = stablehlo.broadcast_in_dim %s, dims = [0, 1, 2] ...
    %1 = stablehlo.multiply %y, %b1

Broadcasts of lax's implicit kind only (a rank-0 operand, or a same-rank operand kept
in place with size-1 dims stretched), of computed values (splat constants stay shared:
JAX's scalar literals become constants XLA folds either way). A user's explicit
jnp.broadcast_to of the same kind used twice is copied too (XLA's CSE merges copies).
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.passes.registry import Pass, register_pass


def _implicit_kind(op) -> bool:
    src = op.operands[0]
    owner = src.owner
    if not isinstance(owner, ir.Block) and owner.name == "stablehlo.constant":
        return False
    src_type = ir.RankedTensorType(src.type)
    rank = src_type.rank
    if rank == 0:
        return True
    out_type = ir.RankedTensorType(op.results[0].type)
    if rank != out_type.rank or list(src_type.shape) == list(out_type.shape):
        return False
    dims = list(ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"]))
    return dims == list(range(rank))


def broadcast_per_use(module: ir.Module) -> int:
    """Gives every use but the first of each implicit-kind broadcast a copy placed just
    before its user; returns the number of copies made."""
    found = []

    def visit(op):
        if op.name == "stablehlo.broadcast_in_dim":
            found.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    made = 0
    order: dict = {}     # block -> {op: its position}, made when a block first needs it
    for op in found:
        op = op.operation
        several = 0
        for _ in op.results[0].uses:
            several += 1
            if several == 2:
                break
        if several < 2 or not _implicit_kind(op):
            continue
        # Uses in this block, in program order: the first keeps the broadcast, each later
        # one gets a copy just before it. (Uses by the return, or inside nested regions,
        # keep the shared one.)
        block = op.block
        uses = [(o, u.operand_number) for u in op.results[0].uses
                if (o := u.owner.operation).name != "func.return" and o.block == block]
        at = order.get(block)
        if at is None or any(o not in at for o, _ in uses):
            # (made anew where a user is not in it: a key missed for any reason would be a
            # KeyError; the block's order, copies included, is read as it stands)
            at = order[block] = {o.operation: i for i, o in enumerate(block.operations)}
        mine = sorted(((at[o], i, o) for o, i in uses), key=lambda t: t[:2])
        for place, index, owner in mine[1:]:
            copy = op.clone(ip=ir.InsertionPoint(owner))
            owner.operands[index] = copy.results[0]
            at[copy.operation] = place - 0.5   # (just before its user: the order stays known)
            made += 1
    return made


@register_pass("stablehlo-broadcast-per-use")
class BroadcastPerUse(Pass):
    """Each use of an implicit (lax-style) broadcast gets its own broadcast_in_dim."""

    point = "after-lowering"

    def run(self, module: ir.Module) -> None:
        broadcast_per_use(module)
