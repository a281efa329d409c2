"""Triton lowering rules of structural ops: constants, iota, broadcasts, reshapes, two-way
concatenation, stack and unstack (two values, an axis of size 2), transposes, and
`dot_general` as `tt.dot` (2-D, or 3-D batched on the leading dim; f32 accumulation, TF32
unless HIGHEST, as JAX on GPU).

Values live in registers as whole power-of-2 tensors, so slicing, padding, reversing and
gathering are not expressible: kernels index the ref instead.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.triton import dialect as tt

from mjax.dialect.ops import indexing as I
from mjax.dialect.ops import structural as St
from mjax.passes.rules.tables import TRITON
from mjax.passes.triton.builders import (broadcast_to, convert, expand_to, full, make_range,
                                         reshape)
from mjax.passes.triton.types import (TritonLoweringError, aval_out, avals_in, check_pow2,
                                      elt_type, is_float, is_unsigned, shape_of, ttype)


@TRITON.register(St.ConstantOp)
def _constant(kl, op, *, value, **params):
    aval = aval_out(op)
    arr = np.asarray(value)
    flat = arr.reshape(-1)
    if flat.size and not (flat == flat[0]).all() and not np.isnan(flat.astype(float)).all():
        raise TritonLoweringError("the Triton lowering supports scalar and splat constants "
                                  f"only, got a {aval.shape} array of distinct values")
    check_pow2(aval.shape, "a constant")
    return [full(flat[0].item() if flat.size else 0, aval.dtype, aval.shape)]


TRITON.unsupported(St.DimAsValueOp, "a Pallas kernel's shapes are static: it has no "
                                    "symbolic dimensions to read")


@TRITON.register(St.IotaOp)
def _iota(kl, op, *, dtype, shape, dimension=0, **params):
    check_pow2(shape, "an iota")
    r = expand_to(make_range(shape[dimension]), dimension, len(shape))
    return [convert(broadcast_to(r, shape), np.int32, dtype)]


@TRITON.register(St.BroadcastInDimOp)
def _broadcast_in_dim(kl, op, x, *, shape, broadcast_dimensions, **params):
    shape = tuple(shape)
    if not shape:
        return [x]
    check_pow2(shape, "a broadcast")
    if not isinstance(x.type, ir.RankedTensorType):
        return [broadcast_to(x, shape)]
    # Put x's dims where broadcast_dimensions says, size-1 dims elsewhere, then broadcast.
    for d in range(len(shape)):
        if d not in broadcast_dimensions:
            x = tt.expand_dims(x, d)
    return [broadcast_to(x, shape)]


@TRITON.register(St.ReshapeOp, St.SqueezeOp, St.ExpandDimsOp)
def _reshape(kl, op, x, **params):
    aval = aval_out(op)
    return [reshape(x, aval.shape, aval.dtype)]


@TRITON.register(St.ConcatenateOp)
def _concatenate(kl, op, *xs, dimension, **params):
    # Two equal halves: tt.join pairs them along a new last axis, which moves in front
    # of `dimension` so that a row-major reshape lays x before y.
    avals = avals_in(op)
    if len(xs) != 2 or avals[0].shape != avals[1].shape:
        raise TritonLoweringError(
            f"the Triton lowering concatenates two values of one shape only, got "
            f"{', '.join(a.str_short() for a in avals)}")
    shape = list(shape_of(xs[0]))
    rank = len(shape)
    joined = tt.join(ir.RankedTensorType.get(shape + [2], elt_type(avals[0].dtype)), *xs)
    order = list(range(dimension)) + [rank] + list(range(dimension, rank))
    if order != list(range(rank + 1)):
        joined = tt.trans(joined, order)
    return [reshape(joined, aval_out(op).shape, avals[0].dtype)]


def _move_last_to(x, axis):
    """`x` with its last axis moved to position `axis`."""
    rank = len(shape_of(x))
    order = list(range(axis)) + [rank - 1] + list(range(axis, rank - 1))
    return x if order == list(range(rank)) else tt.trans(x, order)


@TRITON.register(St.StackOp)
def _stack(kl, op, *xs, axis, **params):
    # Two values: tt.join pairs them along a new last axis, moved to `axis`.
    avals = avals_in(op)
    if len(xs) == 1:
        return [reshape(xs[0], aval_out(op).shape, avals[0].dtype)]
    if len(xs) != 2:
        raise TritonLoweringError(f"the Triton lowering stacks two values (or one) only, "
                                  f"got {len(xs)}")
    joined = tt.join(ir.RankedTensorType.get(list(shape_of(xs[0])) + [2],
                                             elt_type(avals[0].dtype)), *xs)
    return [_move_last_to(joined, axis)]


@TRITON.register(St.UnstackOp)
def _unstack(kl, op, x, *, axis, **params):
    # An axis of size 2: moved last, then tt.split takes its two halves apart.
    (aval,) = avals_in(op)
    if aval.shape[axis] == 1:
        return [reshape(x, aval_out(op).shape, aval.dtype)]
    if aval.shape[axis] != 2:
        raise TritonLoweringError(f"the Triton lowering unstacks an axis of size 2 (or 1) "
                                  f"only, got axis {axis} of {aval.str_short()}")
    rank = aval.ndim
    order = [d for d in range(rank) if d != axis] + [axis]
    if order != list(range(rank)):
        x = tt.trans(x, order)
    out = aval_out(op).shape
    return list(tt.split(x, results=[ttype(out, aval.dtype)] * 2))


@TRITON.register(St.TransposeOp)
def _transpose(kl, op, x, *, permutation, **params):
    if list(permutation) == sorted(permutation):
        return [x]
    return [tt.trans(x, list(permutation))]


@TRITON.register(St.DotGeneralOp)
def _dot_general(kl, op, a, b, *, dimension_numbers, precision=None,
                 preferred_element_type=None, **params):
    (lc, rc), (lb, rb) = dimension_numbers
    a_aval, b_aval = avals_in(op)
    out = aval_out(op)
    batched = tuple(lb) == tuple(rb) == (0,) and a_aval.ndim == b_aval.ndim == 3
    if not (batched or (not lb and not rb and a_aval.ndim == b_aval.ndim == 2)) or len(
            lc) != 1:
        raise TritonLoweringError(
            f"the Triton lowering supports matrix products (tt.dot: 2-D, or 3-D batched "
            f"on the leading dim) only, got dot_general of {a_aval.str_short()} and "
            f"{b_aval.str_short()} with dimension_numbers {dimension_numbers}")
    if a_aval.dtype != b_aval.dtype:
        raise TritonLoweringError(f"tt.dot needs operands of one dtype, got "
                                  f"{a_aval.dtype} and {b_aval.dtype}")
    # tt.dot contracts a's last dim with b's second-to-last: transpose the others there.
    nb = 1 if batched else 0
    swap = [0, 2, 1] if batched else [1, 0]
    if lc[0] == nb:
        a = tt.trans(a, swap)
    if rc[0] == nb + 1:
        b = tt.trans(b, swap)
    (m, k), n = shape_of(a)[nb:], shape_of(b)[-1]
    if min(m, n, k) < 16:
        raise TritonLoweringError(f"tt.dot needs every dimension >= 16, got an "
                                  f"({m}, {k}) x ({k}, {n}) product; use larger blocks")
    in_dt = np.dtype(a_aval.dtype)
    if not is_float(in_dt):
        if is_unsigned(in_dt):
            raise TritonLoweringError("tt.dot treats integers as signed; cast unsigned "
                                      "operands to a signed dtype first")
        acc_dt = np.dtype(np.int32)
    else:
        acc_dt = np.dtype(np.float64 if in_dt == np.float64 else np.float32)
    kwargs = {}
    if in_dt == np.float32:
        # As JAX on GPU: TF32 tensor cores unless a HIGHEST precision asks for IEEE f32.
        exact = precision is not None and "HIGHEST" in tuple(precision)
        kwargs["input_precision"] = (tt.InputPrecision.IEEE if exact
                                     else tt.InputPrecision.TF32)
    acc = full(0, acc_dt, shape_of(a)[:nb] + (m, n))
    res = tt.dot(a, b, acc, **kwargs)
    return [convert(res, acc_dt, out.dtype)]


_NO_SLICING = ("Triton cannot slice, pad, reverse or concatenate values held in registers; "
               "index the ref instead (ref[pl.ds(start, size)])")
for _op in (St.PadOp, St.RevOp, St.SliceOp, St.SplitOp, I.DynamicSliceOp,
            I.DynamicUpdateSliceOp, I.GatherOp, I.ScatterOp, I.ScatterAddOp, I.ScatterMaxOp,
            I.ScatterMinOp, I.ScatterMulOp):
    TRITON.unsupported(_op, _NO_SLICING)
TRITON.unsupported(St.TileOp, "no Triton lowering for tile (JAX's Pallas GPU lowering has "
                              "none either); broadcast and reshape instead")
