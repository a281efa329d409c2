"""Rules for the elementwise family (dialect/ops/elementwise.py): lowering.

Most ops are one StableHLO/CHLO op; the rest are short compositions.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir.dialects import chlo
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.dtype_rules import is_complex, is_unsigned
from mjax.dialect.ops import elementwise as E
from mjax.passes.rules import hlo as H
from mjax.passes.rules.tables import lowering

# ---- one-to-one lowerings ------------------------------------------------------
_ONE_TO_ONE = {
    E.AddOp: hlo.add, E.SubOp: hlo.subtract, E.MulOp: hlo.multiply, E.DivOp: hlo.divide,
    E.RemOp: hlo.remainder, E.MaxOp: hlo.maximum, E.MinOp: hlo.minimum,
    E.Atan2Op: hlo.atan2, E.NegOp: hlo.negate, E.FloorOp: hlo.floor, E.CeilOp: hlo.ceil,
    E.IsFiniteOp: hlo.is_finite, E.ExpOp: hlo.exponential, E.Expm1Op: hlo.exponential_minus_one,
    E.LogOp: hlo.log, E.Log1pOp: hlo.log_plus_one, E.SqrtOp: hlo.sqrt, E.RsqrtOp: hlo.rsqrt,
    E.CbrtOp: hlo.cbrt, E.SinOp: hlo.sine, E.CosOp: hlo.cosine, E.TanOp: hlo.tan,
    E.TanhOp: hlo.tanh, E.LogisticOp: hlo.logistic,
    E.AsinOp: chlo.asin, E.AcosOp: chlo.acos, E.AtanOp: chlo.atan, E.SinhOp: chlo.sinh,
    E.CoshOp: chlo.cosh, E.AsinhOp: chlo.asinh, E.AcoshOp: chlo.acosh, E.AtanhOp: chlo.atanh,
    E.ErfOp: chlo.erf, E.ErfcOp: chlo.erfc, E.ErfInvOp: chlo.erf_inv, E.LgammaOp: chlo.lgamma,
    E.DigammaOp: chlo.digamma,
    E.NotOp: hlo.not_, E.AndOp: hlo.and_, E.OrOp: hlo.or_, E.XorOp: hlo.xor,
    E.ShiftLeftOp: hlo.shift_left, E.ShiftRightArithmeticOp: hlo.shift_right_arithmetic,
    E.ShiftRightLogicalOp: hlo.shift_right_logical, E.PopulationCountOp: hlo.popcnt,
    E.ClzOp: hlo.count_leading_zeros, E.RealOp: hlo.real, E.ImagOp: hlo.imag,
    E.ComplexOp: hlo.complex,
}


def _one_to_one(build):
    return lambda ctx, *args, **params: build(*args)


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


@lowering(E.IntegerPowOp)
def _integer_pow_lower(ctx, x, *, y):
    # Square-and-multiply: log2(|y|) multiplies; negative y takes a reciprocal.
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


@lowering(E.AbsOp)
def _abs_lower(ctx, x):
    if is_unsigned(ctx.avals_in[0].dtype):
        return x
    return hlo.abs(x)


@lowering(E.SignOp)
def _sign_lower(ctx, x):
    if is_unsigned(ctx.avals_in[0].dtype):
        zero = H.constant_like(x, 0)
        return hlo.select(H.compare(x, zero, "EQ"), zero, H.constant_like(x, 1))
    return hlo.sign(x)


@lowering(E.RoundOp)
def _round_lower(ctx, x, *, rounding_method):
    return hlo.round_nearest_even(x) if rounding_method == 1 else hlo.round_nearest_afz(x)


@lowering(E.Exp2Op)
def _exp2_lower(ctx, x):
    return hlo.exponential(hlo.multiply(x, H.constant_like(x, np.log(2.0))))


@lowering(E.ConjOp)
def _conj_lower(ctx, x, *, input_dtype=None):
    if is_complex(ctx.avals_in[0].dtype):
        return hlo.complex(hlo.real(x), hlo.negate(hlo.imag(x)))
    return hlo.complex(x, H.constant_like(x, 0))
