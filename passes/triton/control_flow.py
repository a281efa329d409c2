"""Triton lowering rules of control flow and calls, inside one kernel program.

`cond`/`pl.when` become nested `scf.if`, `while` an `scf.while` (a fori_loop-shaped
while, and a `scan` without xs/ys, an `scf.for` whose induction variable is the loop
index: Triton pipelines for loops only); calls (nested jit, custom_jvp/vjp, checkpoint)
are inlined. Refs passed into bodies are not carried: the bodies read the enclosing ref
directly. Bodies are lowered through the kernel lowering (`kl.lower_block`).
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith, scf

from mjax.dialect.ops import control_flow as C
from mjax.dialect.ops import sharding as Sh
from mjax.dialect.ops import transforms as T
from mjax.dialect.types import aval_of
from mjax.passes.kernel_lowering.interpreter import inline_call, pass_through
from mjax.passes.kernel_lowering.types import op_params
from mjax.passes.rules.tables import TRITON
from mjax.passes.triton.builders import binary, full, i32
from mjax.passes.triton.types import TritonLoweringError, shape_of, ttype


def _result_types(op) -> list[ir.Type]:
    return [ttype(a.shape, a.dtype) for a in (aval_of(r.type) for r in op.results)]


@TRITON.register(C.CondOp)
def _cond(kl, op, index, *args, **params):
    branches = [r.blocks[0] for r in op.regions]
    types = _result_types(op)

    def build(k: int) -> list:
        if k == len(branches) - 1:
            return kl.lower_block(branches[k], list(args))
        hit = arith.cmpi(arith.CmpIPredicate.eq, index, i32(k))
        if_op = scf.IfOp(hit, types, has_else=True)
        with ir.InsertionPoint(if_op.then_block):
            scf.yield_(kl.lower_block(branches[k], list(args)))
        with ir.InsertionPoint(if_op.else_block):
            scf.yield_(build(k + 1))
        return list(if_op.results)
    return build(0)


@TRITON.register(C.WhileOp)
def _while(kl, op, *operands, cond_nconsts=0, body_nconsts=0, **params):
    cconsts = list(operands[:cond_nconsts])
    bconsts = list(operands[cond_nconsts:cond_nconsts + body_nconsts])
    init = list(operands[cond_nconsts + body_nconsts:])
    cond_block, body_block = (r.blocks[0] for r in op.regions)
    if not cconsts and _is_fori_while(cond_block, body_block, body_nconsts):
        return _fori_while(kl, body_block, bconsts, init)
    types = [v.type for v in init]
    loop = scf.WhileOp(types, init)
    before = loop.before.blocks.append(*types)
    with ir.InsertionPoint(before):
        [pred] = kl.lower_block(cond_block, cconsts + list(before.arguments))
        scf.condition(pred, list(before.arguments))
    after = loop.after.blocks.append(*types)
    with ir.InsertionPoint(after):
        scf.yield_(kl.lower_block(body_block, bconsts + list(after.arguments)))
    return list(loop.results)


def _defining_op(v: ir.Value) -> ir.Operation | None:
    owner = v.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _is_fori_while(cond: ir.Block, body: ir.Block, body_nconsts: int) -> bool:
    """Is this while a fori_loop with traced bounds: carry (i, upper, ...), cond
    `i < upper`, body yielding (i + 1, upper, ...)?"""
    cond_ops = [o.operation for o in cond.operations]
    if len(cond_ops) != 2 or len(cond.arguments) < 2 or cond_ops[0].name != "jaxpr.lt":
        return False
    i, upper = cond.arguments[0], cond.arguments[1]
    if (list(cond_ops[0].operands) != [i, upper]
            or cond_ops[1].operands[0] != cond_ops[0].result):
        return False
    if shape_of(i) or aval_of(i.type).dtype not in (np.int32, np.int64):
        return False
    yield_op = list(body.operations)[-1].operation
    bi, bu = body.arguments[body_nconsts], body.arguments[body_nconsts + 1]
    return yield_op.operands[1] == bu and _is_increment(yield_op.operands[0], bi)


def _is_increment(v: ir.Value, arg: ir.Value) -> bool:
    """Is `v` = jaxpr.add(arg, 1)?"""
    producer = _defining_op(v)
    if producer is None or producer.name != "jaxpr.add" or producer.operands[0] != arg:
        return False
    c = _defining_op(producer.operands[1])
    return c is not None and c.name == "jaxpr.constant" and int(
        np.asarray(op_params(c)["value"]).reshape(-1)[0]) == 1


def _fori_while(kl, body: ir.Block, bconsts: list, init: list) -> list:
    """The fori_loop-shaped while as scf.for (Triton pipelines for loops only)."""
    lo, hi, rest = init[0], init[1], init[2:]
    dtype = aval_of(body.arguments[len(bconsts)].type).dtype
    loop = scf.ForOp(lo, hi, full(1, dtype), rest)
    with ir.InsertionPoint(loop.body):
        outs = kl.lower_block(body, bconsts + [loop.induction_variable, hi]
                              + list(loop.inner_iter_args))
        scf.yield_(outs[2:])
    # The final index: `upper`, or `lower` when the loop never ran.
    return [binary("max", lo, hi, dtype), hi] + list(loop.results)


def _counter_carry(body: ir.Block, num_consts: int, num_carry: int) -> int | None:
    """The carry a fori_loop-style scan body increments by one (its loop index), if any:
    it becomes the scf.for induction variable, which Triton's pipeliner wants."""
    yield_op = list(body.operations)[-1].operation
    for j in range(num_carry):
        arg = body.arguments[num_consts + j]
        if shape_of(arg) or aval_of(arg.type).dtype not in (np.int32, np.int64):
            continue
        if _is_increment(yield_op.operands[j], arg):
            return j
    return None


@TRITON.register(C.ScanOp)
def _scan(kl, op, *operands, length, num_consts=0, num_carry=0, reverse=False, unroll=1,
          **params):
    consts = list(operands[:num_consts])
    init = list(operands[num_consts:num_consts + num_carry])
    if len(operands) > num_consts + num_carry or len(op.results) > num_carry:
        raise TritonLoweringError("the Triton lowering supports scans without xs and ys "
                                  "(fori_loop) only")
    body = op.regions[0].blocks[0]
    j = _counter_carry(body, num_consts, num_carry)
    # Without xs and ys the order of iterations is invisible: `reverse` changes nothing.
    if j is not None:
        lo = init[j]
        dtype = aval_of(body.arguments[num_consts + j].type).dtype
        hi = binary("add", lo, full(length, dtype), dtype)
        step = full(1, dtype)
        carried = init[:j] + init[j + 1:]
    else:
        lo, hi, step, carried = i32(0), i32(length), i32(1), init
    loop = scf.ForOp(lo, hi, step, carried)
    with ir.InsertionPoint(loop.body):
        iters = list(loop.inner_iter_args)
        if j is not None:
            iters.insert(j, loop.induction_variable)
        outs = kl.lower_block(body, consts + iters)
        if j is not None:
            outs = outs[:j] + outs[j + 1:]
        scf.yield_(outs)
    results = list(loop.results)
    if j is not None:
        results.insert(j, hi)
    return results


TRITON.register(T.CallOp, T.CustomJvpCallOp, T.CustomVjpCallOp, T.CheckpointOp)(inline_call)
TRITON.register(T.CheckpointNameOp, Sh.ShardingConstraintOp, T.XlaMetadataValueOp)(
    pass_through)
TRITON.unsupported(C.YieldOp, "a region terminator, lowered by the op that owns the region")
