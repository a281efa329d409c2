"""Elementwise math (NumPy's ufuncs as plain functions): arithmetic, comparisons,
bitwise and logical operations, exponentials, trigonometry, rounding, `clip`, `isclose`.

The binary ones JAX exposes as `jnp.ufunc` objects (add, multiply, ...) get their
reduce/accumulate/outer/at methods in `ufuncs.py`; `where_xy` is `jnp.where`'s
three-argument form (the public `where` is in `selection.py`).
"""
from __future__ import annotations

import builtins
import functools
import math
import operator
import numpy as _onp
from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.lax import prng as _prng
from mjax.lax.shapes import fresh as _fresh
from mjax.ad import custom_jvp
from mjax.tracing.registration import pure_of_avals
from mjax.tracing.core import Tracer, aval_of_value
from mjax.dialect import ShapedArray as _ShapedArray
from mjax.dialect.ops import elementwise as _ops
from mjax.arrays.eager_fast import fast_op
from mjax.numpy.arguments import check_arraylike, is_array, no_out
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.conversion import asarray, astype, fused_values
from mjax.numpy.promotion import (broadcast_shapes, broadcast_to, KEEP_ANY, KEEP_INEXACT, promote,
                                  jit_arguments, promote_ranks, scalar_learner, unchanged_pair)
from mjax.numpy.scalar_types import bool_, iscomplexobj, pi, uint8


_BOOL = _onp.dtype(bool)   # (comparing with a dtype is cheaper than with np.bool_)
# lax functions that are `bind(<op>, x)` and nothing else (their optional keywords unused)
_ONE_OP = {lax.neg: _ops.NegOp, lax.sign: _ops.SignOp, lax.exp: _ops.ExpOp,
           lax.exp2: _ops.Exp2Op, lax.expm1: _ops.Expm1Op, lax.log: _ops.LogOp,
           lax.log1p: _ops.Log1pOp, lax.sqrt: _ops.SqrtOp, lax.cbrt: _ops.CbrtOp,
           lax.sin: _ops.SinOp, lax.cos: _ops.CosOp, lax.tan: _ops.TanOp,
           lax.asin: _ops.AsinOp, lax.acos: _ops.AcosOp, lax.atan: _ops.AtanOp,
           lax.sinh: _ops.SinhOp, lax.cosh: _ops.CoshOp, lax.tanh: _ops.TanhOp,
           lax.asinh: _ops.AsinhOp, lax.acosh: _ops.AcoshOp, lax.atanh: _ops.AtanhOp,
           lax.square: _ops.SquareOp}


def _unary(name, lax_fn, inexact=False, doc=None, keep=None):
    keep = keep or (KEEP_INEXACT if inexact else KEEP_ANY)

    def f(x, /):
        av = getattr(x, "aval", None)
        if type(av) is not _ShapedArray or av.weak_type or av.dtype not in keep:
            check_arraylike(name, x)
            (x,) = promote(name, x, inexact=inexact)
        return lax_fn(x)
    f.__name__ = name
    f.__doc__ = doc or f"Elementwise {name} (NumPy semantics). JAX: jax.numpy.{name}."
    op = _ONE_OP.get(lax_fn)
    # (Operands that promotion leaves alone: `bind(op, x)`, its cache hit in C; others are
    # converted in one program with the op, as by JAX's jitted ufuncs: arctan(13) rounds so.)
    f = fused_values(f, inexact_direct=True) if inexact else f
    return f if op is None else pure_of_avals(fast_op(f, op, keep))


def _binary(name, lax_fn, inexact=False, op=None, keep=None):
    def f(x1, x2, /):
        if not unchanged_pair(getattr(x1, "aval", None), getattr(x2, "aval", None),
                               inexact):
            check_arraylike(name, x1, x2)
            x1, x2 = promote(name, x1, x2, inexact=inexact, scalar_consts=True)
        return lax_fn(x1, x2)
    f.__name__ = name
    f.__doc__ = f"Elementwise {name} (NumPy semantics). JAX: jax.numpy.{name}."
    if op is None:
        return f
    # (Arrays of one non-weak aval with a dtype in keep, or such an array and a Python
    # int/float after it: the call is `bind(op, x1, x2)`, whose cache hit eager_fast runs
    # in C when built.)
    return pure_of_avals(fast_op(f, op, keep, scalar_learner(name)))


_ARITH = KEEP_ANY - {_BOOL}                                 # (+ and * are or/and on bools)
_ORDER = frozenset(d for d in KEEP_ANY if d.kind != "c")    # (complex: lexicographic)
add = _binary("add", lambda x, y: lax.or_(x, y) if x.dtype == _BOOL else lax.add(x, y),
              op=_ops.AddOp, keep=_ARITH)
subtract = _binary("subtract", lax.sub, op=_ops.SubOp, keep=_ARITH)
_multiply_ops = _binary("multiply",
                        lambda x, y: lax.and_(x, y) if x.dtype == _BOOL else lax.mul(x, y))
_multiply_fused = fused_when_eager(_multiply_ops)


def _dtype_of(x):
    av = getattr(x, "aval", None)
    return getattr(av, "dtype", None) if av is not None else getattr(x, "dtype", None)


def _is_array_or_ndarray(x):
    return is_array(x) or isinstance(x, _onp.ndarray)


def _multiply(x1, x2, /):
    # A bool array times a number is one program when eager, as in JAX (whose
    # jnp.multiply is a jit): XLA may compile x * convert(b) as a select, so that
    # -0.0 * False and inf * False are 0.0 there, where op by op gives -0.0 and nan.
    d1, d2 = _dtype_of(x1), _dtype_of(x2)
    if (d1 == _BOOL) != (d2 == _BOOL) and _is_array_or_ndarray(x1 if d1 == _BOOL else x2):
        return _multiply_fused(x1, x2)
    return _multiply_ops(x1, x2)


_multiply.__name__ = "multiply"
_multiply.__doc__ = "Elementwise multiply (NumPy semantics). JAX: jax.numpy.multiply."
multiply = pure_of_avals(fast_op(_multiply, _ops.MulOp, _ARITH, scalar_learner("multiply")))
true_divide = divide = fused_when_eager(_binary("true_divide", lax.div, inexact=True))
maximum = _binary("maximum", lax.max, op=_ops.MaxOp, keep=KEEP_ANY)
minimum = _binary("minimum", lax.min, op=_ops.MinOp, keep=KEEP_ANY)
arctan2 = fused_values(_binary("arctan2", lax.atan2, inexact=True))
equal = _binary("equal", lax.eq, op=_ops.EqOp, keep=KEEP_ANY)
not_equal = _binary("not_equal", lax.ne, op=_ops.NeOp, keep=KEEP_ANY)


def _lexicographic(lax_fn):
    """An ordering comparison that orders complex numbers by real part, then imaginary
    part (as jax.numpy does; lax's comparisons reject complex operands)."""
    def compare(x1, x2):
        if not _dt.issubdtype(x1.dtype, _onp.complexfloating):
            return lax_fn(x1, x2)
        r1, r2 = lax.real(x1), lax.real(x2)
        return lax.select(lax.eq(r1, r2), lax_fn(lax.imag(x1), lax.imag(x2)), lax_fn(r1, r2))
    return compare


less = _binary("less", _lexicographic(lax.lt), op=_ops.LtOp, keep=_ORDER)
less_equal = _binary("less_equal", _lexicographic(lax.le), op=_ops.LeOp, keep=_ORDER)
greater = _binary("greater", _lexicographic(lax.gt), op=_ops.GtOp, keep=_ORDER)
greater_equal = _binary("greater_equal", _lexicographic(lax.ge), op=_ops.GeOp, keep=_ORDER)
_BITS = frozenset(d for d in KEEP_ANY if d.kind in "biu")   # (bitwise ops' dtypes)
bitwise_and = _binary("bitwise_and", lax.and_, op=_ops.AndOp, keep=_BITS)
bitwise_or = _binary("bitwise_or", lax.or_, op=_ops.OrOp, keep=_BITS)
bitwise_xor = _binary("bitwise_xor", lax.xor, op=_ops.XorOp, keep=_BITS)


def _bool_as_int(lax_fn):
    """lax_fn on promoted operands, booleans first as the default integer (JAX's shifts
    take bools: promote_args_numeric)."""
    def f(a, b):
        if a.dtype == _BOOL:
            a, b = (lax.convert_element_type(v, _dt.default_int()) for v in (a, b))
        return lax_fn(a, b)
    return f


left_shift = _binary("left_shift", _bool_as_int(lax.shift_left), op=_ops.ShiftLeftOp,
                     keep=_BITS - {_BOOL})


@_bool_as_int
def _right_shift(a, b):
    if _dt.issubdtype(a.dtype, _onp.unsignedinteger):
        return lax.shift_right_logical(a, b)
    return lax.shift_right_arithmetic(a, b)


right_shift = _binary("right_shift", _right_shift)


def _logical(name, fn):
    # (x != 0 for each promoted non-bool operand, as JAX's: its zero is weakly typed only
    # beside a weakly typed scalar, so only weak scalars give weakly typed bools, and
    # int32[3] with 2.5 a strong one)
    def zero(a):
        weak = getattr(a, "weak_type", False) and _onp.ndim(a) == 0
        return lax.full_like(a, 0) if weak else lax.full((), 0, asarray(a).dtype)

    def f(*args):
        return fn(*[lax.ne(a, zero(a)) if asarray(a).dtype != _onp.bool_ else asarray(a)
                    for a in promote(name, *args)])
    f.__name__ = name
    return f


logical_and = _logical("logical_and", lax.and_)
logical_or = _logical("logical_or", lax.or_)
logical_xor = _logical("logical_xor", lax.xor)
_logical_not = _logical("logical_not", lax.not_)


def logical_not(x, /):
    return _logical_not(x)


negative = _unary("negative", lax.neg)
positive = _unary("positive", _fresh)
sign = _unary("sign", lax.sign)


def _integral_kept(name, fn):
    """fn for floats; integers and bools as they are; complex raises (JAX's lax op does)."""
    def f(x):
        if _dt.issubdtype(x.dtype, _onp.complexfloating):
            raise TypeError(f"{name} does not accept dtype {x.dtype}. Accepted dtypes are "
                            "subtypes of floating.")
        return fn(x) if _dt.is_float(x.dtype) else _fresh(x)
    return _unary(name, f)


floor = _integral_kept("floor", lax.floor)
ceil = _integral_kept("ceil", lax.ceil)
_trunc = _integral_kept("trunc", lambda x: lax.select(lax.lt(x, lax.full_like(x, 0)),
                                                      lax.ceil(x), lax.floor(x)))


@fused_when_eager
def trunc(x):
    """Rounds toward zero elementwise. JAX: jnp.trunc."""
    return _trunc(x)




def _rint(x):
    # As JAX: integers and bools become the default float; complex rounds each part.
    if not _dt.is_inexact(x.dtype):
        return lax.convert_element_type(x, _dt.default_float())
    if _dt.issubdtype(x.dtype, _onp.complexfloating):
        return lax.complex(lax.round(lax.real(x), 1), lax.round(lax.imag(x), 1))
    return lax.round(x, 1)


rint = _unary("rint", _rint)
exp = _unary("exp", lax.exp, True)
exp2 = _unary("exp2", lax.exp2, True)
expm1 = _unary("expm1", lax.expm1, True)
log = _unary("log", lax.log, True)
log1p = _unary("log1p", lax.log1p, True)
def _log_scaled(scale):
    """log(x) scaled by scale(real dtype), part by part for complex x (so the imaginary
    part is divided by a real, not a complex, logarithm). The constants are strongly
    typed, as JAX's are, so a Python scalar's result is strong."""
    def fn(x):
        r = lax.log(x)
        if not _dt.issubdtype(x.dtype, _onp.complexfloating):
            return scale(r)
        return lax.complex(scale(lax.real(r)), scale(lax.imag(r)))
    return fn


# log2 divides by log(2) computed at run time; log10 multiplies by 1/log(10) rounded to
# the dtype: the roundings of JAX's jnp, which results are compared with bit for bit.
log2 = fused_values(_unary("log2", _log_scaled(
    lambda v: lax.div(v, lax.log(lax.full((), 2, v.dtype)))), True))
log10 = fused_values(_unary("log10", _log_scaled(
    lambda v: lax.mul(v, lax.full((), 1 / math.log(10), v.dtype))), True))
sqrt = _unary("sqrt", lax.sqrt, True)
cbrt = _unary("cbrt", lax.cbrt, True)
sin = _unary("sin", lax.sin, True)
cos = _unary("cos", lax.cos, True)
tan = _unary("tan", lax.tan, True)
arcsin = _unary("arcsin", lax.asin, True)
arccos = _unary("arccos", lax.acos, True)
arctan = _unary("arctan", lax.atan, True)
sinh = _unary("sinh", lax.sinh, True)
cosh = _unary("cosh", lax.cosh, True)
tanh = _unary("tanh", lax.tanh, True)
arcsinh = _unary("arcsinh", lax.asinh, True)
arccosh = _unary("arccosh", lax.acosh, True)
arctanh = _unary("arctanh", lax.atanh, True)
def _isfinite(x):
    if _dt.issubdtype(x.dtype, _onp.complexfloating):
        return lax.and_(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.is_finite(x) if _dt.is_float(x.dtype) else lax.full_like(x, True, bool_)


isfinite = _unary("isfinite", _isfinite)
isnan = _unary("isnan", lambda x: lax.ne(x, x))
def _isinf(x):
    if _dt.issubdtype(x.dtype, _onp.complexfloating):
        # (either part infinite, a NaN in the other included: |nan + inf j| can be NaN)
        return lax.or_(_isinf(lax.real(x)), _isinf(lax.imag(x)))
    if not _dt.is_inexact(x.dtype):
        return lax.full_like(x, False, bool_)
    return lax.eq(lax.abs(x), lax.full((), _onp.inf, x.dtype))  # (strong, as JAX's)


isinf = fused_when_eager(_unary("isinf", _isinf))
def _square(x):
    # (JAX's promote_args_numeric: a bool is squared as int32, under x64 too)
    return lax.square(lax.convert_element_type(x, _onp.int32) if x.dtype == _BOOL else x)


_ONE_OP[_square] = _ops.SquareOp   # (on the dtypes below: the op itself)
square = _unary("square", _square, keep=KEEP_ANY - {_BOOL})
reciprocal = fused_when_eager(_unary("reciprocal", lambda x: lax.div(lax.full_like(x, 1), x), True))
conjugate = conj = _unary("conjugate", lambda x: lax.conj(x) if _dt.issubdtype(
    x.dtype, _onp.complexfloating) else _fresh(x))
real = _unary("real", lambda x: lax.real(x) if _dt.issubdtype(x.dtype, _onp.complexfloating)
              else _fresh(x))
imag = _unary("imag", lambda x: lax.imag(x) if _dt.issubdtype(x.dtype, _onp.complexfloating)
              else lax.full_like(x, 0))
deg2rad = radians = _unary("deg2rad", lambda x: lax.mul(x, lax.full_like(x, pi / 180)), True)
rad2deg = degrees = _unary("rad2deg", lambda x: lax.mul(x, lax.full_like(x, 180 / pi)), True)


def abs(x, /):  # noqa: A001
    (x,) = promote("abs", x)
    if x.dtype == _onp.bool_ or _dt.issubdtype(x.dtype, _onp.unsignedinteger):
        return _fresh(x)    # (JAX's is jitted: a new value, under vmap too)
    return lax.abs(x)


absolute = abs


def invert(x, /):
    (x,) = promote("invert", x)
    return lax.not_(x)


bitwise_not = bitwise_invert = invert


@fused_when_eager   # (one program, as JAX's: XLA multiplies by 1 / 10**decimals)
def round(a, decimals=0, out=None):  # noqa: A001
    no_out("round", out)
    (a,) = promote("round", a)
    decimals = operator.index(decimals)
    if _dt.issubdtype(a.dtype, _onp.integer):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return _fresh(a)
    if decimals > math.log10(float(_dt.finfo(a.dtype).max)):  # (bool: finfo raises)
        return _fresh(a)  # beyond the dtype's precision

    def round_real(x):
        if decimals == 0:
            return lax.round(x, 1)
        # float16 scales in float32, as JAX does (the scaled value would round badly).
        wide = lax.convert_element_type(x, _onp.float32) if x.dtype == _onp.float16 else x
        factor = lax.full_like(wide, 10.0 ** decimals)
        out = lax.div(lax.round(lax.mul(wide, factor), 1), factor)
        return lax.convert_element_type(out, x.dtype) if x.dtype != wide.dtype else out
    if _dt.issubdtype(a.dtype, _onp.complexfloating):
        return lax.complex(round_real(lax.real(a)), round_real(lax.imag(a)))
    return round_real(a)


around = round


def _numeric(fname, x1, x2, promoter=promote):
    """Promoted operands, booleans as int32 under any x64 (JAX's promote_args_numeric)."""
    x1, x2 = promoter(fname, x1, x2)
    if x1.dtype == _onp.bool_:
        x1, x2 = x1.astype(_onp.int32), x2.astype(_onp.int32)
    return x1, x2


def _nonzero(x2):
    """An integer divisor with its zeros replaced by ones."""
    return lax.select(lax.eq(x2, lax.full_like(x2, 0)), lax.full_like(x2, 1), x2)


def _float_divmod(x1, x2):
    # As CPython's float_divmod (and JAX): the quotient is exact (x1 - mod) / x2, rounded,
    # so signed zeros, infinities and NaNs come out as in JAX.
    mod = lax.rem(x1, x2)
    zero = _onp.zeros((), mod.dtype)
    corrected = where_xy(lax.eq(x2, zero), x1, lax.sub(x1, mod))    # (JAX's _where)
    div = lax.div(corrected, x2)
    fix = lax.and_(lax.ne(mod, zero), lax.ne(lax.sign(x2), lax.sign(mod)))
    mod = lax.select(fix, lax.add(mod, x2), mod)
    div = lax.select(fix, lax.sub(div, lax.full_like(div, 1)), div)
    return lax.round(div), mod     # (away from zero, as JAX)


@fused_when_eager(traced=(0, 1))
def floor_divide(x1, x2, /):
    x1, x2 = _numeric("floor_divide", x1, x2, promote_ranks)   # (scalars stay: JAX's)
    if _dt.issubdtype(x1.dtype, _onp.unsignedinteger):
        return lax.div(x1, x2)
    if _dt.issubdtype(x1.dtype, _onp.integer):
        # Integer division rounds toward zero; numpy rounds toward -inf.
        q = lax.div(x1, x2)
        fix = lax.and_(lax.ne(lax.sign(x1), lax.sign(x2)),
                       lax.ne(lax.rem(x1, x2), _onp.zeros((), x1.dtype)))
        return lax.select(fix, lax.sub(q, lax.full_like(q, 1)), q)
    if _dt.issubdtype(x1.dtype, _onp.complexfloating):
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x1, x2)[0]


@fused_when_eager(traced=(0, 1))
def remainder(x1, x2, /):
    """x1 mod x2 with the sign of x2 (NumPy's %); as JAX's, a scalar divisor stays one."""
    x1, x2 = _numeric("remainder", x1, x2, promote_ranks)
    zero = _onp.zeros((), x1.dtype)
    if _dt.issubdtype(x1.dtype, _onp.integer):
        x2 = _nonzero(x2)    # (an integer x % 0 is 0, as in JAX)
    r = lax.rem(x1, x2)
    nonzero, neg = lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(x2, zero))
    return lax.select(lax.and_(neg, nonzero), lax.add(r, x2), r)


mod = remainder


@fused_when_eager(traced=(0, 1))
def fmod(x1, x2, /):
    x1, x2 = promote("fmod", x1, x2)
    if _dt.issubdtype(x1.dtype, _onp.integer):
        x2 = _nonzero(x2)    # (an integer fmod(x, 0) is 0, as in JAX; bools are not)
    if x1.dtype == _BOOL:   # (int32, as JAX's to_numeric_dtype)
        x1, x2 = x1.astype(_onp.int32), x2.astype(_onp.int32)
    return lax.rem(x1, x2)


@fused_when_eager(traced=(0, 1))
def divmod(x1, x2, /):  # noqa: A001
    x1, x2 = _numeric("divmod", x1, x2)
    if _dt.issubdtype(x1.dtype, _onp.integer):
        return floor_divide(x1, x2), remainder(x1, x2)
    return _float_divmod(x1, x2)


def _static_int_exponent(x2):
    """x2 as a Python int when it is a concrete integer scalar (a Python int or bool, a
    NumPy integer scalar or 0-d array, a 0-d Array): JAX's power then binds integer_pow."""
    if isinstance(x2, Tracer):
        return None
    if isinstance(x2, (int, _onp.integer, _onp.bool_)):
        return operator.index(x2)
    if getattr(x2, "shape", None) == () and _dt.issubdtype(getattr(x2, "dtype", None),
                                                            _onp.integer):
        try:
            return operator.index(x2)
        except TypeError:
            return None
    return None


def power(x1, x2, /):
    """x1 ** x2; a concrete integer scalar exponent (NumPy's and mjax's 0-d integer arrays
    included) becomes integer_pow, as in JAX."""
    y = _static_int_exponent(x2)
    if y is None:
        # Python numbers are arguments of JAX's jitted _power, not constants: XLA
        # simplifies a constant exponent (a TPU's 3 ** 1.5 came out an ulp off JAX's).
        return _power(*(asarray(v) if type(v) in (int, float, complex) else v
                        for v in (x1, x2)))
    return _power_static(x1, y)


@fused_when_eager
def _power(x1, x2):
    # (x2 a Python int here, as the fused call passes static arguments: integer_pow)
    y = _static_int_exponent(x2)
    return _power_static(x1, y) if y is not None else _power_arrays(x1, x2)


def _power_static(x1, y):
    (x1,) = _bool_as_int(*promote("power", x1))
    if not _dt.issubdtype(x1.dtype, _onp.inexact) and y < 0:
        aval = aval_of_value(x1)
        shape = ",".join(map(str, aval.shape))
        raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow("
                        f"{'~' if aval.weak_type else ''}{_onp.dtype(aval.dtype).name}"
                        f"[{shape}], {y})")
    return lax.integer_pow(x1, y)


def _power_arrays(x1, x2):
    # (JAX's weak types: an integer result is built on strongly typed constants, so it is
    # strong; an inexact base with an integer exponent is raised to it by lax.pow, weak
    # only when both are)
    int_exponent = _dt.issubdtype(aval_of_value(x2).dtype, _onp.integer) and \
        _dt.is_inexact(aval_of_value(x1).dtype)     # (JAX's case: an inexact base)
    both_weak = _weak_input(x1) and _weak_input(x2)
    x1, x2 = _bool_as_int(*promote("power", x1, x2))
    if _dt.issubdtype(x1.dtype, _onp.integer):
        out = _integer_power(x1, x2)
        return _strong(out) if _weak_input(out) else out
    out = lax.pow(x1, x2)
    return _strong(out) if int_exponent and not both_weak and _weak_input(out) else out


def _bool_as_int(*xs):
    """Booleans raised to powers as int32 (under x64 too), as JAX's numeric promotion."""
    return [lax.convert_element_type(x, _onp.int32) if x.dtype == _onp.bool_ else x
            for x in xs]


def _integer_power(x, y):
    """Square-and-multiply over the low 6 bits of an integer array exponent, as JAX
    computes integer ** integer (any base above 1 overflows past 2**6; a negative exponent
    reads as its low bits, so the values are JAX's). pow(0, y) is 0 for y != 0."""
    zero, one = lax.full_like(y, 0), lax.full_like(y, 1)
    acc = lax.select(lax.and_(lax.eq(x, zero), lax.ne(y, zero)), zero, one)
    for _ in range(6):
        acc = lax.select(lax.ne(lax.and_(y, one), zero), lax.mul(acc, x), acc)
        x = lax.mul(x, x)
        y = lax.shift_right_logical(y, one)
    return acc


@fused_when_eager(traced=(0, 1))
def float_power(x1, x2, /):
    x1, x2 = promote("float_power", x1, x2, inexact=True)
    return lax.pow(x1, x2)


def _strong(x):
    """x without its weak type: where JAX's function builds its result from strongly
    typed constants, its result is strong even for weak operands."""
    return lax.convert_element_type(x, x.dtype)


def _weak_input(x) -> bool:
    """Whether x is weakly typed: a Python scalar, or an array or tracer of weak type.
    (A Python bool counts: these functions are jits in JAX, whose Python-scalar
    arguments, bools included, are weak; aval_of_value(True) is not.)"""
    if type(x) in (bool, int, float, complex):
        return True
    return bool(getattr(getattr(x, "aval", None), "weak_type", False))


def _weak_if_all_weak(out, *inputs):
    """`out`, strong unless every input is weak: JAX's hypot, logaddexp2, gcd and lcm
    mix their operands with strongly typed values, so an integer or strong array among
    the inputs makes the result strong even where promotion alone gives a weak type."""
    if all(map(_weak_input, inputs)):
        return out
    return _strong(out) if _weak_input(out) else out


@fused_when_eager(traced=(0, 1))
def hypot(x1, x2, /):
    """sqrt(x1**2 + x2**2) without overflow: max * sqrt(1 + (min/max)**2), inf where either
    is inf (even with a NaN: IEEE's and NumPy's hypot), JAX's formula op for op so results
    agree to the bit. Complex inputs raise ValueError, as in JAX."""
    y1, y2 = promote("hypot", x1, x2, inexact=True)
    if _dt.issubdtype(y1.dtype, _onp.complexfloating):
        raise ValueError("jnp.hypot is not well defined for complex-valued inputs. Please "
                         "convert to real values first, such as by using abs(x)")
    y1, y2 = lax.abs(y1), lax.abs(y2)
    inf = lax.full_like(y1, _onp.inf)
    any_inf = lax.or_(lax.eq(y1, inf), lax.eq(y2, inf))
    big, small = lax.max(y1, y2), lax.min(y1, y2)
    zero = lax.eq(big, lax.full_like(big, 0))
    ratio = lax.div(small, lax.select(zero, lax.full_like(big, 1), big))
    scaled = lax.mul(big, lax.sqrt(lax.add(lax.full_like(big, 1), lax.square(ratio))))
    # (JAX's final infinity is lax._const's: weak beside a weak scalar only, so a weak
    # array's result is strong and so are its cotangents)
    if not (getattr(scaled, "weak_type", False) and scaled.ndim == 0):
        inf = lax.full(scaled.shape, _onp.inf, scaled.dtype)
    return lax.select(any_inf, inf, lax.select(zero, big, scaled))


def logaddexp(x1, x2, /):
    x1, x2 = promote_ranks("logaddexp", x1, x2, inexact=True)
    m = lax.max(x1, x2)
    if _dt.issubdtype(m.dtype, _onp.complexfloating):
        # amax + log1p(exp(x1 + x2 - 2 amax)), the phase wrapped into [-pi, pi] (as JAX)
        out = lax.add(m, lax.log1p(lax.exp(lax.sub(lax.add(x1, x2), lax.add(m, m)))))
        return lax.complex(lax.real(out), _wrap_phase(lax.imag(out)))
    return _logaddexp_real(x1, x2)


@custom_jvp
def _logaddexp_real(x1, x2):
    """max + log1p(exp(-|x1 - x2|)); x1 + x2 where the difference is NaN (a NaN, or
    infinities of one sign). JAX's formula, so results agree to the bit."""
    amax, delta = lax.max(x1, x2), lax.sub(x1, x2)       # (in JAX's order)
    nan, both = lax.ne(delta, delta), lax.add(x1, x2)
    return lax.select(nan, both, lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta))))))


@_logaddexp_real.defjvp
def _logaddexp_real_jvp(primals, tangents):
    # d/dx_i = exp(x_i - out): the softmax weights, +inf read as 0 (so inf - inf gives
    # weight 1, not NaN), as JAX's rule; the formula's own derivative is wrong at x1 == x2.
    (x1, x2), (t1, t2) = primals, tangents
    out = _logaddexp_real(x1, x2)

    def no_pos_inf(v):
        return lax.select(lax.eq(v, lax.full_like(v, _onp.inf)), lax.full_like(v, 0), v)
    weight = [lax.exp(lax.sub(no_pos_inf(x), no_pos_inf(out))) for x in (x1, x2)]
    return out, lax.add(lax.mul(t1, weight[0]), lax.mul(t2, weight[1]))


def _lax_const(x, v):
    """JAX's lax._const: v of x's dtype, weakly typed only beside a weakly typed scalar."""
    if getattr(x, "weak_type", False) and _onp.ndim(x) == 0:
        return lax.full_like(x, v)
    return lax.full(_onp.shape(x), v, x.dtype)


def _wrap_phase(x, a=_onp.pi):
    """x wrapped into [-a, a) (JAX's _wrap_between, its constants lax._const's: a Python
    complex's logaddexp is weak)."""
    pi, two_pi = _lax_const(x, a), _lax_const(x, 2 * a)
    rem = lax.rem(lax.add(x, pi), two_pi)
    rem = lax.select(lax.lt(rem, _lax_const(x, 0)), lax.add(rem, two_pi), rem)
    return lax.sub(rem, pi)


def fmax(x1, x2):
    # As a select, as JAX's: on ties (and -0 vs 0) x2 is taken, gradients included;
    # complex numbers compare lexicographically.
    x1, x2 = promote("fmax", x1, x2)
    return where_xy(logical_or(greater(x1, x2), isnan(x2)), x1, x2)


def fmin(x1, x2):
    x1, x2 = promote("fmin", x1, x2)
    return where_xy(logical_or(less(x1, x2), isnan(x2)), x1, x2)


@fused_when_eager(traced=(0, 1))
def heaviside(x1, x2, /):
    weak = _weak_input(x1)
    x1, x2 = promote("heaviside", *jit_arguments(x1, x2), inexact=True, broadcast=False)
    # (JAX's constants take x1's type: weak when x1 was weak, so the result is weak when
    # x1 and the promotion are)
    zero, one = (lax.full((), v, x1.dtype) for v in (0, 1))
    if weak:
        zero, one = (lax.convert_element_type(c, c.dtype, weak_type=True) for c in (zero, one))
    # x1 == 0 (either sign) gives x2; a NaN x1 stays NaN, as in JAX.
    return where_xy(lax.lt(x1, lax.full_like(x1, 0)), zero, where_xy(
        lax.gt(x1, lax.full_like(x1, 0)), one, where_xy(lax.ne(x1, x1), x1, x2)))


@fused_when_eager
def sinc(x, /):
    (x,) = promote("sinc", x, inexact=True)
    pix = lax.mul(x, lax.full_like(x, pi))
    is_zero = lax.eq(x, lax.full_like(x, 0))
    safe = lax.select(is_zero, lax.full_like(x, 1), pix)
    return lax.select(is_zero, _sin_over_x_at_zero(0, pix), lax.div(lax.sin(safe), safe))


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def _sin_over_x_at_zero(k, x):
    """The k-th derivative of sin(t)/t at t = 0 (in x's shape and dtype): 0 for odd k,
    (-1)^(k/2) / (k + 1) for even k. Its JVP is the (k+1)-th, so sinc has every
    derivative at 0 (the selected constant 1 alone would have none)."""
    value = 0.0 if k % 2 else (-1.0) ** (k // 2) / (k + 1)
    return lax.full_like(x, value)


@_sin_over_x_at_zero.defjvp
def _sin_over_x_at_zero_jvp(k, primals, tangents):
    (x,), (t,) = primals, tangents
    return _sin_over_x_at_zero(k, x), lax.mul(_sin_over_x_at_zero(k + 1, x), t)


def fabs(x, /):
    check_arraylike("fabs", x)
    if iscomplexobj(x):
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    (x,) = promote("fabs", x, inexact=True)
    return lax.abs(x)


def gcd(x1, x2):
    """Greatest common divisor (Euclid's algorithm, unrolled to the dtype's worst case)."""
    return _weak_if_all_weak(_gcd(*promote("gcd", x1, x2)), x1, x2)


def _gcd(x1, x2):
    if not _dt.issubdtype(x1.dtype, _onp.integer):
        raise ValueError(f"Arguments to mjax.numpy.gcd must be integers, got {x1.dtype}")
    a, b = abs(x1), abs(x2)
    zero, one = lax.full_like(a, 0), lax.full_like(a, 1)
    # Consecutive Fibonacci numbers are the worst case: about 1.44 * bits steps.
    for _ in range(int(1.45 * 8 * a.dtype.itemsize) + 2):
        b_zero = lax.eq(b, zero)
        r = lax.rem(a, lax.select(b_zero, one, b))
        a, b = lax.select(b_zero, a, b), lax.select(b_zero, b, r)
    return a


def lcm(x1, x2):
    y1, y2 = promote("lcm", x1, x2)
    # |x1| * (|x2| // gcd), as JAX computes it (an overflow wraps as JAX's does)
    y1, y2 = abs(y1), abs(y2)
    g = _gcd(y1, y2)
    zero = lax.full_like(g, 0)
    safe = lax.select(lax.eq(g, zero), lax.full_like(g, 1), g)
    return _weak_if_all_weak(
        lax.select(lax.eq(g, zero), zero, lax.mul(y1, lax.div(y2, safe))), x1, x2)


@fused_when_eager
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    if isinstance(a, _prng.PRNGKeyArray) or isinstance(b, _prng.PRNGKeyArray):
        # Keys are close when equal (JAX: extended dtypes compare with eq); a key and
        # a number are JAX's TypeError.
        if not (isinstance(a, _prng.PRNGKeyArray) and isinstance(b, _prng.PRNGKeyArray)):
            raise TypeError(f"isclose does not accept dtypes {aval_of_value(a).dtype}, "
                            f"{aval_of_value(b).dtype}.")
        return equal(a, b)
    # (as JAX: the operands' own promotion first, so a Python int wraps into an unsigned
    # array's dtype, then to an inexact dtype)
    a, b = promote("isclose", a, b)
    a, b = promote("isclose", a, b, inexact=True)
    # Equal values (the same infinity) are close; others where b is finite and within
    # tolerance (NaN is close to nothing). In JAX's order: the first op over both
    # operands, which its error for operands in different memories names, is the `and`.
    both_nan = logical_and(isnan(a), isnan(b))
    finite = isfinite(b)
    in_range = less_equal(abs(a - b), atol + rtol * abs(b))
    out = logical_or(lax.eq(a, b), logical_and(finite, in_range))
    return _strong(logical_or(out, both_nan) if equal_nan else out)


def where_xy(condition, x, y):
    """condition ? x : y, broadcast: jnp.where's three-argument form (selection.where)."""
    condition = asarray(condition)
    if condition.dtype != _onp.bool_:     # (JAX's: != 0, not a conversion to bool)
        condition = lax.ne(condition, _onp.zeros((), condition.dtype))
    # (dtypes only: shapes that do not broadcast are broadcast_shapes's ValueError, JAX's)
    x, y = promote("where", *jit_arguments(x, y), broadcast=False)
    shape = broadcast_shapes(condition.shape, x.shape, y.shape)
    cond = condition if condition.ndim == 0 else broadcast_to(condition, shape)  # (JAX's)
    return lax.select(cond, broadcast_to(x, shape), broadcast_to(y, shape))


@fused_when_eager
def clip(arr=None, /, min=None, max=None):  # noqa: A002  (JAX's and the array API's names)
    a, a_min, a_max = asarray(arr), min, max
    if builtins.any(v is not None and iscomplexobj(v) for v in (a, a_min, a_max)):
        raise ValueError("Clip received a complex value either through the input or the "
                         "min/max keywords. Complex values have no ordering and cannot be "
                         "clipped. Please convert to a real value or array by taking the "
                         "real or imaginary components via jax.numpy.real/imag "
                         "respectively.")
    a_min, a_max = jit_arguments(a_min, a_max)     # (in JAX's order: bound first)
    a = a if a_min is None else maximum(a_min, a)
    return _fresh(a if a_max is None else minimum(a_max, a))


acos, acosh, asin, asinh, atan, atanh = arccos, arccosh, arcsin, arcsinh, arctan, arctanh
atan2 = arctan2
pow = power  # noqa: A001
bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def bitwise_count(x, /):
    (x,) = promote("bitwise_count", x)
    if x.dtype == _onp.bool_:   # (JAX's numeric promotion: bool counts as an integer)
        x = lax.convert_element_type(x, _dt.default_int())
    if not _dt.issubdtype(x.dtype, _onp.integer):
        raise TypeError(f"mjax.numpy.bitwise_count: needs integers, got {x.dtype}")
    return astype(lax.population_count(abs(x)), uint8)


@fused_values   # (one program, as JAX's: op by op, its last bit differed)
def logaddexp2(x1, x2, /):
    y1, y2 = promote("logaddexp2", x1, x2, inexact=True)
    if _dt.issubdtype(y1.dtype, _onp.complexfloating):   # (JAX's formula)
        m = lax.max(y1, y2)
        delta = lax.sub(lax.add(y1, y2), lax.mul(m, _lax_const(m, 2)))
        out = lax.add(m, lax.mul(_lax_const(m, 1 / math.log(2)), lax.log1p(lax.exp2(delta))))
        return lax.complex(lax.real(out), _wrap_phase(lax.imag(out), _onp.pi / math.log(2)))
    return _logaddexp2_real(y1, y2)   # (weak as JAX's: lax._const's 1/log 2)


@custom_jvp
def _logaddexp2_real(x1, x2):
    """max + log1p(exp2(-|x1 - x2|)) / log(2); x1 + x2 where the difference is NaN. JAX's
    formula op for op, so results agree to the bit."""
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    tail = lax.mul(_lax_const(amax, 1 / _onp.log(2)),
                   lax.log1p(lax.exp2(lax.neg(lax.abs(delta)))))
    return lax.select(lax.ne(delta, delta), lax.add(x1, x2), lax.add(amax, tail))


@_logaddexp2_real.defjvp
def _logaddexp2_real_jvp(primals, tangents):
    # d/dx_i = 2 ** (x_i - out), +inf read as 0, as JAX's rule.
    (x1, x2), (t1, t2) = primals, tangents
    out = _logaddexp2_real(x1, x2)

    def no_pos_inf(v):
        return lax.select(lax.eq(v, lax.full_like(v, _onp.inf)), lax.full_like(v, 0), v)
    weight = [lax.exp2(lax.sub(no_pos_inf(x), no_pos_inf(out))) for x in (x1, x2)]
    return out, lax.add(lax.mul(t1, weight[0]), lax.mul(t2, weight[1]))


def angle(z, deg=False):
    """atan2(imag(z), real(z)); as JAX's, the parts of a non-inexact z or of a real scalar
    are converted to the default float (strongly typed), a complex z's keep its type (a
    Python complex's are weak)."""
    check_arraylike("angle", z)
    re, im = real(z), imag(z)
    if not _dt.is_inexact(re.dtype) or (
            _dt.issubdtype(aval_of_value(z).dtype, _onp.floating) and _onp.ndim(z) == 0):
        re = lax.convert_element_type(re, _dt.default_float())
        im = lax.convert_element_type(im, _dt.default_float())
    out = lax.atan2(im, re)
    return rad2deg(out) if deg else out
