"""Rules of `jaxpr.dot_general` (dialect/ops/structural.py), together: its lowering (with
dot algorithms and the TPU's mixed-dtype dots), JVP, transpose and batching rules.
JAX: lax.dot_general_p's rules in lax.py."""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect import dot_algorithms
from mjax.dialect.ops import structural as S
from mjax.dialect.types import element_type
from mjax.passes.registry import PassError
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules import batch_util as B
from mjax.passes.rules import hlo as H
from mjax.passes.rules.structural import _out_type, _shift_axes
from mjax.passes.rules.tables import lowering, nan_checked, platform_rules


# ---- lowering ----------------------------------------------------------------------------
_DOT_DIMS: dict = {}   # (context, dimension_numbers) -> #stablehlo.dot attribute


def _dot_dimension_numbers(dimension_numbers) -> ir.Attribute:
    # (a program's dots repeat a few dimension numbers: each attribute is made once)
    (lc, rc), (lb, rb) = dimension_numbers
    key = (ir.Context.current, tuple(lc), tuple(rc), tuple(lb), tuple(rb))
    dn = _DOT_DIMS.get(key)
    if dn is None:
        if len(_DOT_DIMS) >= 1024:
            _DOT_DIMS.clear()
        dn = _DOT_DIMS[key] = hlo.DotDimensionNumbers.get(
            lhs_batching_dimensions=list(lb), rhs_batching_dimensions=list(rb),
            lhs_contracting_dimensions=list(lc), rhs_contracting_dimensions=list(rc))
    return dn


@lowering(S.DotGeneralOp)
def _dot_general_lower(ctx, lhs, rhs, *, dimension_numbers, precision=None,
                       preferred_element_type=None):
    dn = _dot_dimension_numbers(dimension_numbers)
    if dot_algorithms.is_algorithm(precision):
        return _dot_with_algorithm(ctx, lhs, rhs, dn, precision)
    # As JAX's lowering: operands of one dtype go to the dot as they are (the preferred
    # type is the result's: the products are computed in the operands' type); operands
    # of two dtypes are both converted to the result's first, except on a TPU where both
    # are real floats or integers (its dot takes them mixed).
    lhs_aval, rhs_aval = ctx.avals_in
    if lhs_aval.dtype != rhs_aval.dtype and not (platform_rules().mixed_dtype_dots and all(
            H.is_real_number(a.dtype) for a in (lhs_aval, rhs_aval))):
        out_dtype = ctx.avals_out[0].dtype
        lhs, rhs = H.convert(lhs, out_dtype), H.convert(rhs, out_dtype)
    return hlo.dot_general(_out_type(ctx), lhs, rhs, dn,
                           precision_config=H.precision_config(precision))



class UnsupportedAlgorithmError(PassError, ValueError):
    """A dot algorithm the target platform does not compute (JAX: a ValueError)."""


def _dot_with_algorithm(ctx, lhs, rhs, dn, precision):
    """A dot computed by a dot algorithm (dialect/dot_algorithms.py): the operands cast
    to its types, the products accumulated in its type, the result cast to the op's."""
    if platform_rules().dot_algorithm_presets and (
            not isinstance(precision, str) or precision not in dot_algorithms.CPU_PRESETS):
        raise UnsupportedAlgorithmError(
            ctx.op, f"The precision '{dot_algorithms.describe(precision)}' is not "
                    f"supported by dot_general on CPU")
    (lhs_aval, rhs_aval), out = ctx.avals_in, ctx.avals_out[0]
    lt, rt, acc = dot_algorithms.compute_types(precision, lhs_aval.dtype, rhs_aval.dtype,
                                               out.dtype)
    lhs = lhs if lt == lhs_aval.dtype else H.convert(lhs, lt)
    rhs = rhs if rt == rhs_aval.dtype else H.convert(rhs, rt)
    spec = dot_algorithms.hlo_algorithm(precision, lt, rt)
    kwargs = {}
    if spec is not None:
        def ir_type(t):
            return ir.FloatTF32Type.get() if t == "tf32" else element_type(t)
        kwargs["algorithm"] = hlo.DotAlgorithm.get(ir_type(spec[0]), ir_type(spec[1]),
                                                   ir_type(spec[2]), *spec[3:])
    acc = out.dtype if acc is None else acc
    result = hlo.dot_general(H.ttype(out.shape, acc), lhs, rhs, dn,
                             precision_config=ir.ArrayAttr.get(
                                 [hlo.PrecisionAttr.get("DEFAULT")] * 2), **kwargs)
    return result if acc == out.dtype else H.convert(result, out.dtype)


# ---- differentiation rules ---------------------------------------------------------
def _dot_general_jvp_lhs(b, t, x, y, **params):
    return b.dot_general(t, y, **params)


def _dot_general_jvp_rhs(b, t, x, y, **params):
    return b.dot_general(x, t, **params)


AD.defjvp(S.DotGeneralOp, _dot_general_jvp_lhs, _dot_general_jvp_rhs)


def _dot_ct(b, ct, other, own_aval, own_c, other_c, own_b, other_b, ct_own_free,
            ct_other_free, precision=None):
    """Cotangent of one dot_general operand: contract ct with the other operand over the
    other's free dims, then move dims back to the operand's layout."""
    other_aval = AD.aval(other)
    nb = len(own_b)
    other_free = [i for i in range(other_aval.ndim) if i not in other_c and i not in other_b]
    own_free = [i for i in range(own_aval.ndim) if i not in own_c and i not in own_b]
    ct_dtype = AD.aval(ct).dtype
    pet = None if other_aval.dtype == ct_dtype else np.dtype(ct_dtype)
    out = b.dot_general(ct, other, dimension_numbers=((tuple(ct_other_free), tuple(other_free)),
                                                      (tuple(range(nb)), tuple(other_b))),
                        precision=precision, preferred_element_type=pet)
    # out dims: batch, own free (in order), the other's contracting dims (sorted).
    rest = sorted(other_c)
    pos = {}
    for k, d in enumerate(own_b):
        pos[d] = k
    for k, d in enumerate(own_free):
        pos[d] = nb + k
    for k, d in enumerate(own_c):
        pos[d] = nb + len(own_free) + rest.index(other_c[k])
    perm = tuple(pos[d] for d in range(own_aval.ndim))
    if perm != tuple(range(own_aval.ndim)):
        out = b.transpose(out, permutation=perm)
    if AD.aval(out).dtype != own_aval.dtype:
        out = b.convert_element_type(out, new_dtype=own_aval.dtype)
    return out


@AD.transpose_rule(S.DotGeneralOp)
def _dot_general_transpose(b, ct, x, y, *, dimension_numbers, precision=None,
                           preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    if AD.is_linear(x) and AD.is_linear(y):
        raise ValueError("dot_general of two linear values is not linear")
    xa, ya = AD.aval(x), AD.aval(y)
    nb = len(lb)
    n_xfree = xa.ndim - len(lc) - len(lb)
    n_yfree = ya.ndim - len(rc) - len(rb)
    ct_xfree = list(range(nb, nb + n_xfree))
    ct_yfree = list(range(nb + n_xfree, nb + n_xfree + n_yfree))
    if AD.is_linear(x):
        return [_dot_ct(b, ct, y, xa, lc, rc, lb, rb, ct_xfree, ct_yfree, precision), None]
    return [None, _dot_ct(b, ct, x, ya, rc, lc, rb, lb, ct_yfree, ct_xfree, precision)]


# ---- batching ----------------------------------------------------------------------
@B.batch_rule(S.DotGeneralOp)
def _dot_general_batch(b, args, dims, *, dimension_numbers, precision=None,
                       preferred_element_type=None):
    # JAX: _dot_general_batch_rule. Both batched: the batch axes pair up as one more dot
    # batch dim (the first of the result). One batched: its batch axis is one more free dim
    # of that operand, so the other operand is not broadcast; the result has it among
    # that operand's free dims, in order.
    (lhs, rhs), (ld, rd) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers
    lc, lb = _shift_axes(lc, ld), _shift_axes(lb, ld)
    rc, rb = _shift_axes(rc, rd), _shift_axes(rb, rd)
    if ld is not B.NOT_MAPPED and rd is not B.NOT_MAPPED:
        lb, rb, out_d = (ld,) + lb, (rd,) + rb, 0
    elif ld is not B.NOT_MAPPED:
        free = [i for i in range(AD.aval(lhs).ndim) if i not in lc and i not in lb]
        out_d = len(lb) + free.index(ld)
    else:
        n_lhs_free = AD.aval(lhs).ndim - len(lc) - len(lb)
        free = [i for i in range(AD.aval(rhs).ndim) if i not in rc and i not in rb]
        out_d = len(lb) + n_lhs_free + free.index(rd)
    out = b.dot_general(lhs, rhs, dimension_numbers=((lc, rc), (lb, rb)),
                        precision=precision, preferred_element_type=preferred_element_type)
    return [out], [out_d]


# ---- checkify -------------------------------------------------------------------------
nan_checked(S.DotGeneralOp)
