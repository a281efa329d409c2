"""Rules for the convolution family (dialect/ops/convolution.py): lowering, JVP,
transpose for both operands, batching.

    %y = "jaxpr.conv_general_dilated"(%x, %w) {dimension_numbers = {...}, ...}
  ==>
    %y = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
           window = {stride = [...], pad = [...], lhs_dilate = [...], rhs_dilate = [...]}

The transposes follow JAX's reading of a convolution as a matmul over features
(JAX: _conv_general_dilated_transpose_lhs/_rhs): the lhs cotangent is a convolution of
the output cotangent with the spatially reversed kernel (strides become lhs dilation), the
rhs cotangent one of the input with the output cotangent (strides become rhs dilation),
with feature groups and batch groups trading places.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.ops import convolution as C
from mjax.dialect.types import ShapedArray
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules import hlo as H
from mjax.passes.rules.batch_util import NOT_MAPPED, batch_rule, batched_shape
from mjax.passes.rules.tables import lowering, nan_checked


# ---- lowering ----------------------------------------------------------------------
@lowering(C.ConvGeneralDilatedOp)
def _conv_general_dilated_lower(ctx, lhs, rhs, *, window_strides, padding, lhs_dilation,
                                rhs_dilation, dimension_numbers, feature_group_count,
                                batch_group_count, precision, preferred_element_type):
    lhs_spec, rhs_spec, out_spec = (dimension_numbers[k] for k in C.CONV_FIELDS)
    dn = hlo.ConvDimensionNumbers.get(
        input_batch_dimension=lhs_spec[0], input_feature_dimension=lhs_spec[1],
        input_spatial_dimensions=list(lhs_spec[2:]),
        kernel_output_feature_dimension=rhs_spec[0],
        kernel_input_feature_dimension=rhs_spec[1],
        kernel_spatial_dimensions=list(rhs_spec[2:]),
        output_batch_dimension=out_spec[0], output_feature_dimension=out_spec[1],
        output_spatial_dimensions=list(out_spec[2:]))
    n = len(lhs_spec) - 2
    pads = np.asarray(padding, np.int64).reshape(n, 2)
    # (as JAX's: [DEFAULT, DEFAULT] when none is given, or a dot algorithm, which names
    # no convolution precision)
    config = H.precision_config(precision)
    out = ctx.avals_out[0]

    def conv(dtype, x, w):
        return hlo.convolution(
            H.ttype(out.shape, dtype), x, w, dn, feature_group_count, batch_group_count,
            window_strides=list(window_strides), padding=ir.DenseIntElementsAttr.get(pads),
            lhs_dilation=list(lhs_dilation), rhs_dilation=list(rhs_dilation),
            window_reversal=[False] * n, precision_config=config)
    if not np.issubdtype(ctx.avals_in[0].dtype, np.complexfloating):
        return conv(out.dtype, lhs, rhs)    # (real operands: a complex result too, as JAX)
    # A complex convolution is three real ones (Gauss's product: 3 multiplications, 5
    # additions), as JAX lowers it on CPU and GPU, where XLA's complex convolution is a
    # slow loop (CPU) or missing (GPU); the same arithmetic gives JAX's rounding.
    # JAX: convolution._complex_mul.
    part = np.finfo(out.dtype).dtype
    xr, xi, wr, wi = hlo.real(lhs), hlo.imag(lhs), hlo.real(rhs), hlo.imag(rhs)
    k1 = conv(part, hlo.add(xr, xi), wr)
    k2 = conv(part, xr, hlo.subtract(wi, wr))
    k3 = conv(part, xi, hlo.add(wr, wi))
    return hlo.complex(hlo.subtract(k1, k3), hlo.add(k1, k2))


# ---- reshaping helpers (shared by the transposes and batching) ---------------------
def reshape_axis_into(b, x, src: int, dst: int):
    """Merges axis `src` into axis `dst` (numbered after `src` is removed), `src` major.
    JAX: convolution._reshape_axis_into."""
    shape = AD.aval(x).shape
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new = [d for i, d in enumerate(shape) if i != src]
    new[dst] *= shape[src]
    dims = None if perm == list(range(len(shape))) else tuple(perm)
    return b.reshape(x, new_sizes=tuple(new), dimensions=dims)


def reshape_axis_out_of(b, x, src: int, size1: int):
    """Splits axis `src` into (size1, rest). JAX: convolution._reshape_axis_out_of."""
    shape = list(AD.aval(x).shape)
    size2, ragged = divmod(shape[src], size1)
    assert not ragged, (shape, src, size1)
    shape[src:src + 1] = [size1, size2]
    return b.reshape(x, new_sizes=tuple(shape))


def _spec_swap(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def _dn(lhs_spec, rhs_spec, out_spec):
    return {"lhs_spec": tuple(lhs_spec), "rhs_spec": tuple(rhs_spec),
            "out_spec": tuple(out_spec)}


def _conv(b, lhs, rhs, **params):
    return b.conv_general_dilated(lhs, rhs, **params)


def _cast(b, x, dtype):
    if AD.aval(x).dtype == dtype:
        return x
    return b.convert_element_type(x, new_dtype=dtype)


# ---- JVP ---------------------------------------------------------------------------
# Bilinear: each operand's tangent enters through the same convolution.
AD.defjvp(C.ConvGeneralDilatedOp,
          lambda b, t, lhs, rhs, **p: _conv(b, t, rhs, **p),
          lambda b, t, lhs, rhs, **p: _conv(b, lhs, t, **p))


# ---- transpose -----------------------------------------------------------------------
def _transpose_lhs(b, ct, rhs, lhs_aval, *, window_strides, padding, lhs_dilation,
                   rhs_dilation, dimension_numbers, feature_group_count, batch_group_count,
                   precision, preferred_element_type):
    lhs_spec, rhs_spec, out_spec = (dimension_numbers[k] for k in C.CONV_FIELDS)
    rhs_shape = AD.aval(rhs).shape
    ct_shape = AD.aval(ct).shape
    if feature_group_count > 1:
        # The group moves from the kernel's output features to its input features.
        rhs = reshape_axis_out_of(b, rhs, rhs_spec[0], feature_group_count)
        rhs = reshape_axis_into(b, rhs, rhs_spec[0], rhs_spec[1])
    elif batch_group_count > 1:
        rhs = reshape_axis_out_of(b, rhs, rhs_spec[0], batch_group_count)
        rhs = reshape_axis_into(b, rhs, rhs_spec[0], rhs_spec[1])
        feature_group_count = batch_group_count
    pads = []
    for i in range(len(lhs_spec) - 2):
        lhs_d = C.dilate_dim(lhs_aval.shape[lhs_spec[2 + i]], lhs_dilation[i])
        rhs_d = C.dilate_dim(rhs_shape[rhs_spec[2 + i]], rhs_dilation[i])
        out_d = C.dilate_dim(ct_shape[out_spec[2 + i]], window_strides[i])
        before = rhs_d - padding[i][0] - 1
        pads.append((before, lhs_d + rhs_d - 1 - out_d - before))
    rhs = b.rev(rhs, dimensions=tuple(rhs_spec[2:]))
    rhs = _cast(b, rhs, AD.aval(ct).dtype)
    out = _conv(b, ct, rhs, window_strides=tuple(lhs_dilation), padding=tuple(pads),
                lhs_dilation=tuple(window_strides), rhs_dilation=tuple(rhs_dilation),
                dimension_numbers=_dn(out_spec, _spec_swap(rhs_spec), lhs_spec),
                feature_group_count=feature_group_count, batch_group_count=1,
                precision=precision, preferred_element_type=preferred_element_type)
    out = _cast(b, out, lhs_aval.dtype)
    if batch_group_count > 1:
        out = reshape_axis_out_of(b, out, lhs_spec[1], batch_group_count)
        out = reshape_axis_into(b, out, lhs_spec[1], lhs_spec[0])
    return out


def _transpose_rhs(b, ct, lhs, rhs_aval, *, window_strides, padding, lhs_dilation,
                   rhs_dilation, dimension_numbers, feature_group_count, batch_group_count,
                   precision, preferred_element_type):
    lhs_spec, rhs_spec, out_spec = (dimension_numbers[k] for k in C.CONV_FIELDS)
    if AD.aval(ct).size == 0:
        return None  # the kernel got no cotangent (and the conv below would be degenerate)
    lhs_shape, ct_shape = AD.aval(lhs).shape, AD.aval(ct).shape
    if batch_group_count > 1:
        feature_group_count, batch_group_count = batch_group_count, 1
    elif feature_group_count > 1:
        feature_group_count, batch_group_count = 1, feature_group_count
    pads = []
    for i in range(len(lhs_spec) - 2):
        lhs_d = C.dilate_dim(lhs_shape[lhs_spec[2 + i]], lhs_dilation[i])
        rhs_d = C.dilate_dim(rhs_aval.shape[rhs_spec[2 + i]], rhs_dilation[i])
        out_d = C.dilate_dim(ct_shape[out_spec[2 + i]], window_strides[i])
        lo = padding[i][0]
        pads.append((lo, out_d - lhs_d + rhs_d - lo - 1))
    lhs = _cast(b, lhs, AD.aval(ct).dtype)
    out = _conv(b, lhs, ct, window_strides=tuple(rhs_dilation), padding=tuple(pads),
                lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(window_strides),
                dimension_numbers=_dn(_spec_swap(lhs_spec), _spec_swap(out_spec),
                                      _spec_swap(rhs_spec)),
                feature_group_count=feature_group_count, batch_group_count=batch_group_count,
                precision=precision, preferred_element_type=preferred_element_type)
    return _cast(b, out, rhs_aval.dtype)


@AD.transpose_rule(C.ConvGeneralDilatedOp)
def _conv_general_dilated_transpose(b, ct, lhs, rhs, **params):
    if AD.is_linear(lhs) and AD.is_linear(rhs):
        raise ValueError("conv_general_dilated of two linear values is not linear")
    if AD.is_linear(lhs):
        return [_transpose_lhs(b, ct, rhs, lhs.aval, **params), None]
    return [None, _transpose_rhs(b, ct, lhs, rhs.aval, **params)]


# ---- batching ------------------------------------------------------------------------
@batch_rule(C.ConvGeneralDilatedOp)
def _conv_general_dilated_batch(b, args, dims, **params):
    # JAX: _conv_general_dilated_batch_rule. The vmapped axis is folded into the batch
    # dimension (lhs only), the output features (rhs only) or, when both are batched, into
    # feature groups (each example convolves with its own kernel), then split out again.
    lhs, rhs = args
    ld, rd = dims
    lhs_spec, rhs_spec, out_spec = (params["dimension_numbers"][k] for k in C.CONV_FIELDS)
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    size = b.axis_size
    if size == 0:
        return _empty_batch(b, lhs, ld, rhs, rd, params)
    if ld is not NOT_MAPPED and rd is not NOT_MAPPED:
        if bgc > 1:
            new_lhs = reshape_axis_into(b, lhs, ld, lhs_spec[0])
            params = dict(params, batch_group_count=bgc * size)
        else:
            new_lhs = reshape_axis_into(b, lhs, ld, lhs_spec[1])
            params = dict(params, feature_group_count=fgc * size)
        new_rhs = reshape_axis_into(b, rhs, rd, rhs_spec[0])
        out = _conv(b, new_lhs, new_rhs, **params)
        return [reshape_axis_out_of(b, out, out_spec[1], size)], [out_spec[1]]
    if ld is not NOT_MAPPED:
        if bgc == 1:
            new_lhs = reshape_axis_into(b, lhs, ld, lhs_spec[0])
        else:
            # Batch groups must stay outermost in the batch dimension: split them out,
            # fold the vmapped axis in under them, then merge back.
            new_lhs = reshape_axis_out_of(b, lhs, lhs_spec[0] + int(ld <= lhs_spec[0]), bgc)
            new_lhs = reshape_axis_into(b, new_lhs, ld + int(lhs_spec[0] < ld),
                                        lhs_spec[0] + 1)
            new_lhs = reshape_axis_into(b, new_lhs, lhs_spec[0], lhs_spec[0])
        out = _conv(b, new_lhs, rhs, **params)
        return [reshape_axis_out_of(b, out, out_spec[0], size)], [out_spec[0]]
    if fgc == 1 and bgc == 1:
        new_rhs = reshape_axis_into(b, rhs, rd, rhs_spec[0])
        out = _conv(b, lhs, new_rhs, **params)
        return [reshape_axis_out_of(b, out, out_spec[1], size)], [out_spec[1]]
    # Groups must stay outermost in the kernel's output features (and then the output's).
    groups = fgc if fgc > 1 else bgc
    new_rhs = reshape_axis_out_of(b, rhs, rhs_spec[0] + int(rd <= rhs_spec[0]), groups)
    new_rhs = reshape_axis_into(b, new_rhs, rd + int(rhs_spec[0] < rd), rhs_spec[0] + 1)
    new_rhs = reshape_axis_into(b, new_rhs, rhs_spec[0], rhs_spec[0])
    out = _conv(b, lhs, new_rhs, **params)
    out = reshape_axis_out_of(b, out, out_spec[1], groups)
    out = reshape_axis_out_of(b, out, out_spec[1] + 1, size)
    out = reshape_axis_into(b, out, out_spec[1], out_spec[1] + 1)
    return [out], [out_spec[1]]


def _empty_batch(b, lhs, ld, rhs, rd, params):
    """A vmap over an empty axis: zeros of the batched result shape (folding a size-0
    axis into the batch or feature dims would break the group arithmetic)."""
    lhs_aval = ShapedArray(batched_shape(lhs, ld), AD.aval(lhs).dtype)
    rhs_aval = ShapedArray(batched_shape(rhs, rd), AD.aval(rhs).dtype)
    out, = C.ConvGeneralDilatedOp.infer_checked([lhs_aval, rhs_aval], params)
    return [AD.zeros(b, ShapedArray((0,) + out.shape, out.dtype))], [0]


# ---- checkify -------------------------------------------------------------------------
nan_checked(C.ConvGeneralDilatedOp)
