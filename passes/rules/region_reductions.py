"""Rules for `jaxpr.reduce` and `jaxpr.reduce_window` (dialect/ops/region_reductions.py):
lowering to stablehlo.reduce / stablehlo.reduce_window, whose body is the op's region
cloned and lowered; batching (the batch axis in front, one more reduced-over or unit window
dimension, the scalar body unchanged); jaxpr.reduce of a body that is one binary op
differentiates as JAX's (a tree of the op's JVP); the rest is declared unsupported.

    %r = "jaxpr.reduce"(%x, %init) ({ ^bb0(%a: tensor<f32>, %b: tensor<f32>): ...
                                       "jaxpr.yield"(%c) }) {dimensions = array<i64: 0>}
  ==>
    %r = stablehlo.reduce(%x init: %init) across dimensions = [0] : ... reducer(%a, %b) {...}
"""
from __future__ import annotations

import math

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect import attributes as A
from mjax.dialect.core import OPS
from mjax.dialect.ops import region_reductions as RR
from mjax.dialect.types import ShapedArray, tensor_type
from mjax.passes.ir_util import clone_into
from mjax.passes.registry import op_error
from mjax.passes.rules import hlo as H
from mjax.passes.rules.batch_util import NOT_MAPPED, bdim_to_front
from mjax.passes.rules.control_flow import inline_body
from mjax.passes.rules.reductions_ad import _slice_axis
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules.tables import (BATCH_NESTED, JVP, JVP_NESTED, TRANSPOSE, lowering,
                                      nan_checked)
from mjax.passes.rules.windowed import _with_unit_window_at


def _lower_with_body(ctx, new_op, inputs, n):
    """Fills new_op's region with the jaxpr op's computation over 2n scalars, lowered."""
    scalars = [H.ttype((), a.dtype) for a in ctx.avals_in[:n]]
    block = new_op.regions[0].blocks.append(*scalars, *scalars)
    ip = ir.InsertionPoint(block)
    with ip:
        outs = inline_body(ctx.op.regions[0].blocks[0], list(block.arguments), ip)
        hlo.return_(list(outs))
    ctx.lower_nested(new_op.operation)
    return list(new_op.results)


@lowering(RR.ReduceOp)
def _reduce_lower(ctx, *args, dimensions):
    n = len(args) // 2
    types = [H.ttype(a.shape, a.dtype) for a in ctx.avals_out]
    new = hlo.ReduceOp(types, list(args[:n]), list(args[n:]), list(dimensions))
    return _lower_with_body(ctx, new, args, n)


@lowering(RR.ReduceWindowOp)
def _reduce_window_lower(ctx, *args, window_dimensions, window_strides, padding,
                         base_dilation, window_dilation):
    n = len(args) // 2
    types = [H.ttype(a.shape, a.dtype) for a in ctx.avals_out]
    pads = ir.DenseIntElementsAttr.get(np.asarray(padding, np.int64).reshape(-1, 2))
    new = hlo.ReduceWindowOp(types, list(args[:n]), list(args[n:]), list(window_dimensions),
                             window_strides=list(window_strides),
                             base_dilations=list(base_dilation),
                             window_dilations=list(window_dilation), padding=pads)
    return _lower_with_body(ctx, new, args, n)


# ---- batching ------------------------------------------------------------------------------
def _region_reduction_batch(batcher, op, vals, dims, b):
    # JAX: _reduce_batch_rule / _generic_reduce_window_batch_rule. Every operand gets the
    # batch axis in front; the body, a computation on scalars, is cloned unchanged.
    n = len(vals) // 2
    if any(d is not NOT_MAPPED for d in dims[n:]):
        raise op_error(op, "cannot vmap: batched init values of a reduction with a custom "
                           "computation are not supported (as in JAX)")
    operands = [bdim_to_front(b, v, d) for v, d in zip(vals[:n], dims[:n])]
    view = op.opview
    params = view.params
    if isinstance(view, RR.ReduceOp):
        new_params = {"dimensions": tuple(d + 1 for d in params["dimensions"])}
    else:
        new_params = _with_unit_window_at(0, params)
    new = clone_into(op, b.ip, dict(zip(op.operands, operands + list(vals[n:])))).operation
    for name, value in new_params.items():
        new.attributes[name] = A.encode(value)  # (the MLIR attributes, not the op schema)
    for r in new.results:
        aval = H.aval_of(r.type)
        r.set_type(tensor_type(ShapedArray((b.axis_size,) + aval.shape, aval.dtype)))
    return list(new.results), [0] * n


for _op in (RR.ReduceOp, RR.ReduceWindowOp):
    JVP.unsupported(_op, f"{_op.OPERATION_NAME} with a custom computation has no JVP "
                         f"rule yet (use lax.add/max/min, which have one)")
    TRANSPOSE.unsupported(_op, f"{_op.OPERATION_NAME} is not linear in general")
    BATCH_NESTED[_op] = _region_reduction_batch


# ---- differentiation -----------------------------------------------------------------
def _binary_body(op):
    """The op class of a one-operand reduction's body when it is one differentiable binary
    op of the two scalars in order (`lax.reduce(x, 2.5, lax.add, ...)`), else None."""
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    if len(block.arguments) != 2 or len(ops) != 2:
        return None
    body = ops[0]
    cls = OPS.get(body.name)
    if cls is None or JVP.get(cls) is None or list(body.operands) != list(block.arguments) \
            or list(ops[1].operands) != list(body.results):
        return None
    return cls


def _reduce_jvp(jvp, op, pairs):
    # JAX: _reduce_jvp. The JVP of a balanced tree of the body's pairwise applications: the
    # reduced axes moved to the front and flattened to one of n, halved until one is left
    # (an odd half's missing element is the init value; its tangent zero). The primal is
    # the tree's, as JAX's is.
    cls = _binary_body(op)
    if cls is None or len(pairs) != 2 or pairs[1][1] is not None:
        return jvp.op_rule(op, pairs)            # (the declared reason, above)
    (x, t), (init, _) = pairs
    if t is None:
        return jvp.copy(op, pairs)
    b = jvp.builder(op)
    shape = AD.aval(x).shape
    axes = tuple(op.opview.params["dimensions"])
    kept = tuple(d for d in range(len(shape)) if d not in axes)
    n = math.prod(shape[a] for a in axes)
    out_shape = tuple(shape[d] for d in kept)
    if n == 0:
        p = b.broadcast_in_dim(init, shape=out_shape, broadcast_dimensions=())
        return [(p, AD.zeros_like(b, p))]
    xs = [b.reshape(b.transpose(v, permutation=axes + kept), new_sizes=(n,) + out_shape)
          for v in (x, t)]
    zero = b.constant(np.zeros((), AD.aval(t).dtype))
    while n > 1:
        n1 = (n + 1) // 2
        lo = [_slice_axis(b, v, 0, n1, 0) for v in xs]
        hi = [_slice_axis(b, v, n1, n, 0) for v in xs]
        if n - n1 != n1:
            config = ((0, 1, 0),) + ((0, 0, 0),) * len(out_shape)
            hi = [b.pad(hi[0], init, padding_config=config),
                  b.pad(hi[1], zero, padding_config=config)]
        (p,), (dt,) = JVP[cls](b, [lo[0], hi[0]], [lo[1], hi[1]])
        xs, n = [p, dt], n1
    return [tuple(b.reshape(v, new_sizes=out_shape) for v in xs)]


JVP_NESTED[RR.ReduceOp] = _reduce_jvp


# ---- checkify -------------------------------------------------------------------------
nan_checked(RR.ReduceOp, RR.ReduceWindowOp)
