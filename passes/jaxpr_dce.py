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

from mjax.dialect.core import OPS
from mjax.passes import analyses
from mjax.passes.ir_util import (child_ops, has_effects, is_private, referenced_symbols,
                                 symbol_name)
from mjax.passes.registry import Pass, register_pass


def _unused(results) -> bool:
    for r in results:
        for _ in r.uses:
            return False
    return True


def _dce_ops(holder, keep_inside=()) -> tuple[int, bool]:
    """(Ops erased in the regions of `holder`, whether a region of several blocks was
    met); the regions of ops named in `keep_inside` are left as they are."""
    # Backwards, so an op whose only users were just erased is dead when reached; an
    # erased op takes its regions with it, a kept one is cleaned inside. (Ops listed by
    # one walk and their classes taken from their names: OpViews cost more.)
    removed, several = 0, False
    for region in holder.regions:
        several |= len(region.blocks) > 1
    get = OPS.get
    for op in reversed(child_ops(holder)):
        cls = get(op.name)
        if cls is not None and len(results := op.results) and _unused(results) and \
                not has_effects(op):
            op.erase()
            removed += 1
            continue
        if cls is not None and cls.num_regions == 0 or not len(op.regions) or \
                op.name in keep_inside:
            continue
        n, more = _dce_ops(op, keep_inside)
        removed += n
        several |= more
    return removed, several


def remove_dead_ops(region_holder, keep_inside=()) -> int:
    """Erases dead pure jaxpr ops (in nested regions too, but for the regions of the ops
    named in `keep_inside`) until none is left; returns the count."""
    removed = 0
    while True:
        n, several = _dce_ops(region_holder, keep_inside)
        removed += n
        # Users come after their definitions in a block, so one backwards sweep finds
        # every dead op; only where control flows between blocks can a use come first.
        if not n or not several:
            return removed


def remove_dead_functions(module, among=None) -> int:
    """Erases the private functions nothing references; with `among` (names), only
    those and, once one is erased, the functions it referenced."""
    body = module.operation.regions[0].blocks[0]
    among = None if among is None else set(among)
    removed = 0
    while True:
        private = [op.operation for op in body.operations
                   if op.operation.name == "func.func" and is_private(op.operation)
                   and (among is None or symbol_name(op.operation) in among)]
        if not private:
            return removed  # (nothing to remove: no need to collect every op's references)
        used = referenced_symbols(module.operation)
        dead = [fn for fn in private if symbol_name(fn) not in used]
        if not dead:
            return removed
        for fn in dead:
            if among is not None:
                among |= referenced_symbols(fn)
            fn.erase()
            removed += 1


@register_pass("jaxpr-dce")
class JaxprDcePass(Pass):
    """Remove unused pure jaxpr ops and unreferenced private functions."""

    def run(self, module: ir.Module) -> None:
        # (known to have no dead op: traced so, and no pass since made any)
        if not analyses.known_live(module):
            remove_dead_ops(module.operation)
        remove_dead_functions(module)
        analyses.establish_live(module)   # (erasing keeps the op names a superset)
