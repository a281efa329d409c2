"""Rules for the structural family (dialect/ops/structural.py): lowering."""
from __future__ import annotations

from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect import attributes as A
from mjax.dialect.dtype_rules import is_bool, is_complex
from mjax.dialect.ops import structural as S
from mjax.passes.rules import hlo as H
from mjax.passes.rules.tables import lowering


def _out_type(ctx, i=0):
    return H.ttype(ctx.avals_out[i].shape, ctx.avals_out[i].dtype)


@lowering(S.ConvertElementTypeOp)
def _convert_element_type_lower(ctx, x, *, new_dtype):
    old = ctx.avals_in[0].dtype
    if is_complex(old) and not is_complex(new_dtype):
        x = hlo.real(x)  # JAX drops the imaginary part
    if is_bool(new_dtype) and not is_bool(old):
        # nonzero -> True, as numpy's astype(bool) does
        return hlo.compare(x, H.constant_like(x, 0), hlo.ComparisonDirectionAttr.get("NE"),
                           compare_type=hlo.ComparisonTypeAttr.get(H.compare_type(
                               H.aval_of(x.type).dtype)))
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


@lowering(S.ConstantOp)
def _constant_lower(ctx, *, value):
    return hlo.constant(A.dense_elements(value))


@lowering(S.IotaOp)
def _iota_lower(ctx, *, dtype, shape, dimension):
    return hlo.iota(_out_type(ctx), dimension)


@lowering(S.BroadcastInDimOp)
def _broadcast_in_dim_lower(ctx, x, *, shape, broadcast_dimensions):
    return hlo.broadcast_in_dim(_out_type(ctx), x, list(broadcast_dimensions))


@lowering(S.ReshapeOp)
def _reshape_lower(ctx, x, *, new_sizes, dimensions=None):
    if dimensions is not None and tuple(dimensions) != tuple(range(len(dimensions))):
        x = hlo.transpose(x, list(dimensions))
    return hlo.reshape(_out_type(ctx), x)


@lowering(S.SqueezeOp, S.ExpandDimsOp)
def _squeeze_lower(ctx, x, *, dimensions):
    return hlo.reshape(_out_type(ctx), x)


@lowering(S.TransposeOp)
def _transpose_lower(ctx, x, *, permutation):
    return hlo.transpose(x, list(permutation))


@lowering(S.RevOp)
def _rev_lower(ctx, x, *, dimensions):
    return hlo.reverse(x, list(dimensions))


@lowering(S.ConcatenateOp)
def _concatenate_lower(ctx, *xs, dimension):
    return hlo.concatenate(list(xs), dimension)


@lowering(S.PadOp)
def _pad_lower(ctx, x, pad_value, *, padding_config):
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    return hlo.pad(x, pad_value, list(lo), list(hi), list(interior))


@lowering(S.SliceOp)
def _slice_lower(ctx, x, *, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * len(start_indices)
    return hlo.slice(x, list(start_indices), list(limit_indices), list(strides))


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


@lowering(S.DotGeneralOp)
def _dot_general_lower(ctx, lhs, rhs, *, dimension_numbers, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    out_dtype = ctx.avals_out[0].dtype
    lhs, rhs = H.convert(lhs, out_dtype), H.convert(rhs, out_dtype)
    dn = hlo.DotDimensionNumbers.get(lhs_batching_dimensions=list(lb),
                                     rhs_batching_dimensions=list(rb),
                                     lhs_contracting_dimensions=list(lc),
                                     rhs_contracting_dimensions=list(rc))
    return hlo.dot_general(_out_type(ctx), lhs, rhs, dn)


