"""Differentiation rules for the reductions and indexing families
(dialect/ops/reductions.py, indexing.py): JVP rules, transposes of the linear ops, and
declared reasons for the rest. Kept apart from those families' lowering files, which
another engineer owns; imported by passes/__init__.py.
"""
from __future__ import annotations



from mjax.dialect.ops import indexing as I
from mjax.dialect.ops import reductions as R
from mjax.passes.rules import ad_util as AD


def _unreduce(b, x, in_shape, axes):
    """Broadcasts a reduced value back over `axes` of `in_shape`."""
    kept = tuple(d for d in range(len(in_shape)) if d not in axes)
    return b.broadcast_in_dim(x, shape=tuple(in_shape), broadcast_dimensions=kept)


# ---- reductions --------------------------------------------------------------------
AD.deflinear(R.ReduceSumOp, lambda b, ct, x, *, axes: [
    _unreduce(b, ct, AD.aval(x).shape, axes)])


def _chooser_jvp(b, t, x, *, axes, ans):
    # JAX: _reduce_chooser_jvp_rule. The tangent averages over the positions that attain
    # the max/min (ties split evenly).
    shape = AD.aval(x).shape
    hit = b.eq(x, _unreduce(b, ans, shape, axes))
    ones = AD.full_like(b, x, 1)
    mask = b.select_n(hit, AD.zeros_like(b, x), ones)
    count = b.reduce_sum(mask, axes=axes)
    return b.div(b.reduce_sum(b.mul(t, mask), axes=axes), count)


AD.defjvp(R.ReduceMaxOp, _chooser_jvp)
AD.defjvp(R.ReduceMinOp, _chooser_jvp)
for _op in (R.ReduceMaxOp, R.ReduceMinOp):
    AD.no_transpose(_op, "not linear")
for _op in (R.ReduceAndOp, R.ReduceOrOp, R.ReduceXorOp):
    AD.defzero(_op, "boolean/integer reduction: no tangent (float0)")
for _op in (R.ArgMinOp, R.ArgMaxOp):
    AD.defzero(_op, "integer index result: no tangent (float0)")
AD.no_jvp(R.ReduceProdOp, "zero-safe JVP of reduce_prod (exclusive products) not written yet")
AD.no_transpose(R.ReduceProdOp, "not linear")

AD.deflinear(R.CumsumOp, lambda b, ct, x, *, axis, reverse: [
    b.cumsum(ct, axis=axis, reverse=not reverse)])
for _op in (R.CumprodOp, R.CummaxOp, R.CumminOp, R.CumlogsumexpOp):
    AD.no_jvp(_op, "JVP via an associative scan not written yet (JAX: associative_scan jvp)")
    AD.no_transpose(_op, "not linear")
AD.no_jvp(R.SortOp, "JVP needs a gather of tangents by the sort permutation; not written yet")
AD.no_transpose(R.SortOp, "not linear")


# ---- indexing ----------------------------------------------------------------------
@AD.jvp_rule(I.DynamicSliceOp)
def _dynamic_slice_jvp(b, primals, tangents, *, slice_sizes):
    x, *starts = primals
    out = b.dynamic_slice(x, *starts, slice_sizes=slice_sizes)
    if tangents[0] is None:
        return [out], [None]
    return [out], [b.dynamic_slice(tangents[0], *starts, slice_sizes=slice_sizes)]


@AD.transpose_rule(I.DynamicSliceOp)
def _dynamic_slice_transpose(b, ct, x, *starts, slice_sizes):
    zeros = AD.zeros(b, AD.aval(x))
    return [b.dynamic_update_slice(zeros, ct, *starts)] + [None] * len(starts)


@AD.jvp_rule(I.DynamicUpdateSliceOp)
def _dynamic_update_slice_jvp(b, primals, tangents):
    x, upd, *starts = primals
    out = b.dynamic_update_slice(x, upd, *starts)
    if tangents[0] is None and tangents[1] is None:
        return [out], [None]
    tx = AD.instantiate(b, tangents[0], AD.aval(x))
    tu = AD.instantiate(b, tangents[1], AD.aval(upd))
    return [out], [b.dynamic_update_slice(tx, tu, *starts)]


@AD.transpose_rule(I.DynamicUpdateSliceOp)
def _dynamic_update_slice_transpose(b, ct, x, upd, *starts):
    ushape = AD.aval(upd).shape
    t_x = b.dynamic_update_slice(ct, AD.zeros(b, AD.aval(upd)), *starts) \
        if AD.is_linear(x) else None
    t_u = b.dynamic_slice(ct, *starts, slice_sizes=tuple(ushape)) if AD.is_linear(upd) else None
    return [t_x, t_u] + [None] * len(starts)


for _op in (I.GatherOp, I.ScatterOp, I.ScatterAddOp, I.ScatterMulOp, I.ScatterMinOp,
            I.ScatterMaxOp):
    AD.no_jvp(_op, "gather/scatter JVP and transpose (dimension-number mapping) not "
                   "written yet")
    AD.no_transpose(_op, "gather/scatter transpose not written yet")


