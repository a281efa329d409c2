"""Contractions, as in `jax.lax`: dot_general (one primitive) and what JAX composes from
it (dot, batch_matmul), with the precision argument they share with convolutions."""
from __future__ import annotations

import numpy as np

from mjax.specs import dtypes
from mjax.tracing.core import at_user_line, aval_of_value, bind, current_trace
from mjax.dialect.ops.structural import DotGeneralOp
from mjax.lax.elementwise import convert_element_type
from mjax.lax.precision import precision_attr
from mjax.lax.sharding import apply_out_sharding, local_contractions_if
from mjax.arrays.sharding_types import out_sharding_given
from mjax.lax.unreduced import local_contractions_on, local_dot_general

# Type aliases JAX exports for annotations.
DotDimensionNumbers = tuple


def _dims(d) -> tuple:
    """A dimension-number entry as a tuple of ints (JAX takes a bare int for one axis)."""
    return (int(d),) if isinstance(d, (int, np.integer)) else tuple(int(x) for x in d)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                *, out_sharding=None):
    """JAX: lax.dot_general. `precision`: a lax.Precision (pair), which XLA's CPU backend
    ignores, or a dot algorithm (mjax.lax.precision), whose types the dot computes in."""
    if out_sharding is not None:
        with out_sharding_given(), local_contractions_if(out_sharding):
            out = dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)
        return apply_out_sharding(out, out_sharding)
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((_dims(lc), _dims(rc)), (_dims(lb), _dims(rb)))
    pet = None if preferred_element_type is None else dtypes.canonicalize_dtype(
        preferred_element_type)
    precision = precision_attr(precision)
    lhs, rhs = _common_operand_dtype(lhs, rhs, convert=pet is None)
    if local_contractions_on() and current_trace() is None:
        out = local_dot_general(lhs, rhs, dn, precision, pet)
        if out is not None:     # (an unreduced result: mjax/lax/unreduced.py)
            return out
    return bind(DotGeneralOp, lhs, rhs, dimension_numbers=dn, precision=precision,
                preferred_element_type=pet)


def _dtype_rank(dt):
    """How JAX's dot_general orders operand dtypes: complex over real, then by exponent
    range, mantissa, bit width, signed over unsigned."""
    dt = np.dtype(dt)
    real = np.dtype(np.float32 if dt == np.complex64 else np.float64) \
        if dtypes.issubdtype(dt, np.complexfloating) else dt
    is_float = dtypes.issubdtype(real, np.floating)
    info = dtypes.finfo(real) if is_float else None
    if dt == np.bool_:
        bits = 1
    elif is_float:
        bits = info.bits
    else:
        bits = dtypes.iinfo(real).bits
    return (dtypes.issubdtype(dt, np.complexfloating), info.maxexp if is_float else -1,
            info.nmant if is_float else -1, bits,
            not dtypes.issubdtype(real, np.unsignedinteger))


def _common_operand_dtype(lhs, rhs, convert: bool = True):
    """Operands of two dtypes, as JAX's dot_general takes them: the result has the one
    that ranks higher (an error where neither does); with `convert` (no preferred
    element type names the result's) both are converted to it (exactly: the other's
    values all fit), else they stay as they are, as in JAX's jaxprs."""
    ld, rd = np.dtype(aval_of_value(lhs).dtype), np.dtype(aval_of_value(rhs).dtype)
    if ld == rd:
        return lhs, rhs
    lr, rr = _dtype_rank(ld), _dtype_rank(rd)
    if lr == rr:
        raise TypeError(at_user_line(f"lax.dot_general argument type error: {ld}, {rd}"))
    out = ld if lr > rr else rd
    if not convert:
        return lhs, rhs
    return (lhs if ld == out else convert_element_type(lhs, out),
            rhs if rd == out else convert_element_type(rhs, out))


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None,
        out_sharding=None):
    """Vector/matrix products of rank-1/2 operands (or dot_general when
    `dimension_numbers` is given). JAX: lax.dot."""
    if dimension_numbers is not None:
        return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type,
                           out_sharding=out_sharding)
    la, ra = aval_of_value(lhs), aval_of_value(rhs)
    if la.ndim not in (1, 2) or ra.ndim not in (1, 2):
        raise TypeError(at_user_line(
            f"dot only supports rank 1 or 2 operands, got shapes {la.shape} and "
            f"{ra.shape}"))
    return dot_general(lhs, rhs, (((la.ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type, out_sharding=out_sharding)


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products batched over the leading dims (equal ranks >= 2). JAX:
    lax.batch_matmul."""
    la, ra = aval_of_value(lhs), aval_of_value(rhs)
    if la.ndim != ra.ndim or la.ndim < 2:
        raise ValueError(at_user_line(f"Arguments to batch_matmul must be at least 2D and "
                                      f"have the same rank, got {la.ndim}D and {ra.ndim}D"))
    n = la.ndim
    batch = tuple(range(n - 2))
    return dot_general(lhs, rhs, (((n - 1,), (n - 2,)), (batch, batch)),
                              precision=precision)
