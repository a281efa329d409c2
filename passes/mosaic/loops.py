"""Loop carries of a Pallas TPU kernel as JAX 0.10.2's kernel jaxpr has them, before it is
lowered to Mosaic: JAX's scan and while_loop move a carry the body returns unchanged to
the loop's constants when they trace it (a while's only where its cond does not read it),
and pallas_call DCEs the kernel's jaxpr, whose scan rule drops the carries nothing reads
(to a fixpoint: a carry stays while a kept one's body reads it) and drops the conds
with no result read and no effect (an empty pl.when). mjax's frontend keeps
them, so the kernel's loops are rewritten here, in the kernel path only (mjax's StableHLO
of ordinary programs keeps its loops as they were traced).

    %r:2 = "jaxpr.scan"(%a, %b) ({ ^bb0(%x, %y): ... "jaxpr.yield"(%x2, %y) })
              {num_consts = 0, num_carry = 2}            // %y forwarded
  ==>
    %r = "jaxpr.scan"(%b, %a) ({ ^bb0(%y, %x): ... "jaxpr.yield"(%x2) })
              {num_consts = 1, num_carry = 1}            // uses of %r#1 read %b
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.core import OPS
from mjax.dialect.ops import control_flow as C
from mjax.dialect.types import aval_of
from mjax.passes.interpreter import terminator
from mjax.passes.ir_util import has_effects
from mjax.passes.jaxpr_dce import remove_dead_ops

_SCAN, _WHILE, _COND = (C.ScanOp.OPERATION_NAME, C.WhileOp.OPERATION_NAME,
                        C.CondOp.OPERATION_NAME)


def simplify_kernel_loops(kernel: ir.Operation, keep_inside=()) -> None:
    """Forwards unchanged carries of the kernel's scans and whiles to constants, then
    DCEs the kernel with its scans' unused carries, as JAX does before lowering."""
    for op in _loops(kernel):
        if op.name == _SCAN:
            _forward_scan(op)
        else:
            _forward_while(op)
    changed = True
    while changed:      # (one scan at a time: a rewrite may erase the scans inside it)
        remove_dead_ops(kernel, keep_inside=keep_inside)
        changed = any(_dce_scan(op, keep_inside) for op in _dce_scans(kernel))
        changed |= _drop_dead_conds(kernel)
        changed |= any(_dce_cond(op, keep_inside)
                       for op in reversed(_dce_scans(kernel, (_COND,))))


def _loops(root) -> list[ir.Operation]:
    """The scans and whiles under `root`, outer ones first (a list: safe to rewrite)."""
    found = []

    def visit(op):
        if op.name in (_SCAN, _WHILE):
            found.append(op)
        return ir.WalkResult.ADVANCE
    root.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _dce_scans(root, names=(_SCAN,)) -> list[ir.Operation]:
    """The scans (ops named in `names`) JAX's DCE reaches, outer ones first: those of the
    kernel and of the bodies of scans and conds (JAX has no DCE rule for while,
    run_scoped, ...)."""
    found = []
    for region in root.regions:
        for block in region.blocks:
            for op in block.operations:
                op = op.operation
                if op.name in names:
                    found.append(op)
                if op.name in (_SCAN, _COND):
                    found.extend(_dce_scans(op, names))
    return found


def _drop_dead_conds(root) -> bool:
    """Erases the conds JAX's DCE drops: no result read and no effect in a branch (an
    empty pl.when, as emit_pipeline's write-back phase of an input); whether any was.
    (remove_dead_ops keeps ops without results.)"""
    dead = False
    for op in reversed(_dce_scans(root, (_COND,))):     # (inner ones first)
        if _unused_results(op) and not has_effects(op):
            op.erase()
            dead = True
    return dead


def _dce_cond(op, keep_inside) -> bool:
    """Drops the results of a cond that nothing reads and the operands no branch reads
    (after those results' yields and what made them are gone), as JAX's cond DCE rule:
    a value a branch only used in dead code is no longer computed before the cond
    (splash attention's next block index, where no mask needs it); whether anything
    changed. (pl.select_ref's conds are kept as made: their lowering reads them.)"""
    if op.opview.params.get("select_ref"):
        return False
    blocks = [r.blocks[0] for r in op.regions]
    keep = [j for j, r in enumerate(op.results) if not _unused(r)]
    if len(keep) < len(op.results):
        for block in blocks:
            _yield_only(block, keep)
        remove_dead_ops(op, keep_inside=keep_inside)
    n = len(op.operands) - 1
    read = [any(not _unused(b.arguments[i]) for b in blocks) for i in range(n)]
    if all(read) and len(keep) == len(op.results):
        return False
    for block in blocks:
        for i in reversed(range(n)):
            if not read[i]:
                block.erase_argument(i)
    operands = list(op.operands)
    new_op = C.CondOp.build([operands[0]] + [operands[1 + i] for i in range(n) if read[i]],
                            [aval_of(op.results[j].type) for j in keep],
                            op.opview.params, blocks, loc=op.location,
                            ip=ir.InsertionPoint(op))
    for j, r in zip(keep, new_op.results):
        op.results[j].replace_all_uses_with(r)
    op.erase()
    return True


def _unused_results(op) -> bool:
    return all(_unused(r) for r in op.results)


def _rebuild(op, operands, params, keep_results, block_args, yields) -> ir.Operation:
    """`op` again with `operands` and `params`, its last body's arguments `block_args`
    (old ones, reordered; the others unused), its yield's operands `yields` (indices;
    None: all), and
    the results `keep_results` (old indices), in order; the others' uses must be gone."""
    block = op.regions[-1].blocks[0]
    old = list(block.arguments)
    new = [block.add_argument(a.type, a.location) for a in block_args]
    for a, b in zip(block_args, new):
        a.replace_all_uses_with(b)
    for _ in old:               # (the dropped ones are unused: DCE took their readers)
        block.erase_argument(0)
    if yields is not None:
        _yield_only(block, yields)
    avals = [aval_of(op.results[i].type) for i in keep_results]
    regions = [r.blocks[0] for r in op.regions]
    cls = C.ScanOp if op.name == _SCAN else C.WhileOp
    new_op = cls.build(operands, avals, params, regions, loc=op.location,
                       ip=ir.InsertionPoint(op))
    for i, r in zip(keep_results, new_op.results):
        op.results[i].replace_all_uses_with(r)
    op.erase()
    return new_op


def _yield_only(block: ir.Block, keep: list[int]) -> None:
    end = terminator(block)
    outs = list(end.operands)
    with end.location:
        ir.Operation.create("jaxpr.yield", operands=[outs[j] for j in keep],
                            ip=ir.InsertionPoint(end))
    end.erase()


def _forward_scan(op) -> None:
    p = op.opview.params
    n, k = int(p["num_consts"]), int(p["num_carry"])
    block = op.regions[0].blocks[0]
    args, outs = list(block.arguments), list(terminator(block).operands)
    fwd = [outs[j] == args[n + j] for j in range(k)]
    if not any(fwd):
        return
    operands = list(op.operands)
    for j in range(k):              # (the result is the initial value)
        if fwd[j]:
            op.results[j].replace_all_uses_with(operands[n + j])
    moved = [n + j for j in range(k) if fwd[j]]
    kept = [n + j for j in range(k) if not fwd[j]]
    order = moved + list(range(n)) + kept + list(range(n + k, len(args)))
    keep = [j for j in range(k) if not fwd[j]] + list(range(k, len(op.results)))
    _rebuild(op, [operands[i] for i in order],
             dict(p, num_consts=n + len(moved), num_carry=k - len(moved)), keep,
             [args[i] for i in order], keep)


def _forward_while(op) -> None:
    p = op.opview.params
    cn, bn = int(p["cond_nconsts"]), int(p["body_nconsts"])
    cond, body = op.regions[0].blocks[0], op.regions[1].blocks[0]
    cargs, bargs = list(cond.arguments), list(body.arguments)
    outs = list(terminator(body).operands)
    k = len(outs)
    fwd = [outs[j] == bargs[bn + j] and _unused(cargs[cn + j]) for j in range(k)]
    if not any(fwd):
        return
    operands = list(op.operands)
    for j in range(k):
        if fwd[j]:
            op.results[j].replace_all_uses_with(operands[cn + bn + j])
    moved = [j for j in range(k) if fwd[j]]
    kept = [j for j in range(k) if not fwd[j]]
    # (the cond drops the moved carries' arguments: it does not read them)
    for j in reversed(moved):
        cond.erase_argument(cn + j)
    order = [bn + j for j in moved] + list(range(bn)) + [bn + j for j in kept]
    new_operands = (operands[:cn] + [operands[cn + bn + j] for j in moved]
                    + operands[cn:cn + bn] + [operands[cn + bn + j] for j in kept])
    _rebuild(op, new_operands, dict(p, body_nconsts=bn + len(moved)), kept,
             [bargs[i] for i in order], kept)


def _unused(v: ir.Value) -> bool:
    return not any(True for _ in v.uses)


def _dce_scan(op, keep_inside) -> bool:
    """Drops the carries (and constants) of a scan that nothing reads, as JAX's scan DCE
    rule: a carry stays where its result is used or a kept part of the body reads it;
    whether anything changed."""
    p = op.opview.params
    n, k = int(p["num_consts"]), int(p["num_carry"])
    block = op.regions[0].blocks[0]
    used = [not _unused(r) for r in op.results[:k]]
    while True:
        live = _live_arguments(block, used + [True] * (len(op.results) - k))
        if not any(c and not u for u, c in zip(used, live[n:n + k])):
            break
        used = [u or c for u, c in zip(used, live[n:n + k])]
    consts = live[:n]
    if all(used) and all(consts):
        return False
    args = list(block.arguments)
    keep = [j for j in range(k) if used[j]] + list(range(k, len(op.results)))
    _yield_only(block, keep)    # (the dropped carries' yields go, then what made them)
    remove_dead_ops(op, keep_inside=keep_inside)
    keep_args = ([i for i in range(n) if consts[i]] + [n + j for j in range(k) if used[j]]
                 + list(range(n + k, len(args))))
    operands = list(op.operands)
    _rebuild(op, [operands[i] for i in keep_args],
             dict(p, num_consts=sum(consts), num_carry=sum(used)), keep,
             [args[i] for i in keep_args], None)
    return True


def _live_arguments(block: ir.Block, live_outs: list[bool]) -> list[bool]:
    """Which of the block's arguments its live part reads: the yields of `live_outs`,
    the ops DCE keeps (remove_dead_ops: effects, no results, not jaxpr's), and what
    those read (JAX's dce_jaxpr of the body)."""
    live: set = set()
    end = terminator(block)
    live.update(v for v, keep in zip(end.operands, live_outs) if keep)
    for o in reversed(list(block.operations)[:-1]):
        o = o.operation
        if OPS.get(o.name) is not None and len(o.results) and not has_effects(o) and \
                not any(r in live for r in o.results):
            continue
        live.update(_reads(o))
    return [a in live for a in block.arguments]


def _reads(op: ir.Operation):
    """The values `op` and the ops in its regions read."""
    yield from op.operands
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield from _reads(inner.operation)
