"""Triton lowering rules of reductions (`tt.reduce`), arg-reductions (a reduction over
(value, index) pairs, NaN first as in JAX) and cumulative ops (`tt.scan`).

    %s = "jaxpr.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<128xf32>) -> tensor<f32>
  ==>
    %s = "tt.reduce"(%x) ({ ^bb0(%a: f32, %b: f32): tt.reduce.return (arith.addf %a, %b) })
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith
from jaxlib.triton import dialect as tt

from mjax.dialect.ops import reductions as R
from mjax.passes.rules.tables import TRITON
from mjax.passes.triton.builders import (binary, broadcast_to, compare, convert, expand_to,
                                         full, make_range, reduce_axis)
from mjax.passes.triton.types import avals_in, is_float, shape_of

# op -> the binary op (builders.binary) it combines elements with
_REDUCE = {R.ReduceSumOp: "add", R.ReduceProdOp: "mul", R.ReduceMaxOp: "max",
           R.ReduceMinOp: "min", R.ReduceAndOp: "and", R.ReduceOrOp: "or",
           R.ReduceXorOp: "xor"}


@TRITON.register(*_REDUCE)
def _reduce(kl, op, x, *, axes, **params):
    dtype = avals_in(op)[0].dtype
    name = _REDUCE[type(op.opview)]
    if np.dtype(dtype) == np.bool_:
        name = {"max": "or", "min": "and", "add": "or", "mul": "and"}.get(name, name)
    for axis in sorted(axes, reverse=True):
        [x] = reduce_axis([x], axis, lambda l, r: [binary(name, l[0], r[0], dtype)])
    return [x]


@TRITON.register(R.ArgMaxOp, R.ArgMinOp)
def _argminmax(kl, op, x, *, axes, index_dtype, **params):
    dtype = avals_in(op)[0].dtype
    [axis] = axes
    shape = shape_of(x)
    idx = broadcast_to(expand_to(make_range(shape[axis]), axis, len(shape)), shape)
    better = "gt" if isinstance(op.opview, R.ArgMaxOp) else "lt"

    def combine(lhs, rhs):
        (lv, li), (rv, ri) = lhs, rhs
        first = arith.cmpi(arith.CmpIPredicate.slt, li, ri)
        wins = arith.ori(compare(better, lv, rv, dtype),
                         arith.andi(compare("eq", lv, rv, dtype), first))
        if is_float(dtype):       # NaN wins, the first NaN among several (as JAX)
            lnan = arith.cmpf(arith.CmpFPredicate.UNO, lv, lv)
            rnan = arith.cmpf(arith.CmpFPredicate.UNO, rv, rv)
            not_r = arith.xori(rnan, full(1, np.bool_))
            wins = arith.select(lnan, arith.ori(not_r, first), arith.andi(not_r, wins))
        return [arith.select(wins, lv, rv), arith.select(wins, li, ri)]
    _, index = reduce_axis([x, idx], axis, combine)
    return [convert(index, np.int32, index_dtype)]


_CUMULATIVE = {R.CumsumOp: "add", R.CumprodOp: "mul", R.CummaxOp: "max", R.CumminOp: "min"}


@TRITON.register(*_CUMULATIVE)
def _cumulative(kl, op, x, *, axis, reverse=False, **params):
    dtype = avals_in(op)[0].dtype
    name = _CUMULATIVE[type(op.opview)]
    if np.dtype(dtype) == np.bool_:
        name = {"max": "or", "min": "and", "add": "or", "mul": "and"}[name]
    scan = tt.ScanOp([x], axis, reverse)
    elt = ir.RankedTensorType(x.type).element_type
    block = scan.regions[0].blocks.append(elt, elt)
    with ir.InsertionPoint(block):
        tt.scan_return([binary(name, block.arguments[0], block.arguments[1], dtype)])
    return [scan.results[0]]


for _op in (R.CumlogsumexpOp, R.SortOp):
    TRITON.unsupported(_op, "no Triton lowering for this op inside kernels")
