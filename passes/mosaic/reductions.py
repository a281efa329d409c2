"""Mosaic lowering rules of reductions: `vector.multi_reduction` with the kind's
identity as the accumulator, as JAX's Pallas TPU lowering emits them.

    %m = "jaxpr.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<8x128xf32>) -> tensor<8xf32>
  ==>
    %init = arith.constant dense<0xFF800000> : vector<8xf32>
    %m = vector.multi_reduction <maximumf>, %x, %init [1] : vector<8x128xf32> to vector<8xf32>
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith, vector
from jaxlib.mosaic.python import tpu

from mjax.dialect.ops import reductions as Rd
from mjax.passes.kernel_lowering.unsupported import state_unsupported
from mjax.passes.mosaic.table import MOSAIC
from mjax.passes.mosaic.types import (MosaicLoweringError, aval_out, avals_in, full,
                                      is_float, is_unsigned, vtype)


def _identity_and_kind(cls, dtype):
    dt = np.dtype(dtype)
    if cls is Rd.ReduceSumOp:
        return 0, "add"
    if cls is Rd.ReduceProdOp:
        return 1, "mul"
    if cls in (Rd.ReduceMaxOp, Rd.ReduceMinOp):
        is_max = cls is Rd.ReduceMaxOp
        if dt == np.bool_:
            return (False, "or") if is_max else (True, "and")
        if is_float(dt):
            return (-np.inf if is_max else np.inf), ("maximumf" if is_max else "minimumf")
        info = np.iinfo(dt)
        sign = "u" if is_unsigned(dt) else "s"
        return (info.min if is_max else info.max), (f"max{sign}i" if is_max else
                                                     f"min{sign}i")
    if cls is Rd.ReduceAndOp:
        return True if dt == np.bool_ else -1, "and"
    if cls is Rd.ReduceOrOp:
        return 0, "or"
    if cls is Rd.ReduceXorOp:
        return 0, "xor"
    raise MosaicLoweringError(f"no Mosaic reduction for {cls.__name__}")


@MOSAIC.register(Rd.ReduceSumOp, Rd.ReduceProdOp, Rd.ReduceMaxOp, Rd.ReduceMinOp,
                 Rd.ReduceAndOp, Rd.ReduceOrOp, Rd.ReduceXorOp)
def _reduce(kl, op, x, *, axes, **params):
    a, out = avals_in(op)[0], aval_out(op)
    x = kl.value(x, a.dtype)
    if not axes:
        return [x]
    if not a.shape:
        return [x]
    cls = type(op.opview)
    if np.dtype(a.dtype) == np.bool_ and cls in (Rd.ReduceAndOp, Rd.ReduceOrOp):
        # As JAX's reduce_and/reduce_or rules: the booleans as 1.0/0.0 (jnp.where), their
        # min (and) or max (or), then > 0
        f32 = np.dtype(np.float32)
        one, zero = full(1.0, f32), full(0.0, f32)
        x = arith.select(x, _splat(one, a.shape), _splat(zero, a.shape))
        r = _multi_reduce(Rd.ReduceMaxOp if cls is Rd.ReduceOrOp else Rd.ReduceMinOp, x,
                          a.shape, f32, out.shape, axes)
        return [arith.cmpf(arith.CmpFPredicate.OGT, r, _splat(full(0.0, f32), out.shape))]
    return [_multi_reduce(cls, x, a.shape, a.dtype, out.shape, axes)]


def _splat(c, shape) -> ir.Value:
    return vector.broadcast(vtype(shape, np.float32), c) if shape else c


def _multi_reduce(cls, x, shape, dtype, out_shape, axes) -> ir.Value:
    init, kind = _identity_and_kind(cls, dtype)
    kind = ir.Attribute.parse(f"#vector.kind<{kind}>")
    if not out_shape:
        # To a scalar, as JAX's rule: a leading unit dim added and kept (Mosaic makes no
        # scalar reductions), the result's one element extracted
        rank = len(shape) + 1
        x = vector.shape_cast(vtype((1, *shape), dtype), x)
        r = vector.multi_reduction(kind, x, full(init, dtype, (1,)),
                                   [int(d) + 1 for d in axes])
        r = vector.shape_cast(vtype((1,) * rank, dtype), r)
        return vector.extract(r, [], [0] * rank)
    return vector.multi_reduction(kind, x, full(init, dtype, out_shape),
                                  [int(d) for d in axes])


@MOSAIC.register(Rd.ArgMaxOp, Rd.ArgMinOp)
def _arg_min_max(kl, op, x, *, axes, index_dtype, **params):
    # JAX: tpu.reduce_index over one axis of an f32 array (1-D: viewed as one row)
    a, out = avals_in(op)[0], aval_out(op)
    if np.dtype(a.dtype) != np.float32:
        raise MosaicLoweringError(f"argmax/argmin in TPU kernels take float32 arrays, got "
                                  f"{np.dtype(a.dtype).name}")
    if len(axes) != 1 or np.dtype(index_dtype) != np.int32:
        raise MosaicLoweringError("argmax/argmin in TPU kernels reduce one axis to int32 "
                                  "indices")
    kind = ir.Attribute.parse("#tpu.reduction_kind<arg_max>" if type(op.opview) is
                              Rd.ArgMaxOp else "#tpu.reduction_kind<arg_min>")
    x = kl.value(x, a.dtype)
    axis = int(axes[0])
    if len(a.shape) == 1:
        x = vector.shape_cast(vtype((1,) + tuple(a.shape), a.dtype), x)
        res = tpu.reduce_index(vtype((1,) + tuple(out.shape), np.int32), x, axis + 1, kind)
        return [vector.extract(res, [], [0])]
    return [tpu.reduce_index(vtype(out.shape, np.int32), x, axis, kind)]


state_unsupported(MOSAIC, {
    "cumulative reductions have no Mosaic lowering": (
        Rd.CumsumOp, Rd.CumprodOp, Rd.CummaxOp, Rd.CumminOp, Rd.CumlogsumexpOp),
    "sorting in TPU kernels is not lowered yet (issue 55)": (Rd.SortOp,),
})
