"""Triton lowering rules of elementwise ops (and the value-level structural ops that
act elementwise: select_n, clamp, casts, copies). Transcendental functions call the
platform's device math library (libdevice on CUDA, ocml on ROCm), as JAX's Pallas does.

    %y = "jaxpr.exp"(%x) : (tensor<128xf32>) -> tensor<128xf32>
  ==>
    %y = tt.extern_elementwise %x {symbol = "__nv_expf", pure = true}
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir.dialects import arith, math as math_d
from jaxlib.triton import dialect as tt

from mjax.dialect.ops import elementwise as E
from mjax.dialect.ops import structural as St
from mjax.passes.rules.tables import TRITON
from mjax.passes.triton.builders import (binary, broadcast_to, compare, convert, full_like,
                                         libm_call)
from mjax.passes.triton.types import (TritonLoweringError, avals_in, is_float, is_unsigned,
                                      shape_of, ttype)

# op -> the device math library's name of the function
_LIBM = {E.ExpOp: "exp", E.Exp2Op: "exp2", E.Expm1Op: "expm1", E.LogOp: "log",
         E.Log1pOp: "log1p", E.SqrtOp: "sqrt", E.RsqrtOp: "rsqrt", E.CbrtOp: "cbrt",
         E.SinOp: "sin", E.CosOp: "cos", E.TanOp: "tan", E.AsinOp: "asin",
         E.AcosOp: "acos", E.AtanOp: "atan", E.SinhOp: "sinh", E.CoshOp: "cosh",
         E.TanhOp: "tanh", E.AsinhOp: "asinh", E.AcoshOp: "acosh", E.AtanhOp: "atanh",
         E.ErfOp: "erf", E.ErfcOp: "erfc", E.ErfInvOp: "erfinv", E.LgammaOp: "lgamma",
         E.FloorOp: "floor", E.CeilOp: "ceil", E.Atan2Op: "atan2", E.PowOp: "pow"}


@TRITON.register(*[op for op in _LIBM if op not in (E.Atan2Op, E.PowOp)])
def _libm_unary(kl, op, x, **params):
    dtype = avals_in(op)[0].dtype
    if not is_float(dtype):
        raise TritonLoweringError(f"{op.name} of {np.dtype(dtype).name} is not supported")
    return [libm_call(kl, _LIBM[type(op.opview)], [x], dtype)]


@TRITON.register(E.Atan2Op, E.PowOp)
def _libm_binary(kl, op, x, y, **params):
    ax, ay = avals_in(op)
    cls = type(op.opview)
    if cls is E.PowOp and not is_float(ay.dtype):
        y = convert(y, ay.dtype, ax.dtype)   # x ** int: the float pow is exact for ints
    return [libm_call(kl, _LIBM[cls], [x, y], ax.dtype)]


@TRITON.register(E.AddOp, E.SubOp, E.MulOp, E.DivOp, E.RemOp, E.MaxOp, E.MinOp, E.AndOp,
                 E.OrOp, E.XorOp)
def _binary(kl, op, x, y, **params):
    return [binary(type(op.opview).primitive, x, y, avals_in(op)[0].dtype)]


@TRITON.register(E.ShiftLeftOp, E.ShiftRightLogicalOp, E.ShiftRightArithmeticOp)
def _shift(kl, op, x, y, **params):
    # As lax (XLA) defines shifts by the bit width or more, which LLVM leaves undefined:
    # 0, or the sign for an arithmetic right shift. The amount compares as unsigned.
    dtype = avals_in(op)[0].dtype
    bits = full_like(y, np.dtype(dtype).itemsize * 8, dtype)
    cls = type(op.opview)
    if cls is E.ShiftRightArithmeticOp:
        return [arith.shrsi(x, arith.minui(y, arith.subi(bits, full_like(y, 1, dtype))))]
    fn = arith.shli if cls is E.ShiftLeftOp else arith.shrui
    in_range = arith.cmpi(arith.CmpIPredicate.ult, y, bits)
    return [arith.select(in_range, fn(x, y), full_like(x, 0, dtype))]


@TRITON.register(E.EqOp, E.NeOp, E.LtOp, E.LeOp, E.GtOp, E.GeOp)
def _compare(kl, op, x, y, **params):
    return [compare(type(op.opview).primitive, x, y, avals_in(op)[0].dtype)]


@TRITON.register(E.SquareOp)
def _square(kl, op, x, **params):
    return [binary("mul", x, x, avals_in(op)[0].dtype)]


@TRITON.register(E.NegOp)
def _neg(kl, op, x, **params):
    dtype = avals_in(op)[0].dtype
    if is_float(dtype):
        return [arith.negf(x)]
    return [arith.subi(full_like(x, 0, dtype), x)]


@TRITON.register(E.AbsOp)
def _abs(kl, op, x, **params):
    return [math_d.absf(x) if is_float(avals_in(op)[0].dtype) else math_d.absi(x)]


@TRITON.register(E.SignOp)
def _sign(kl, op, x, **params):
    dtype = avals_in(op)[0].dtype
    zero, one, minus = (full_like(x, v, dtype) for v in (0, 1, -1))
    if is_unsigned(dtype):
        return [arith.select(compare("gt", x, zero, dtype), one, zero)]
    neg = arith.select(compare("lt", x, zero, dtype), minus, x if is_float(dtype) else zero)
    return [arith.select(compare("gt", x, zero, dtype), one, neg)]  # NaN, +-0 pass through


@TRITON.register(E.RoundOp)
def _round(kl, op, x, *, rounding_method=0, **params):
    dtype = avals_in(op)[0].dtype
    fn = "round" if rounding_method == 0 else "rint"
    return [libm_call(kl, fn, [x], dtype)]


@TRITON.register(E.IsFiniteOp)
def _is_finite(kl, op, x, **params):
    dtype = avals_in(op)[0].dtype
    return [arith.cmpf(arith.CmpFPredicate.OLT, math_d.absf(x),
                       full_like(x, float("inf"), dtype))]


@TRITON.register(E.LogisticOp)
def _logistic(kl, op, x, **params):
    dtype = avals_in(op)[0].dtype
    one = full_like(x, 1, dtype)
    e = libm_call(kl, "exp", [arith.negf(x)], dtype)
    return [arith.divf(one, arith.addf(one, e))]


@TRITON.register(E.NotOp)
def _not(kl, op, x, **params):
    dtype = avals_in(op)[0].dtype
    return [arith.xori(x, full_like(x, 1 if dtype == np.bool_ else -1, dtype))]


@TRITON.register(E.PopulationCountOp)
def _popcnt(kl, op, x, **params):
    return [math_d.ctpop(x)]


@TRITON.register(E.ClzOp)
def _clz(kl, op, x, **params):
    return [math_d.ctlz(x)]


@TRITON.register(E.IntegerPowOp)
def _integer_pow(kl, op, x, *, y, **params):
    dtype = avals_in(op)[0].dtype
    if y == 0:
        return [full_like(x, 1, dtype)]
    acc, base, n = None, x, abs(y)
    while n:                                  # square-and-multiply
        if n & 1:
            acc = base if acc is None else binary("mul", acc, base, dtype)
        n >>= 1
        if n:
            base = binary("mul", base, base, dtype)
    if y < 0:
        acc = binary("div", full_like(x, 1, dtype), acc, dtype)
    return [acc]


@TRITON.register(St.SelectNOp)
def _select_n(kl, op, which, *cases, **params):
    wdtype = avals_in(op)[0].dtype
    shape = shape_of(cases[0])
    if shape_of(which) != shape:
        which = broadcast_to(which, shape)
    if wdtype == np.bool_:
        return [arith.select(which, cases[1], cases[0]) if len(cases) == 2 else cases[0]]
    out = cases[-1]
    for k in range(len(cases) - 2, -1, -1):   # which == k ? cases[k] : (later cases)
        hit = arith.cmpi(arith.CmpIPredicate.eq, which, full_like(which, k, wdtype))
        out = arith.select(hit, cases[k], out)
    return [out]


@TRITON.register(St.ClampOp)
def _clamp(kl, op, lo, x, hi, **params):
    dtype = avals_in(op)[1].dtype
    shape = shape_of(x)
    lo, hi = broadcast_to(lo, shape), broadcast_to(hi, shape)
    return [binary("min", binary("max", x, lo, dtype), hi, dtype)]


@TRITON.register(St.ConvertElementTypeOp)
def _convert(kl, op, x, *, new_dtype, **params):
    return [convert(x, avals_in(op)[0].dtype, new_dtype)]


@TRITON.register(St.BitcastConvertTypeOp)
def _bitcast(kl, op, x, *, new_dtype, **params):
    src = np.dtype(avals_in(op)[0].dtype)
    if src.itemsize != np.dtype(new_dtype).itemsize:
        raise TritonLoweringError("bitcast_convert_type between widths is not supported "
                                  "by the Triton lowering")
    return [tt.bitcast(ttype(shape_of(x), new_dtype), x)]


@TRITON.register(St.CopyOp, St.StopGradientOp, St.OptimizationBarrierOp,
                 St.LayoutConstraintOp, St.DevicePutOp)
def _identity(kl, op, *xs, **params):
    return list(xs)


for _op in (E.ComplexOp, E.ConjOp, E.RealOp, E.ImagOp):
    TRITON.unsupported(_op, "Triton has no complex numbers")
for _op in (E.DigammaOp, E.PolygammaOp):
    TRITON.unsupported(_op, "the device math libraries have no digamma/polygamma")
TRITON.unsupported(E.ZetaOp, "the device math libraries have no Hurwitz zeta")
for _op in (E.BesselI0eOp, E.BesselI1eOp):
    TRITON.unsupported(_op, "no Triton lowering for the scaled Bessel functions (nor in "
                            "JAX's)")
TRITON.unsupported(St.ReducePrecisionOp, "no Triton lowering for this op inside kernels")
