"""Rules for the structural family (dialect/ops/structural.py): lowering."""
from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect import attributes as A
from mjax.dialect.dtype_rules import is_bool, is_complex
from mjax.dialect.ops import structural as S
from mjax.dialect.shape_poly import is_symbolic_dim, max_dim
from mjax.passes.rules import hlo as H
from mjax.passes.rules.dynamic_shapes import dim_value, is_static, shape_value
from mjax.passes.rules.tables import WEAK_COTANGENTS, WEAK_TYPES, lowering, nan_checked
from mjax.passes.weak_cotangents import WEAK_MARK


def _out_type(ctx, i=0):
    return H.ttype(ctx.avals_out[i].shape, ctx.avals_out[i].dtype)


@lowering(S.ConvertElementTypeOp)
def _convert_element_type_lower(ctx, x, *, new_dtype):
    old = ctx.avals_in[0].dtype
    if is_complex(old) and not is_complex(new_dtype):
        x = hlo.real(x)  # JAX drops the imaginary part
    if is_bool(new_dtype) and not is_bool(old):
        # nonzero -> True, as numpy's astype(bool) does; then, as JAX's convert_hlo, a
        # convert of the comparison to its own type
        ne = hlo.compare(x, H.constant_like(x, 0), hlo.ComparisonDirectionAttr.get("NE"),
                         compare_type=hlo.ComparisonTypeAttr.get(H.compare_type(
                             H.aval_of(x.type).dtype)))
        return hlo.convert(ne.type, ne)
    return H.convert(x, new_dtype)


@lowering(S.BitcastConvertTypeOp)
def _bitcast_convert_type_lower(ctx, x, *, new_dtype):
    return hlo.bitcast_convert(_out_type(ctx), x)


@lowering(S.ReducePrecisionOp)
def _reduce_precision_lower(ctx, x, *, exponent_bits, mantissa_bits):
    return hlo.reduce_precision(x, exponent_bits, mantissa_bits)


@lowering(S.StopGradientOp, S.CopyOp)
def _identity_lower(ctx, x):
    return x


@lowering(S.LayoutConstraintOp)
def _layout_constraint_lower(ctx, x, *, major_to_minor):
    # JAX: mlir.wrap_with_layout_op: XLA's LayoutConstraint custom call, whose result
    # layout (minor to major) is the constraint; the operand's is left to XLA.
    rank = len(major_to_minor)

    def layouts(order):
        return ir.ArrayAttr.get([ir.DenseElementsAttr.get(
            np.asarray(order, np.int64), type=ir.IndexType.get(), shape=[rank])])
    op = ir.Operation.create(
        "stablehlo.custom_call", results=[x.type], operands=[x],
        attributes={"call_target_name": ir.StringAttr.get("LayoutConstraint"),
                    "backend_config": ir.StringAttr.get(""),
                    "operand_layouts": layouts(range(rank)),
                    "result_layouts": layouts(tuple(major_to_minor)[::-1])})
    return op.results[0]


# The attribute marking the custom call of a device_put inside a program:
# frontend/specs/memory_kinds.py reads the memory kinds off these calls and removes them (on
# CPU, as JAX's lowering, device_put is the identity; a call left in place is XLA's own
# annotate_device_placement, which moves the value).
DEVICE_PUT_CALL = "mjax.device_put"


def placement_call(x: ir.Value, memory_kind: str, *, marked: bool) -> ir.Value:
    """XLA's annotate_device_placement of `x` into memory of `memory_kind`, at the current
    insertion point. `marked`: a device_put inside the program (DEVICE_PUT_CALL; pure:
    unused moves are dropped, equal ones merged, as values); else a result's placement,
    kept as JAX's (mlir.wrap_with_memory_kind)."""
    attrs = {"call_target_name": ir.StringAttr.get("annotate_device_placement"),
             "backend_config": ir.StringAttr.get(""),
             "has_side_effect": ir.BoolAttr.get(not marked),
             "mhlo.frontend_attributes": ir.DictAttr.get(
                 {"_xla_buffer_placement": ir.StringAttr.get(memory_kind)})}
    if marked:
        attrs[DEVICE_PUT_CALL] = ir.UnitAttr.get()
    return ir.Operation.create("stablehlo.custom_call", results=[x.type], operands=[x],
                               attributes=attrs).results[0]


@lowering(S.DevicePutOp)
def _device_put_lower(ctx, x, *, memory_kind, src=None):
    return placement_call(x, memory_kind, marked=True)


@lowering(S.OptimizationBarrierOp)
def _optimization_barrier_lower(ctx, *xs):
    return list(hlo.OptimizationBarrierOp(list(xs)).results)


@lowering(S.ConstantOp)
def _constant_lower(ctx, *, value):
    return hlo.constant(A.dense_elements(value))


# (With symbolic result shapes, iota, broadcast_in_dim and reshape become StableHLO's
# dynamic forms after lowering: dynamic_shapes.make_dynamic.)
@lowering(S.IotaOp)
def _iota_lower(ctx, *, dtype, shape, dimension):
    return hlo.iota(_out_type(ctx), dimension)


@lowering(S.DimAsValueOp)
def _dim_as_value_lower(ctx, *, dim, dtype):
    return H.convert(dim_value(ctx.op, dim), dtype)


@lowering(S.BroadcastInDimOp)
def _broadcast_in_dim_lower(ctx, x, *, shape, broadcast_dimensions):
    return hlo.broadcast_in_dim(_out_type(ctx), x, list(broadcast_dimensions))


@lowering(S.ReshapeOp)
def _reshape_lower(ctx, x, *, new_sizes, dimensions=None):
    if dimensions is not None and tuple(dimensions) != tuple(range(len(dimensions))):
        x = hlo.transpose(x, list(dimensions))
    return hlo.reshape(_out_type(ctx), x)


@lowering(S.SqueezeOp)
def _squeeze_lower(ctx, x, *, dimensions):
    return hlo.reshape(_out_type(ctx), x)


@lowering(S.ExpandDimsOp)
def _expand_dims_lower(ctx, x, *, dimensions):
    # JAX has no expand_dims primitive: lax.expand_dims is a broadcast_in_dim keeping the
    # operand's dims, and XLA is handed that broadcast_in_dim (not a reshape).
    rank = len(ctx.avals_out[0].shape)
    kept = [d for d in range(rank) if d not in dimensions]
    return hlo.broadcast_in_dim(_out_type(ctx), x, kept)


@lowering(S.TransposeOp)
def _transpose_lower(ctx, x, *, permutation):
    return hlo.transpose(x, list(permutation))


@lowering(S.RevOp)
def _rev_lower(ctx, x, *, dimensions):
    return hlo.reverse(x, list(dimensions))


@lowering(S.TileOp)
def _tile_lower(ctx, x, *, reps):
    # As JAX's: reshape to (1, d0, 1, d1, ...), broadcast to (r0, d0, r1, d1, ...), and
    # reshape to (r0 * d0, ...).
    aval = ctx.avals_in[0]
    pairs = [v for d in aval.shape for v in (1, d)]
    x = hlo.reshape(H.ttype(pairs, aval.dtype), x)
    wide = [v for r, d in zip(reps, aval.shape) for v in (r, d)]
    x = hlo.broadcast_in_dim(H.ttype(wide, aval.dtype), x, list(range(len(wide))))
    return hlo.reshape(_out_type(ctx), x)


@lowering(S.ConcatenateOp)
def _concatenate_lower(ctx, *xs, dimension):
    return hlo.concatenate(list(xs), dimension)


@lowering(S.PadOp)
def _pad_lower(ctx, x, pad_value, *, padding_config):
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    if is_static(lo + hi + interior):
        return hlo.pad(x, pad_value, list(lo), list(hi), list(interior))
    return hlo.dynamic_pad(_out_type(ctx), x, pad_value, shape_value(ctx.op, lo),
                           shape_value(ctx.op, hi), shape_value(ctx.op, interior))


@lowering(S.SliceOp)
def _slice_lower(ctx, x, *, start_indices, limit_indices, strides=None):
    return H.slice_(ctx.op, x, start_indices, limit_indices, strides)


@lowering(S.SelectNOp)
def _select_n_lower(ctx, which, *cases):
    which_aval, case_aval = ctx.avals_in[0], ctx.avals_in[1]
    if len(cases) == 1:
        return cases[0]
    if which_aval.shape != case_aval.shape:
        which = hlo.broadcast_in_dim(H.ttype(case_aval.shape, which_aval.dtype), which, [])
    if is_bool(which_aval.dtype):
        return hlo.select(which, cases[1], cases[0])
    # Binary tree of selects on `which < mid`, as JAX does.
    def build(lo, hi):
        if hi - lo == 1:
            return cases[lo]
        mid = (lo + hi) // 2
        pred = H.compare(which, H.constant_like(which, mid), "LT")
        return hlo.select(pred, build(lo, mid), build(mid, hi))
    return build(0, len(cases))


@lowering(S.ClampOp)
def _clamp_lower(ctx, lo, x, hi):
    return hlo.clamp(lo, x, hi)



# ---- differentiation rules ----
# Most structural ops are linear: the JVP applies the op to the tangent, the transpose
# undoes the data movement (JAX: the deflinear2 / transpose rules in lax.py, slicing.py).
import numpy as np  # noqa: E402

from mjax.dialect.dtype_rules import is_inexact  # noqa: E402
from mjax.passes.rules import ad_util as AD  # noqa: E402


def _sum_axes(b, x, axes):
    """Sum over `axes` (reduce_sum from the reductions family)."""
    if not axes:
        return x
    return b.emit("reduce_sum", x, axes=tuple(axes))[0]


def _convert_element_type_jvp(b, primals, tangents, *, new_dtype):
    (x,), (t,) = primals, tangents
    out = b.convert_element_type(x, new_dtype=new_dtype)
    if t is None or not is_inexact(new_dtype):
        return [out], [None]
    return [out], [b.convert_element_type(t, new_dtype=new_dtype)]


AD.jvp_rule(S.ConvertElementTypeOp)(_convert_element_type_jvp)


@AD.transpose_rule(S.ConvertElementTypeOp)
def _convert_element_type_transpose(b, ct, x, *, new_dtype):
    return [b.convert_element_type(ct, new_dtype=AD.aval(x).dtype)]


AD.deflinear(S.ReducePrecisionOp, lambda b, ct, x, **p: [b.reduce_precision(ct, **p)])
AD.deflinear(S.CopyOp, lambda b, ct, x: [ct])
# (JAX: _device_put_transpose: the cotangent goes back to host memory when the operand
# came from there, and otherwise stays where it is.)
AD.deflinear(S.DevicePutOp, lambda b, ct, x, *, memory_kind, src=None: [
    b.device_put(ct, memory_kind=src) if src in ("pinned_host", "unpinned_host") else ct])
AD.deflinear(S.LayoutConstraintOp, lambda b, ct, x, **p: [b.layout_constraint(ct, **p)])
AD.defzero(S.StopGradientOp, "stop_gradient: zero derivative by definition")


@AD.jvp_rule(S.OptimizationBarrierOp)
def _optimization_barrier_jvp(b, primals, tangents):
    # JAX: _opt_barrier_jvp. One barrier on the primals, another on the (instantiated)
    # tangents of the inexact operands; integer/bool operands have no tangent (float0).
    out = b.optimization_barrier(*primals)
    out = out if isinstance(out, list) else [out]
    diff = [i for i, p in enumerate(primals) if AD.has_tangent(AD.aval(p))]
    if not diff:
        return out, [None] * len(out)
    ts = [AD.instantiate(b, tangents[i], AD.aval(primals[i])) for i in diff]
    touts = b.emit(S.OptimizationBarrierOp, *ts)
    tout = [None] * len(out)
    for i, t in zip(diff, touts):
        tout[i] = t
    return out, tout


@AD.transpose_rule(S.OptimizationBarrierOp)
def _optimization_barrier_transpose(b, ct, *xs):
    # JAX: _opt_barrier_transpose: a barrier on the (instantiated) cotangents. Operands
    # that are not linear (instantiated zero tangents) get no cotangent.
    cts = ct if isinstance(ct, list) else [ct]
    lin = [i for i, x in enumerate(xs) if AD.is_linear(x)]
    if not lin:
        return [None] * len(xs)
    outs = b.emit(S.OptimizationBarrierOp,
                  *[AD.instantiate(b, cts[i], AD.aval(xs[i])) for i in lin])
    res = [None] * len(xs)
    for i, c in zip(lin, outs):
        res[i] = c
    return res
AD.defzero(S.BitcastConvertTypeOp, "reinterprets bits: not differentiable (JAX too)")
for _op in (S.ConstantOp, S.IotaOp, S.DimAsValueOp):
    AD.no_jvp(_op, "no operands, so never has tangent inputs")
    AD.no_transpose(_op, "no operands to transpose")


def _broadcast_in_dim_transpose(b, ct, x, *, shape, broadcast_dimensions):
    in_shape = AD.aval(x).shape
    if len(in_shape) != len(shape) or tuple(broadcast_dimensions) != tuple(
            range(len(shape))):
        # An explicit broadcast (it adds or moves dims: lax.broadcast_in_dim,
        # jnp.broadcast_to), transposed as JAX's _broadcast_in_dim_transpose_rule.
        return _expand_dims_transpose(b, ct, x, dimensions=tuple(
            d for d in range(len(shape)) if d not in broadcast_dimensions),
            kept=tuple(broadcast_dimensions))
    # Same rank, size-1 dims stretched: the kind lax's binary ops make implicitly, which
    # JAX transposes by _unbroadcast: a sum over the stretched dims, then a reshape.
    stretched = [d for d in range(len(shape)) if in_shape[d] != shape[d]]
    summed = _sum_axes(b, ct, stretched)
    if AD.aval(summed).shape != in_shape:
        summed = b.reshape(summed, new_sizes=in_shape)
    return [summed]


AD.deflinear(S.BroadcastInDimOp, _broadcast_in_dim_transpose)


def _reshape_transpose(b, ct, x, *, new_sizes, dimensions=None):
    in_shape = AD.aval(x).shape
    if dimensions is None:
        return [b.reshape(ct, new_sizes=in_shape)]
    # reshape(transpose(x, dimensions)): undo the reshape, then the transpose.
    permuted = tuple(in_shape[d] for d in dimensions)
    back = b.reshape(ct, new_sizes=permuted)
    return [b.transpose(back, permutation=tuple(np.argsort(dimensions)))]


AD.deflinear(S.ReshapeOp, _reshape_transpose)


def _squeeze_transpose(b, ct, x, *, dimensions):
    # JAX: _squeeze_transpose_rule, expand_dims of the cotangent, which lax builds as a
    # broadcast_in_dim keeping the other dims (make_jaxpr of a grad prints it so).
    shape = AD.aval(x).shape
    gone = {d % len(shape) for d in dimensions}
    kept = tuple(d for d in range(len(shape)) if d not in gone)
    return [b.broadcast_in_dim(ct, shape=tuple(shape), broadcast_dimensions=kept)]


AD.deflinear(S.SqueezeOp, _squeeze_transpose)


def _expand_dims_transpose(b, ct, x, *, dimensions, kept=None):
    # JAX: expand_dims is a broadcast_in_dim, transposed by _broadcast_in_dim_transpose_rule:
    # the cotangent summed over every dim that is not a kept non-unit dim of the operand
    # (the new dims, and the operand's own size-1 dims), then those size-1 dims put back
    # by expand_dims (again a broadcast_in_dim). Not a reshape: XLA gets JAX's reduce.
    # (`kept`: where the operand's dims went, for a broadcast_in_dim's transpose.)
    shape = AD.aval(x).shape
    rank = len(shape) + len(dimensions)
    if kept is None:
        kept = [d for d in range(rank) if d not in dimensions]
    unit = tuple(i for i, n in enumerate(shape) if n == 1)
    stay = {d for d, n in zip(kept, shape) if n != 1}
    summed = _sum_axes(b, ct, [d for d in range(rank) if d not in stay])
    return [b.expand_dims(summed, dimensions=unit) if unit else summed]


AD.deflinear(S.ExpandDimsOp, _expand_dims_transpose)
AD.deflinear(S.TransposeOp, lambda b, ct, x, *, permutation: [
    b.transpose(ct, permutation=tuple(int(i) for i in np.argsort(permutation)))])
AD.deflinear(S.RevOp, lambda b, ct, x, *, dimensions: [b.rev(ct, dimensions=dimensions)])


def _tile_transpose(b, ct, x, *, reps):
    # JAX: _tile_transpose_rule: the cotangent as (r0, d0, r1, d1, ...), summed over the
    # repeats.
    shape = AD.aval(x).shape
    wide = b.reshape(ct, new_sizes=tuple(v for r, d in zip(reps, shape) for v in (r, d)))
    return [_sum_axes(b, wide, [2 * i for i in range(len(shape))])]


AD.deflinear(S.TileOp, _tile_transpose)


def _slice_transpose(b, ct, x, *, start_indices, limit_indices, strides=None):
    # Pad the cotangent back to the operand's shape: zeros around and between.
    in_shape = AD.aval(x).shape
    out_shape = AD.aval(ct).shape
    strides = strides or (1,) * len(in_shape)
    config = []
    for d, s, st, n in zip(in_shape, start_indices, strides, out_shape):
        # (the pad's size is s + hi + n + max(n - 1, 0) * (st - 1): exactly d, symbolic
        # dimensions included)
        config.append((s, d - s - n - max_dim(n - 1, 0) * (st - 1),
                       st - 1 if is_symbolic_dim(n) or n else 0))
    zero = AD.constant(b, np.zeros((), AD.aval(ct).dtype))
    return [b.pad(ct, zero, padding_config=tuple(config))]


AD.deflinear(S.SliceOp, _slice_transpose)


def _pad_transpose(b, ct, x, pad_value, *, padding_config):
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    ct_aval = AD.aval(ct)
    zero = AD.constant(b, np.zeros((), ct_aval.dtype))
    t_x = None
    if AD.is_linear(x) or AD.is_linear(pad_value):
        # Undo low/high padding (negative pads crop), then take every (interior+1)-th.
        unpadded = b.pad(ct, zero, padding_config=tuple((-l, -h, 0) for l, h in zip(lo, hi)))
        shape = AD.aval(unpadded).shape
        t_x = b.slice(unpadded, start_indices=(0,) * len(shape), limit_indices=shape,
                      strides=tuple(i + 1 for i in interior))
    t_pad = None
    if AD.is_linear(pad_value):
        all_axes = tuple(range(ct_aval.ndim))
        t_pad = b.sub(_sum_axes(b, ct, all_axes), _sum_axes(b, t_x, all_axes))
    return [t_x if AD.is_linear(x) else None, t_pad]


AD.deflinear(S.PadOp, _pad_transpose)


def _concatenate_transpose(b, ct, *xs, dimension):
    out, start = [], 0
    shape = AD.aval(ct).shape
    for x in xs:
        size = AD.aval(x).shape[dimension]
        if AD.is_linear(x):
            lo = [0] * len(shape)
            hi = list(shape)
            lo[dimension], hi[dimension] = start, start + size
            out.append(b.slice(ct, start_indices=tuple(lo), limit_indices=tuple(hi)))
        else:
            out.append(None)
        start += size
    return out


AD.deflinear(S.ConcatenateOp, _concatenate_transpose)


@AD.jvp_rule(S.SelectNOp)
def _select_n_jvp(b, primals, tangents):
    which, *cases = primals
    out = b.select_n(which, *cases)
    if all(t is None for t in tangents[1:]):
        return [out], [None]
    ts = [AD.instantiate(b, t, AD.aval(c)) for c, t in zip(cases, tangents[1:])]
    return [out], [b.select_n(which, *ts)]


@AD.transpose_rule(S.SelectNOp)
def _select_n_transpose(b, ct, which, *cases):
    if AD.is_linear(which):
        raise ValueError("select_n is not linear in its predicate")
    zeros = AD.zeros_like(b, ct)
    return [None] + [b.select_n(which, *[ct if j == i else zeros for j in range(len(cases))])
                     if AD.is_linear(c) else None for i, c in enumerate(cases)]


def _bcast(b, v, like):
    shape = AD.aval(like).shape
    if AD.aval(v).shape == shape:
        return v
    return b.broadcast_in_dim(v, shape=shape, broadcast_dimensions=())


def _clamp_jvp_lo(b, t, lo, x, hi):
    lo_b, hi_b = _bcast(b, lo, x), _bcast(b, hi, x)
    take = b.emit("and", b.gt(lo_b, x), b.lt(lo_b, hi_b))[0]
    return b.select_n(take, AD.zeros_like(b, x), _bcast(b, t, x))


def _clamp_jvp_x(b, t, lo, x, hi):
    lo_b, hi_b = _bcast(b, lo, x), _bcast(b, hi, x)
    take = b.emit("and", b.gt(x, lo_b), b.lt(x, hi_b))[0]
    return b.select_n(take, AD.zeros_like(b, x), t)


def _clamp_jvp_hi(b, t, lo, x, hi):
    take = b.lt(_bcast(b, hi, x), x)
    return b.select_n(take, AD.zeros_like(b, x), _bcast(b, t, x))


AD.defjvp(S.ClampOp, _clamp_jvp_lo, _clamp_jvp_x, _clamp_jvp_hi)



# ---- batching --------------------------------------------------------------------
# JAX: the batching rules in lax.py / slicing.py. Unbatched operands stay unbatched
# wherever the op allows it; the batch axis is kept where it is whenever the op can say
# where it goes (broadcast_in_dim, squeeze, expand_dims, dot_general), and moved to the
# front only where the op's layout demands it (reshape, a widening bitcast).
from mjax.passes.rules import batch_util as B  # noqa: E402
from mjax.passes.rules.tables import BATCH  # noqa: E402


def _per_example_rank(x, d):
    return len(B.batched_shape(x, d))


def _shift_axes(axes, d):
    """Per-example axes `axes` as axes of the value batched at `d`."""
    return tuple(B.canonical_axis(a, d) for a in axes)


B.defvectorized(S.ConvertElementTypeOp, S.ReducePrecisionOp, S.StopGradientOp, S.CopyOp,
                S.DevicePutOp)
for _op, _what in ((S.ConstantOp, "a constant"), (S.IotaOp, "an iota"),
                   (S.DimAsValueOp, "a dimension's value")):
    BATCH.unsupported(_op, f"{_what} has no operands, so it is never batched "
                           "(the batching pass copies it unchanged)")


@B.batch_rule(S.LayoutConstraintOp)
def _layout_constraint_batch(b, args, dims, *, major_to_minor):
    # The batch dimension is made the most major one, the others keep their order.
    # (JAX's get_layout_for_vmap inserts dimension 0 at position d instead, which is this
    # for d = 0.)
    (x,), (d,) = args, dims
    order = (d,) + tuple(m + (m >= d) for m in major_to_minor)
    return [b.layout_constraint(x, major_to_minor=order)], [d]


@B.batch_rule(S.BitcastConvertTypeOp)
def _bitcast_convert_type_batch(b, args, dims, *, new_dtype):
    (x,), (d,) = args, dims
    old = np.dtype(AD.aval(x).dtype).itemsize
    if np.dtype(new_dtype).itemsize > old and d == AD.aval(x).ndim - 1:
        # A widening bitcast consumes the minor dim: the batch axis must not be it.
        x, d = B.moveaxis(b, x, d, 0), 0
    return [b.bitcast_convert_type(x, new_dtype=new_dtype)], [d]


@B.batch_rule(S.OptimizationBarrierOp)
def _optimization_barrier_batch(b, args, dims):
    return b.emit(S.OptimizationBarrierOp, *args), list(dims)


@B.batch_rule(S.BroadcastInDimOp)
def _broadcast_in_dim_batch(b, args, dims, *, shape, broadcast_dimensions):
    # JAX's _broadcast_in_dim_batch_rule: the batch axis moves to the front of the operand
    # and of the result. (lax's implicit broadcasts, which JAX has no op for, keep theirs:
    # passes/batching.py.)
    (x,), (d,) = args, dims
    x = B.moveaxis(b, x, d, 0)
    new_bd = (0,) + tuple(o + 1 for o in broadcast_dimensions)
    new_shape = (b.axis_size,) + tuple(shape)
    return [b.broadcast_in_dim(x, shape=new_shape, broadcast_dimensions=new_bd)], [0]


@B.batch_rule(S.ReshapeOp)
def _reshape_batch(b, args, dims, *, new_sizes, dimensions=None):
    (x,), (d,) = args, dims
    x = B.moveaxis(b, x, d, 0)
    if dimensions is not None:
        dimensions = (0,) + tuple(i + 1 for i in dimensions)
    return [b.reshape(x, new_sizes=(b.axis_size,) + tuple(new_sizes),
                      dimensions=dimensions)], [0]


@B.batch_rule(S.SqueezeOp)
def _squeeze_batch(b, args, dims, *, dimensions):
    (x,), (d,) = args, dims
    out_d = d - sum(1 for a in dimensions if a < d)
    return [b.squeeze(x, dimensions=_shift_axes(dimensions, d))], [out_d]


@B.batch_rule(S.ExpandDimsOp)
def _expand_dims_batch(b, args, dims, *, dimensions):
    # JAX's expand_dims is a broadcast_in_dim, whose batching rule moves the batch axis to
    # the front of the operand and of the result.
    (x,), (d,) = args, dims
    x = B.moveaxis(b, x, d, 0)
    return [b.expand_dims(x, dimensions=tuple(e + 1 for e in dimensions))], [0]


@B.batch_rule(S.TransposeOp)
def _transpose_batch(b, args, dims, *, permutation):
    (x,), (d,) = args, dims
    perm = (d,) + _shift_axes(permutation, d)
    return [b.transpose(x, permutation=perm)], [0]


@B.batch_rule(S.RevOp)
def _rev_batch(b, args, dims, *, dimensions):
    (x,), (d,) = args, dims
    return [b.rev(x, dimensions=_shift_axes(dimensions, d))], [d]


@B.batch_rule(S.TileOp)
def _tile_batch(b, args, dims, *, reps):
    (x,), (d,) = args, dims
    return [b.tile(x, reps=tuple(reps[:d]) + (1,) + tuple(reps[d:]))], [d]


@B.batch_rule(S.ConcatenateOp)
def _concatenate_batch(b, args, dims, *, dimension):
    # Operands must agree on every dim but `dimension`: unbatched ones are broadcast.
    xs, d = B.align_operands(b, args, dims)
    return [b.concatenate(*xs, dimension=B.canonical_axis(dimension, d))], [d]


@B.batch_rule(S.PadOp)
def _pad_batch(b, args, dims, *, padding_config):
    (x, pad_value), (xd, pd) = args, dims
    if pd is B.NOT_MAPPED:
        config = list(padding_config)
        config.insert(xd, (0, 0, 0))
        return [b.pad(x, pad_value, padding_config=tuple(config))], [xd]
    # A padding value per example (JAX: _pad_batch_rule): pad with anything, then select
    # the example's padding value wherever a mask padded the same way says "padding".
    dtype = AD.aval(x).dtype
    per_example = B.batched_shape(x, xd)
    filler = b.constant(np.zeros((), dtype))
    padded = b.pad(x, filler, padding_config=tuple(
        padding_config if xd is None else
        padding_config[:xd] + ((0, 0, 0),) + padding_config[xd:]))
    padded = B.bdim_to_front(b, padded, xd)
    out_shape = AD.aval(padded).shape
    inside = b.emit("constant", value=np.broadcast_to(np.True_, per_example))[0]
    mask = b.pad(inside, b.constant(np.False_), padding_config=tuple(padding_config))
    mask = b.broadcast_in_dim(mask, shape=out_shape,
                              broadcast_dimensions=tuple(range(1, len(out_shape))))
    values = b.broadcast_in_dim(B.moveaxis(b, pad_value, pd, 0), shape=out_shape,
                                broadcast_dimensions=(0,))
    return [b.select_n(mask, values, padded)], [0]


@B.batch_rule(S.SliceOp)
def _slice_batch(b, args, dims, *, start_indices, limit_indices, strides=None):
    (x,), (d,) = args, dims
    ins = lambda t, v: tuple(t[:d]) + (v,) + tuple(t[d:])  # noqa: E731
    # (no strides stays none, as JAX's batched slice prints `strides=None`)
    return [b.slice(x, start_indices=ins(start_indices, 0),
                    limit_indices=ins(limit_indices, b.axis_size),
                    strides=None if strides is None else ins(tuple(strides), 1))], [d]


def _to_shape_of(b, v, vd, like, d):
    """`v` (scalar per example, or shaped like the per-example `like`) as an operand next
    to `like` batched at `d`: an unbatched scalar stays one; a batched scalar is broadcast
    along `like`'s batched shape; a full-shaped one gets its batch axis at `d`."""
    if _per_example_rank(v, vd) == 0:
        if vd is B.NOT_MAPPED:
            return v
        if _per_example_rank(like, d) > 0:
            return b.broadcast_in_dim(v, shape=AD.aval(like).shape, broadcast_dimensions=(d,))
    return B.bdim_at(b, v, vd, d)


@B.batch_rule(S.SelectNOp)
def _select_n_batch(b, args, dims):
    # JAX's _select_batch_rule: in place where every batch axis agrees (or a scalar
    # predicate picks among cases batched alike, or of one shape); otherwise every batch
    # axis at the front, unbatched operands broadcast there.
    (which, *cases), (wd, *cds) = args, dims

    def shape(x):
        return AD.aval(x).shape
    if all(cd == wd for cd in cds):
        if shape(which) != shape(cases[0]):    # a scalar predicate per example
            which = b.broadcast_in_dim(which, shape=shape(cases[0]), broadcast_dimensions=(wd,))
        return [b.select_n(which, *cases)], [wd]
    if not shape(which) and all(cd is not B.NOT_MAPPED for cd in cds):
        if all(cd == cds[0] for cd in cds):
            return [b.select_n(which, *cases)], [cds[0]]
        if all(shape(c) == shape(cases[0]) for c in cases):
            d = cds[0]
            return [b.select_n(which, cases[0], *(B.moveaxis(b, c, cd, d) for c, cd
                                                  in zip(cases[1:], cds[1:])))], [d]
    if shape(which):
        which = B.bdim_to_front(b, which, wd)
    if any(shape(c) for c in cases):
        cases = [B.bdim_to_front(b, c, cd) for c, cd in zip(cases, cds)]
    if 0 < len(shape(which)) < len(shape(cases[0])):
        which = b.broadcast_in_dim(which, shape=shape(cases[0]), broadcast_dimensions=(0,))
    if len(shape(which)) > len(shape(cases[0])):
        cases = [b.broadcast_in_dim(c, shape=shape(which), broadcast_dimensions=())
                 for c in cases]
    return [b.select_n(which, *cases)], [0]


@B.batch_rule(S.ClampOp)
def _clamp_batch(b, args, dims):
    (lo, x, hi), (lod, xd, hid) = args, dims
    if xd is B.NOT_MAPPED:
        # The result is batched, so x must be: at a batched bound's axis (0 if that bound
        # is a scalar per example, the only place its batch axis can be).
        xd = lod if lod is not B.NOT_MAPPED else hid
        x = B.bdim_at(b, x, None, xd)
    lo, hi = _to_shape_of(b, lo, lod, x, xd), _to_shape_of(b, hi, hid, x, xd)
    return [b.clamp(lo, x, hi)], [xd]



# ---- checkify -------------------------------------------------------------------------
nan_checked(S.PadOp)


# ---- weak types (passes/weak_cotangents.py) -------------------------------------------
@WEAK_TYPES.register(S.ConstantOp, S.ConvertElementTypeOp)
def _marked_weak_types(types, op, weak):
    # (the trace marks a weakly typed literal or conversion: mjax.weak_type)
    return [WEAK_MARK in op.attributes] * len(op.results)


@WEAK_COTANGENTS.register(S.ConvertElementTypeOp)
def _convert_element_type_weak_cotangents(types, op, weak, ct, outs, top):
    # (JAX transposes a conversion into one to the input's own type)
    return [weak.get(op.operands[0], False)]
