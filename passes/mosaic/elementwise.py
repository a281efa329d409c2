"""Mosaic lowering rules of elementwise ops: arithmetic (`arith`), transcendental
functions (`math`), comparisons, bitwise ops and conversions, as JAX's Pallas TPU
lowering emits them (JAX: pallas/mosaic/lowering.py, the lax.*_p rules).

    %y = "jaxpr.exp"(%x) : (tensor<8x128xf32>) -> tensor<8x128xf32>
  ==>
    %y = math.exp %x : vector<8x128xf32>
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith, math as math_d, vector
from jaxlib.mosaic.python import tpu

from mjax.dialect.dtype_rules import bitwidth
from mjax.dialect.ops import elementwise as E
from mjax.dialect.ops import pallas_tpu_packing as PK
from mjax.dialect.ops import structural as St
from mjax.passes.kernel_lowering.arith import ARITH_BINARY, op_for_dtype
from mjax.passes.kernel_lowering.types import kind
from mjax.passes.kernel_lowering.unsupported import state_unsupported
from mjax.passes.mosaic.table import MOSAIC
from mjax.passes.rules.ad_util import IMPLICIT_BROADCAST
from mjax.passes.mosaic.types import (Const, MosaicLoweringError, avals_in, aval_out,
                                      full, is_float, is_unsigned, materialize, view_start,
                                      vtype)

# (float op, signed int op, unsigned int op) rows: arith's, and math's floats-only ones.
_BF16 = np.dtype("bfloat16")
_BINARY = {**ARITH_BINARY, "pow": (math_d.powf, None, None),
           "atan2": (math_d.atan2, None, None)}


def binary(name: str, x, y, dtype) -> ir.Value:
    fn = op_for_dtype(_BINARY[name], dtype)
    if fn is None:
        raise MosaicLoweringError(f"{name} of {np.dtype(dtype).name} is not supported")
    return fn(x, y)


def _operands(kl, op, *xs):
    """Operands as MLIR values of their dtypes (constants emitted here, in order)."""
    return [kl.value(x, a.dtype) for x, a in zip(xs, avals_in(op))]


@MOSAIC.register(E.AddOp, E.SubOp, E.MulOp, E.DivOp, E.RemOp, E.MaxOp, E.MinOp, E.AndOp,
                 E.OrOp, E.XorOp, E.PowOp, E.Atan2Op)
def _binary(kl, op, x, y, **params):
    cls = type(op.opview)
    if cls is E.AddOp:        # (chained views' starts the frontend added: types.py)
        folded = view_start(op, x, y)
        if folded is not None:
            return [folded]
    if cls is E.PowOp:
        return [_pow(kl, op, x, y)]
    x, y = _operands(kl, op, x, y)
    return [binary(cls.primitive, x, y, avals_in(op)[0].dtype)]


def _pow(kl, op, x, y) -> ir.Value:
    """As JAX's rule: an integer exponent converted to the float type first; a literal
    base 2 is math.exp2 of the exponent."""
    (a, b), out = avals_in(op), aval_out(op)
    y = kl.value(y, b.dtype)
    if not is_float(b.dtype):
        y = (arith.uitofp if is_unsigned(b.dtype) else arith.sitofp)(
            vtype(out.shape, out.dtype), y)
    if isinstance(x, Const) and x.value.size and (x.value == 2).all():
        return math_d.exp2(y)
    return math_d.powf(kl.value(x, a.dtype), y)


_CMPF = {"eq": "OEQ", "ne": "ONE", "lt": "OLT", "le": "OLE", "gt": "OGT", "ge": "OGE"}
_CMPSI = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
_CMPUI = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}


def _not(x, shape) -> ir.Value:
    return arith.xori(x, full(True, np.bool_, shape))      # (as JAX's not: a dense splat)


def compare(name: str, x, y, dtype, shape=(), again=()) -> ir.Value:
    """`again`: the operands (0, 1) JAX broadcasts a second time (scalars in its jaxpr)
    where its logical form of a boolean comparison takes them as they are."""
    dt = np.dtype(dtype)
    if dt == np.bool_:          # as JAX: logical ops on i1
        if again and name in ("lt", "le", "gt", "ge"):
            negated = _not(x if name in ("lt", "le") else y, shape)
            x, y = (negated, y) if name in ("lt", "le") else (x, negated)
            x, y = [vector.broadcast(v.type, v) if i in again else v
                    for i, v in enumerate((x, y))]
            return (arith.andi if name in ("lt", "gt") else arith.ori)(x, y)
        x, y = [vector.broadcast(v.type, v) if i in again else v for i, v in enumerate((x, y))]
        if name == "eq":
            return _not(arith.xori(x, y), shape)
        if name == "ne":
            return arith.xori(x, y)
        if name == "lt":
            return arith.andi(_not(x, shape), y)
        if name == "le":
            return arith.ori(_not(x, shape), y)
        if name == "gt":
            return arith.andi(x, _not(y, shape))
        return arith.ori(x, _not(y, shape))
    if is_float(dt):
        return arith.cmpf(getattr(arith.CmpFPredicate, _CMPF[name]), x, y)
    table = _CMPUI if is_unsigned(dt) else _CMPSI
    return arith.cmpi(getattr(arith.CmpIPredicate, table[name]), x, y)


# (for booleans, the operand JAX's logical form takes as it is, not through a `not`)
_BOOL_DIRECT = {"eq": (0, 1), "ne": (0, 1), "lt": (1,), "le": (1,), "gt": (0,), "ge": (0,)}


def _scalar_in_jax(op, i: int, x) -> bool:
    """Whether operand `i` is a scalar in JAX's jaxpr: a splat literal, or a scalar the
    frontend broadcast for lax (its marked implicit broadcast)."""
    if isinstance(x, Const):
        flat = x.value.reshape(-1)
        return bool(flat.size) and bool((flat == flat[0]).all())
    owner = op.operands[i].owner
    if isinstance(owner, ir.Block):
        return False
    owner = owner.operation
    return owner.name == St.BroadcastInDimOp.OPERATION_NAME and \
        IMPLICIT_BROADCAST in owner.attributes and \
        ir.RankedTensorType(owner.operands[0].type).rank == 0


@MOSAIC.register(E.EqOp, E.NeOp, E.LtOp, E.LeOp, E.GtOp, E.GeOp)
def _compare(kl, op, x, y, **params):
    a, name = avals_in(op)[0], type(op.opview).primitive
    scalar = [_scalar_in_jax(op, i, v) for i, v in enumerate((x, y))] \
        if a.shape and np.dtype(a.dtype) == np.bool_ else (False, False)
    again = tuple(i for i in _BOOL_DIRECT[name] if scalar[i])
    return [compare(name, *_operands(kl, op, x, y), a.dtype, a.shape, again)]


_MATH = {E.ExpOp: math_d.exp, E.Exp2Op: math_d.exp2, E.Expm1Op: math_d.expm1,
         E.LogOp: math_d.log, E.Log1pOp: math_d.log1p, E.SqrtOp: math_d.sqrt,
         E.RsqrtOp: math_d.rsqrt, E.CbrtOp: math_d.cbrt, E.SinOp: math_d.sin,
         E.CosOp: math_d.cos, E.TanOp: math_d.tan, E.AtanOp: math_d.atan,
         E.TanhOp: math_d.tanh, E.ErfOp: math_d.erf, E.FloorOp: math_d.floor,
         E.CeilOp: math_d.ceil, E.AbsOp: math_d.absf, E.AsinOp: math_d.asin,
         E.AcosOp: math_d.acos, E.SinhOp: math_d.sinh, E.CoshOp: math_d.cosh,
         E.AsinhOp: math_d.asinh, E.AcoshOp: math_d.acosh, E.AtanhOp: math_d.atanh}


@MOSAIC.register(*_MATH)
def _math_unary(kl, op, x, **params):
    a = avals_in(op)[0]
    x = kl.value(x, a.dtype)
    cls = type(op.opview)
    if cls is E.AbsOp and not is_float(a.dtype):
        return [math_d.absi(x)]
    if not is_float(a.dtype):
        raise MosaicLoweringError(f"{op.name} of {np.dtype(a.dtype).name} is not supported")
    return [_MATH[cls](x)]


@MOSAIC.register(E.NegOp)
def _neg(kl, op, x, **params):
    # JAX: 0 - x (lax.sub of a literal zero)
    a = avals_in(op)[0]
    zero = kl.value(_splat_const(0, a), a.dtype)
    return [binary("sub", zero, kl.value(x, a.dtype), a.dtype)]


def _splat_const(value, aval) -> Const:
    return Const(np.full(aval.shape, value, dtype=np.dtype(aval.dtype)))


@MOSAIC.register(E.SquareOp)
def _square(kl, op, x, **params):
    a = avals_in(op)[0]
    x = kl.value(x, a.dtype)
    return [binary("mul", x, x, a.dtype)]


@MOSAIC.register(E.IntegerPowOp)
def _integer_pow(kl, op, x, *, y, **params):
    # Square-and-multiply, as lax.integer_pow computes it.
    a = avals_in(op)[0]
    x = kl.value(x, a.dtype)
    if y == 0:
        return [kl.value(_splat_const(1, a), a.dtype)]
    n, acc, base = abs(int(y)), None, x
    while n:
        if n & 1:
            acc = base if acc is None else binary("mul", acc, base, a.dtype)
        n >>= 1
        if n:
            base = binary("mul", base, base, a.dtype)
    if y < 0:
        acc = binary("div", kl.value(_splat_const(1, a), a.dtype), acc, a.dtype)
    return [acc]


@MOSAIC.register(E.LogisticOp)
def _logistic(kl, op, x, **params):
    # JAX: 1 / (1 + exp(-x)), one 1 for both
    a = avals_in(op)[0]
    e = math_d.exp(arith.negf(kl.value(x, a.dtype)))
    one = kl.value(_splat_const(1.0, a), a.dtype)
    return [arith.divf(one, arith.addf(one, e))]


@MOSAIC.register(E.SignOp)
def _sign(kl, op, x, **params):
    a = avals_in(op)[0]
    x = kl.value(x, a.dtype)
    if is_float(a.dtype):
        return [_float_sign(x, np.dtype(a.dtype), a.shape)]

    def zero():      # (a constant per comparison, as JAX's literals)
        return full_like(0, a.dtype, a.shape)
    if is_unsigned(a.dtype):
        return [arith.extui(x.type, arith.cmpi(arith.CmpIPredicate.ne, x, zero()))]
    gt = arith.extui(x.type, arith.cmpi(arith.CmpIPredicate.sgt, x, zero()))
    lt = arith.extui(x.type, arith.cmpi(arith.CmpIPredicate.slt, x, zero()))
    return [arith.subi(gt, lt)]


def _float_sign(x, dtype, shape) -> ir.Value:
    """As JAX's rule: 1.0's bits with x's sign bit where |x| > 0, x itself for ±0 and
    NaN; bfloat16 in 16 bits (the chips with native bfloat16: export's v5e), other
    floats in float32."""
    wide = dtype if dtype == _BF16 else np.dtype(np.float32)
    uint, one, sign = ((np.uint16, 0x3F80, 0x8000) if wide == _BF16
                       else (np.uint32, 0x3F800000, 0x80000000))
    xw = convert(x, dtype, wide, shape)
    cast = tpu.bitcast if shape else arith.bitcast
    bits_ = arith.andi(cast(vtype(shape, uint), xw), full_like(sign, uint, shape))
    signed = cast(vtype(shape, wide), arith.ori(full_like(one, uint, shape), bits_))
    nonzero = arith.cmpf(arith.CmpFPredicate.OGT, math_d.absf(xw), full_like(0, wide, shape))
    return convert(arith.select(nonzero, signed, xw), wide, dtype, shape)


@MOSAIC.register(E.NotOp)
def _not_rule(kl, op, x, **params):
    # JAX: x xor -1 (all ones: logical for booleans, bitwise for integers), a dense splat
    a = avals_in(op)[0]
    x = kl.value(x, a.dtype)
    return [arith.xori(x, full(True if np.dtype(a.dtype) == np.bool_ else -1, a.dtype,
                              a.shape))]


@MOSAIC.register(E.ShiftLeftOp, E.ShiftRightLogicalOp, E.ShiftRightArithmeticOp)
def _shift(kl, op, x, y, **params):
    x, y = _operands(kl, op, x, y)
    fn = {E.ShiftLeftOp: arith.shli, E.ShiftRightLogicalOp: arith.shrui,
          E.ShiftRightArithmeticOp: arith.shrsi}[type(op.opview)]
    return [fn(x, y)]


@MOSAIC.register(E.PopulationCountOp)
def _population_count(kl, op, x, **params):
    return [math_d.ctpop(kl.value(x, avals_in(op)[0].dtype))]


@MOSAIC.register(E.ClzOp)
def _clz(kl, op, x, **params):
    return [math_d.ctlz(kl.value(x, avals_in(op)[0].dtype))]


@MOSAIC.register(E.IsFiniteOp)
def _is_finite(kl, op, x, **params):
    # JAX: not(tpu.weird(x)), Mosaic's test for infinities and NaNs
    a = avals_in(op)[0]
    x = kl.value(x, a.dtype)
    return [_not(tpu.weird(vtype(a.shape, np.bool_), x), a.shape)]


@MOSAIC.register(E.RoundOp)
def _round(kl, op, x, *, rounding_method=0, **params):
    x = kl.value(x, avals_in(op)[0].dtype)
    return [math_d.roundeven(x) if int(rounding_method) == 1 else math_d.round(x)]


# ---- conversions ------------------------------------------------------------------------
def convert(x: ir.Value, src, dst, shape=()) -> ir.Value:
    """Casts as JAX's Mosaic lowering does (bool -> int is extui; to bool is != 0)."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return x
    out = vtype(shape, dst)
    sbits, dbits = bitwidth(src), bitwidth(dst)
    sk, dk = kind(src), kind(dst)       # (int4/uint4: "i"/"u", 4 bits)
    if dst == np.bool_:
        if is_float(src):
            if sbits < 32:
                x, src = arith.extf(vtype(shape, np.float32), x), np.dtype(np.float32)
            return arith.cmpf(arith.CmpFPredicate.ONE, x, full_like(0, src, shape))
        if sbits < 32:
            x, src = convert(x, src, np.int32, shape), np.dtype(np.int32)
        return arith.cmpi(arith.CmpIPredicate.ne, x, full_like(0, src, shape))
    if src == np.bool_:
        if dk in "iu":
            return arith.extui(out, x)
        return convert(convert(x, src, np.int32, shape), np.int32, dst, shape)
    if is_float(src) and is_float(dst):
        return arith.extf(out, x) if dbits > sbits else arith.truncf(out, x)
    if sk in "iu" and dk in "iu":
        if dbits > sbits:
            return arith.extui(out, x) if sk == "u" else arith.extsi(out, x)
        return arith.trunci(out, x) if dbits < sbits else x
    if is_float(src):
        return arith.fptoui(out, x) if dk == "u" else arith.fptosi(out, x)
    # (an integer of any width -> float: one arith.sitofp/uitofp, as JAX's rule; its
    # widening helper is only the fallback of casts the rule has no op for)
    return arith.uitofp(out, x) if sk == "u" else arith.sitofp(out, x)


def full_like(value, dtype, shape) -> ir.Value:
    return materialize(Const(np.full(shape, value, dtype=np.dtype(dtype))))


@MOSAIC.register(St.ConvertElementTypeOp)
def _convert_element_type(kl, op, x, *, new_dtype, **params):
    a = avals_in(op)[0]
    return [convert(kl.value(x, a.dtype), a.dtype, new_dtype, a.shape)]


@MOSAIC.register(St.BitcastConvertTypeOp)
def _bitcast_convert_type(kl, op, x, *, new_dtype, **params):
    a, out = avals_in(op)[0], aval_out(op)
    if bitwidth(a.dtype) != bitwidth(new_dtype):
        raise MosaicLoweringError(f"bitcast_convert_type between widths ({a.dtype} -> "
                                  f"{new_dtype}) is not supported")
    x = kl.value(x, a.dtype)
    if a.shape:          # JAX: tpu.bitcast of vectors, arith.bitcast of scalars
        return [tpu.bitcast(vtype(out.shape, new_dtype), x)]
    return [arith.bitcast(vtype(out.shape, new_dtype), x)]


@MOSAIC.register(St.StopGradientOp, St.CopyOp, St.OptimizationBarrierOp)
def _identity(kl, op, *xs, **params):
    return list(xs)


# pltpu.stochastic_round, pack_elementwise, unpack_elementwise: Mosaic's own ops
@MOSAIC.register(PK.StochasticRoundOp)
def _stochastic_round(kl, op, x, random_bits, *, target_dtype, **params):
    a = avals_in(op)
    return [tpu.stochastic_convert(vtype(a[0].shape, target_dtype),
                                   kl.value(x, a[0].dtype),
                                   kl.value(random_bits, a[1].dtype))]


@MOSAIC.register(PK.PackElementwiseOp)
def _pack_elementwise(kl, op, *xs, packed_dtype, **params):
    a, out = avals_in(op), aval_out(op)
    return [tpu.pack_elementwise(vtype(out.shape, out.dtype),
                                 [kl.value(x, v.dtype) for x, v in zip(xs, a)],
                                 target_type=vtype((), packed_dtype))]


@MOSAIC.register(PK.UnpackElementwiseOp)
def _unpack_elementwise(kl, op, x, *, index, packed_dtype, unpacked_dtype, **params):
    a = avals_in(op)[0]
    return [tpu.unpack_elementwise(vtype(a.shape, unpacked_dtype), kl.value(x, a.dtype),
                                   source_type=vtype((), packed_dtype), index=int(index))]


# M. Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011): single
# precision, in two ranges of w = -log(1 - x^2); XLA and JAX's Pallas use the same.
_ERF_INV_W_LT_5 = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERF_INV_W_GE_5 = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                   0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


@MOSAIC.register(E.ErfInvOp)
def _erf_inv(kl, op, x, **params):
    # (emitted in the order of JAX's lowering of the same formula)
    a = avals_in(op)[0]
    if np.dtype(a.dtype) != np.float32:
        raise MosaicLoweringError(f"erf_inv in TPU kernels takes float32, got "
                                  f"{np.dtype(a.dtype).name}")
    x = kl.value(x, a.dtype)
    t = vtype(a.shape, a.dtype)
    c = lambda v: kl.value(_splat_const(v, a), a.dtype)        # noqa: E731

    def pick(pred, lo, hi):              # where(pred, lo, hi) of two scalars
        lo, hi = full(lo, a.dtype), full(hi, a.dtype)
        if a.shape:
            lo, hi = vector.broadcast(t, lo), vector.broadcast(t, hi)
        return arith.select(pred, lo, hi)

    w = math_d.log1p(arith.mulf(x, arith.subf(c(0.0), x)))
    w = arith.subf(c(0.0), w)
    small = arith.cmpf(arith.CmpFPredicate.OLT, w, c(5.0))
    w = arith.select(small, arith.subf(w, c(2.5)), arith.subf(math_d.sqrt(w), c(3.0)))
    p = pick(small, _ERF_INV_W_LT_5[0], _ERF_INV_W_GE_5[0])
    for lo, hi in zip(_ERF_INV_W_LT_5[1:], _ERF_INV_W_GE_5[1:]):
        coef = pick(small, lo, hi)
        p = arith.addf(coef, arith.mulf(p, w))
    edge = arith.cmpf(arith.CmpFPredicate.OEQ, math_d.absf(x), c(1.0))
    return [arith.select(edge, arith.mulf(c(np.inf), x), arith.mulf(p, x))]


state_unsupported(MOSAIC, {
    "lgamma has no Mosaic lowering": (E.LgammaOp,),
    "digamma has no Mosaic lowering": (E.DigammaOp,),
    "polygamma has no Mosaic lowering": (E.PolygammaOp,),
    "zeta has no Mosaic lowering (nor has it in JAX)": (E.ZetaOp,),
    "bessel_i0e has no Mosaic lowering (nor has it in JAX)": (E.BesselI0eOp,),
    "bessel_i1e has no Mosaic lowering (nor has it in JAX)": (E.BesselI1eOp,),
    "erfc has no Mosaic lowering; use 1 - erf(x)": (E.ErfcOp,),
    "complex numbers are not supported in TPU kernels": (
        E.RealOp, E.ImagOp, E.ComplexOp, E.ConjOp),
})
