"""Rules for top_k (dialect/ops/sorting.py): lowering, JVP, batching.

    %v, %i = "jaxpr.top_k"(%x) {axis = 1, k = 2} : (tensor<3x5xf32>) -> (...)
  ==>
    %v, %i = chlo.top_k(%x, k = 2)        (along the last axis; others are transposed there)
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.ops import sorting as S
from mjax.dialect.shape_poly import is_symbolic_dim
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules import hlo as H
from mjax.passes.rules.dynamic_shapes import dim_value
from mjax.passes.rules.batch_util import batch_rule, canonical_axis
from mjax.passes.rules.tables import lowering


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
    shape = AD.aval(indices).shape
    others = tuple(d for d in range(len(shape)) if d != axis)
    dn = {"offset_dims": (), "collapsed_slice_dims": (axis,), "start_index_map": (axis,),
          "operand_batching_dims": others, "start_indices_batching_dims": others}
    idx = b.reshape(indices, new_sizes=shape + (1,))
    t_out = b.gather(t, idx, dimension_numbers=dn, slice_sizes=(1,) * len(shape),
                     indices_are_sorted=False, unique_indices=True,
                     mode="promise_in_bounds", fill_value=None)
    return [values, indices], [t_out, None]


AD.no_transpose(S.TopKOp)


@batch_rule(S.TopKOp)
def _top_k_batch(b, args, dims, *, k, axis):
    (x,), (d,) = args, dims
    outs = b.emit(S.TopKOp, x, k=k, axis=canonical_axis(axis, d))
    return outs, [d, d]
