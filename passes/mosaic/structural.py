"""Mosaic lowering rules of shape and data-movement ops (constants, broadcast, reshape,
transpose, iota, select, concatenate, tile, slice) and of `dot_general` (`tpu.matmul`).

    %z = "jaxpr.dot_general"(%x, %y) {dimension_numbers = [[[1], [0]], [[], []]],
                                      preferred_element_type = f32}
  ==>
    %acc = arith.constant dense<0.0> : vector<128x128xf32>
    %z = tpu.matmul %x, %y, %acc {dimension_numbers = #tpu.dot_dimension_numbers<[1],
           [0], [0], [1], [0, 0, 1, 1], [], []>, transpose_lhs_hint = false}
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith, vector
from jaxlib.mosaic.python import tpu

from mjax.dialect.ops import structural as St
from mjax.passes.mosaic.elementwise import binary, compare
from mjax.passes.mosaic.table import MOSAIC
from mjax.passes.rules.ad_util import IMPLICIT_BROADCAST
from mjax.passes.mosaic.types import (Const, MosaicLoweringError, aval_out, avals_in,
                                      is_float, is_unsigned, scalar_attr, vtype)


@MOSAIC.register(St.ConstantOp)
def _constant(kl, op, *, value, **params):
    # Emitted at each use, as JAX emits a jaxpr literal (types.materialize).
    return [Const(np.asarray(value, dtype=np.dtype(aval_out(op).dtype)))]


@MOSAIC.register(St.BroadcastInDimOp)
def _broadcast_in_dim(kl, op, x, *, shape, broadcast_dimensions, **params):
    a, out = avals_in(op)[0], aval_out(op)
    x = kl.value(x, a.dtype)
    if tuple(a.shape) == tuple(shape):
        return [x]
    if broadcast_dimensions:
        mid = [1] * len(shape)
        for d, s in zip(broadcast_dimensions, a.shape):
            mid[d] = s
        # (an explicit broadcast_in_dim reshapes first, even to its own shape, as JAX's
        # rule; lax's implicit broadcast of a same-rank operand only broadcasts)
        if tuple(mid) != tuple(a.shape) or IMPLICIT_BROADCAST not in op.attributes:
            x = vector.shape_cast(vtype(mid, a.dtype), x)
        if tuple(mid) == tuple(shape):
            return [x]
    return [vector.broadcast(vtype(shape, out.dtype), x)]


def reshape(x, in_shape, out_shape, dtype) -> ir.Value:
    if tuple(in_shape) == tuple(out_shape):
        return x
    if not in_shape:
        return vector.broadcast(vtype(out_shape, dtype), x)
    if not out_shape:
        return vector.extract(x, [], [0] * len(in_shape))
    return vector.shape_cast(vtype(out_shape, dtype), x)


@MOSAIC.register(St.ReshapeOp, St.SqueezeOp, St.ExpandDimsOp)
def _reshape(kl, op, x, **params):
    if type(op.opview) is St.ReshapeOp and params.get("dimensions") not in (None, ()):
        raise MosaicLoweringError("reshape with `dimensions` is not supported")
    a, out = avals_in(op)[0], aval_out(op)
    return [reshape(kl.value(x, a.dtype), a.shape, out.shape, a.dtype)]


@MOSAIC.register(St.TransposeOp)
def _transpose(kl, op, x, *, permutation, **params):
    a, out = avals_in(op)[0], aval_out(op)
    return [tpu.transpose(vtype(out.shape, out.dtype), kl.value(x, a.dtype),
                          list(permutation))]


def iota(shape, dtype, dimension: int) -> ir.Value:
    """lax.broadcasted_iota as JAX's rule emits it (`tpu.iota`)."""
    shape = tuple(shape)
    if len(shape) == 1:      # JAX: a (1, n) iota along dim 1, row 0
        v = tpu.iota(vtype((1,) + shape, dtype), dimensions=[1])
        return vector.shape_cast(vtype(shape, dtype), v)
    return tpu.iota(vtype(shape, dtype), dimensions=[int(dimension)])


@MOSAIC.register(St.IotaOp)
def _iota(kl, op, *, dtype, shape, dimension=0, **params):
    return [iota(shape, dtype, dimension)]


@MOSAIC.register(St.SelectNOp)
def _select_n(kl, op, pred, *cases, **params):
    avals = avals_in(op)
    if len(cases) > 2:
        raise MosaicLoweringError("select_n is only supported with <= 2 cases")
    pa = avals[0]
    p = kl.value(pred, pa.dtype)
    if np.dtype(pa.dtype) != np.bool_:
        p = compare("ne", p, kl.value(Const(np.zeros(pa.shape, pa.dtype)), pa.dtype),
                    pa.dtype, pa.shape)
    vals = [kl.value(c, a.dtype) for c, a in zip(cases, avals[1:])]
    if len(vals) == 1:
        return vals
    return [arith.select(p, vals[1], vals[0])]


@MOSAIC.register(St.ClampOp)
def _clamp(kl, op, lo, x, hi, **params):
    # JAX: min(max(x, lo), hi)
    avals = avals_in(op)
    lo, x, hi = [kl.value(v, a.dtype) for v, a in zip((lo, x, hi), avals)]
    dt = avals[1].dtype
    return [binary("min", binary("max", x, lo, dt), hi, dt)]


@MOSAIC.register(St.ConcatenateOp)
def _concatenate(kl, op, *xs, dimension, **params):
    out = aval_out(op)
    vals = [kl.value(x, a.dtype) for x, a in zip(xs, avals_in(op))]
    return [tpu.concatenate(vals, int(dimension), results=[vtype(out.shape, out.dtype)])]


@MOSAIC.register(St.TileOp)
def _tile(kl, op, x, *, reps, **params):
    # As JAX's: one tpu.concatenate of copies per repeated dim; a dim repeated once is
    # the operand itself.
    a = avals_in(op)[0]
    x, shape = kl.value(x, a.dtype), list(a.shape)
    for axis, r in enumerate(reps):
        if r > 1:
            shape[axis] *= r
            x = tpu.concatenate([x] * r, axis, results=[vtype(shape, a.dtype)])
    return [x]


@MOSAIC.register(St.SliceOp)
def _slice(kl, op, x, *, start_indices, limit_indices, strides=None, **params):
    a, out = avals_in(op)[0], aval_out(op)
    strides = list(strides) if strides else [1] * len(a.shape)
    sizes = [l - s for s, l in zip(start_indices, limit_indices)]   # (as JAX passes them)
    return [vector.extract_strided_slice(vtype(out.shape, out.dtype),
                                         kl.value(x, a.dtype), list(start_indices),
                                         sizes, strides)]


# ---- dot_general ---------------------------------------------------------------------
def _dims(ds) -> str:
    return "[" + ", ".join(str(int(d)) for d in ds) + "]"


def tpu_dot_dimension_numbers(dimension_numbers, lhs_ndim: int, rhs_ndim: int):
    """`#tpu.dot_dimension_numbers` for JAX's ((lc, rc), (lb, rb)): contracting,
    non-contracting, the output's (operand, dim) order, batch dims."""
    (lc, rc), (lb, rb) = [[tuple(int(d) for d in x) for x in pair]
                          for pair in dimension_numbers]
    lnc = [d for d in range(lhs_ndim) if d not in lc and d not in lb]
    rnc = [d for d in range(rhs_ndim) if d not in rc and d not in rb]
    order = [x for d in lb for x in (0, d)] + [x for d in lnc for x in (0, d)] + [
        x for d in rnc for x in (1, d)]
    return ir.Attribute.parse("#tpu.dot_dimension_numbers<" + ",".join(
        _dims(x) for x in (lc, rc, lnc, rnc, order, lb, rb)) + ">")


@MOSAIC.register(St.DotGeneralOp)
def _dot_general(kl, op, x, y, *, dimension_numbers, precision=None,
                 preferred_element_type=None, **params):
    la, ra = avals_in(op)
    out = aval_out(op)
    for a in (la, ra):
        if is_unsigned(a.dtype) and np.dtype(a.dtype) != np.bool_:
            raise MosaicLoweringError(     # (JAX's message)
                f"Unsigned integer dtype {np.dtype(a.dtype).name} is not supported for "
                f"dot_general (matmul) on the Pallas Mosaic TPU backend because "
                f"dot_general interprets all integer inputs as signed. Consider casting "
                f"to a signed type before the dot operation.")
    x, y = kl.value(x, la.dtype), kl.value(y, ra.dtype)
    out_t = vtype(out.shape, out.dtype)
    if _is_matrix_vector(dimension_numbers, la, ra):
        return [_matrix_vector(x, y, la, ra, out, preferred_element_type)]
    zero = ir.DenseElementsAttr.get_splat(out_t, scalar_attr(0, out.dtype))
    acc = arith.constant(out_t, zero)
    lc = tuple(int(d) for d in dimension_numbers[0][0])
    # JAX: on the chip (not for export) and when asked (CompilerParams'
    # fuse_transposed_lhs_in_matmul), a hint that the lhs is contracted on its
    # second-minor dim
    hint = (not kl.forward_compatible and (la.ndim - 2) in lc
            and bool(kl.compiler_params.get("fuse_transposed_lhs_in_matmul")))
    kwargs = {}
    prec = _precision(precision)
    if prec is not None:
        kwargs["precision"] = prec
    return [tpu.matmul(out_t, x, y, acc,
                       dimension_numbers=tpu_dot_dimension_numbers(
                           dimension_numbers, la.ndim, ra.ndim),
                       transpose_lhs_hint=hint,
                       **kwargs)]


def _is_matrix_vector(dimension_numbers, la, ra) -> bool:
    """JAX's special case: (m, k) x (1, k) contracted on both minor dims, not both f32
    (and, here, floats of one shape: JAX's broadcast for others makes no valid IR)."""
    (lc, rc), (lb, rb) = dimension_numbers
    return (tuple(int(d) for d in lc) == (1,) and tuple(int(d) for d in rc) == (1,)
            and not lb and not rb and la.ndim == 2 and ra.ndim == 2 and ra.shape[0] == 1
            and tuple(la.shape) == tuple(ra.shape) and is_float(la.dtype)
            and is_float(ra.dtype)
            and not (np.dtype(la.dtype) == np.float32 == np.dtype(ra.dtype)))


def _matrix_vector(x, y, la, ra, out, preferred_element_type):
    """As JAX's rule: both cast to the result's dtype (extf), multiplied, summed along
    the minor dim (vector.multi_reduction), shape_cast to (m, 1)."""
    red = np.dtype(preferred_element_type if preferred_element_type is not None
                   else la.dtype)
    for a in (la, ra):
        if np.dtype(a.dtype) != red and red != np.float32:
            raise MosaicLoweringError(f"Unsupported preferred_element_type={red.name}")
    if np.dtype(la.dtype) != red:
        x = arith.extf(vtype(la.shape, red), x)
    if np.dtype(ra.dtype) != red:
        y = arith.extf(vtype(ra.shape, red), y)
    red_t = vtype((la.shape[0],), red)
    acc = arith.constant(red_t, ir.DenseElementsAttr.get_splat(red_t, scalar_attr(0, red)))
    r = vector.multi_reduction(ir.Attribute.parse("#vector.kind<add>"), arith.mulf(x, y),
                               acc, [1])
    return vector.shape_cast(vtype(out.shape, out.dtype), r)


def _precision(precision):
    if precision in (None, (), "DEFAULT"):
        return None
    ps = [str(p).upper() for p in (precision if isinstance(precision, (tuple, list))
                                   else (precision,))]
    ps = [p.rsplit(".", 1)[-1] for p in ps]
    if len(set(ps)) > 1:
        raise MosaicLoweringError("per-operand dot precision is not supported")
    if not ps or ps[0] in ("DEFAULT", "NONE"):
        return None
    if ps[0] == "HIGHEST":
        return ir.Attribute.parse("#tpu.contract_precision<fp32>")
    raise MosaicLoweringError(f"dot precision {ps[0]} is not supported")


@MOSAIC.register(St.SplitOp)
def _split(kl, op, x, *, axis, sizes, **params):
    # JAX: one vector.extract_strided_slice per piece
    a = avals_in(op)[0]
    x = kl.value(x, a.dtype)
    size, start, outs = list(a.shape), [0] * len(a.shape), []
    for k, n in enumerate(sizes):
        size[axis] = int(n)
        out = aval_out(op, k)
        outs.append(vector.extract_strided_slice(vtype(out.shape, out.dtype), x, list(start),
                                                 list(size), [1] * len(size)))
        start[axis] += int(n)
    return outs


@MOSAIC.register(St.StackOp)
def _stack(kl, op, *xs, axis, **params):
    # JAX: each piece gets a unit dim at `axis`, then one tpu.concatenate
    a = avals_in(op)[0]
    shape = list(a.shape)
    shape.insert(axis, 1)
    t = vtype(shape, a.dtype)
    xs = [kl.value(x, a.dtype) for x in xs]
    parts = [vector.shape_cast(t, x) if a.shape else vector.broadcast(t, x) for x in xs]
    if len(parts) == 1:
        return parts
    out = aval_out(op)
    return [tpu.concatenate(parts, int(axis), results=[vtype(out.shape, out.dtype)])]


@MOSAIC.register(St.UnstackOp)
def _unstack(kl, op, x, *, axis, **params):
    a = avals_in(op)[0]
    x = kl.value(x, a.dtype)
    size, start, outs = list(a.shape), [0] * len(a.shape), []
    piece = list(a.shape)
    piece[axis] = 1
    size[axis] = 1
    for i in range(a.shape[axis]):
        start[axis] = i
        v = vector.extract_strided_slice(vtype(piece, a.dtype), x, list(start), list(size),
                                         [1] * len(size))
        out = aval_out(op, i)
        outs.append(vector.shape_cast(vtype(out.shape, out.dtype), v) if out.shape
                    else vector.extract(v, [], [0]))
    return outs


@MOSAIC.register(St.PadOp)
def _pad(kl, op, x, value, *, padding_config, **params):
    # JAX: low and high padding concatenated along each axis; no interior padding
    a, va = avals_in(op)
    if not a.shape:
        raise MosaicLoweringError("pad of a scalar is not supported in TPU kernels")
    x = kl.value(x, a.dtype)
    shape = list(a.shape)
    for axis, (low, high, interior) in enumerate(padding_config):
        if interior:
            raise MosaicLoweringError("interior padding is not supported in TPU kernels")
        for n, first in ((int(low), True), (int(high), False)):
            if not n:
                continue
            piece = list(shape)
            piece[axis] = n
            pad = vector.broadcast(vtype(piece, a.dtype), kl.value(value, va.dtype))
            shape[axis] += n
            parts = [pad, x] if first else [x, pad]
            x = tpu.concatenate(parts, axis, results=[vtype(shape, a.dtype)])
    return [x]


for _op in (St.RevOp, St.ReducePrecisionOp, St.DimAsValueOp, St.DevicePutOp, St.LayoutConstraintOp):
    MOSAIC.unsupported(_op, "no Mosaic lowering for this op in TPU kernels yet (issue 55)")

__all__ = ["iota", "reshape", "tpu_dot_dimension_numbers"]
