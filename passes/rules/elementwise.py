"""Rules for the elementwise family (dialect/ops/elementwise.py): lowering.

Most ops are one StableHLO/CHLO op; the rest are short compositions.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir.dialects import chlo
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.dtype_rules import is_complex, is_inexact, is_unsigned
from mjax.dialect.ops import elementwise as E
from mjax.passes.rules import batch_util as B
from mjax.passes.rules import hlo as H
from mjax.passes.rules.tables import CHECKS, lowering, nan_checked

# ---- one-to-one lowerings ------------------------------------------------------
_ONE_TO_ONE = {
    E.AddOp: hlo.add, E.SubOp: hlo.subtract, E.MulOp: hlo.multiply, E.DivOp: hlo.divide,
    E.RemOp: hlo.remainder,
    E.Atan2Op: hlo.atan2, E.NegOp: hlo.negate, E.FloorOp: hlo.floor, E.CeilOp: hlo.ceil,
    E.IsFiniteOp: hlo.is_finite, E.ExpOp: hlo.exponential, E.Expm1Op: hlo.exponential_minus_one,
    E.LogOp: hlo.log, E.Log1pOp: hlo.log_plus_one, E.SqrtOp: hlo.sqrt, E.RsqrtOp: hlo.rsqrt,
    E.CbrtOp: hlo.cbrt, E.SinOp: hlo.sine, E.CosOp: hlo.cosine, E.TanOp: hlo.tan,
    E.TanhOp: hlo.tanh,
    E.AsinOp: chlo.asin, E.AcosOp: chlo.acos, E.AtanOp: chlo.atan, E.SinhOp: chlo.sinh,
    E.CoshOp: chlo.cosh, E.AsinhOp: chlo.asinh, E.AcoshOp: chlo.acosh, E.AtanhOp: chlo.atanh,
    E.ErfOp: chlo.erf, E.ErfcOp: chlo.erfc, E.ErfInvOp: chlo.erf_inv, E.LgammaOp: chlo.lgamma,
    E.DigammaOp: chlo.digamma, E.PolygammaOp: chlo.polygamma, E.ZetaOp: chlo.zeta,
    E.NotOp: hlo.not_, E.AndOp: hlo.and_, E.OrOp: hlo.or_, E.XorOp: hlo.xor,
    E.ShiftLeftOp: hlo.shift_left, E.ShiftRightArithmeticOp: hlo.shift_right_arithmetic,
    E.ShiftRightLogicalOp: hlo.shift_right_logical, E.PopulationCountOp: hlo.popcnt,
    E.ClzOp: hlo.count_leading_zeros, E.RealOp: hlo.real, E.ImagOp: hlo.imag,
    E.ComplexOp: hlo.complex,
}


def _one_to_one(build):
    rule = lambda ctx, *args, **params: build(*args)  # noqa: E731
    rule.one_to_one = True  # (jaxpr-to-stablehlo rewrites these without calling the rule)
    return rule


for _op, _build in _ONE_TO_ONE.items():
    lowering(_op)(_one_to_one(_build))

_DIRECTIONS = {E.EqOp: "EQ", E.NeOp: "NE", E.LtOp: "LT", E.LeOp: "LE", E.GtOp: "GT",
               E.GeOp: "GE"}
for _op, _dir in _DIRECTIONS.items():
    lowering(_op)(lambda ctx, x, y, _dir=_dir: H.compare(x, y, _dir))


# ---- compositions --------------------------------------------------------------
@lowering(E.PowOp)
def _pow_lower(ctx, x, y):
    x_aval, y_aval = ctx.avals_in
    if x_aval.dtype != y_aval.dtype:
        y = H.convert(y, x_aval.dtype)
    return hlo.power(x, y)


@lowering(E.SquareOp)
def _square_lower(ctx, x):
    # JAX's square_p: chlo.square for floats and complex numbers (XLA expands the complex
    # one with its own formula), x * x for integers.
    if not is_inexact(ctx.avals_in[0].dtype):
        return hlo.multiply(x, x)
    return chlo.square(x)


@lowering(E.IntegerPowOp)
def _integer_pow_lower(ctx, x, *, y):
    # Square-and-multiply: log2(|y|) multiplies; negative y takes a reciprocal. (JAX
    # writes the cube as (x * x) * x: the same operands in its order.)
    if y == 3:
        return hlo.multiply(hlo.multiply(x, x), x)
    acc, base, n = None, x, abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else hlo.multiply(acc, base)
        n >>= 1
        if n:
            base = hlo.multiply(base, base)
    if acc is None:
        acc = H.constant_like(x, 1)
    if y < 0:
        acc = hlo.divide(H.constant_like(x, 1), acc)
    return acc


lowering(E.AbsOp)(_one_to_one(hlo.abs))


def _minmax_lower(hlo_op, direction):
    def rule(ctx, x, y):
        if not is_complex(ctx.avals_in[0].dtype):
            return hlo_op(x, y)
        # JAX orders complex numbers lexicographically: real part, then imaginary part.
        rx, ry = hlo.real(x), hlo.real(y)
        pick_x = hlo.select(H.compare(rx, ry, "EQ"),
                            H.compare(hlo.imag(x), hlo.imag(y), direction),
                            H.compare(rx, ry, direction))
        return hlo.select(pick_x, x, y)
    return rule


lowering(E.MaxOp)(_minmax_lower(hlo.maximum, "GT"))
lowering(E.MinOp)(_minmax_lower(hlo.minimum, "LT"))


@lowering(E.SignOp)
def _sign_lower(ctx, x):
    if is_unsigned(ctx.avals_in[0].dtype):
        zero = H.constant_like(x, 0)
        return hlo.select(H.compare(x, zero, "EQ"), zero, H.constant_like(x, 1))
    return hlo.sign(x)


@lowering(E.RoundOp)
def _round_lower(ctx, x, *, rounding_method):
    return hlo.round_nearest_even(x) if rounding_method == 1 else hlo.round_nearest_afz(x)


@lowering(E.LogisticOp)
def _logistic_lower(ctx, x):
    # JAX's logistic_p: 1 / (1 + exp(-x)), not stablehlo.logistic, which XLA's TPU compiler
    # computes otherwise (other bits); XLA's CPU expands the op to this same composition.
    one = H.constant_like(x, 1)
    return hlo.divide(one, hlo.add(one, hlo.exponential(hlo.negate(x))))


@lowering(E.Exp2Op)
def _exp2_lower(ctx, x):
    return hlo.exponential(hlo.multiply(x, H.constant_like(x, np.log(2.0))))


@lowering(E.ConjOp)
def _conj_lower(ctx, x, *, input_dtype=None):
    if is_complex(ctx.avals_in[0].dtype):
        return hlo.complex(hlo.real(x), hlo.negate(hlo.imag(x)))
    return hlo.complex(x, H.constant_like(x, 0))


# ---- differentiation rules ----
# JVP rules per operand (JAX: ad.defjvp in lax.py); transpose rules for the linear ops.
# Integer/bool values never carry tangents (float0), so these only see inexact dtypes.
from mjax.passes.registry import PassError  # noqa: E402
from mjax.passes.rules import ad_util as AD  # noqa: E402


def _c(b, x, v):
    """A constant shaped like x."""
    return AD.full_like(b, x, v)


def _sq(b, x):
    return b.mul(x, x)


# add/sub: per-operand rules, so a symbolic-zero operand costs nothing (no zeros + t).
AD.defjvp(E.AddOp, lambda b, t, x, y: t, lambda b, t, x, y: t)
AD.defjvp(E.SubOp, lambda b, t, x, y: t, lambda b, t, x, y: b.neg(t))
AD.transpose_rule(E.AddOp)(lambda b, ct, x, y: [ct, ct])
AD.transpose_rule(E.SubOp)(lambda b, ct, x, y: [ct, b.neg(ct)])
AD.deflinear(E.NegOp, lambda b, ct, x: [b.neg(ct)])
AD.deflinear(E.RealOp, lambda b, ct, x: [b.complex(ct, AD.zeros_like(b, ct))])
AD.deflinear(E.ImagOp, lambda b, ct, x: [b.complex(AD.zeros_like(b, ct), b.neg(ct))])
AD.deflinear(E.ComplexOp, lambda b, ct, x, y: [b.real(ct), b.imag(b.neg(ct))])


def _conj_transpose(b, ct, x, *, input_dtype=None):
    # JAX: _conj_transpose_rule. A real input was promoted to complex: take the real part.
    return [b.conj(ct) if is_complex(AD.aval(x).dtype) else b.real(ct)]


AD.deflinear(E.ConjOp, _conj_transpose)

AD.defjvp(E.MulOp,
          lambda b, t, x, y: b.mul(t, y),
          lambda b, t, x, y: b.mul(x, t))


@AD.transpose_rule(E.MulOp)
def _mul_transpose(b, ct, x, y):
    if AD.is_linear(x) and AD.is_linear(y):
        raise ValueError("mul of two linear values is not linear")
    return [b.mul(ct, y), None] if AD.is_linear(x) else [None, b.mul(x, ct)]


def _div_jvp_rhs(b, t, x, y):
    # JAX's form, op for op, so results agree to the bit: -t * x * y**-2, on the operands
    # as lax takes them (an implicitly broadcast y and its tangent stay small).
    x, y, t = AD.lax_operand(x), AD.lax_operand(y), AD.lax_operand(t)
    out = AD.lax_binary(b, "mul", b.neg(t), x)
    return AD.lax_binary(b, "mul", out, b.integer_pow(y, y=-2))


AD.defjvp(E.DivOp, lambda b, t, x, y: b.div(t, y), _div_jvp_rhs)


@AD.transpose_rule(E.DivOp)
def _div_transpose(b, ct, x, y):
    if AD.is_linear(y):
        raise ValueError("div is linear only in its numerator")
    # (JAX's div(ct, y) takes an implicitly broadcast y as it is: its lowering broadcasts
    # it again, at this use)
    return [AD.lax_binary(b, "div", ct, AD.lax_operand(y)), None]


def _rem_jvp_rhs(b, t, x, y):
    # d/dy fmod(x, y) = -trunc(x / y)
    q = b.div(x, y)
    return b.mul(b.neg(t), b.mul(b.sign(q), b.floor(b.abs(q))))


AD.defjvp(E.RemOp, lambda b, t, x, y: t, _rem_jvp_rhs)


def _pow_jvp_lhs(b, t, x, y):
    # y * x ** (y - 1), with 0 where y == 0 (JAX: _pow_jvp_lhs).
    x_aval, y_aval = AD.aval(x), AD.aval(y)
    if y_aval.dtype == x_aval.dtype:
        yx = y
        ym1 = b.sub(y, _c(b, y, 1))
    else:  # integer exponent
        yx = b.convert_element_type(y, new_dtype=x_aval.dtype)
        ym1 = b.sub(y, _c(b, y, 1))
    jac = b.mul(yx, b.pow(x, ym1))
    jac = b.select_n(b.eq(yx, _c(b, yx, 0)), jac, AD.zeros_like(b, jac))
    return b.mul(t, jac)


def _pow_jvp_rhs(b, t, x, y, *, ans):
    # log(x) * x ** y, with log(1) where x == 0 (JAX: _pow_jvp_rhs).
    safe_x = b.select_n(b.eq(x, _c(b, x, 0)), x, _c(b, x, 1))
    return b.mul(t, b.mul(b.log(safe_x), ans))


AD.defjvp(E.PowOp, _pow_jvp_lhs, _pow_jvp_rhs)


def _integer_pow_jvp(b, t, x, *, y):
    if y == 0:
        return None
    if y == 1:
        return t
    # (x ** 1 is x itself: no integer_pow[y=1], as JAX's rule)
    power = x if y == 2 else b.integer_pow(x, y=y - 1)
    return b.mul(t, b.mul(_c(b, x, y), power))


AD.defjvp(E.IntegerPowOp, _integer_pow_jvp)
AD.defjvp(E.SquareOp, lambda b, t, x, *, ans: b.mul(t, b.mul(_c(b, x, 2), x)))


def _balanced_eq(b, x, z, y):
    # JAX's _balanced_eq, op for op: (x == z ? 1 : 0) / (y == z ? 2 : 1), z the answer:
    # 1 where x is the answer, 1/2 where both are, 0 elsewhere. Comparing with the answer
    # serves complex max/min (lexicographic) as well.
    one = _c(b, z, 1)
    return b.div(b.select_n(b.eq(x, z), _c(b, z, 0), one),
                 b.select_n(b.eq(y, z), one, _c(b, z, 2)))


def _minmax_jvp():
    return (lambda b, t, x, y, *, ans: b.mul(t, _balanced_eq(b, x, ans, y)),
            lambda b, t, x, y, *, ans: b.mul(t, _balanced_eq(b, y, ans, x)))


AD.defjvp(E.MaxOp, *_minmax_jvp())
AD.defjvp(E.MinOp, *_minmax_jvp())
AD.defjvp(E.Atan2Op,
          lambda b, t, x, y: b.mul(t, b.div(y, b.add(_sq(b, x), _sq(b, y)))),
          lambda b, t, x, y: b.mul(t, b.div(b.neg(x), b.add(_sq(b, x), _sq(b, y)))))


def _abs_jvp(b, t, x, *, ans):
    if not is_complex(AD.aval(x).dtype):
        # JAX: select(x >= 0, t, -t), so the derivative at 0 (and -0) is 1, not sign(0).
        return b.select_n(b.ge(x, _c(b, x, 0)), b.neg(t), t)
    # d|z| = Re(conj(z) dz) / |z|, taken as 0 at z == 0.
    safe = b.select_n(b.eq(ans, _c(b, ans, 0)), ans, _c(b, ans, 1))
    return b.div(b.real(b.mul(b.conj(x), t)), safe)


AD.defjvp(E.AbsOp, _abs_jvp)

# ---- transcendental: one line each (JAX: the defjvp calls in lax.py) ----
AD.defjvp(E.ExpOp, lambda b, t, x, *, ans: b.mul(t, ans))
AD.defjvp(E.Exp2Op, lambda b, t, x, *, ans: b.mul(t, b.mul(ans, _c(b, x, np.log(2.0)))))
AD.defjvp(E.Expm1Op, lambda b, t, x, *, ans: b.mul(t, b.add(ans, _c(b, x, 1))))
AD.defjvp(E.LogOp, lambda b, t, x: b.div(t, x))
AD.defjvp(E.Log1pOp, lambda b, t, x: b.div(t, b.add(x, _c(b, x, 1))))
# (sqrt, rsqrt, cbrt, acosh, atanh: JAX's forms op for op, so results agree to the bit)
AD.defjvp(E.SqrtOp, lambda b, t, x, *, ans: b.mul(t, b.div(_c(b, x, 0.5), ans)))
AD.defjvp(E.RsqrtOp, lambda b, t, x, *, ans: b.mul(t, b.mul(_c(b, x, -0.5), b.div(ans, x))))
AD.defjvp(E.CbrtOp, lambda b, t, x, *, ans: b.mul(t, b.mul(_c(b, x, 1 / 3),
                                                           b.integer_pow(ans, y=-2))))
AD.defjvp(E.SinOp, lambda b, t, x: b.mul(t, b.cos(x)))
AD.defjvp(E.CosOp, lambda b, t, x: b.neg(b.mul(t, b.sin(x))))
AD.defjvp(E.TanOp, lambda b, t, x, *, ans: b.mul(t, b.add(_c(b, x, 1), _sq(b, ans))))
AD.defjvp(E.AsinOp, lambda b, t, x: b.mul(t, b.rsqrt(b.sub(_c(b, x, 1), _sq(b, x)))))
AD.defjvp(E.AcosOp, lambda b, t, x: b.neg(b.mul(t, b.rsqrt(b.sub(_c(b, x, 1), _sq(b, x))))))
AD.defjvp(E.AtanOp, lambda b, t, x: b.div(t, b.add(_c(b, x, 1), _sq(b, x))))
AD.defjvp(E.SinhOp, lambda b, t, x: b.mul(t, b.cosh(x)))
AD.defjvp(E.CoshOp, lambda b, t, x: b.mul(t, b.sinh(x)))
# (t + t*ans) * (1 - ans), JAX's form: 1 - ans**2 loses precision as |ans| nears 1.
AD.defjvp(E.TanhOp, lambda b, t, x, *, ans: b.mul(b.add(t, b.mul(t, ans)),
                                                 b.sub(_c(b, x, 1), ans)))
AD.defjvp(E.AsinhOp, lambda b, t, x: b.mul(t, b.rsqrt(b.add(_sq(b, x), _c(b, x, 1)))))
AD.defjvp(E.AcoshOp, lambda b, t, x: b.mul(t, b.rsqrt(b.sub(_sq(b, x), _c(b, x, 1)))))
AD.defjvp(E.AtanhOp, lambda b, t, x: b.mul(b.integer_pow(b.add(_c(b, x, 1), x), y=-1),
                                           b.div(t, b.sub(_c(b, x, 1), x))))
AD.defjvp(E.LogisticOp, lambda b, t, x, *, ans: b.mul(t, b.mul(ans, b.sub(_c(b, x, 1), ans))))
# (erf, erfc, erf_inv: JAX's forms, the constant times (t times the exponential))
AD.defjvp(E.ErfOp, lambda b, t, x: b.mul(_c(b, x, 2 / np.sqrt(np.pi)),
                                         b.mul(t, b.exp(b.neg(_sq(b, x))))))
AD.defjvp(E.ErfcOp, lambda b, t, x: b.mul(_c(b, x, -2 / np.sqrt(np.pi)),
                                          b.mul(t, b.exp(b.neg(_sq(b, x))))))
AD.defjvp(E.ErfInvOp, lambda b, t, x, *, ans: b.mul(_c(b, x, np.sqrt(np.pi) / 2),
                                                    b.mul(t, b.exp(_sq(b, ans)))))
AD.defjvp(E.LgammaOp, lambda b, t, x: b.mul(t, b.digamma(x)))
AD.defjvp(E.DigammaOp, lambda b, t, x: b.mul(t, b.polygamma(_c(b, x, 1), x)))


def _polygamma_jvp_m(b, t, m, x):
    # JAX: polygamma_gradm. m is an integer order; a (nonzero) tangent on it is an error.
    raise PassError(b.loc, "polygamma gradient with respect to m is not supported (as in "
                           "JAX); differentiate with respect to x only")


AD.defjvp(E.PolygammaOp, _polygamma_jvp_m,
          lambda b, t, m, x: b.mul(t, b.polygamma(b.add(m, _c(b, m, 1)), x)))
# (as JAX's zeta_p; jax.scipy.special.zeta differentiates a series instead)
AD.no_jvp(E.ZetaOp, "Differentiation rule for 'zeta' not implemented")
AD.no_transpose(E.ZetaOp)

# ---- piecewise constant, integer-valued or boolean results: zero tangents ----
for _op in (E.SignOp, E.FloorOp, E.CeilOp, E.RoundOp):
    AD.defzero(_op)
for _op in (E.IsFiniteOp, E.EqOp, E.NeOp, E.LtOp, E.LeOp, E.GtOp, E.GeOp):
    AD.defzero(_op, "boolean result: no tangent (float0)")
for _op in (E.NotOp, E.AndOp, E.OrOp, E.XorOp, E.ShiftLeftOp, E.ShiftRightArithmeticOp,
            E.ShiftRightLogicalOp, E.PopulationCountOp, E.ClzOp):
    AD.defzero(_op, "integer/bool operands and result: no tangent (float0)")


# ---- batching --------------------------------------------------------------------
# Every op of the family maps elements to elements: one operand keeps its batch axis,
# several get theirs aligned (JAX: batching.defvectorized / defbroadcasting).
def _family_ops():
    return [cls for cls in vars(E).values() if isinstance(cls, type)
            and issubclass(cls, E.JaxprOp) and cls.primitive and cls.__module__ == E.__name__]


for _op in _family_ops():
    if _op.num_operands == 1:
        B.defvectorized(_op)
    else:
        B.defbroadcasting(_op)


# ---- checkify: JAX's automatic checks (JAX: checkify.error_checks) ---------------------
nan_checked(E.AcosOp, E.AcoshOp, E.AddOp, E.AsinOp, E.AsinhOp, E.Atan2Op, E.AtanOp,
            E.AtanhOp, E.CbrtOp, E.CosOp, E.CoshOp, E.DigammaOp, E.ErfInvOp, E.ErfOp,
            E.ErfcOp, E.ExpOp, E.Expm1Op, E.IntegerPowOp, E.LgammaOp, E.Log1pOp, E.LogOp,
            E.LogisticOp, E.MulOp, E.PowOp, E.RemOp, E.RsqrtOp, E.SinOp, E.SinhOp, E.SqrtOp,
            E.SubOp, E.TanOp, E.TanhOp)
CHECKS[E.DivOp] = ("div", "nan")      # (a zero divisor, then NaNs)
