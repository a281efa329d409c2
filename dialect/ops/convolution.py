"""Convolution: `jaxpr.conv_general_dilated`.

The shape rule is a plain function (`conv_shape`) shared by the verifier, the tracer and
the AD/batching rules. Dimension numbers are JAX's `ConvDimensionNumbers` as a dictionary:
`lhs_spec` = (batch, feature, spatial...), `rhs_spec` = (out feature, in feature,
spatial...), `out_spec` = (batch, feature, spatial...), each a permutation of the dims.
"""
from __future__ import annotations

from mjax.dialect import attributes as A
from mjax.dialect import dot_algorithms
from mjax.dialect.core import JaxprOp
from mjax.dialect.dtype_rules import is_complex, is_float, is_int, is_signed
from mjax.dialect.types import ShapedArray, short_dtype_name

CONV_FIELDS = ("lhs_spec", "rhs_spec", "out_spec")


# ---- shape rules -------------------------------------------------------------------
def dilate_dim(d: int, dilation: int) -> int:
    """Size of a dimension of size d with dilation-1 holes between elements."""
    return 0 if d == 0 else 1 + dilation * (d - 1)


def stride_dim(d: int, window: int, stride: int) -> int:
    """Number of windows of size `window` at `stride` that fit in d (0 if none)."""
    return max((d - window) // stride + 1, 0)


def _check_spec(name: str, spec, rank: int):
    if sorted(spec) != list(range(rank)):
        raise TypeError(f"conv_general_dilated dimension_numbers {name} must be a "
                        f"permutation of range({rank}), got {tuple(spec)}")


def _check_positive(name: str, values, n: int):
    if len(values) != n:
        raise ValueError(f"conv_general_dilated {name} must have {n} entries (one per "
                         f"spatial dimension), got {tuple(values)}")
    if any(v < 1 for v in values):
        raise ValueError(f"conv_general_dilated {name} must be positive, got {tuple(values)}")


def conv_shape(lhs: tuple[int, ...], rhs: tuple[int, ...], *, window_strides, padding,
               lhs_dilation, rhs_dilation, dimension_numbers, feature_group_count=1,
               batch_group_count=1) -> tuple[int, ...]:
    """Result shape of conv_general_dilated. JAX: _conv_general_dilated_shape_rule."""
    if len(lhs) != len(rhs):
        raise ValueError(f"conv_general_dilated lhs and rhs must have the same number of "
                         f"dimensions, but got {lhs} and {rhs}")
    if len(lhs) < 2:
        raise ValueError(f"conv_general_dilated operands must have rank >= 2 (batch and "
                         f"feature dimensions), got shapes {lhs} and {rhs}")
    dn = dimension_numbers
    for name in CONV_FIELDS:
        _check_spec(name, dn[name], len(lhs))
    lhs_spec, rhs_spec, out_spec = dn["lhs_spec"], dn["rhs_spec"], dn["out_spec"]
    n = len(lhs) - 2
    _check_positive("window_strides", window_strides, n)
    _check_positive("lhs_dilation", lhs_dilation, n)
    _check_positive("rhs_dilation", rhs_dilation, n)
    if len(padding) != n or any(len(p) != 2 for p in padding):
        raise ValueError(f"conv_general_dilated padding must be {n} (low, high) pairs, got "
                         f"{tuple(padding)}")
    if feature_group_count < 1:
        raise ValueError(f"conv_general_dilated feature_group_count must be a positive "
                         f"integer, got {feature_group_count}")
    if batch_group_count < 1:
        raise ValueError(f"conv_general_dilated batch_group_count must be a positive "
                         f"integer, got {batch_group_count}")
    if feature_group_count > 1 and batch_group_count > 1:
        raise ValueError(f"At most one of batch_group_count and feature_group_count may be "
                         f"> 1, got batch_group_count={batch_group_count} and "
                         f"feature_group_count={feature_group_count}")
    in_features = lhs[lhs_spec[1]]
    quot, rem = divmod(in_features, feature_group_count)
    if rem:
        raise ValueError(f"conv_general_dilated feature_group_count must divide lhs feature "
                         f"dimension size, but {feature_group_count} does not divide "
                         f"{in_features}")
    if quot != rhs[rhs_spec[1]]:
        raise ValueError(f"conv_general_dilated lhs feature dimension size divided by "
                         f"feature_group_count must equal the rhs input feature dimension "
                         f"size, but {in_features} // {feature_group_count} != "
                         f"{rhs[rhs_spec[1]]} (lhs shape {lhs}, rhs shape {rhs})")
    out_features = rhs[rhs_spec[0]]
    for what, count in (("feature_group_count", feature_group_count),
                        ("batch_group_count", batch_group_count)):
        if out_features % count:
            raise ValueError(f"conv_general_dilated rhs output feature dimension size must "
                             f"be a multiple of {what}, but {out_features} is not a "
                             f"multiple of {count}")
    batch = lhs[lhs_spec[0]]
    if batch % batch_group_count:
        raise ValueError(f"conv_general_dilated batch_group_count must divide lhs batch "
                         f"dimension size, but {batch_group_count} does not divide {batch}")
    spatial = []
    for i in range(n):
        size = dilate_dim(lhs[lhs_spec[2 + i]], lhs_dilation[i])
        lo, hi = padding[i]
        padded = size + lo + hi
        if padded < 0:
            raise ValueError(f"Negative padding is larger than the size of the corresponding "
                             f"dimension: got padding={tuple(padding)} for lhs spatial "
                             f"shape {tuple(lhs[d] for d in lhs_spec[2:])}")
        window = dilate_dim(rhs[rhs_spec[2 + i]], rhs_dilation[i])
        spatial.append(stride_dim(padded, window, window_strides[i]))
    canonical = [batch // batch_group_count, out_features] + spatial
    out = [0] * len(lhs)
    for pos, d in enumerate(out_spec):
        out[d] = canonical[pos]
    return tuple(out)


def conv_result_dtype(lhs: ShapedArray, rhs: ShapedArray, preferred_element_type):
    """The result dtype: the operands' (which must match), or preferred_element_type when
    it is compatible. JAX: _conv_general_dilated_dtype_rule."""
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"conv_general_dilated requires arguments to have the same dtypes, "
                        f"got {short_dtype_name(lhs.dtype)}, {short_dtype_name(rhs.dtype)}")
    pet = preferred_element_type    # (bool operands are JAX's too: _any)
    if pet is None:
        return lhs.dtype
    d = lhs.dtype
    if not (is_int(d) and is_float(pet)):   # (integers to floats: either signedness)
        for kind in (is_int, is_float, is_complex):
            if kind(d) and not kind(pet):
                raise TypeError("Input type is incompatible with `preferred_element_type`. "
                                "The compatible combinations of (input_type, "
                                "preferred_element_type) are (integral, integral), "
                                "(integral, floating), (floating, floating), (complex, "
                                "complex.")
        if is_signed(d) and not is_signed(pet):
            raise TypeError("`preferred_element_type` must have the same signedness as the "
                            "original type.")
    if pet.itemsize < d.itemsize:
        raise TypeError("`preferred_element_type` must not be narrower than the original "
                        "type.")
    return pet


class ConvGeneralDilatedOp(JaxprOp, name="conv_general_dilated"):
    """General n-d convolution with strides, padding, dilations and feature/batch groups.
    JAX: lax.conv_general_dilated_p."""
    num_operands = 2
    attributes = {"window_strides": A.Ints(), "padding": A.Nested(depth=2),
                  "lhs_dilation": A.Ints(), "rhs_dilation": A.Ints(),
                  "dimension_numbers": A.Dict(CONV_FIELDS),
                  "feature_group_count": A.Int(default=1),
                  "batch_group_count": A.Int(default=1),
                  "precision": dot_algorithms.PrecisionKind(default=None),
                  "preferred_element_type": A.DType(default=None)}

    @classmethod
    def infer(cls, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
              dimension_numbers, feature_group_count, batch_group_count, precision,
              preferred_element_type):
        dot_algorithms.check(precision, "conv_general_dilated")  # (an algorithm: unused)
        dtype = conv_result_dtype(lhs, rhs, preferred_element_type)
        shape = conv_shape(lhs.shape, rhs.shape, window_strides=window_strides,
                           padding=padding, lhs_dilation=lhs_dilation,
                           rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
                           feature_group_count=feature_group_count,
                           batch_group_count=batch_group_count)
        return (ShapedArray(shape, dtype),)


__all__ = [n for n in dir() if n.endswith("Op")]
