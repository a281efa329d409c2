"""Mosaic lowering rules of control flow: `cond` -> `scf.if` (a cascade for more than two
branches), fori-like `scan` -> `scf.for` over i32, `while` -> `scf.while`, as JAX's
Pallas TPU lowering emits them.

    %r = "jaxpr.scan"(%ref, %c0, %init) ({ ^bb0(%x, %i, %acc): ...
           "jaxpr.yield"(%i_plus_1, %acc2) }) {length = 4, num_consts = 1, num_carry = 2}
  ==>
    %c0 = arith.constant 0 : i32
    %c4 = arith.constant 4 : i32
    %ub = arith.addi %c0, %c4 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.for %i = %c0 to %ub step %c1 iter_args(%acc = %init) -> (vector<...>) : i32
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith, scf

from mjax.dialect.ops import control_flow as C
from mjax.dialect.ops import elementwise as E
from mjax.dialect.ops import sharding as Sh
from mjax.dialect.ops import structural as St
from mjax.dialect.ops import transforms as T
from mjax.passes.interpreter import terminator
from mjax.passes.kernel_lowering.interpreter import inline_call, pass_through
from mjax.passes.kernel_lowering.types import op_params
from mjax.passes.mosaic.table import MOSAIC
from mjax.passes.mosaic.types import (Const, MosaicLoweringError, aval_out, avals_in, full,
                                      materialize,
                                      vtype)


def _types(op) -> list[ir.Type]:
    return [vtype(aval_out(op, i).shape, aval_out(op, i).dtype)
            for i in range(len(op.results))]


def _values(kl, xs, avals) -> list[ir.Value]:
    return [kl.value(x, a.dtype) if not isinstance(getattr(x, "type", None), ir.MemRefType)
            else x for x, a in zip(xs, avals)]


def _region_values(kl, outs, op) -> list[ir.Value]:
    return [kl.value(v, aval_out(op, i).dtype) for i, v in enumerate(outs)]


@MOSAIC.register(C.CondOp)
def _cond(kl, op, index, *args, select_ref=False, **params):
    blocks = [r.blocks[0] for r in op.regions]
    if select_ref:
        return _select_ref_if(kl, op, kl.value(index, np.int32), args, blocks)
    if isinstance(index, Const):      # as JAX: a known branch is inlined
        return kl.lower_block(blocks[int(index.value)], list(args))
    return _cond_cascade(kl, op, kl.value(index, avals_in(op)[0].dtype), args, blocks)


def _cond_cascade(kl, op, index, args, blocks) -> list:
    pred = arith.cmpi(arith.CmpIPredicate.ne, index, full(0, np.int32))
    if_op = scf.IfOp(pred, _types(op), has_else=True)
    with ir.InsertionPoint(if_op.then_block):
        if len(blocks) > 2:
            outs = _cond_cascade(kl, op, arith.subi(index, full(1, np.int32)), args,
                                 blocks[1:])
        else:
            outs = _region_values(kl, kl.lower_block(blocks[1], list(args)), op)
        scf.YieldOp(outs)
    with ir.InsertionPoint(if_op.else_block):
        scf.YieldOp(_region_values(kl, kl.lower_block(blocks[0], list(args)), op))
    return list(if_op.results)


def _select_ref_if(kl, op, index, args, blocks) -> list:
    """pl.select_ref's choice around a DMA: option 0 where `index == 0`, else the rest
    (whose body tests `index - 1`), as JAX's _select_to_ifop (even for a known index).
    The DMA's literal operands are made first, once (JAX's DMA is one equation whose
    lowering makes the chain); the inner conds of the chain get them as values."""
    args = [materialize(a) if isinstance(a, Const) and a.value.ndim == 0 else a
            for a in args]
    pred = arith.cmpi(arith.CmpIPredicate.eq, index, full(0, np.int32))
    if_op = scf.IfOp(pred, [], has_else=True)
    for block, branch in ((if_op.then_block, blocks[0]), (if_op.else_block, blocks[1])):
        with ir.InsertionPoint(block):
            kl.lower_block(branch, list(args))
            scf.YieldOp([])
    return []


def _defining_op(v: ir.Value):
    owner = v.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _fori_increment(block: ir.Block, num_consts: int):
    """The op of a scan body computing `i + 1` for the loop index (the first carry), if
    the body is fori_loop's (JAX: pallas_utils.pattern_match_scan_to_fori_loop)."""
    if len(block.arguments) <= num_consts:
        return None
    i = block.arguments[num_consts]
    if str(i.type) != "tensor<i32>":
        return None
    owner = _defining_op(terminator(block).operands[0])
    if owner is None or owner.name != E.AddOp.OPERATION_NAME:
        return None
    a, b = owner.operands
    if a != i:
        return None
    one = _defining_op(b)
    if one is None or one.name != St.ConstantOp.OPERATION_NAME:
        return None
    if np.asarray(op_params(one)["value"]).reshape(-1).tolist() != [1]:
        return None
    return owner


@MOSAIC.register(C.ScanOp)
def _scan(kl, op, *args, length, reverse=False, unroll=1, num_consts=0, num_carry=0,
          **params):
    if reverse:
        raise MosaicLoweringError("reverse scans are not supported in TPU kernels")
    if len(args) != num_consts + num_carry or len(op.results) != num_carry:
        raise MosaicLoweringError("scans over xs (or producing ys) are not supported in "
                                  "TPU kernels: only fori_loop-like scans")
    block = op.regions[0].blocks[0]
    avals = avals_in(op)
    # (JAX makes the constants values first, used or not: a forwarded literal carry too)
    consts = _values(kl, args[:num_consts], avals[:num_consts])
    carry = list(args[num_consts:])
    inc = _fori_increment(block, num_consts)
    if inc is not None:
        start, carry = carry[0], carry[1:]
        lower = start if isinstance(start, Const) else kl.value(start, np.int32)
        carry_avals = avals[num_consts + 1:]
    else:
        start, lower = Const(np.asarray(0, np.int32)), None
        carry_avals = avals[num_consts:]
    init = _values(kl, carry, carry_avals)
    results = _unrolled_for(kl, block, consts, inc, lower, int(length), int(unroll), init,
                            carry_avals)
    if inc is None:
        return results
    # The index after the loop, emitted right here. JAX's rule gives the constant
    # `length`, whatever the start: that text where nothing reads it (fori_loop drops
    # it), the true index (start + length) where something does.
    if not any(True for _ in op.results[0].uses) or (
            isinstance(start, Const) and int(start.value) == 0):
        final = full(int(length), np.int32)
    elif isinstance(start, Const):
        final = full(int(start.value) + int(length), np.int32)
    else:
        final = arith.addi(lower, full(int(length), np.int32))
    return [final] + results


def _unrolled_for(kl, block, consts, inc, start, n, unroll, values, avals) -> list:
    """The body `n` times from `start` (a Const, an i32 value, or None: 0 and no index),
    as JAX's _lower_jaxpr_to_for_loop: `unroll` bodies per trip of an scf.for stepping
    by `unroll`, the remainder's bodies after it; no loop where `unroll` is `n` and the
    start static (the indices constants)."""
    skip = None if inc is None else _droppable(inc)

    def body(i, iters):
        if inc is None:
            outs = kl.lower_block(block, consts + iters)
        else:
            outs = kl.lower_block(block, consts + [i] + iters, skip=skip)[1:]
        return _values(kl, outs, avals)

    static = start is None or isinstance(start, Const)
    first = 0 if start is None else (int(start.value) if static else None)
    if static and n == unroll:
        for i in range(first, first + n):
            values = body(full(i, np.int32), values)
        return values
    lower = full(first, np.int32) if static else start
    main = n // unroll * unroll
    if main:
        upper = arith.addi(lower, full(main, np.int32))
        loop = scf.ForOp(lower, upper, full(unroll, np.int32), values)
        with ir.InsertionPoint(loop.body):
            iv, *iters = list(loop.body.arguments)
            for k in range(unroll):
                iters = body(iv if k == 0 else arith.addi(iv, full(k, np.int32)), iters)
            scf.YieldOp(iters)
        values = list(loop.results)
    for k in range(main, n):
        values = body(arith.addi(lower, full(k, np.int32)), values)
    return values


def _droppable(inc):
    """The loop index's increment when only the terminator uses it (else it stays: the
    body reads i + 1 too, and it is lowered from the induction variable)."""
    users = [u.owner for r in inc.results for u in r.uses]
    return inc if len(users) == 1 else None


def _fori_bounds(op, cond_nconsts: int, body_nconsts: int):
    """For a while that is a fori_loop (cond `i < ub`, body `i + 1`, i the first carry):
    (where ub is: ("const", k) a cond const or ("carry", 1) the second carry, the body's
    increment op); else None. JAX: pallas_utils.pattern_match_while_to_fori_loop."""
    cond, body = op.regions[0].blocks[0], op.regions[1].blocks[0]
    ops = list(cond.operations)
    if len(ops) != 2 or ops[0].operation.name != E.LtOp.OPERATION_NAME:
        return None
    lhs, rhs = ops[0].operation.operands
    if terminator(cond).operands[0] != ops[0].operation.results[0]:
        return None
    cargs = list(cond.arguments)
    if len(cargs) <= cond_nconsts or lhs != cargs[cond_nconsts] or \
            str(lhs.type) != "tensor<i32>":
        return None
    if rhs in cargs[:cond_nconsts]:
        ub = ("const", cargs.index(rhs))
    elif len(cargs) > cond_nconsts + 1 and rhs == cargs[cond_nconsts + 1]:
        ub = ("carry", 1)
        if terminator(body).operands[1] != body.arguments[body_nconsts + 1]:
            return None          # (the bound must pass through the body unchanged)
    else:
        return None
    inc = _fori_increment(body, body_nconsts)
    return None if inc is None else (ub, inc)


@MOSAIC.register(C.WhileOp)
def _while(kl, op, *args, cond_nconsts=0, body_nconsts=0, **params):
    # (JAX makes every operand a value first, in order: constants and carries)
    args = _values(kl, args, avals_in(op))
    fori = _fori_bounds(op, cond_nconsts, body_nconsts)
    if fori is not None:
        return _while_as_fori(kl, op, args, cond_nconsts, body_nconsts, *fori)
    avals = avals_in(op)
    cconsts = list(args[:cond_nconsts])
    bconsts = list(args[cond_nconsts:cond_nconsts + body_nconsts])
    carry_avals = avals[cond_nconsts + body_nconsts:]
    init = _values(kl, args[cond_nconsts + body_nconsts:], carry_avals)
    types = [v.type for v in init]
    loop = scf.WhileOp(types, init)
    before = loop.before.blocks.append(*types)
    with ir.InsertionPoint(before):
        (pred,) = kl.lower_block(op.regions[0].blocks[0], cconsts + list(before.arguments))
        scf.ConditionOp(kl.value(pred, np.bool_), list(before.arguments))
    after = loop.after.blocks.append(*types)
    with ir.InsertionPoint(after):
        outs = kl.lower_block(op.regions[1].blocks[0], bconsts + list(after.arguments))
        scf.YieldOp([kl.value(v, a.dtype) for v, a in zip(outs, carry_avals)])
    return list(loop.results)


def _while_as_fori(kl, op, args, cond_nconsts, body_nconsts, ub_at, inc) -> list:
    """scf.for from i to ub by 1, as JAX's _lower_jaxpr_to_for_loop with a dynamic trip
    count emits it: a main loop (unroll 1) and a remainder loop of no trips."""
    avals = avals_in(op)
    carry = list(args[cond_nconsts + body_nconsts:])
    carry_avals = avals[cond_nconsts + body_nconsts:]
    bconsts = list(args[cond_nconsts:cond_nconsts + body_nconsts])
    n_bounds = 2 if ub_at[0] == "carry" else 1
    lb = kl.value(carry[0], np.int32)
    ub = kl.value(args[ub_at[1]] if ub_at[0] == "const" else carry[1], np.int32)
    steps = arith.subi(ub, lb)
    end = arith.addi(lb, steps)
    unroll = full(1, np.int32)
    main_end = arith.addi(lb, arith.muli(arith.divsi(steps, unroll), unroll))
    rest_avals = carry_avals[n_bounds:]
    values = _values(kl, carry[n_bounds:], rest_avals)
    body = op.regions[1].blocks[0]
    for lo, hi in ((lb, main_end), (main_end, end)):
        loop = scf.ForOp(lo, hi, full(1, np.int32), values)
        with ir.InsertionPoint(loop.body):
            iv, *iters = list(loop.body.arguments)
            bounds = [iv] if n_bounds == 1 else [iv, ub]
            outs = kl.lower_block(body, bconsts + bounds + iters, skip=_droppable(inc))
            scf.YieldOp([kl.value(v, a.dtype) for v, a in zip(outs[n_bounds:], rest_avals)])
        values = list(loop.results)
    return [ub] * n_bounds + values


@MOSAIC.register(T.CallOp, T.CustomJvpCallOp, T.CustomVjpCallOp)
def _call(kl, op, *args, **params):
    # (JAX's rules for these take MLIR values: a literal argument becomes its constant
    # here, where it is called, not where the callee first uses it)
    args = [kl.value(x, a.dtype) if isinstance(x, Const) else x
            for x, a in zip(args, avals_in(op))]
    return inline_call(kl, op, *args, **params)


MOSAIC.register(T.CheckpointOp)(inline_call)
MOSAIC.register(T.CheckpointNameOp, T.XlaMetadataValueOp, Sh.ShardingConstraintOp)(
    pass_through)
MOSAIC.unsupported(C.YieldOp, "a terminator: its region's op lowers it")

