"""Rules for the collectives (dialect/ops/collectives.py): jvp, transpose, batch, lower.

Under `vmap(f, axis_name="i")` the members of axis "i" are the batch elements, so a
collective naming "i" becomes ordinary array code along the batch axis:

    %s = "jaxpr.psum"(%x) {axes = ["i"]} : (tensor<3xf32>) -> tensor<3xf32>
  ==> (x batched at 0, axis_size 8)
    %s = "jaxpr.reduce_sum"(%xs) {axes = array<i64: 0>} : (tensor<8x3xf32>) -> tensor<3xf32>

and the result is unbatched (the same for every member). A collective naming other axes
passes through with its operand batched (nested vmaps resolve their own names); a psum
over several names reduces this vmap's name and keeps the rest. JAX: the batchers in
lax/parallel.py (_batched_reduction_collective, _all_gather_batcher_collective, ...).

Outside every vmap a named axis is unbound: the frontend raises JAX's NameError at trace
time, and lowering one outside the shard_map or pmap body that binds its axis is a
located error (no rule can choose the devices it would reduce over).
"""
from __future__ import annotations

import numpy as np

from mjax.dialect.ops import collectives as C
from mjax.dialect.types import aval_of
from mjax.passes.registry import PassError
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules import batch_util as B
from mjax.passes.rules.tables import lowering, nan_checked


# ---- jvp / transpose -----------------------------------------------------------------
# psum, all_gather, psum_scatter, all_to_all and ppermute are linear: the tangent goes
# through the same op, and each transposes to its adjoint collective (JAX: the transpose
# rules in lax/parallel.py; psum's cotangent is psum'd, as vmap(grad(psum)) gives in JAX).
AD.deflinear(C.PsumOp, lambda b, ct, x, *, axes: [b.psum(ct, axes=axes)])
AD.deflinear(C.AllGatherOp, lambda b, ct, x, *, axes, axis, tiled, axis_size: [
    b.psum_scatter(ct, axes=axes, scatter_dimension=axis, tiled=tiled, axis_size=axis_size)])
AD.deflinear(C.PsumScatterOp, lambda b, ct, x, *, axes, scatter_dimension, tiled, axis_size: [
    b.all_gather(ct, axes=axes, axis=scatter_dimension, tiled=tiled, axis_size=axis_size)])
AD.deflinear(C.AllToAllOp, lambda b, ct, x, *, axes, split_axis, concat_axis, tiled,
             axis_size: [b.all_to_all(ct, axes=axes, split_axis=concat_axis,
                                      concat_axis=split_axis, tiled=tiled,
                                      axis_size=axis_size)])
AD.deflinear(C.PpermuteOp, lambda b, ct, x, *, axes, perm: [
    b.ppermute(ct, axes=axes, perm=tuple((dst, src) for src, dst in perm))])
for _op in (C.PmaxOp, C.PminOp):
    AD.no_jvp(_op, f"JAX does not differentiate {_op.primitive} (no differentiation rule); "
                   f"use a differentiable formulation, e.g. psum of a one-hot mask")
    AD.no_transpose(_op, "not linear; it has no JVP rule either")
AD.defzero(C.AxisIndexOp, "integer-valued: axis_index has no tangent")


# ---- batching -------------------------------------------------------------------------
def _one_name(b, axes, op):
    if len(axes) != 1:
        raise PassError(b.loc, f"cannot vmap jaxpr.{op} over several axis names {axes} "
                               f"at once; only psum, pmax and pmin accept several names")


def _scaled(b, x, k):
    return b.mul(x, b.constant(k, aval_of(x.type).dtype, aval_of(x.type).shape))


def _reducer_batch(op, reduce_op, unbatched):
    """psum/pmax/pmin: reduce the batch axis; an unbatched operand is the same value on
    every member (psum: times the axis size)."""
    def rule(b, args, dims, *, axes):
        (x,), (d,) = args, dims
        if b.axis_name not in axes:
            return b.emit(op, x, axes=axes), [d]
        y = unbatched(b, x) if d is None else b.emit(reduce_op, x, axes=(d,))[0]
        rest = tuple(n for n in axes if n != b.axis_name)
        if rest:
            y = b.emit(op, y, axes=rest)[0]
        return [y], [None]
    B.batch_rule(op)(rule)


_reducer_batch(C.PsumOp, "reduce_sum", lambda b, x: _scaled(b, x, b.axis_size))
_reducer_batch(C.PmaxOp, "reduce_max", lambda b, x: x)
_reducer_batch(C.PminOp, "reduce_min", lambda b, x: x)


def _merge(b, x, axis):
    """`x` with axes `axis` and `axis + 1` merged into one (row-major)."""
    shape = list(aval_of(x.type).shape)
    shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
    return b.reshape(x, new_sizes=tuple(shape))


def _split(b, x, axis, outer):
    """`x` with axis `axis` split into (outer, rest) (row-major)."""
    shape = list(aval_of(x.type).shape)
    shape[axis:axis + 1] = [outer, shape[axis] // outer]
    return b.reshape(x, new_sizes=tuple(shape))


@B.batch_rule(C.AllGatherOp)
def _all_gather_batch(b, args, dims, *, axes, axis, tiled, axis_size):
    (x,), (d,) = args, dims
    if b.axis_name not in axes:
        x = B.moveaxis(b, x, d, 0)
        return [b.all_gather(x, axes=axes, axis=axis + 1, tiled=tiled,
                             axis_size=axis_size)], [0]
    _one_name(b, axes, "all_gather")
    # The batch axis, moved to `axis`, is the gathered axis; every member gets all of it.
    y = B.bdim_at(b, x, d, axis)
    return [_merge(b, y, axis) if tiled else y], [None]


@B.batch_rule(C.PsumScatterOp)
def _psum_scatter_batch(b, args, dims, *, axes, scatter_dimension, tiled, axis_size):
    (x,), (d,) = args, dims
    sd = scatter_dimension
    if b.axis_name not in axes:
        x = B.moveaxis(b, x, d, 0)
        return [b.psum_scatter(x, axes=axes, scatter_dimension=sd + 1, tiled=tiled,
                               axis_size=axis_size)], [0]
    _one_name(b, axes, "psum_scatter")
    total = _scaled(b, x, b.axis_size) if d is None else b.reduce_sum(x, axes=(d,))
    # Member i keeps block i of the scattered dimension: that dimension is the new batch.
    return [_split(b, total, sd, b.axis_size) if tiled else total], [sd]


@B.batch_rule(C.AllToAllOp)
def _all_to_all_batch(b, args, dims, *, axes, split_axis, concat_axis, tiled, axis_size):
    (x,), (d,) = args, dims
    if b.axis_name not in axes:
        x = B.moveaxis(b, x, d, 0)
        return [b.all_to_all(x, axes=axes, split_axis=split_axis + 1,
                             concat_axis=concat_axis + 1, tiled=tiled,
                             axis_size=axis_size)], [0]
    _one_name(b, axes, "all_to_all")
    x = B.bdim_to_front(b, x, d)               # (sender j, example...)
    if tiled:
        x = _split(b, x, split_axis + 1, b.axis_size)  # split axis -> (receiver i, block)
    x = B.moveaxis(b, x, split_axis + 1, 0)    # (receiver i, sender j, rest...)
    x = B.moveaxis(b, x, 1, concat_axis + 1)   # senders in order at the concat axis
    if tiled:
        x = _merge(b, x, concat_axis + 1)
    return [x], [0]


@B.batch_rule(C.PpermuteOp)
def _ppermute_batch(b, args, dims, *, axes, perm):
    (x,), (d,) = args, dims
    if b.axis_name not in axes:
        return [b.ppermute(x, axes=axes, perm=perm)], [d]
    _one_name(b, axes, "ppermute")
    n = b.axis_size
    for src, dst in perm:
        if not (0 <= src < n and 0 <= dst < n):
            raise PassError(b.loc, f"ppermute: perm {perm} names a member outside axis "
                                   f"'{b.axis_name}' of size {n}")
    source = {dst: src for src, dst in perm}
    covered = len(source) == n
    if d is None and covered:
        return [x], [None]  # every member receives the same value
    x = B.bdim_to_front(b, x, d)
    shape = aval_of(x.type).shape
    rank = len(shape)
    idx = b.constant(np.array([[source.get(i, 0)] for i in range(n)], np.int32))
    y = b.gather(x, idx, dimension_numbers={
        "offset_dims": tuple(range(1, rank)), "collapsed_slice_dims": (0,),
        "start_index_map": (0,), "operand_batching_dims": (),
        "start_indices_batching_dims": ()},
        slice_sizes=(1,) + tuple(shape[1:]), indices_are_sorted=False,
        unique_indices=covered, mode="promise_in_bounds")
    if not covered:  # members nobody sends to receive zeros
        keep = b.constant(np.array([i in source for i in range(n)]))
        keep = b.broadcast_in_dim(keep, shape=shape, broadcast_dimensions=(0,))
        y = b.select_n(keep, b.zeros_like(y), y)
    return [y], [0]


@B.batch_rule(C.AxisIndexOp)
def _axis_index_batch(b, args, dims, *, axes):
    if b.axis_name not in axes:
        return [b.axis_index(axes=axes)], [None]
    return [b.iota(dtype=np.dtype(np.int32), shape=(b.axis_size,), dimension=0)], [0]


for _op in C.COLLECTIVES:
    B.uses_named_axes(_op)


# ---- lowering --------------------------------------------------------------------------
@lowering(*C.COLLECTIVES)
def _collective_lower(ctx, *args, axes, **params):
    names = ", ".join(repr(n) for n in axes)
    raise PassError(ctx.loc, f"'{ctx.op.name}' op names axis {names}, which no enclosing "
                             f"vmap binds; collectives over device axes (pmap, shard_map) "
                             f"cannot be lowered yet")


# ---- checkify -------------------------------------------------------------------------
nan_checked(C.PsumOp)
