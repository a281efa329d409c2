"""`lax.conv_general_dilated` and its wrappers (conv, conv_with_general_padding,
conv_transpose), dimension-number parsing and padding modes, as in `jax.lax`."""
from __future__ import annotations

import enum
import operator
from typing import Any, NamedTuple, Sequence, Union

import numpy as np

from mjax.specs import dtypes
from mjax.tracing.core import at_user_line, aval_of_value, bind
from mjax.dialect.ops.convolution import ConvGeneralDilatedOp, conv_shape, dilate_dim
from mjax.lax.dot import dot_general
from mjax.lax.precision import Precision, canonicalize_precision, precision_attr
from mjax.lax.sharding import apply_out_sharding
from mjax.lax.shapes import rev, transpose
from mjax.arrays.sharding_types import out_sharding_given

# A type alias JAX exports for annotations.
ConvGeneralDilatedDimensionNumbers = Union[tuple, Any, None]


class ConvDimensionNumbers(NamedTuple):
    """Batch, feature and spatial dimensions of a convolution's operands and result.

    lhs_spec: (batch dimension, feature dimension, spatial dimensions...)
    rhs_spec: (out feature dimension, in feature dimension, spatial dimensions...)
    out_spec: (batch dimension, feature dimension, spatial dimensions...)
    """
    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


class PaddingType(enum.Enum):
    """The padding modes named by strings ('VALID', 'SAME', 'SAME_LOWER')."""
    VALID = 1
    SAME = 2
    SAME_LOWER = 3


def conv_general_permutations(dimension_numbers):
    """The (lhs, rhs, out) permutations to (batch/out-feature, feature, spatial...) order
    of string dimension numbers such as ('NHWC', 'HWIO', 'NHWC')."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, c) in enumerate(charpairs):
        spec = dimension_numbers[i]
        if not spec.count(a) == spec.count(c) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{c}' exactly once, got {spec}.")
        if len(spec) != len(set(spec)):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {spec}.")
    spatial = [set(s) - set(p) for s, p in zip(dimension_numbers, charpairs)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise TypeError(f"convolution dimension_numbers elements must each have the same set "
                        f"of spatial characters, got {tuple(dimension_numbers)}.")

    def perm(spec, pair):
        # Spatial dimensions are ordered as they appear in the kernel's spec.
        dims = sorted((i for i, ch in enumerate(spec) if ch not in pair),
                      key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(dims)

    return tuple(perm(s, p) for s, p in zip(dimension_numbers, charpairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """`dimension_numbers` (None, three strings, or ConvDimensionNumbers) in canonical
    form. JAX: lax.conv_dimension_numbers."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)):
        raise TypeError(f"convolution dimension_numbers must be tuple/list or None, got "
                        f"{type(dimension_numbers)}.")
    if len(dimension_numbers) != 3:
        raise TypeError(f"convolution dimension_numbers list/tuple must be length 3, got "
                        f"{len(dimension_numbers)}.")
    if not all(isinstance(s, str) for s in dimension_numbers):
        if all(isinstance(s, (list, tuple)) for s in dimension_numbers):
            return ConvDimensionNumbers(*(tuple(int(d) for d in s) for s in dimension_numbers))
        raise TypeError(f"convolution dimension_numbers elements must be strings, got "
                        f"{tuple(type(s) for s in dimension_numbers)}.")
    for i, spec in enumerate(dimension_numbers):
        if len(spec) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                            f"ndim of lhs and rhs, got {len(spec)} for lhs and rhs shapes "
                            f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def _stride_dim(d, window, stride):
    """How many windows of size `window` at stride `stride` fit in `d` (0 when none), for
    any integer d, as JAX's shape arithmetic counts them (a -1 or 0 dimension gives 0)."""
    return max((d - window) // stride + 1, 0)


def _dilate_dim(d, dilation):
    """The size of `d` elements with `dilation - 1` holes between neighbours (never below
    0; a dilation of 1 leaves d as it is, -1 included)."""
    return d if dilation == 1 else max(1 + dilation * (d - 1), 0)


def _as_int(v):
    return v.item() if isinstance(v, np.generic) else v


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """'SAME', 'SAME_LOWER' or 'VALID' (any case, or a `PaddingType`) as explicit
    (low, high) pairs. JAX: lax.padtype_to_pads (SAME puts an odd extra pad at the end,
    SAME_LOWER at the start). Works for any integer sizes, -1 and 0 included."""
    if isinstance(padding, str):
        try:
            padding = PaddingType[padding.upper()]
        except KeyError:
            raise RuntimeError(f"Unrecognized padding type: expected 'VALID', 'SAME', or "
                               f"'SAME_LOWER', got {padding}.") from None
    if padding == PaddingType.VALID:
        return [(0, 0)] * len(in_shape)
    if padding not in (PaddingType.SAME, PaddingType.SAME_LOWER):
        raise TypeError(f"Unknown padding type: {padding}.")
    # Elementwise over NumPy arrays, as JAX computes it (the output is ceil(d / stride)).
    d = np.asarray(in_shape)
    s = np.asarray(window_strides)
    k = np.asarray(window_shape)
    out = -np.floor_divide(-d, s)
    pads = []
    for total in (out - 1) * s + k - d:
        total = max(_as_int(total), 0)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if padding == PaddingType.SAME else (big, small))
    return pads


def _ints(name, values, n):
    try:
        out = tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(at_user_line(f"conv_general_dilated {name} must be a sequence of "
                                     f"integers, got {values!r}")) from None
    if len(out) != n:
        raise ValueError(at_user_line(f"conv_general_dilated {name} must have {n} entries "
                                      f"(one per spatial dimension), got {out}"))
    return out


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None,
                         out_sharding=None):
    """General n-d convolution with optional dilation. JAX: lax.conv_general_dilated."""
    if out_sharding is not None:
        # (JAX takes the caller's layout as the result's, unchecked, as dot_general does.)
        with out_sharding_given():
            out = conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation,
                                       rhs_dilation, dimension_numbers, feature_group_count,
                                       batch_group_count, precision, preferred_element_type)
        return apply_out_sharding(out, out_sharding)
    la, ra = aval_of_value(lhs), aval_of_value(rhs)
    dnums = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    n = la.ndim - 2
    if lhs_dilation is None:
        lhs_dilation = (1,) * n
    elif isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
        raise ValueError("String padding is not implemented for transposed convolution "
                         "using this op. Please either exactly specify the required padding "
                         "or use conv_transpose.")
    rhs_dilation = (1,) * n if rhs_dilation is None else rhs_dilation
    window_strides = _ints("window_strides", window_strides, n)
    lhs_dilation = _ints("lhs_dilation", lhs_dilation, n)
    rhs_dilation = _ints("rhs_dilation", rhs_dilation, n)
    if isinstance(padding, str):
        in_spatial = [la.shape[d] for d in dnums.lhs_spec[2:]]
        window = [dilate_dim(ra.shape[d], r) for d, r in zip(dnums.rhs_spec[2:], rhs_dilation)]
        padding = padtype_to_pads(in_spatial, window, window_strides, padding)
    else:
        try:
            padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (ValueError, TypeError):
            raise ValueError(f"padding argument to conv_general_dilated should be a string "
                             f"or a sequence of (low, high) pairs, got {padding}") from None
    pet = None if preferred_element_type is None else dtypes.canonicalize_dtype(
        preferred_element_type)
    params = dict(window_strides=window_strides, padding=tuple(tuple(p) for p in padding),
                  lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                  dimension_numbers={"lhs_spec": tuple(dnums.lhs_spec),
                                     "rhs_spec": tuple(dnums.rhs_spec),
                                     "out_spec": tuple(dnums.out_spec)},
                  feature_group_count=operator.index(feature_group_count),
                  batch_group_count=operator.index(batch_group_count))
    try:  # shape errors are ValueErrors, as in JAX (the op's own check raises TypeError)
        conv_shape(la.shape, ra.shape, **params)
    except ValueError as e:
        raise ValueError(at_user_line(str(e))) from None
    return bind(ConvGeneralDilatedOp, lhs, rhs, **params,
                precision=precision_attr(precision), preferred_element_type=pet)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """conv_general_dilated with NCHW/OIHW layouts and no dilation. JAX: lax.conv."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """conv_general_dilated with NCHW/OIHW layouts. JAX: lax.conv_with_general_padding."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k: int, s: int, padding):
    """(before, after) padding of one dimension of a transposed convolution whose forward
    convolution had kernel size k, stride s and `padding`. JAX: _conv_transpose_padding."""
    if padding == "SAME":
        total = k + s - 2
        before = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        before = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        before, total = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return before, total - before


_TRANSPOSE_DEFAULTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                       4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """A fractionally strided convolution (the 'transpose' of a strided conv), with
    TensorFlow's layouts by default. JAX: lax.conv_transpose."""
    la, ra = aval_of_value(lhs), aval_of_value(rhs)
    if la.ndim != ra.ndim or la.ndim < 2:
        raise ValueError(f"conv_transpose requires lhs and rhs of equal rank >= 2, got "
                         f"shapes {la.shape} and {ra.shape}")
    if dimension_numbers is None:
        if la.ndim not in _TRANSPOSE_DEFAULTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_DEFAULTS[la.ndim]
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    kernel = [ra.shape[d] for d in dn.rhs_spec[2:]]
    rhs_dilation = (1,) * (ra.ndim - 2) if rhs_dilation is None else tuple(rhs_dilation)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        per_dim = [padding] * len(strides) if isinstance(padding, str) else [
            tuple(p) for p in padding]
        pads = tuple(_conv_transpose_padding(dilate_dim(k, r), s, p)
                     for k, r, s, p in zip(kernel, rhs_dilation, strides, per_dim))
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(ra.ndim))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = transpose(rhs, perm)
    one = (1,) * (la.ndim - 2)
    return conv_general_dilated(lhs, rhs, one, pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers):
    """The result shape of conv_general_dilated (no dilation) with string dimension
    numbers. JAX: lax.conv_general_shape_tuple."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple([lhs_shape[i] for i in lhs_perm],
                           [rhs_shape[i] for i in rhs_perm], window_strides, padding)
    return tuple(out[out_perm.index(d)] for d in range(len(out)))


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The result shape of a convolution in canonical (N, C, spatial...) layouts, for any
    integer sizes (-1 and 0 included; a window larger than its padded dimension gives 0).
    JAX: lax.conv_shape_tuple."""
    lhs_shape, rhs_shape = tuple(map(_as_int, lhs_shape)), tuple(map(_as_int, rhs_shape))
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    flat = [_as_int(p) for p in np.asarray(pads).reshape(-1)]
    padded = [d + lo + hi for d, lo, hi in zip(lhs_shape[2:], flat[0::2], flat[1::2])]
    if any(p < 0 for p in padded):
        raise ValueError(f"Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]={lhs_shape[2:]}")
    spatial = tuple(_stride_dim(p, k, _as_int(s))
                    for p, k, s in zip(padded, rhs_shape[2:], strides))
    batch = lhs_shape[0]
    if batch_group_count > 1:
        if batch % batch_group_count:
            raise AssertionError(f"conv_shape_tuple: the batch size {batch} is not a multiple "
                             f"of batch_group_count={batch_group_count}")
        batch //= batch_group_count
    return (batch, rhs_shape[0]) + spatial


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """The result shape of conv_transpose with string dimension numbers. JAX:
    lax.conv_transpose_shape_tuple."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs = [_as_int(lhs_shape[d]) for d in lhs_perm]
    rhs = [_as_int(rhs_shape[d]) for d in rhs_perm]
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding) for k, s in zip(rhs[2:],
                                                                          window_strides)]
    spatial = [(i - 1) * s - k + 2 + _as_int(np.sum(p))
               for i, k, s, p in zip(lhs[2:], rhs[2:], window_strides, padding)]
    canonical = [lhs[0], rhs[0]] + spatial
    return tuple(canonical[out_perm.index(d)] for d in range(len(canonical)))


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches a convolution with `filter_shape` sees, flattened into the output
    feature dimension in (channel, filter spatial...) order. JAX:
    lax.conv_general_dilated_patches."""
    la = aval_of_value(lhs)
    filter_shape = tuple(int(d) for d in filter_shape)
    dn = conv_dimension_numbers(la.shape, (1, 1) + filter_shape, dimension_numbers)
    size = int(np.prod(filter_shape))
    channels = la.shape[dn.lhs_spec[1]]
    # One-hot kernels, one per (channel, position) pair, in feature groups of one channel.
    one_hot = np.eye(size, dtype=la.dtype).reshape((size, 1) + filter_shape)
    kernel = np.tile(one_hot, (channels,) + (1,) * (1 + len(filter_shape)))
    kernel = np.moveaxis(kernel, range(kernel.ndim), dn.rhs_spec)
    return conv_general_dilated(lhs, kernel, window_strides, padding, lhs_dilation,
                                rhs_dilation, dn,
                                precision=None if precision is None else (
                                    precision, Precision.DEFAULT),
                                feature_group_count=channels,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """An unshared convolution: a separate kernel at each output position (rhs spatial
    dims are the output's; its I dim fuses input channels and filter positions).
    JAX: lax.conv_general_dilated_local."""
    c_precision = canonicalize_precision(precision)
    lhs_precision = c_precision[0] if isinstance(c_precision, tuple) and \
        len(c_precision) == 2 else c_precision      # (the patches' own operand's)
    patches = conv_general_dilated_patches(
        lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
        dimension_numbers, lhs_precision)
    la = aval_of_value(lhs)
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(
        la.shape, (1, 1) + tuple(filter_shape), dimension_numbers)
    # Contract the patch features with rhs's I dim, batched over the spatial positions
    # (paired in the output's order).
    out_b = list(out_spec[2:])
    rhs_b = list(rhs_spec[2:])
    order = sorted(range(len(out_b)), key=lambda k: out_b[k])
    dn = (((out_spec[1],), (rhs_spec[1],)), (tuple(out_b[k] for k in order),
                                             tuple(rhs_b[k] for k in order)))
    out = dot_general(patches, rhs, dn, precision=precision)
    nd = aval_of_value(out).ndim
    # dot_general's result: batch dims, patches' free dims (N), rhs's free dims (O).
    perm = list(range(nd - 2))
    dest = {out_spec[0]: nd - 2, out_spec[1]: nd - 1}
    full = []
    rest = iter(perm)
    for d in range(nd):
        full.append(dest[d] if d in dest else next(rest))
    return transpose(out, full)


__all__ = ["ConvDimensionNumbers", "conv_general_dilated", "conv", "conv_with_general_padding",
           "conv_transpose", "conv_dimension_numbers", "conv_general_permutations",
           "padtype_to_pads", "conv_general_shape_tuple", "conv_shape_tuple",
           "conv_transpose_shape_tuple", "conv_general_dilated_patches",
           "conv_general_dilated_local"]
