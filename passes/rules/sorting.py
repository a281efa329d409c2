"""Rules for top_k and approx_top_k (dialect/ops/sorting.py): lowering, JVP, batching.

    %v, %i = "jaxpr.top_k"(%x) {axis = 1, k = 2} : (tensor<3x5xf32>) -> (...)
  ==>
    %v, %i = chlo.top_k(%x, k = 2)        (along the last axis; others are transposed there)

    %v, %i = "jaxpr.approx_top_k"(%x) {k = 3, reduction_dimension = 1, ...}
  ==>
    %v, %i = stablehlo.custom_call @ApproxTopK(%x, %iota, %init, %c-1)
               {called_computations = [@top_k_gt_f32_comparator], mhlo.backend_config = {...}}
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo
from jaxlib.mlir.dialects import func as func_d
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.ops import sorting as S
from mjax.dialect.shape_poly import is_symbolic_dim
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules import hlo as H
from mjax.passes.rules.dynamic_shapes import dim_value
from mjax.passes.rules.batch_util import batch_rule, canonical_axis
from mjax.passes.rules.tables import lowering, platform_rules


@lowering(S.TopKOp)
def _top_k_lower(ctx, x, *, k, axis):
    ndim = ctx.avals_in[0].ndim
    perm = list(range(ndim))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    if axis != ndim - 1:
        x = hlo.transpose(x, perm)
    if is_symbolic_dim(k):
        # (StableHLO's dynamic top_k, a custom call shape refinement makes chlo.top_k)
        shape = list(ctx.avals_out[0].shape)
        shape[axis], shape[-1] = shape[-1], shape[axis]
        types = [H.ttype(shape, ctx.avals_out[0].dtype), H.ttype(shape, np.int32)]
        values, indices = ir.Operation.create(
            "stablehlo.custom_call", results=types, operands=[x, dim_value(ctx.op, k)],
            attributes={"call_target_name": ir.StringAttr.get("stablehlo.dynamic_top_k"),
                        "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32),
                                                          1)}).results
    else:
        values, indices = chlo.top_k(x, k)
    if axis != ndim - 1:
        values, indices = hlo.transpose(values, perm), hlo.transpose(indices, perm)
    return [values, indices]


@AD.jvp_rule(S.TopKOp)
def _top_k_jvp(b, primals, tangents, *, k, axis):
    # JAX: _top_k_jvp. The tangent at the chosen positions: take_along_axis as a gather
    # whose other dimensions are batching dimensions.
    (x,), (t,) = primals, tangents
    values, indices = b.emit(S.TopKOp, x, k=k, axis=axis)
    if t is None:
        return [values, indices], [None, None]
    return [values, indices], [_take_along(b, t, indices, axis), None]


def _take_along(b, t, indices, axis, *, jnp_form=False):
    """t at `indices` along `axis`: top_k's gather, or (`jnp_form`) jnp.take_along_axis's
    (negative indices wrapped, out-of-range ones read as NaN), as approx_top_k's JVP."""
    shape = AD.aval(indices).shape
    if jnp_form:
        n = AD.full_like(b, indices, AD.aval(t).shape[axis])
        negative = b.lt(indices, AD.zeros_like(b, indices))
        indices = b.select_n(negative, indices, b.add(indices, n))
    others = tuple(d for d in range(len(shape)) if d != axis)
    dn = {"offset_dims": (), "collapsed_slice_dims": (axis,), "start_index_map": (axis,),
          "operand_batching_dims": others, "start_indices_batching_dims": others}
    idx = b.reshape(indices, new_sizes=shape + (1,))
    if jnp_form:
        return b.gather(t, idx, dimension_numbers=dn, slice_sizes=(1,) * len(shape),
                        indices_are_sorted=False, unique_indices=False, mode="fill",
                        fill_value=None)
    return b.gather(t, idx, dimension_numbers=dn, slice_sizes=(1,) * len(shape),
                    indices_are_sorted=False, unique_indices=True,
                    mode="promise_in_bounds", fill_value=None)


AD.no_transpose(S.TopKOp)


@batch_rule(S.TopKOp)
def _top_k_batch(b, args, dims, *, k, axis):
    (x,), (d,) = args, dims
    outs = b.emit(S.TopKOp, x, k=k, axis=canonical_axis(axis, d))
    return outs, [d, d]


# ---- approx_top_k ------------------------------------------------------------------------
def _comparator(ctx, elem: ir.Type, is_max_k: bool) -> str:
    """The module's `top_k_{gt,lt}_<type>_comparator` (value, value, index, index) -> i1,
    as JAX's _comparator_builder_mlir names and builds it."""
    module = ctx.op
    while module.name != "builtin.module":
        module = module.parent
    name = f"top_k_{'gt' if is_max_k else 'lt'}_{elem}_comparator"
    if name not in ir.SymbolTable(module.operation):
        scalar, index = ir.RankedTensorType.get([], elem), H.ttype((), np.int32)
        with ir.InsertionPoint(module.regions[0].blocks[0]), ir.Location.unknown():
            fn = func_d.FuncOp(name, ([scalar, scalar, index, index],
                                      [H.ttype((), np.bool_)]))
            fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
            block = fn.add_entry_block()
            with ir.InsertionPoint(block):
                p0, p1 = block.arguments[0], block.arguments[1]
                func_d.ReturnOp([hlo.compare(p0, p1, hlo.ComparisonDirectionAttr.get(
                    "GT" if is_max_k else "LT"))])
    return name


@lowering(S.ApproxTopKOp)
def _approx_top_k_lower(ctx, x, *, k, reduction_dimension, recall_target, is_max_k,
                        reduction_input_size_override, aggregate_to_topk):
    # JAX: _approx_top_k_lowering (on the TPU; elsewhere with is_fallback, which XLA
    # computes exactly)
    aval = ctx.avals_in[0]
    i64 = ir.IntegerType.get_signless(64)
    iota = hlo.iota(H.ttype(aval.shape, np.int32), reduction_dimension)
    init = H.constant(-np.inf if is_max_k else np.inf, aval.dtype)
    config = {"reduction_dim": ir.IntegerAttr.get(i64, reduction_dimension),
              "recall_target": ir.FloatAttr.get(ir.F32Type.get(), recall_target),
              "aggregate_to_topk": ir.BoolAttr.get(aggregate_to_topk),
              "reduction_input_size_override": ir.IntegerAttr.get(
                  i64, reduction_input_size_override)}
    if not platform_rules().approx_top_k:
        config["is_fallback"] = ir.BoolAttr.get(True)
    config["top_k"] = ir.IntegerAttr.get(i64, k)
    elem = H.ttype((), aval.dtype).element_type
    types = [H.ttype(a.shape, a.dtype) for a in ctx.avals_out]
    op = ir.Operation.create(
        "stablehlo.custom_call", results=types,
        operands=[x, iota, init, H.constant(-1, np.int32)],
        attributes={"call_target_name": ir.StringAttr.get("ApproxTopK"),
                    "backend_config": ir.StringAttr.get(""),
                    "called_computations": ir.ArrayAttr.get(
                        [ir.FlatSymbolRefAttr.get(_comparator(ctx, elem, is_max_k))]),
                    "mhlo.backend_config": ir.DictAttr.get(config)})
    return list(op.results)


@AD.jvp_rule(S.ApproxTopKOp)
def _approx_top_k_jvp(b, primals, tangents, **params):
    # JAX: _approx_top_k_jvp (take_along_axis of the tangent at the chosen indices)
    (x,), (t,) = primals, tangents
    values, indices = b.emit(S.ApproxTopKOp, x, **params)
    if t is None:
        return [values, indices], [None, None]
    return [values, indices], [_take_along(b, t, indices, params["reduction_dimension"],
                                           jnp_form=True), None]


AD.no_transpose(S.ApproxTopKOp)


@batch_rule(S.ApproxTopKOp)
def _approx_top_k_batch(b, args, dims, *, reduction_dimension, **params):
    (x,), (d,) = args, dims
    outs = b.emit(S.ApproxTopKOp, x, reduction_dimension=canonical_axis(
        reduction_dimension, d), **params)
    return outs, [d, d]
