"""Rules for the indexing family (dialect/ops/indexing.py): lowering.

    %0 = "jaxpr.gather"(%x, %i) {..., mode = "clip"} : (tensor<5xf32>, tensor<3x1xi32>) -> ...
  ==>
    %c = stablehlo.clamp %zero, %i, %upper
    %0 = "stablehlo.gather"(%x, %c) <{dimension_numbers = #stablehlo.gather<...>, ...}>

Modes (JAX's GatherScatterMode): "clip" clamps each start index into [0, dim - size];
gather "fill" replaces slices that are not wholly in bounds by `fill_value`; scatter
"fill" drops such updates, which is what stablehlo.scatter itself does;
"promise_in_bounds" lowers directly.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect import attributes as A
from mjax.dialect.dtype_rules import is_bool, is_inexact, is_unsigned
from mjax.dialect.ops import indexing as I
from mjax.dialect.ops.indexing import scatter_window_sizes
from mjax.dialect.shape_poly import is_symbolic_dim, max_dim
from mjax.dialect.types import aval_of
from mjax.passes.rules import batch_util as B
from mjax.passes.rules import hlo as H
from mjax.passes.rules.dynamic_shapes import dim_value, is_static, shape_value
from mjax.passes.rules.indexing_ad import gather_dnums_of_scatter
from mjax.passes.rules.reductions import combiner
from mjax.passes.rules.tables import CHECKS, lowering


def _out_type(ctx, i=0):
    return H.ttype(ctx.avals_out[i].shape, ctx.avals_out[i].dtype)


# ---- dynamic_slice / dynamic_update_slice ------------------------------------------
@lowering(I.DynamicSliceOp)
def _dynamic_slice_lower(ctx, x, *starts, slice_sizes):
    # stablehlo.dynamic_slice clamps the start indices into bounds, as lax promises.
    if not starts:
        return x  # rank 0 (and StableHLO's printer cannot round-trip a 0-d dynamic_slice)
    if not is_static(slice_sizes):
        return _symbolic_dynamic_slice(ctx, x, starts, slice_sizes)
    return hlo.dynamic_slice(x, list(starts), list(slice_sizes), results=[_out_type(ctx)])


def _symbolic_dynamic_slice(ctx, x, starts, slice_sizes):
    """dynamic_slice of symbolic sizes: the starts clamped to [0, n - size] by hand (as
    dynamic_slice clamps), then real_dynamic_slice."""
    shape = ctx.avals_in[0].shape
    i64 = np.dtype(np.int64)
    lo = []
    for s, n, size in zip(starts, shape, slice_sizes):
        s = hlo.reshape(H.ttype((1,), i64), H.convert(s, i64))
        hi = hlo.reshape(H.ttype((1,), i64), dim_value(ctx.op, n - size))
        lo.append(hlo.clamp(H.constant(0, i64, (1,)), s, hi))
    lo = hlo.concatenate(lo, 0)
    return hlo.real_dynamic_slice(_out_type(ctx), x, lo,
                                  hlo.add(lo, shape_value(ctx.op, slice_sizes)),
                                  H.constant(1, i64, (len(shape),)))


@lowering(I.DynamicUpdateSliceOp)
def _dynamic_update_slice_lower(ctx, x, update, *starts):
    if not starts:
        return update  # rank 0, as for dynamic_slice
    return hlo.dynamic_update_slice(x, update, list(starts), results=[_out_type(ctx)])


# ---- shared: index bounds -----------------------------------------------------------
def _vector_const(values, dtype, shape, op=None) -> ir.Value:
    """`values` (one per index-vector component) broadcast along the last dim of shape;
    symbolic dimensions among them are computed in op's function."""
    if is_static(values):
        vec = hlo.constant(A.dense_elements(np.asarray(values, dtype).reshape(len(values))))
    else:
        vec = H.convert(shape_value(op, values), dtype)
    return hlo.broadcast_in_dim(H.ttype(shape, dtype), vec, [len(shape) - 1])


def _clamp_indices(idx, aval, upper_bounds, op=None) -> ir.Value:
    """Clamps component k of every index vector into [0, upper_bounds[k]].

    JAX: slicing._clamp_scatter_indices (bounds saturate at the index dtype's max).
    """
    top = np.iinfo(aval.dtype).max
    upper = _vector_const([max_dim(b, 0) if is_symbolic_dim(b) else min(max(b, 0), top)
                           for b in upper_bounds], aval.dtype, aval.shape, op)
    return hlo.clamp(H.constant(0, aval.dtype), idx, upper)


# ---- gather -------------------------------------------------------------------------
def default_fill_value(dtype):
    """JAX's gather fill: NaN for inexact, lowest for signed, highest for unsigned, True."""
    if is_inexact(dtype):
        return np.nan
    if is_bool(dtype):
        return True
    info = np.iinfo(dtype)
    return info.max if is_unsigned(dtype) else info.min


def _gather_dnums(dn, index_vector_dim):
    return hlo.GatherDimensionNumbers.get(
        offset_dims=list(dn["offset_dims"]),
        collapsed_slice_dims=list(dn["collapsed_slice_dims"]),
        operand_batching_dims=list(dn["operand_batching_dims"]),
        start_indices_batching_dims=list(dn["start_indices_batching_dims"]),
        start_index_map=list(dn["start_index_map"]),
        index_vector_dim=index_vector_dim)


def _gather_fill_mask(ctx, idx, i_aval, operand_shape, upper):
    """JAX's slicing._gather_fill, op for op: the indices in the operand's index type
    (int32 unless a dim needs int64; the gather takes them so too), each index vector
    kept only if every component is in [0, dim - slice size], as a mask over the batch
    dims. Returns (indices, their aval, mask)."""
    wide = any(is_symbolic_dim(d) or d > np.iinfo(np.int32).max for d in operand_shape)
    itype = np.dtype(np.int64 if wide else np.int32)
    if np.dtype(i_aval.dtype) != itype:
        idx = H.convert(idx, itype)
        i_aval = i_aval.update(dtype=itype)
    nb = i_aval.ndim - 1
    ok_lo = H.compare(idx, H.constant(0, itype, i_aval.shape), "GE")
    if is_static(upper):
        vec = hlo.constant(A.dense_elements(np.asarray(upper, itype).reshape(len(upper))))
    else:
        vec = H.convert(shape_value(ctx.op, upper), itype)
    # (lax.expand_dims of the bounds, then le's implicit broadcast to the indices' shape)
    lifted = (1,) * nb + (len(upper),)
    bound = hlo.broadcast_in_dim(H.ttype(lifted, itype), vec, [nb])
    if tuple(i_aval.shape) != lifted:
        bound = hlo.broadcast_in_dim(H.ttype(i_aval.shape, itype), bound,
                                     list(range(nb + 1)))
    ok = hlo.and_(ok_lo, H.compare(idx, bound, "LE"))
    mask = H.scalar_reduce([H.ttype(i_aval.shape[:-1], np.bool_)], [ok],
                           [H.constant(True, np.bool_)], [nb],
                           lambda a, b: [hlo.and_(a, b)])[0]
    return idx, i_aval, mask


@lowering(I.GatherOp)
def _gather_lower(ctx, x, idx, *, dimension_numbers, slice_sizes, indices_are_sorted,
                  unique_indices, mode, fill_value):
    x_aval, i_aval = ctx.avals_in
    out_aval = ctx.avals_out[0]
    if is_static(out_aval.shape) and 0 in out_aval.shape:
        # JAX: an empty result lowers to zeros; stablehlo.gather's verifier rejects slice
        # sizes (1 per batching dim) larger than an empty operand (vmap over 0 rows).
        return H.constant(0, out_aval.dtype, out_aval.shape)
    dn = dimension_numbers
    start_map = dn["start_index_map"]
    upper = [x_aval.shape[d] - slice_sizes[d] for d in start_map]
    mask = None
    if mode == "clip":
        idx = _clamp_indices(idx, i_aval, upper, ctx.op)
    elif mode == "fill":
        idx, i_aval, mask = _gather_fill_mask(ctx, idx, i_aval, x_aval.shape, upper)
    if is_static(slice_sizes):
        out = hlo.gather(x, idx, _gather_dnums(dn, i_aval.ndim - 1), list(slice_sizes),
                         indices_are_sorted=indices_are_sorted, results=[_out_type(ctx)])
    else:
        out = hlo.dynamic_gather(x, idx, shape_value(ctx.op, slice_sizes),
                                 _gather_dnums(dn, i_aval.ndim - 1),
                                 indices_are_sorted=indices_are_sorted,
                                 results=[_out_type(ctx)])
    if mask is None:
        return out
    batch_dims = [d for d in range(out_aval.ndim) if d not in dn["offset_dims"]]
    if batch_dims != list(range(out_aval.ndim)):   # (JAX forwards an identity broadcast)
        mask = hlo.broadcast_in_dim(H.ttype(out_aval.shape, np.bool_), mask, batch_dims)
    fill = default_fill_value(out_aval.dtype) if fill_value is None else fill_value
    if is_bool(out_aval.dtype):
        fill = bool(fill)
    return hlo.select(mask, out, H.constant(fill, out_aval.dtype, out_aval.shape))


# ---- scatter ------------------------------------------------------------------------
_SCATTERS = {I.ScatterOp: None, I.ScatterAddOp: "add", I.ScatterMulOp: "mul",
             I.ScatterMinOp: "min", I.ScatterMaxOp: "max"}


def _scatter_lower(ctx, x, idx, updates, *, dimension_numbers, indices_are_sorted,
                   unique_indices, mode, kind):
    x_aval, i_aval, u_aval = ctx.avals_in
    dn = dimension_numbers
    if mode == "clip":
        window = scatter_window_sizes(x_aval.shape, u_aval.shape, dn)
        idx = _clamp_indices(idx, i_aval, [x_aval.shape[d] - window[d]
                                           for d in dn["scatter_dims_to_operand_dims"]], ctx.op)
    # "fill" and "promise_in_bounds": stablehlo.scatter skips updates whose window is not
    # wholly in bounds, which is exactly "drop".
    dnums = hlo.ScatterDimensionNumbers.get(
        update_window_dims=list(dn["update_window_dims"]),
        inserted_window_dims=list(dn["inserted_window_dims"]),
        input_batching_dims=list(dn["operand_batching_dims"]),
        scatter_indices_batching_dims=list(dn["scatter_indices_batching_dims"]),
        scattered_dims_to_operand_dims=list(dn["scatter_dims_to_operand_dims"]),
        index_vector_dim=i_aval.ndim - 1)
    op = hlo.ScatterOp([_out_type(ctx)], [x], idx, [updates], dnums,
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)
    scalar = H.ttype((), x_aval.dtype)
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        old, new = block.arguments
        hlo.return_([new if kind is None else combiner(kind, x_aval.dtype)(old, new)])
    return op.results[0]


for _op, _kind in _SCATTERS.items():
    lowering(_op)(lambda ctx, x, idx, updates, _kind=_kind, **params: _scatter_lower(
        ctx, x, idx, updates, kind=_kind, **params))


# ---- batching -------------------------------------------------------------------------
# JAX: slicing._gather_batching_rule / _scatter_batching_rule, with the batch axis moved to
# the front of every batched operand. Operand batched only: the batch axis becomes one more
# window (offset) dim of full size. Indices batched only: one more indices batch dim. Both:
# StableHLO's batching dims pair operand dim 0 with indices dim 0, so each example reads
# (writes) its own operand slice without an iota concatenated to the indices.
def _shift(dims, by=1):
    return tuple(d + by for d in dims)


def gather_batched(b, x, xd, idx, idd, *, dimension_numbers, slice_sizes, **params):
    """The gather of `x` (batched at xd, or None) at `idx` (batched at idd, or None),
    batched at axis 0 of the result. Shared by gather and batched dynamic_slice."""
    dn = dimension_numbers
    if idd is None:
        x = B.moveaxis(b, x, xd, 0)
        new = {"offset_dims": (0,) + _shift(dn["offset_dims"]),
               "collapsed_slice_dims": _shift(dn["collapsed_slice_dims"]),
               "start_index_map": _shift(dn["start_index_map"]),
               "operand_batching_dims": _shift(dn["operand_batching_dims"]),
               "start_indices_batching_dims": dn["start_indices_batching_dims"]}
        sizes = (b.axis_size,) + tuple(slice_sizes)
    elif xd is None:
        idx = B.moveaxis(b, idx, idd, 0)
        new = {**dn, "offset_dims": _shift(dn["offset_dims"]),
               "start_indices_batching_dims": _shift(dn["start_indices_batching_dims"])}
        sizes = tuple(slice_sizes)
    else:
        x, idx = B.moveaxis(b, x, xd, 0), B.moveaxis(b, idx, idd, 0)
        new = {"offset_dims": _shift(dn["offset_dims"]),
               "collapsed_slice_dims": _shift(dn["collapsed_slice_dims"]),
               "start_index_map": _shift(dn["start_index_map"]),
               "operand_batching_dims": (0,) + _shift(dn["operand_batching_dims"]),
               "start_indices_batching_dims":
                   (0,) + _shift(dn["start_indices_batching_dims"])}
        sizes = (1,) + tuple(slice_sizes)
    if idd is not None:  # sortedness was promised per example, not across the batch
        params["indices_are_sorted"] = False
    return b.gather(x, idx, dimension_numbers=new, slice_sizes=sizes, **params)


@B.batch_rule(I.GatherOp)
def _gather_batch(b, args, dims, **params):
    (x, idx), (xd, idd) = args, dims
    return [gather_batched(b, x, xd, idx, idd, **params)], [0]


def scatter_batched(b, op, x, xd, idx, idd, upd, ud, *, dimension_numbers,
                    indices_are_sorted, **params):
    """The scatter `op` with its operands batched as given (None: not batched); the
    result is batched at axis 0. Shared by the scatter family and batched
    dynamic_update_slice."""
    dn = dimension_numbers
    # The result is batched whenever anything is, so the operand must be; the updates too,
    # since each example writes its own windows.
    x, upd = B.bdim_to_front(b, x, xd), B.bdim_to_front(b, upd, ud)
    if idd is None:
        new = {"update_window_dims": (0,) + _shift(dn["update_window_dims"]),
               "inserted_window_dims": _shift(dn["inserted_window_dims"]),
               "scatter_dims_to_operand_dims": _shift(dn["scatter_dims_to_operand_dims"]),
               "operand_batching_dims": _shift(dn["operand_batching_dims"]),
               "scatter_indices_batching_dims": dn["scatter_indices_batching_dims"]}
    else:
        idx = B.moveaxis(b, idx, idd, 0)
        new = {"update_window_dims": _shift(dn["update_window_dims"]),
               "inserted_window_dims": _shift(dn["inserted_window_dims"]),
               "scatter_dims_to_operand_dims": _shift(dn["scatter_dims_to_operand_dims"]),
               "operand_batching_dims": (0,) + _shift(dn["operand_batching_dims"]),
               "scatter_indices_batching_dims":
                   (0,) + _shift(dn["scatter_indices_batching_dims"])}
        # Sortedness was promised per example, not across the new leading batch dim.
        indices_are_sorted = False
    return b.emit(op, x, idx, upd, dimension_numbers=new,
                  indices_are_sorted=indices_are_sorted, **params)[0]


def _scatter_batch_rule(op):
    def rule(b, args, dims, **params):
        (x, idx, upd), (xd, idd, ud) = args, dims
        return [scatter_batched(b, op, x, xd, idx, idd, upd, ud, **params)], [0]
    return rule


for _op in _SCATTERS:
    B.batch_rule(_op)(_scatter_batch_rule(_op))


# dynamic_slice / dynamic_update_slice: with unbatched start indices the batch axis is one
# more sliced dim, started at 0; batched start indices make them a gather / scatter with
# one index vector per example, clamped as dynamic_slice clamps (JAX does the same).
def _zero_index(b, starts):
    dtype = aval_of(starts[0].type).dtype if starts else np.dtype(np.int32)
    return b.constant(0, dtype)


def _start_vectors(b, starts, dims):
    """The start indices as one (axis_size, n) index array, batched at 0."""
    cols = []
    for s, d in zip(starts, dims):
        s = B.bdim_to_front(b, s, d)  # (axis_size,)
        cols.append(b.broadcast_in_dim(s, shape=(b.axis_size, 1), broadcast_dimensions=(0,)))
    return cols[0] if len(cols) == 1 else b.concatenate(*cols, dimension=1)


def _window_dnums(n):
    """Scatter dimension numbers writing one whole window per index vector of length n."""
    every = tuple(range(n))
    return {"update_window_dims": every, "inserted_window_dims": (),
            "scatter_dims_to_operand_dims": every, "operand_batching_dims": (),
            "scatter_indices_batching_dims": ()}


@B.batch_rule(I.DynamicSliceOp)
def _dynamic_slice_batch(b, args, dims, *, slice_sizes):
    (x, *starts), (xd, *sds) = args, dims
    if all(d is None for d in sds):
        starts = list(starts)
        starts.insert(xd, _zero_index(b, starts))
        sizes = list(slice_sizes)
        sizes.insert(xd, b.axis_size)
        return [b.dynamic_slice(x, *starts, slice_sizes=tuple(sizes))], [xd]
    out = gather_batched(b, x, xd, _start_vectors(b, starts, sds), 0,
                         dimension_numbers=gather_dnums_of_scatter(_window_dnums(len(starts))),
                         slice_sizes=tuple(slice_sizes), indices_are_sorted=False,
                         unique_indices=True, mode="clip", fill_value=None)
    return [out], [0]


@B.batch_rule(I.DynamicUpdateSliceOp)
def _dynamic_update_slice_batch(b, args, dims):
    (x, upd, *starts), (xd, ud, *sds) = args, dims
    if all(d is None for d in sds):
        x, upd = B.bdim_to_front(b, x, xd), B.bdim_to_front(b, upd, ud)
        return [b.dynamic_update_slice(x, upd, _zero_index(b, starts), *starts)], [0]
    out = scatter_batched(b, I.ScatterOp, x, xd, _start_vectors(b, starts, sds), 0, upd, ud,
                          dimension_numbers=_window_dnums(len(starts)), indices_are_sorted=False,
                          unique_indices=True, mode="clip")
    return [out], [0]


# ---- checkify: out-of-bounds indices (JAX: checkify's gather/scatter/dynamic-slice
# checks); the scatters' results are checked for NaNs too ----------------------------
for _op in (I.DynamicSliceOp, I.DynamicUpdateSliceOp, I.GatherOp):
    CHECKS[_op] = ("index",)
for _op in (I.ScatterOp, I.ScatterAddOp, I.ScatterMulOp, I.ScatterMinOp, I.ScatterMaxOp):
    CHECKS[_op] = ("index", "nan")
