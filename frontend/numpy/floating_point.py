"""Functions of floating-point representation: `signbit`, `copysign`, `ldexp`,
`frexp`, `nextafter`, `spacing`, `modf`, `isposinf`/`isneginf`, `nan_to_num`."""
from __future__ import annotations

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.lax.shapes import fresh as _fresh
from mjax.ad import custom_jvp
from mjax.numpy.arguments import check_arraylike, no_out
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.conversion import asarray, astype
from mjax.numpy.elementwise import (floor_divide, imag, isinf, isnan, logical_or, real, trunc,
                                    where_xy)
from mjax.numpy.promotion import broadcast_arrays, jit_arguments, promote
from mjax.numpy.scalar_types import bool_, finfo


_SAME_WIDTH_INT = {2: _onp.dtype(_onp.int16), 4: _onp.dtype(_onp.int32),
                   8: _onp.dtype(_onp.int64)}


@fused_when_eager
def signbit(x, /):
    """True where the sign bit is set (also for -0.0 and negative NaNs)."""
    (x,) = promote("signbit", x)
    if _dt.issubdtype(x.dtype, _onp.integer):
        return lax.lt(x, _onp.zeros((), x.dtype))   # (a strong constant: a strong result)
    if x.dtype == _onp.bool_:
        return lax.full_like(x, False, bool_)
    if _dt.issubdtype(x.dtype, _onp.complexfloating):
        raise ValueError(f"jax.numpy.signbit is not well defined for {x.dtype}")
    if not _dt.is_float(x.dtype):
        raise TypeError(f"mjax.numpy.signbit: not defined for dtype {x.dtype}")
    bits = lax.bitcast_convert_type(x, _SAME_WIDTH_INT[x.dtype.itemsize])
    # (JAX's: the sign shifted over the whole word, then != 0 as a cast to bool)
    shift = _onp.asarray(8 * x.dtype.itemsize - 1, bits.dtype)
    return lax.convert_element_type(lax.shift_right_arithmetic(bits, shift), _onp.bool_)


@fused_when_eager(traced=(0, 1))
def copysign(x1, x2, /):
    x1, x2 = promote("copysign", *jit_arguments(x1, x2), inexact=True, broadcast=False)
    if _dt.issubdtype(x1.dtype, _onp.complexfloating):
        raise TypeError("mjax.numpy.copysign does not support complex inputs")
    negative = signbit(x2)      # (as JAX's: a scalar x1's |x1| stays scalar)
    return where_xy(negative, lax.neg(lax.abs(x1)), lax.abs(x1))


@fused_when_eager(traced=(0, 1))
def ldexp(x1, x2, /):
    """x1 * 2**x2 for an integer x2, as JAX's: x2 converted to x1's float dtype and added
    to frexp's exponent, so a huge x2 saturates; 0 and infinities come back as they are."""
    check_arraylike("ldexp", x1, x2)
    a1, a2 = asarray(x1), asarray(x2)
    if _dt.issubdtype(a1.dtype, _onp.complexfloating) or _dt.is_inexact(a2.dtype):
        raise ValueError(f"ldexp not supported for input types {(a1.dtype, a2.dtype)}")
    (x1,) = promote("ldexp", x1, inexact=True)
    x2 = lax.convert_element_type(x2, x1.dtype)
    m, e = frexp(x1)
    e = astype(astype(e, x2.dtype) + x2, x1.dtype)
    # (the exponent may overflow by 1 and the result still be finite)
    m = where_xy(e > 0, m * 2, m)
    e = where_xy(e > 0, e - 1, e)
    x = m * (2 ** astype(e, m.dtype))
    return where_xy(logical_or(isinf(x1), x1 == 0), x1, x)


@fused_when_eager
def nextafter(x1, x2, /):
    """The next representable float after x1 towards x2."""
    x1, x2 = promote("nextafter", x1, x2, inexact=True)
    if not _dt.is_float(x1.dtype):
        raise TypeError(f"mjax.numpy.nextafter: not defined for dtype {x1.dtype}")
    itype = _SAME_WIDTH_INT[x1.dtype.itemsize]
    bits = lax.bitcast_convert_type(x1, itype)
    one = lax.full_like(bits, 1)
    zero = lax.full_like(x1, 0)
    # Moving away from zero increments the magnitude bits; towards zero decrements them.
    away = lax.eq(lax.lt(x1, x2), lax.gt(x1, zero))
    stepped = lax.bitcast_convert_type(lax.select(away, lax.add(bits, one), lax.sub(bits, one)),
                                       x1.dtype)
    tiny = lax.bitcast_convert_type(one, x1.dtype)       # smallest subnormal
    from_zero = lax.select(lax.lt(x2, zero), lax.neg(tiny), tiny)
    out = lax.select(lax.eq(x1, zero), from_zero, stepped)
    out = lax.select(lax.eq(x1, x2), x2, out)
    nan = lax.full_like(x1, _onp.nan)
    out = lax.select(lax.or_(lax.ne(x1, x1), lax.ne(x2, x2)), nan, out)
    # (JAX's result is weak when both operands are: the constants above are not.)
    return lax.convert_element_type(out, out.dtype, weak_type=x1.weak_type and x2.weak_type)


def modf(x, /, out=None):
    no_out("modf", out)
    (x,) = promote("modf", x, inexact=True)
    whole = trunc(x)
    return lax.sub(x, whole), whole


def _isposneginf(name, infinity, x, out):
    """x == ±inf for floats (JAX's one comparison), False for integers."""
    no_out(name, out)
    x = asarray(x)
    if _dt.issubdtype(x.dtype, _onp.complexfloating):
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    if _dt.issubdtype(x.dtype, _onp.floating):
        return lax.eq(x, _onp.asarray(infinity, x.dtype))
    return lax.full_like(x, False, dtype=_onp.bool_)


@fused_when_eager
def isposinf(x, /, out=None):
    return _isposneginf("isposinf", _onp.inf, x, out)


@fused_when_eager
def isneginf(x, /, out=None):
    return _isposneginf("isneginf", -_onp.inf, x, out)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = asarray(x)
    if not _dt.is_inexact(x.dtype):
        return _fresh(x)
    if _dt.issubdtype(x.dtype, _onp.complexfloating):
        return lax.complex(nan_to_num(real(x), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = finfo(x.dtype)
    x = where_xy(isnan(x), asarray(nan, x.dtype), x)
    x = where_xy(isposinf(x), asarray(info.max if posinf is None else posinf, x.dtype), x)
    return where_xy(isneginf(x), asarray(info.min if neginf is None else neginf, x.dtype), x)


def spacing(x, /):
    """Distance from x to the next representable number away from zero; JAX's formula
    (float16 steps towards +inf, as NumPy's; a zero step is the smallest subnormal).
    JAX: jnp.spacing."""
    check_arraylike("spacing", x)
    (x,) = promote("spacing", x, inexact=True)
    if _dt.issubdtype(x.dtype, _onp.complexfloating):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    # (lax._const's infinity: weakly typed beside a weakly typed scalar)
    weak = getattr(x, "weak_type", False) and x.ndim == 0
    inf = lax.full_like(x, _onp.inf) if weak else asarray(_onp.inf, x.dtype)
    if x.dtype == _onp.float16:
        return nextafter(x, inf) - x
    out = nextafter(x, copysign(inf, x)) - x
    tiny = _onp.asarray(finfo(x.dtype).smallest_subnormal, x.dtype)[()]
    return where_xy(out == 0, copysign(tiny, x), out)


@fused_when_eager
def frexp(x, /):
    """(mantissa, exponent) with x = mantissa * 2**exponent and |mantissa| in [0.5, 1)
    (0, inf and NaN come back as is, with exponent 0). JAX: jnp.frexp."""
    x = asarray(x)
    if _dt.issubdtype(x.dtype, _onp.complexfloating):
        raise TypeError("frexp does not support complex-valued inputs")
    if not _dt.is_inexact(x.dtype):
        x = x.astype(_dt.default_float())
    return _frexp(x)


@custom_jvp
def _frexp(x):
    return _frexp_bits(x)


@_frexp.defjvp
def _frexp_jvp(primals, tangents):
    # The mantissa is x scaled by 2**-exponent, so its derivative is that scale (the bit
    # manipulation below has none); the integer exponent has a float0 tangent.
    (x,), (t,) = primals, tangents
    x = asarray(x)    # (jvp's primal of a Python float is that float)
    mantissa, exponent = _frexp(x)
    scale = lax.exp2(lax.neg(exponent.astype(x.dtype)))
    return (mantissa, exponent), (t * scale, _onp.zeros(exponent.shape, _dt.float0))


def _frexp_bits(x):
    """JAX's algorithm, op for op, so the platform's handling of subnormals is the same:
    a value below the smallest normal is scaled up by 2**nmant first (where the platform
    flushes subnormals to zero, as XLA's CPU does, that product is 0 and the answer is
    JAX's 0.5 * 2**(minexp - nmant - 1); a bfloat16 subnormal even compares equal to 0
    there and comes back as it is), then the exponent field is read off and replaced by
    the bias - 1 (|mantissa| in [0.5, 1))."""
    info = _dt.finfo(x.dtype)
    idt = _onp.dtype(f"int{x.dtype.itemsize * 8}")
    nmant, field = info.nmant, (1 << info.nexp) - 1
    bias = 1 - info.minexp

    def i(v):
        return _onp.array(v, idt)
    small = lax.lt(lax.abs(x), _onp.array(info.tiny, x.dtype))
    scaled = where_xy(small, lax.mul(x, _onp.array(1 << nmant, x.dtype)), x)
    bits = lax.bitcast_convert_type(scaled, idt)
    exponent = where_xy(small, i(-nmant), i(0)) + (
        (lax.shift_right_arithmetic(bits, i(nmant)) & i(field)) - i(bias - 1))
    bits = (bits & i(~(field << nmant))) | i((bias - 1) << nmant)
    mantissa = lax.bitcast_convert_type(bits, x.dtype)
    special = logical_or(logical_or(isinf(x), isnan(x)), x == 0)
    return (where_xy(special, x, mantissa),
            where_xy(special, i(0), exponent).astype(_onp.int32))


def _zero_like_const(i):
    # (JAX's lax._const: weakly typed only beside a weakly typed scalar)
    if getattr(i, "weak_type", False) and _onp.ndim(i) == 0:
        return lax.full_like(i, 0)
    return lax.full((), 0, i.dtype)


def isreal(x):
    i = imag(x)
    return lax.eq(i, _zero_like_const(i))


def iscomplex(x):
    i = imag(x)
    return lax.ne(i, _zero_like_const(i))
