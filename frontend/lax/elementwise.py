"""Elementwise ops, conversions and constants, as in `jax.lax`: one function per
primitive (`def sin(x): return bind(SinOp, x)`), plus what JAX composes from them
(select, square, reciprocal, nextafter, mulhi, full, ...).

Binary ops accept Python scalars (weakly typed: they take the other operand's dtype) and
broadcast scalars, as JAX's lax does; otherwise dtypes and shapes must match.
"""
from __future__ import annotations

import builtins
import enum
import weakref

import numpy as np

from mjax.specs import dtypes
from mjax.base import trace_trees, tree_util
from mjax.tracing.core import (Tracer, at_user_line, aval_of_value, bind, current_trace, lift_literal,
                               to_numpy)
from mjax.dialect import ShapedArray as _ShapedArray
from mjax.dialect.values import defining_op, mark
from mjax.dialect.ops.elementwise import (
    AbsOp, AcosOp, AcoshOp, AddOp, AndOp, AsinOp, AsinhOp, Atan2Op, AtanOp, AtanhOp, CbrtOp,
    CeilOp, ClzOp, ComplexOp, ConjOp, CosOp, CoshOp, DigammaOp, DivOp, EqOp, ErfInvOp, ErfOp,
    ErfcOp, Exp2Op, ExpOp, Expm1Op, FloorOp, GeOp, GtOp, ImagOp, IntegerPowOp, IsFiniteOp, LeOp,
    LgammaOp, Log1pOp, LogisticOp, LogOp, LtOp, MaxOp, MinOp, MulOp, NegOp, NeOp, NotOp, OrOp,
    PolygammaOp, PopulationCountOp, PowOp, RealOp, RemOp, RoundOp, RsqrtOp, ShiftLeftOp,
    ShiftRightArithmeticOp, ShiftRightLogicalOp, SignOp, SinhOp, SinOp, SqrtOp, SquareOp, SubOp,
    TanhOp, TanOp, XorOp)
from mjax.dialect.ops.structural import (BitcastConvertTypeOp, ClampOp, ConvertElementTypeOp,
                                         IotaOp, OptimizationBarrierOp, ReducePrecisionOp,
                                         SelectNOp, StopGradientOp)
from mjax.lax.literals import _LiteralArray
from mjax.lax.sharding import apply_out_sharding
from mjax.lax.shapes import broadcast_in_dim
from mjax.arrays.placement import device_put_value
from mjax.specs.sharding_impls import NamedSharding
from mjax.dialect.shape_poly import as_dim, is_symbolic_dim


def _is_python_scalar(x):
    return dtypes.is_python_scalar(x) and not hasattr(x, "aval")


def _prepare(*args, fn: str, strict: bool = True):
    """Operands of one shape, scalars broadcast. A Python scalar has its default dtype
    (int32, float32, complex64; 64-bit under x64) and must match the arrays' dtype, as in
    JAX (`lax.add(f32_array, 2)` is a TypeError; jnp promotes), then takes their weak-typed
    form. `strict=False` (mjax's own compositions): a Python scalar takes the arrays' dtype.
    """
    # The common case: arrays (or tracers) of one shape, nothing to convert or broadcast
    # (a plain loop: this runs per op).
    shape = None
    for a in args:
        av = getattr(a, "aval", None)
        if type(av) is not _ShapedArray or (shape is not None and av.shape != shape):
            break
        shape = av.shape
    else:
        return list(args)
    avals = [aval_of_value(a) for a in args]
    arrays = [a for a, av in zip(args, avals) if not _is_python_scalar(a)]
    if arrays:
        target = aval_of_value(arrays[0]).dtype
        if strict and len(arrays) < len(args):
            _check_scalar_dtypes(avals, fn)
        args = [convert_element_type(a, target, weak_type=True) if _is_python_scalar(a)
                else a for a in args]
        avals = [aval_of_value(a) for a in args]
    shapes = {av.shape for av in avals if av.shape != ()}
    if len(shapes) > 1:
        ranks = {len(s) for s in shapes}
        if len(ranks) > 1:
            raise TypeError(at_user_line(
                f"{fn}: arrays must have the same rank (or be scalars), got "
                f"shapes {', '.join(str(av.shape) for av in avals)}"))
        shape = tuple(builtins.max(ds) if all(d in (1, builtins.max(ds)) for d in ds) else -1
                      for ds in zip(*shapes))
        if -1 in shape:
            raise TypeError(at_user_line(f"{fn} got incompatible shapes for broadcasting: "
                            f"{', '.join(str(av.shape) for av in avals)}"))
    elif shapes:
        shape = shapes.pop()
    else:
        return list(args)
    return [implicit_broadcast(a, shape) if av.shape != shape else a
            for a, av in zip(args, avals)]


# jnp's promoting counterpart of each binary op, named in the dtype error.
_JNP_NAMES = {"sub": "subtract", "mul": "multiply", "div": "divide", "rem": "remainder",
              "max": "maximum", "min": "minimum", "and": "bitwise_and",
              "or": "bitwise_or", "xor": "bitwise_xor", "shift_left": "left_shift",
              "shift_right_arithmetic": "right_shift", "eq": "equal",
              "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
              "ge": "greater_equal", "pow": "power", "atan2": "arctan2"}


def _check_scalar_dtypes(avals, fn: str) -> None:
    """JAX's rule for lax's binary ops: no promotion, a Python scalar included."""
    dts = [np.dtype(av.dtype) for av in avals]
    if fn == "pow" and dts[1].kind in "iu":
        dts = dts[:1]  # (an integer exponent is allowed)
    if len(set(dts)) > 1:
        jnp_name = _JNP_NAMES.get(fn, fn)
        raise TypeError(at_user_line(
            f"lax.{fn} requires arguments to have the same dtypes, got "
            f"{', '.join(d.name for d in dts)}. (jnp.{jnp_name} promotes its inputs' "
            "dtypes; lax does not.)"))


IMPLICIT_BROADCAST = "mjax.implicit_broadcast"


def implicit_broadcast(x, shape):
    """Broadcasts an elementwise op's scalar or same-rank operand (size-1 dims) to `shape`.
    JAX's lax ops take such operands as they are, so its jaxprs show no equation here: the
    staged broadcast is marked for the jaxpr printer to leave out."""
    shape = tuple(shape)
    rank = aval_of_value(x).ndim
    if type(x) is _LiteralArray and x._made_in is not None:
        x = lift_literal(x)      # (another trace's jnp constant: a value there)
    if isinstance(x, _LiteralArray) and rank == 0 and not any(map(is_symbolic_dim, shape)):
        # A literal: one splat constant (printed as JAX's scalar literal, never a residual).
        return _LiteralArray(np.broadcast_to(np.asarray(x), shape), x._weak)
    out = broadcast_in_dim(x, shape, tuple(range(len(shape))) if rank else ())
    if isinstance(out, Tracer) and out.value is not None and not (  # (None: a user
            isinstance(x, Tracer) and out.value == x.value):  # trace's tracer; the same
        _mark(out, IMPLICIT_BROADCAST)  # value: nothing staged, user_traces.py)
    return out


def _mark(t: Tracer, name: str) -> None:
    """Sets unit attribute `name` on the op that made `t` (a note for the jaxpr printer)."""
    mark(defining_op(t.value), name)


# JAX's transcendental ops take `accuracy=` (a result-accuracy request that backends may
# honour); XLA:CPU computes them at its one accuracy, so the keyword is accepted and noted.
# ---- unary ops ------------------------------------------------------------------------
def neg(x):
    """Elementwise -x. JAX: lax.neg."""
    return bind(NegOp, x)


def sign(x):
    """Elementwise sign (-1, 0, 1; x/|x| for complex). JAX: lax.sign."""
    return bind(SignOp, x)


def floor(x):
    """Elementwise floor. JAX: lax.floor."""
    return bind(FloorOp, x)


def ceil(x):
    """Elementwise ceiling. JAX: lax.ceil."""
    return bind(CeilOp, x)


def is_finite(x):
    """Elementwise test for finite values. JAX: lax.is_finite."""
    return bind(IsFiniteOp, x)


def exp(x, *, accuracy=None):
    """Elementwise e ** x. JAX: lax.exp."""
    return bind(ExpOp, x)


def exp2(x, *, accuracy=None):
    """Elementwise 2 ** x. JAX: lax.exp2."""
    return bind(Exp2Op, x)


def expm1(x, *, accuracy=None):
    """Elementwise e ** x - 1, accurate near 0. JAX: lax.expm1."""
    return bind(Expm1Op, x)


def log(x, *, accuracy=None):
    """Elementwise natural logarithm. JAX: lax.log."""
    return bind(LogOp, x)


def log1p(x, *, accuracy=None):
    """Elementwise log(1 + x), accurate near 0. JAX: lax.log1p."""
    return bind(Log1pOp, x)


def sqrt(x, *, accuracy=None):
    """Elementwise square root. JAX: lax.sqrt."""
    return bind(SqrtOp, x)


def rsqrt(x, *, accuracy=None):
    """Elementwise 1 / sqrt(x). JAX: lax.rsqrt."""
    return bind(RsqrtOp, x)


def cbrt(x, *, accuracy=None):
    """Elementwise cube root. JAX: lax.cbrt."""
    return bind(CbrtOp, x)


def sin(x, *, accuracy=None):
    """Elementwise sine. JAX: lax.sin."""
    return bind(SinOp, x)


def cos(x, *, accuracy=None):
    """Elementwise cosine. JAX: lax.cos."""
    return bind(CosOp, x)


def tan(x, *, accuracy=None):
    """Elementwise tangent. JAX: lax.tan."""
    return bind(TanOp, x)


def asin(x):
    """Elementwise arcsine. JAX: lax.asin."""
    return bind(AsinOp, x)


def acos(x):
    """Elementwise arccosine. JAX: lax.acos."""
    return bind(AcosOp, x)


def atan(x):
    """Elementwise arctangent. JAX: lax.atan."""
    return bind(AtanOp, x)


def sinh(x):
    """Elementwise hyperbolic sine. JAX: lax.sinh."""
    return bind(SinhOp, x)


def cosh(x):
    """Elementwise hyperbolic cosine. JAX: lax.cosh."""
    return bind(CoshOp, x)


def tanh(x, *, accuracy=None):
    """Elementwise hyperbolic tangent. JAX: lax.tanh."""
    return bind(TanhOp, x)


def asinh(x):
    """Elementwise inverse hyperbolic sine. JAX: lax.asinh."""
    return bind(AsinhOp, x)


def acosh(x):
    """Elementwise inverse hyperbolic cosine. JAX: lax.acosh."""
    return bind(AcoshOp, x)


def atanh(x):
    """Elementwise inverse hyperbolic tangent. JAX: lax.atanh."""
    return bind(AtanhOp, x)


def logistic(x, *, accuracy=None):
    """Elementwise 1 / (1 + e ** -x). JAX: lax.logistic."""
    return bind(LogisticOp, x)


def erf(x):
    """Elementwise error function. JAX: lax.erf."""
    return bind(ErfOp, x)


def erfc(x):
    """Elementwise complementary error function. JAX: lax.erfc."""
    return bind(ErfcOp, x)


def erf_inv(x):
    """Elementwise inverse error function. JAX: lax.erf_inv."""
    return bind(ErfInvOp, x)


def lgamma(x):
    """Elementwise log |Gamma(x)|. JAX: lax.lgamma."""
    return bind(LgammaOp, x)


def digamma(x):
    """Elementwise digamma (derivative of lgamma). JAX: lax.digamma."""
    return bind(DigammaOp, x)


def population_count(x):
    """Elementwise count of set bits. JAX: lax.population_count."""
    return bind(PopulationCountOp, x)


def clz(x):
    """Elementwise count of leading zero bits. JAX: lax.clz."""
    return bind(ClzOp, x)


def real(x):
    """Real part of a complex array. JAX: lax.real."""
    return bind(RealOp, x)


def imag(x):
    """Imaginary part of a complex array. JAX: lax.imag."""
    return bind(ImagOp, x)


def abs(x):
    """Elementwise |x|; complex -> real. JAX: lax.abs."""
    return bind(AbsOp, x)


def not_(x):
    """Elementwise logical/bitwise not. JAX: lax.not_."""
    return bind(NotOp, x)


def conj(x):
    """Complex conjugate; a real input gives a complex result. JAX: lax.conj."""
    return bind(ConjOp, x)


# ---- binary ops (Python scalars take the other operand's dtype) -------------------------
def add(x, y):
    """Elementwise x + y. JAX: lax.add."""
    x, y = _prepare(x, y, fn="add")
    return bind(AddOp, x, y)


def sub(x, y):
    """Elementwise x - y. JAX: lax.sub."""
    x, y = _prepare(x, y, fn="sub")
    return bind(SubOp, x, y)


def mul(x, y, *, out_dtype=None):
    """Elementwise x * y; `out_dtype`: the product's dtype (operands cast to it first).
    JAX: lax.mul."""
    if out_dtype is not None:
        x, y = (convert_element_type(v, out_dtype) for v in (x, y))
    x, y = _prepare(x, y, fn="mul")
    return bind(MulOp, x, y)


def div(x, y):
    """Elementwise x / y (integers round toward zero). JAX: lax.div."""
    x, y = _prepare(x, y, fn="div")
    return bind(DivOp, x, y)


def rem(x, y):
    """Elementwise remainder with the sign of x (C fmod). JAX: lax.rem."""
    x, y = _prepare(x, y, fn="rem")
    return bind(RemOp, x, y)


def pow(x, y):
    """Elementwise x ** y; y has x's dtype or is an integer. JAX: lax.pow."""
    x, y = _prepare(x, y, fn="pow")
    return bind(PowOp, x, y)


def max(x, y):
    """Elementwise maximum (NaN-propagating). JAX: lax.max."""
    x, y = _prepare(x, y, fn="max")
    return bind(MaxOp, x, y)


def min(x, y):
    """Elementwise minimum (NaN-propagating). JAX: lax.min."""
    x, y = _prepare(x, y, fn="min")
    return bind(MinOp, x, y)


def atan2(x, y):
    """Elementwise atan2(x, y). JAX: lax.atan2."""
    x, y = _prepare(x, y, fn="atan2")
    return bind(Atan2Op, x, y)


def and_(x, y):
    """Elementwise logical/bitwise and. JAX: lax.and_."""
    x, y = _prepare(x, y, fn="and")
    return bind(AndOp, x, y)


def or_(x, y):
    """Elementwise logical/bitwise or. JAX: lax.or_."""
    x, y = _prepare(x, y, fn="or")
    return bind(OrOp, x, y)


def xor(x, y):
    """Elementwise logical/bitwise exclusive or. JAX: lax.xor."""
    x, y = _prepare(x, y, fn="xor")
    return bind(XorOp, x, y)


def shift_left(x, y):
    """Elementwise x << y. JAX: lax.shift_left."""
    x, y = _prepare(x, y, fn="shift_left")
    return bind(ShiftLeftOp, x, y)


def shift_right_arithmetic(x, y):
    """Elementwise sign-extending x >> y. JAX: lax.shift_right_arithmetic."""
    x, y = _prepare(x, y, fn="shift_right_arithmetic")
    return bind(ShiftRightArithmeticOp, x, y)


def shift_right_logical(x, y):
    """Elementwise zero-filling x >> y. JAX: lax.shift_right_logical."""
    x, y = _prepare(x, y, fn="shift_right_logical")
    return bind(ShiftRightLogicalOp, x, y)


def eq(x, y):
    """Elementwise x == y. JAX: lax.eq."""
    x, y = _prepare(x, y, fn="eq")
    return bind(EqOp, x, y)


def ne(x, y):
    """Elementwise x != y. JAX: lax.ne."""
    x, y = _prepare(x, y, fn="ne")
    return bind(NeOp, x, y)


def lt(x, y):
    """Elementwise x < y. JAX: lax.lt."""
    x, y = _prepare(x, y, fn="lt")
    return bind(LtOp, x, y)


def le(x, y):
    """Elementwise x <= y. JAX: lax.le."""
    x, y = _prepare(x, y, fn="le")
    return bind(LeOp, x, y)


def gt(x, y):
    """Elementwise x > y. JAX: lax.gt."""
    x, y = _prepare(x, y, fn="gt")
    return bind(GtOp, x, y)


def ge(x, y):
    """Elementwise x >= y. JAX: lax.ge."""
    x, y = _prepare(x, y, fn="ge")
    return bind(GeOp, x, y)


def complex(x, y):
    """x + i*y from two real arrays. JAX: lax.complex."""
    x, y = _prepare(x, y, fn="complex")
    return bind(ComplexOp, x, y)


def polygamma(m, x):
    """The m-th derivative of digamma, elementwise. JAX: lax.polygamma."""
    m, x = _prepare(m, x, fn="polygamma")
    return bind(PolygammaOp, m, x)


bitwise_and, bitwise_or, bitwise_xor, bitwise_not = and_, or_, xor, not_


def square(x):
    """Elementwise x * x. JAX: lax.square."""
    return bind(SquareOp, x)


class RoundingMethod(enum.IntEnum):
    """lax.round's tie breaking. JAX: lax.RoundingMethod."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    """Elementwise rounding: 0 (AWAY_FROM_ZERO) or 1 (TO_NEAREST_EVEN). JAX: lax.round."""
    return bind(RoundOp, x, rounding_method=int(rounding_method))


def integer_pow(x, y: int):
    """x ** y for a static integer y. JAX: lax.integer_pow."""
    if not isinstance(y, (int, np.integer)) or isinstance(y, bool):
        raise TypeError(f"integer_pow: the exponent must be a static Python int, got {y!r}")
    return bind(IntegerPowOp, x, y=int(y))


def reciprocal(x):
    return div(_one_like(x), x)  # noqa: F821


def _one_like(x):
    return convert_element_type(1, aval_of_value(x).dtype, weak_type=True)


def nextafter(x1, x2):
    """The next representable float after x1 towards x2, elementwise (the bit pattern
    stepped by one). JAX: lax.nextafter."""
    x1, x2 = _prepare(x1, x2, fn="nextafter")
    dt = np.dtype(aval_of_value(x1).dtype)
    if not dtypes.is_float(dt):
        raise TypeError(at_user_line(f"nextafter does not accept dtype {dt.name}: it takes "
                                     f"floating-point operands"))
    bits = bitcast_convert_type(x1, _SAME_WIDTH_INT[dt.itemsize])
    one = full_like(bits, 1)
    zero = full_like(x1, 0)
    # Moving away from zero increments the magnitude bits; towards zero decrements them.
    away = eq(lt(x1, x2), gt(x1, zero))
    stepped = bitcast_convert_type(select(away, add(bits, one), sub(bits, one)), dt)
    tiny = bitcast_convert_type(one, dt)       # smallest subnormal
    from_zero = select(lt(x2, zero), neg(tiny), tiny)
    out = select(eq(x1, zero), from_zero, stepped)
    out = select(eq(x1, x2), x2, out)
    nan = full_like(x1, np.nan)
    out = select(or_(ne(x1, x1), ne(x2, x2)), nan, out)
    # (JAX's result is weak when both operands are: the constants above are not.)
    weak = aval_of_value(x1).weak_type and aval_of_value(x2).weak_type
    return convert_element_type(out, dt, weak_type=weak)


_SAME_WIDTH_INT = {2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}


def mulhi(x, y, /):
    """The high half of the double-width product of two integers. JAX: lax.mulhi.

    Computed in the operands' own width from half-width pieces (no wider type needed):
    x*y = hi*2^(2h) + (mid1 + mid2)*2^h + lo, with the signed result corrected from the
    unsigned one by subtracting y where x < 0 and x where y < 0."""
    x, y = _prepare(x, y, fn="mulhi")
    dt = np.dtype(aval_of_value(x).dtype)
    if not np.issubdtype(dt, np.integer):
        raise TypeError(at_user_line(f"mulhi requires integer operands, got {dt}"))
    bits = dt.itemsize * 8
    udt = np.dtype(f"uint{bits}")
    ux, uy = bitcast_convert_type(x, udt), bitcast_convert_type(y, udt)
    h = bits // 2

    def const(v):
        return full_like(ux, v)
    mask = const((1 << h) - 1)
    xl, xh = and_(ux, mask), shift_right_logical(ux, const(h))
    yl, yh = and_(uy, mask), shift_right_logical(uy, const(h))
    lo, mid1, mid2, hi = mul(xl, yl), mul(xh, yl), mul(xl, yh), mul(xh, yh)
    carry = shift_right_logical(
        add(add(shift_right_logical(lo, const(h)), and_(mid1, mask)),
                and_(mid2, mask)), const(h))
    out = add(add(hi, shift_right_logical(mid1, const(h))),
                  add(shift_right_logical(mid2, const(h)), carry))
    if np.issubdtype(dt, np.signedinteger):
        zero = full_like(x, 0)
        out = sub(out, select(lt(x, zero), uy, full_like(uy, 0)))
        out = sub(out, select(lt(y, zero), ux, full_like(ux, 0)))
    return bitcast_convert_type(out, dt)


# ---- selection ----------------------------------------------------------------------------
def select_n(which, *cases):
    """cases[which] elementwise (one case: itself, a new value). JAX: lax.select_n."""
    if not cases:
        raise ValueError(at_user_line("select_n() must have at least one case"))
    return bind(SelectNOp, which, *cases)


def select(pred, on_true, on_false):
    """JAX: lax.select (pred ? on_true : on_false)."""
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):  # noqa: A002
    """Elementwise min(max(x, min), max); min and max are scalars or of x's shape, and
    all three of one dtype (a Python scalar's default dtype included). JAX: lax.clamp."""
    avals = [aval_of_value(v) for v in (min, x, max)]
    if len({np.dtype(av.dtype) for av in avals}) > 1:
        raise TypeError(at_user_line(
            "lax.clamp requires arguments to have the same dtypes, got "
            f"{', '.join(np.dtype(av.dtype).name for av in avals)}."))
    min, max = (convert_element_type(v, avals[1].dtype) if _is_python_scalar(v) else v
                for v in (min, max))
    return bind(ClampOp, min, x, max)


# ---- conversions --------------------------------------------------------------------------
def convert_element_type(operand, new_dtype, *, weak_type: bool = False):
    """Casts to new_dtype (canonicalized for x64). JAX: lax.convert_element_type."""
    x = operand
    requested, new_dtype = new_dtype, dtypes.canonicalize_dtype(new_dtype)
    if new_dtype is not requested and new_dtype != requested:
        dtypes.check_user_dtype(requested, "convert_element_type")  # (x64 off: warns)
    aval = getattr(x, "aval", None)
    if aval is not None and aval.dtype == new_dtype and aval.weak_type == weak_type:
        return x  # already that type: the common case on every NumPy-level op
    if type(x) is _LiteralArray and x._made_in is not None:
        x = lift_literal(x)      # (another trace's jnp constant: a value there)
    if _is_python_scalar(x) or (not isinstance(x, Tracer) and isinstance(
            x, (np.ndarray, np.generic))):
        # (JAX canonicalizes a NumPy value first: int64 wraps to int32 with x64 off)
        value = np.asarray(x) if _is_python_scalar(x) else to_numpy(x)
        cast_complex = np.iscomplexobj(value)
        if cast_complex and not dtypes.issubdtype(new_dtype, np.complexfloating):
            if type(x) is builtins.complex and new_dtype != np.bool_:
                # (JAX converts a Python scalar with NumPy, which refuses this)
                raise TypeError(at_user_line(
                    f"cannot convert the Python complex {x!r} to {new_dtype.name}"))
            value = np.real(value)  # JAX drops the imaginary part
        if dtypes.issubdtype(value.dtype, np.floating) and new_dtype.kind in "iu":
            # XLA's float->int conversion saturates and sends NaN to 0; NumPy's does not.
            info, real = np.iinfo(new_dtype), np.real(value)
            with np.errstate(invalid="ignore"):
                cast = real.astype(new_dtype)
            value = np.where(np.isnan(real), 0, np.where(
                real >= info.max, info.max, np.where(real <= info.min, info.min, cast)))
        trace = current_trace()
        if trace is not None and value.ndim and not cast_complex:
            # JAX: under a trace a non-scalar constant is a jaxpr constvar and its cast an
            # equation (only scalars fold into literals).
            const = trace.to_tracer(to_numpy(x))
            if const.aval.dtype == new_dtype and not weak_type:
                return const
            x = const
        else:
            value = value.astype(new_dtype)
            if trace is None:
                return device_put_value(value, weak_type=weak_type)
            literal = _LiteralArray(value, weak_type)
            literal._made_in = weakref.ref(trace)   # (core.Trace.to_tracer; a literal kept
            # by the user must not keep the finished trace's module alive)
            return literal
    if is_symbolic_dim(x):      # (its value, staged once)
        x = x.__jax_array__()
    aval = aval_of_value(x)  # (not before: a Python int out of int32's range casts too)
    if aval.dtype == new_dtype and aval.weak_type == weak_type:
        return x
    out = bind(ConvertElementTypeOp, x, new_dtype=new_dtype, _weak_type=weak_type)
    if weak_type and isinstance(out, Tracer):   # (for the jaxpr printer: JAX shows it)
        _mark(out, "mjax.weak_type")
    return out


def bitcast_convert_type(operand, new_dtype):
    return bind(BitcastConvertTypeOp, operand,
                new_dtype=dtypes.canonicalize_dtype(new_dtype))


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """operand rounded to a float with the given exponent and mantissa widths.
    JAX: lax.reduce_precision."""
    if int(exponent_bits) < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if int(mantissa_bits) < 0:
        raise ValueError("reduce_precision: mantissa_bits must be non-negative; got "
                         f"{mantissa_bits}")
    return bind(ReducePrecisionOp, operand, exponent_bits=int(exponent_bits),
                mantissa_bits=int(mantissa_bits))


# ---- constants ----------------------------------------------------------------------------
def iota(dtype, size):
    return bind(IotaOp, dtype=dtypes.canonicalize_dtype(dtype), shape=(as_dim(size),),
                dimension=0)


def broadcasted_iota(dtype, shape, dimension, *, out_sharding=None):
    out = bind(IotaOp, dtype=dtypes.canonicalize_dtype(dtype),
               shape=tuple(map(as_dim, shape)), dimension=int(dimension))
    if out_sharding is not None:
        out = apply_out_sharding(out, out_sharding)
    return out


def full(shape, fill_value, dtype=None, *, sharding=None):
    if sharding is not None:
        return apply_out_sharding(full(shape, fill_value, dtype), sharding)
    shape = tuple(map(as_dim, shape))
    if dtype is not None:
        dtype = dtypes.check_user_dtype(dtype, "full")
    if dtype is None:
        dtype = aval_of_value(fill_value).dtype
    weak = dtype is None and _is_python_scalar(fill_value)
    value = convert_element_type(fill_value, dtype, weak_type=weak)
    return broadcast_in_dim(value, shape, ())


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array like x filled with fill_value; weakly typed when x is and no dtype is
    given (as JAX's, so constants built inside NumPy functions keep weak results)."""
    aval = aval_of_value(x)
    if dtype is None and aval.weak_type:
        value = convert_element_type(fill_value, aval.dtype, weak_type=True)
        out = broadcast_in_dim(value, tuple(map(as_dim, aval.shape if shape is None
                                                else shape)), ())
        return out if sharding is None else apply_out_sharding(out, sharding)
    shape = aval.shape if shape is None else shape
    if sharding is None:
        sharding = layout_like(x, shape)
    return full(shape, fill_value, aval.dtype if dtype is None else dtype, sharding=sharding)


def layout_like(a, shape):
    """The layout a `*_like` result takes from its model `a` (JAX's full_like): a concrete
    array's multi-device sharding if the shapes match or `a` is replicated; a committed
    one-device array's sharding if the shapes match; else None."""
    sharding = None if isinstance(a, Tracer) else getattr(a, "sharding", None)
    if sharding is None or tuple(shape) != tuple(a.shape) and (
            len(sharding.device_set) == 1 or not sharding.is_fully_replicated):
        return None
    if len(sharding.device_set) == 1:
        return sharding if getattr(a, "_committed", False) else None
    return sharding if isinstance(sharding, NamedSharding) else None


def zeros_like_array(x):
    return full_like(x, 0)


def empty(shape, dtype, *, out_sharding=None):
    """An array of the shape and dtype (zeros). JAX: lax.empty."""
    return full(shape, 0, dtype)


def dtype(x):
    """The canonical dtype of x: an array, a value, or a dtype itself (`np.int32`,
    `np.dtype('int32')`, 'float32'). JAX: lax.dtype."""
    if isinstance(x, (np.dtype, str)) or (isinstance(x, type) and issubclass(x, np.generic)):
        return dtypes.canonicalize_dtype(np.dtype(x))
    if x is int or x is float or x is complex or x is bool:   # (their default dtypes)
        return dtypes.canonicalize_dtype(dtypes.python_scalar_dtype(x(0)))
    return dtypes.canonicalize_dtype(aval_of_value(x).dtype)


def as_array(x):
    """`x` as jnp.asarray makes it, for lax's own compositions: a Python scalar weakly
    typed, a NumPy value in its canonical dtype; arrays and tracers as they are."""
    if isinstance(x, (np.ndarray, np.generic)) and not hasattr(x, "aval"):
        return convert_element_type(x, dtypes.canonicalize_dtype(x.dtype))
    if _is_python_scalar(x):
        return convert_element_type(x, dtypes.python_scalar_dtype(x), weak_type=True)
    return x


# ---- identities with a meaning for transformations and compilers ---------------------------
def stop_gradient(x):
    """Identity with zero derivative (applies to every leaf of a pytree)."""
    return trace_trees.tree_map(lambda v: bind(StopGradientOp, v), x)


def optimization_barrier(operand, /):
    """Identity on a pytree of arrays that XLA may not optimize across (no CSE, fusion or
    code motion through it). JAX: lax.optimization_barrier."""
    leaves, tree = trace_trees.tree_flatten(operand)
    if not leaves:
        return operand
    outs = bind(OptimizationBarrierOp, *leaves)
    outs = outs if isinstance(outs, list) else [outs]
    return tree_util.tree_unflatten(tree, outs)
