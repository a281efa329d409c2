"""Rules for the control-flow ops `jaxpr.cond`, `jaxpr.while`, `jaxpr.scan` (and the
`jaxpr.yield` terminating their bodies).

Layouts (every body is one block, isolated from above, ending in `jaxpr.yield`):

    cond   operands (index: i32[], *ops)            -> (*outs)
           region i (branch i): block (*ops) -> yield (*outs)
    while  operands (*cond_consts, *body_consts, *init) -> (*carry)
           attrs cond_nconsts, body_nconsts
           region 0 (cond): block (*cond_consts, *carry) -> yield (pred: i1[])
           region 1 (body): block (*body_consts, *carry) -> yield (*carry)
    scan   operands (*consts, *init, *xs)           -> (*carry, *ys)
           attrs length, reverse, unroll, num_consts, num_carry
           region 0 (body): block (*consts, *carry, *x) -> yield (*carry, *y)
           (x: one slice of xs along its leading axis; ys: the y's stacked, length first)

Lowering clones a body's jaxpr ops into the StableHLO region (block arguments mapped to
the new values), then lowers the clones, so nested control flow lowers recursively:

    cond   -> stablehlo.case (as JAX's, two branches included)
    while  -> stablehlo.while (consts are used from above)
    scan   -> stablehlo.while over (i, *carry, *ys): each iteration runs `unroll` copies
              of the body, reading x with dynamic_slice and writing y with
              dynamic_update_slice at i (or length-1-i when `reverse`); the
              length % unroll remaining steps run after the loop with constant indices.

JVP, partial evaluation, transpose and batching rules: passes/rules/control_flow_ad.py.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect import attributes as A
from mjax.dialect.ops import control_flow as C
from mjax.dialect.shape_poly import is_symbolic_dim
from mjax.dialect.types import aval_of
from mjax.passes.ir_util import clone_into
from mjax.passes.rules import hlo as H
from mjax.passes.rules.dynamic_shapes import dim_value, is_static
from mjax.passes.rules.op_names import body_names, named_at
from mjax.passes.interpreter import terminator
from mjax.passes.rules.tables import (BATCH, JVP, LOWER, TRANSPOSE, WEAK_COTANGENTS,
                                      WEAK_TYPES, lowering)


def inline_body(block: ir.Block, args, ip: ir.InsertionPoint, names=None) -> list[ir.Value]:
    """Clones `block`'s ops at `ip` with its arguments bound to `args`; returns the values
    its jaxpr.yield gives. `names`: the clones' locations (op_names.body_names)."""
    env = dict(zip(block.arguments, args))
    for op in block.operations:
        op = op.operation
        # A body is isolated from above and defines a value before using it, so every
        # operand is in env; a clone keeping an operand of the body would use a value
        # erased with it (jaxpr-verify rejects such IR: this guards what a pass makes).
        for v in op.operands:
            if v not in env:
                raise ValueError(f"'{op.name}' in a body region uses a value that is not "
                                 f"defined before it in that region")
        if op.name == "jaxpr.yield":
            return [env[v] for v in op.operands]
        new = clone_into(op, ip, env)
        if names is not None:
            loc = names(op.location)
            if loc:
                new.location = loc
        env.update(zip(op.results, new.results))
    raise ValueError("body region does not end with jaxpr.yield")


def _body(region: ir.Region) -> ir.Block:
    return region.blocks[0]


def _fill(region: ir.Region, arg_types, build) -> None:
    """Gives `region` a block with `arg_types`, filled by build(block args) -> results,
    ending in stablehlo.return."""
    block = region.blocks.append(*arg_types)
    ip = ir.InsertionPoint(block)
    with ip:
        outs = build(list(block.arguments), ip)
        hlo.return_(list(outs))


# ---- cond -------------------------------------------------------------------------------
@lowering(C.CondOp)
def _cond_lower(ctx, index, *ops, select_ref=False):
    # (select_ref's cond: branch 1 for any index but 0, as stablehlo.case runs its last
    # branch for an index out of range)
    regions = list(ctx.op.regions)
    types = [r.type for r in ctx.op.results]
    # stablehlo.case for two branches too, as JAX lowers them: XLA's copy insertion
    # depends on the branches' order (with the true region, branch 1, first as
    # stablehlo.if has it, a loop buffer a branch passes through is copied at every
    # iteration of an enclosing while: equinox's checkpointed loops ran 10x slower).
    new = hlo.CaseOp(types, index, len(regions))
    for i, target in enumerate(new.regions):
        # (JAX: cond/branch_0_fun/cos, branch i being the i-th function)
        names = body_names(ctx.op, f"cond/branch_{i}_fun")
        _fill(target, [], lambda _, ip, i=i, names=names: inline_body(
            _body(regions[i]), ops, ip, names))
    ctx.lower_nested(new.operation)
    return list(new.results)


# ---- while ------------------------------------------------------------------------------
@lowering(C.WhileOp)
def _while_lower(ctx, *operands, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    cconsts, bconsts, init = operands[:nc], operands[nc:nc + nb], operands[nc + nb:]
    cond_region, body_region = ctx.op.regions
    types = [v.type for v in init]
    new = hlo.WhileOp(types, list(init))
    cond_names, body_names_ = (body_names(ctx.op, "while/cond"),
                               body_names(ctx.op, "while/body"))
    _fill(new.regions[0], types, lambda carry, ip: inline_body(
        _body(cond_region), [*cconsts, *carry], ip, cond_names))
    _fill(new.regions[1], types, lambda carry, ip: inline_body(
        _body(body_region), [*bconsts, *carry], ip, body_names_))
    ctx.lower_nested(new.operation)
    return list(new.results)


# ---- scan -------------------------------------------------------------------------------
def _i32(value) -> ir.Value:
    return H.constant(value, np.int32)


# (JAX's names of a scan's loop ops, under the scan's scope)
_INDEX = "while/body/jit(dynamic_index_in_dim)/"
_UPDATE = "while/body/jit(dynamic_update_index_in_dim)/"


def _slice_at(x: ir.Value, idx: ir.Value, loc: ir.Location) -> ir.Value:
    """x[idx] along the leading axis."""
    aval = aval_of(x.type)
    zero = [_i32(0) for _ in aval.shape[1:]]
    with named_at(loc, _INDEX + "dynamic_slice"):
        one = hlo.dynamic_slice(x, [idx, *zero], [1, *aval.shape[1:]],
                                results=[H.ttype((1,) + aval.shape[1:], aval.dtype)])
    with named_at(loc, _INDEX + "squeeze"):
        return hlo.reshape(H.ttype(aval.shape[1:], aval.dtype), one)


def _update_at(ys: ir.Value, y: ir.Value, idx: ir.Value, loc: ir.Location) -> ir.Value:
    """ys with ys[idx] = y along the leading axis."""
    aval = aval_of(ys.type)
    zero = [_i32(0) for _ in aval.shape[1:]]
    with named_at(loc, _UPDATE + "broadcast_in_dim"):   # (JAX's expand_dims: a broadcast)
        row = _as_partial(hlo.broadcast_in_dim(H.ttype((1,) + aval.shape[1:], aval.dtype), y,
                                               list(range(1, len(aval.shape)))), y,
                          rows=True)
    with named_at(loc, _UPDATE + "dynamic_update_slice"):
        return _as_partial(hlo.dynamic_update_slice(ys, row, [idx, *zero],
                                                    results=[ys.type]), y, rows=True)


def _as_partial(v: ir.Value, y: ir.Value, rows: bool = False) -> ir.Value:
    """`v` (y's row or the ys with it written, `rows`; the loop's result that a step
    gives as `y`) laid out unreduced where Shardy's form lays `y` out so (to_sdy of
    passes/jaxpr_propagate_shardings.py: a partial sum stays one through the loop only
    where each of its values says so)."""
    owner = y.owner.operation if isinstance(y, ir.OpResult) else None
    if owner is None or owner.name != "sdy.sharding_constraint":
        return v
    text = str(owner.attributes["sharding"])
    if "unreduced=" not in text:
        return v
    if rows:
        at = text.index("[") + 1        # (one more leading dimension, not split)
        text = text[:at] + ("{}" if text[at] == "]" else "{}, ") + text[at:]
    return ir.Operation.create("sdy.sharding_constraint", results=[v.type], operands=[v],
                               attributes={"sharding": ir.Attribute.parse(text)}).result


@lowering(C.ScanOp)
def _scan_lower(ctx, *operands, length, reverse, unroll, num_consts, num_carry):
    consts = list(operands[:num_consts])
    carry = list(operands[num_consts:num_consts + num_carry])
    xs = list(operands[num_consts + num_carry:])
    body = _body(ctx.op.regions[0])
    names = body_names(ctx.op, "while/body/closed_call")
    loc = ctx.loc
    ys_avals = ctx.avals_out[num_carry:]
    # A splat (a stride-0 view), never a materialized array of length * y.size zeros.
    ys = [hlo.constant(A.dense_elements(np.broadcast_to(np.zeros((), a.dtype), a.shape)))
          if is_static(a.shape) else H.constant(0, a.dtype, a.shape) for a in ys_avals]
    if length == 0:
        return carry + ys
    if is_symbolic_dim(length):
        unroll = 1       # (a symbolic number of steps: no straight-line remainder)

    def count(n) -> ir.Value:
        """A step count as an i32 scalar (a symbolic one computed from the arguments)."""
        return H.convert(dim_value(ctx.op, n), np.int32) if is_symbolic_dim(n) else _i32(n)

    def step(pos: ir.Value, carry, ys, ip, names):
        """One body copy at element `pos` (an i32 scalar counting iterations)."""
        if reverse:     # (JAX's n - i - 1, two subtracts)
            with named_at(loc, "while/body/sub"):
                idx = hlo.subtract(hlo.subtract(count(length), pos), _i32(1))
        else:
            idx = pos
        outs = inline_body(body, consts + carry + [_slice_at(x, idx, loc) for x in xs],
                           ip, names)
        return outs[:num_carry], [_update_at(y_acc, y, idx, loc)
                                  for y_acc, y in zip(ys, outs[num_carry:])]

    full = (length // unroll) * unroll
    if full:
        state = [_i32(0)] + carry + ys
        types = [v.type for v in state]
        with named_at(loc, "while"):
            loop = hlo.WhileOp(types, state)

        def cond(args, ip):
            with named_at(loc, "while/cond/lt"):
                return [H.compare(args[0], count(full), "LT")]

        def iterate(args, ip):
            i, c, y = args[0], args[1:1 + num_carry], args[1 + num_carry:]
            for k in range(unroll):
                if k:
                    with named_at(loc, "while/body/add"):
                        pos = hlo.add(i, _i32(k))
                c, y = step(pos if k else i, c, y, ip, names)
            with named_at(loc, "while/body/add"):
                return [hlo.add(i, _i32(unroll)), *c, *y]
        _fill(loop.regions[0], types, cond)
        _fill(loop.regions[1], types, iterate)
        returned = list(list(loop.regions[1].blocks[0].operations)[-1].operands)
        results = [_as_partial(r, y) for r, y in zip(loop.results, returned)]
        carry, ys = results[1:1 + num_carry], results[1 + num_carry:]
        ctx.lower_nested(loop.operation)
    # The steps left over (length % unroll) run straight-line after the loop; their
    # cloned jaxpr ops sit before ctx.op, where the pass's walk has already been.
    before = _ops_before(ctx.op)
    ip = ir.InsertionPoint(ctx.op)
    rest = body_names(ctx.op, "closed_call")     # (JAX: jit(f)/closed_call/sin)
    for pos in range(full, length) if not is_symbolic_dim(length) else ():
        carry, ys = step(_i32(pos), carry, ys, ip, rest)
    # Lowering replaces (and frees) the values just made; a placeholder op using them
    # sees the replacements.
    keep = ir.Operation.create("mjax.keep", operands=carry + ys, ip=ip)
    _lower_new_ops(ctx, before)
    results = list(keep.operands)
    keep.erase()
    return results


def _ops_before(op: ir.Operation) -> set:
    found = set()
    for other in op.block.operations:
        if other.operation == op:
            break
        found.add(other.operation)
    return found


def _lower_new_ops(ctx, before: set) -> None:
    """Lowers the jaxpr ops a rule emitted in its parent block (those not in `before`)."""
    new = []
    for op in ctx.op.block.operations:
        op = op.operation
        if op == ctx.op:
            break
        if op not in before and op.name.startswith("jaxpr."):
            new.append(op)
    for op in new:
        ctx.lower_op(op)


# ---- yield and the transformation tables ------------------------------------------------
LOWER.unsupported(C.YieldOp, "jaxpr.yield is lowered with its parent cond/while/scan")
for _table in (JVP, TRANSPOSE, BATCH):
    _table.unsupported(C.YieldOp, f"jaxpr.yield is transformed with its parent "
                                  f"cond/while/scan ({_table.name})")
# The jvp, partial evaluation, transpose and batching rules of cond/while/scan work on
# their regions, so they live in the nested-rule tables: passes/rules/control_flow_ad.py.


# ---- weak types (passes/weak_cotangents.py) -------------------------------------------
# JAX types a cond's results and its operands' cotangents as its first branch gives them.
@WEAK_TYPES.register(C.CondOp)
def _cond_weak_types(types, op, weak):
    block = _body(op.regions[0])
    inner = types.weak_values_of_block(block, [weak.get(v, False)
                                               for v in list(op.operands)[1:]])
    return [inner.get(v, False) for v in terminator(block).operands]


@WEAK_COTANGENTS.register(C.CondOp)
def _cond_weak_cotangents(types, op, weak, ct, outs, top):
    operands = list(op.operands)[1:]
    return [None] + types.region_backward(_body(op.regions[0]),
                                          [weak.get(v, False) for v in operands],
                                          [ct.get(r) for r in op.results])


@WEAK_COTANGENTS.register(C.ScanOp)
def _scan_weak_cotangents(types, op, weak, ct, outs, top):
    # JAX's transposed scan carries the constants' cotangents from zeros of their own
    # types, and the carries' from the results' (a loop carry keeps its type); the
    # sequences' are what the body's transposition gives them.
    nc = ir.IntegerAttr(op.attributes["num_consts"]).value
    ncar = ir.IntegerAttr(op.attributes["num_carry"]).value
    operands, results = list(op.operands), list(op.results)
    carry_ct = [ct.get(r, weak.get(r, False)) for r in results[:ncar]]
    body = types.region_backward(_body(op.regions[0]),
                                 [weak.get(v, False) for v in operands],
                                 carry_ct + [ct.get(r) for r in results[ncar:]])
    return ([weak.get(v, False) for v in operands[:nc]] + carry_ct
            + body[nc + ncar:])
