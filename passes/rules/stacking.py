"""Rules for jaxpr.stack, jaxpr.unstack and jaxpr.split (dialect/ops/structural.py):
lowering, JVP and transpose (each is linear: stack and unstack are each other's
transpose, split's is one concatenate), batching and sharding propagation.
JAX: lax.stack_p, lax.unstack_p, lax.split_p.

    %s = "jaxpr.stack"(%a, %b) {axis = 1}   : (f32[3], f32[3]) -> f32[3,2]
  ==> each operand broadcast to f32[3,1], then stablehlo.concatenate along dimension 1;
    %u:2 = "jaxpr.unstack"(%s) {axis = 1}  : (f32[3,2]) -> (f32[3], f32[3])
  ==> per result, a stablehlo.slice of width 1 along axis 1, reshaped to f32[3];
    %p:2 = "jaxpr.split"(%x) {axis = 0, sizes = [1, 2]} : (f32[3]) -> (f32[1], f32[2])
  ==> a stablehlo.slice per piece.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.ops import structural as S
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules import batch_util as B
from mjax.passes.rules import hlo as H
from mjax.passes.rules.sharding import Factors, shard_rule
from mjax.passes.rules.tables import JVP, lowering


# ---- lowering -----------------------------------------------------------------------
@lowering(S.StackOp)
def _stack_lower(ctx, *xs, axis):
    x_aval = ctx.avals_in[0]
    shape = list(x_aval.shape)
    shape.insert(axis, 1)
    dims = [i for i in range(len(shape)) if i != axis]
    parts = [hlo.broadcast_in_dim(H.ttype(shape, x_aval.dtype), x, dims) for x in xs]
    return parts[0] if len(parts) == 1 else hlo.concatenate(parts, axis)


@lowering(S.UnstackOp)
def _unstack_lower(ctx, x, *, axis):
    shape = ctx.avals_in[0].shape
    outs = []
    for i, aval in enumerate(ctx.avals_out):
        start = [0] * len(shape)
        limit = list(shape)
        start[axis], limit[axis] = i, i + 1
        piece = H.slice_(ctx.op, x, tuple(start), tuple(limit), None)
        outs.append(hlo.reshape(H.ttype(aval.shape, aval.dtype), piece))
    return outs


@lowering(S.SplitOp)
def _split_lower(ctx, x, *, axis, sizes):
    shape = ctx.avals_in[0].shape
    outs, start = [], 0
    for size in sizes:
        starts, limits = [0] * len(shape), list(shape)
        starts[axis], limits[axis] = start, start + size
        outs.append(H.slice_(ctx.op, x, tuple(starts), tuple(limits), None))
        start += size
    return outs


# ---- JVP and transpose ----------------------------------------------------------------
def _stack_transpose(b, ct, *xs, axis):
    if not any(AD.is_linear(x) for x in xs):
        return [None] * len(xs)
    cts = b.emit(S.UnstackOp, ct, axis=axis)
    return [c if AD.is_linear(x) else None for x, c in zip(xs, cts)]


def _unstack_transpose(b, cts, x, *, axis):
    # (one result: its cotangent alone; several: a list, None for a zero one)
    cts = cts if isinstance(cts, list) else [cts]
    piece = AD.aval(x)
    piece = piece.update(shape=tuple(d for i, d in enumerate(piece.shape) if i != axis))
    # A zero one as JAX instantiates it: the scalar zero broadcast, an equation each (the
    # result's index, a discardable attribute, keeps CSE from merging them into one).
    cts = [_zero(b, piece, i) if c is None else c for i, c in enumerate(cts)]
    return [b.emit(S.StackOp, *cts, axis=axis)[0]]


def _zero(b, aval, i):
    zero = b.broadcast_in_dim(AD.constant(b, np.zeros((), aval.dtype)), shape=aval.shape,
                              broadcast_dimensions=())
    zero.owner.operation.attributes[_ZERO_OF] = ir.IntegerAttr.get(
        ir.IntegerType.get_signless(64), i)
    return zero


_ZERO_OF = "mjax.zero_cotangent_of"


AD.deflinear(S.StackOp, _stack_transpose)
AD.deflinear(S.UnstackOp, _unstack_transpose)


def _unstack_jvp(b, primals, tangents, *, axis):
    (x,), (t,) = primals, tangents
    out = b.emit(S.UnstackOp, x, axis=axis)
    if t is None or not out or not AD.has_tangent(AD.aval(x)):
        return out, [None] * len(out)
    return out, b.emit(S.UnstackOp, t, axis=axis)


JVP[S.UnstackOp] = _unstack_jvp   # (a size-0 axis has no results: no tangents either)


def _split_transpose(b, cts, x, *, axis, sizes):
    # One concatenate of the pieces' cotangents (a zero one instantiated, as JAX does),
    # so XLA writes the operand's cotangent once rather than adding a pad per piece.
    cts = cts if isinstance(cts, list) else [cts]
    aval = AD.aval(x)
    cts = [c if c is not None else _zero(
        b, aval.update(shape=aval.shape[:axis] + (s,) + aval.shape[axis + 1:]), i)
        for i, (c, s) in enumerate(zip(cts, sizes))]
    return [cts[0] if len(cts) == 1 else b.concatenate(*cts, dimension=axis)]


def _split_jvp(b, primals, tangents, *, axis, sizes):
    (x,), (t,) = primals, tangents
    out = b.emit(S.SplitOp, x, axis=axis, sizes=sizes)
    if t is None or not AD.has_tangent(AD.aval(x)):
        return out, [None] * len(out)
    return out, b.emit(S.SplitOp, t, axis=axis, sizes=sizes)


AD.deflinear(S.SplitOp, _split_transpose)
JVP[S.SplitOp] = _split_jvp


# ---- batching -------------------------------------------------------------------------
@B.batch_rule(S.StackOp)
def _stack_batch(b, args, dims, *, axis):
    d = dims[0]
    if d is not B.NOT_MAPPED and all(e == d for e in dims):
        # One batch axis for all: it stays, after the new axis if that comes first.
        if axis <= d:
            return b.emit(S.StackOp, *args, axis=axis), [d + 1]
        return b.emit(S.StackOp, *args, axis=axis + 1), [d]
    # Batch axes differ, or some operands are unbatched: each to the front (unbatched
    # ones broadcast), as JAX's rule does.
    xs = [B.bdim_at(b, x, xd, 0) for x, xd in zip(args, dims)]
    return b.emit(S.StackOp, *xs, axis=axis + 1), [0]


@B.batch_rule(S.UnstackOp)
def _unstack_batch(b, args, dims, *, axis):
    (x,), (d,) = args, dims
    if axis < d:
        outs = b.emit(S.UnstackOp, x, axis=axis)
        return outs, [d - 1] * len(outs)
    outs = b.emit(S.UnstackOp, x, axis=axis + 1)
    return outs, [d] * len(outs)


@B.batch_rule(S.SplitOp)
def _split_batch(b, args, dims, *, axis, sizes):
    (x,), (d,) = args, dims
    axis = axis if axis < d else axis + 1
    outs = b.emit(S.SplitOp, x, axis=axis, sizes=sizes)
    return outs, [d] * len(outs)


# ---- sharding propagation ---------------------------------------------------------------
# Operand dimension i is factor i; the stacking axis stays whole (JAX: a stacked result is
# unsharded along the new axis; an unstack operand must not be sharded along it).
@shard_rule(S.StackOp)
def _stack_shard(avals_in, avals_out, *, axis):
    rank = len(avals_in[0].shape)
    dims = tuple(range(rank))
    return Factors((dims,) * len(avals_in), (dims[:axis] + (None,) + dims[axis:],),
                   kind="stack")


@shard_rule(S.UnstackOp)
def _unstack_shard(avals_in, avals_out, *, axis):
    rank = len(avals_in[0].shape)
    kept = tuple(d for d in range(rank) if d != axis)
    return Factors((tuple(None if d == axis else d for d in range(rank)),),
                   (kept,) * len(avals_out), kind="unstack")


@shard_rule(S.SplitOp)
def _split_shard(avals_in, avals_out, *, axis, sizes):
    rank = len(avals_in[0].shape)
    dims = tuple(None if d == axis else d for d in range(rank))
    return Factors((dims,), (dims,) * len(avals_out), kind="split")
