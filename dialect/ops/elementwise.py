"""Elementwise ops: unary and binary arithmetic, math functions, logic, comparisons.

Operands of a binary op share one shape and one dtype (JAX's lax does not broadcast:
the numpy layer does that before binding).
"""
from __future__ import annotations

import numpy as np

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.dtype_rules import (check_dtype, check_same_dtypes, check_same_shapes,
                                      complex_dtype, is_complex, real_dtype)
from mjax.dialect.types import ShapedArray


class ElementwiseUnary(JaxprOp):
    """Base of unary elementwise ops: result has the operand's shape and dtype."""

    num_operands = 1
    dtypes: tuple[str, ...] = ("numeric",)

    @classmethod
    def result_dtype(cls, dtype):
        return dtype

    @classmethod
    def infer(cls, x: ShapedArray, **params):
        check_dtype(cls.primitive, x, *cls.dtypes)
        return (ShapedArray(x.shape, cls.result_dtype(x.dtype)),)


class ElementwiseBinary(JaxprOp):
    """Base of binary elementwise ops: equal shapes, equal dtypes."""

    num_operands = 2
    dtypes: tuple[str, ...] = ("numeric",)

    @classmethod
    def result_dtype(cls, dtype):
        return dtype

    @classmethod
    def infer(cls, x: ShapedArray, y: ShapedArray, **params):
        check_same_shapes(cls.primitive, (x, y))
        check_same_dtypes(cls.primitive, (x, y))
        check_dtype(cls.primitive, x, *cls.dtypes)
        return (ShapedArray(x.shape, cls.result_dtype(x.dtype)),)


# ---- arithmetic ----------------------------------------------------------------
class AddOp(ElementwiseBinary, name="add"):
    """Elementwise x + y. JAX: lax.add_p."""


class SubOp(ElementwiseBinary, name="sub"):
    """Elementwise x - y. JAX: lax.sub_p."""


class MulOp(ElementwiseBinary, name="mul"):
    """Elementwise x * y. JAX: lax.mul_p."""


class DivOp(ElementwiseBinary, name="div"):
    """Elementwise x / y (integers round toward zero). JAX: lax.div_p."""


class RemOp(ElementwiseBinary, name="rem"):
    """Elementwise remainder with the sign of x (C fmod). JAX: lax.rem_p."""
    dtypes = ("int", "float")


class PowOp(JaxprOp, name="pow"):
    """Elementwise x ** y; y has x's dtype or is an integer. JAX: lax.pow_p."""
    num_operands = 2

    @classmethod
    def infer(cls, x, y):
        check_same_shapes("pow", (x, y))
        check_dtype("pow", x, "inexact", what="first operand")
        if x.dtype != y.dtype:
            check_dtype("pow", y, "int", what="second operand (when dtypes differ)")
        return (ShapedArray(x.shape, x.dtype),)


class IntegerPowOp(ElementwiseUnary, name="integer_pow"):
    """Elementwise x ** y for a static integer y. JAX: lax.integer_pow_p."""
    attributes = {"y": A.Int()}

    @classmethod
    def infer(cls, x, *, y):
        check_dtype("integer_pow", x, "numeric")
        if y < 0 and not is_complex(x.dtype) and np.issubdtype(x.dtype, np.integer):
            raise TypeError(f"integer_pow: negative exponent {y} is not allowed for "
                            f"integer dtype {x.dtype}")
        return (x.strip_weak_type(),)


class MaxOp(ElementwiseBinary, name="max"):
    """Elementwise maximum (NaN-propagating). JAX: lax.max_p."""
    dtypes = ("any",)


class MinOp(ElementwiseBinary, name="min"):
    """Elementwise minimum (NaN-propagating). JAX: lax.min_p."""
    dtypes = ("any",)


class Atan2Op(ElementwiseBinary, name="atan2"):
    """Elementwise atan2(x, y). JAX: lax.atan2_p."""
    dtypes = ("inexact",)


class NegOp(ElementwiseUnary, name="neg"):
    """Elementwise -x. JAX: lax.neg_p."""


class SquareOp(ElementwiseUnary, name="square"):
    """Elementwise x * x. JAX: lax.square_p."""


class AbsOp(ElementwiseUnary, name="abs"):
    """Elementwise |x|; complex -> real. JAX: lax.abs_p."""
    dtypes = ("signed", "inexact")  # JAX rejects unsigned (numpy's abs is identity there)

    @classmethod
    def result_dtype(cls, dtype):
        return real_dtype(dtype)


class SignOp(ElementwiseUnary, name="sign"):
    """Elementwise sign (-1, 0, 1; x/|x| for complex). JAX: lax.sign_p."""


class FloorOp(ElementwiseUnary, name="floor"):
    """Elementwise floor. JAX: lax.floor_p."""
    dtypes = ("float",)


class CeilOp(ElementwiseUnary, name="ceil"):
    """Elementwise ceiling. JAX: lax.ceil_p."""
    dtypes = ("float",)


class RoundOp(ElementwiseUnary, name="round"):
    """Elementwise rounding; rounding_method 0 = away from zero, 1 = to nearest even.
    JAX: lax.round_p."""
    dtypes = ("float",)
    attributes = {"rounding_method": A.Int(default=0)}

    @classmethod
    def infer(cls, x, *, rounding_method):
        if rounding_method not in (0, 1):
            raise ValueError(f"round: rounding_method must be 0 (AWAY_FROM_ZERO) or "
                             f"1 (TO_NEAREST_EVEN), got {rounding_method}")
        return super().infer(x)


class IsFiniteOp(ElementwiseUnary, name="is_finite"):
    """Elementwise test for finite values. JAX: lax.is_finite_p."""
    dtypes = ("float",)

    @classmethod
    def result_dtype(cls, dtype):
        return np.dtype(np.bool_)


# ---- transcendental ------------------------------------------------------------
class _Inexact(ElementwiseUnary):
    dtypes = ("inexact",)


class _Real(ElementwiseUnary):
    dtypes = ("float",)


class ExpOp(_Inexact, name="exp"):
    """Elementwise e ** x. JAX: lax.exp_p."""


class Exp2Op(_Inexact, name="exp2"):
    """Elementwise 2 ** x. JAX: lax.exp2_p."""


class Expm1Op(_Inexact, name="expm1"):
    """Elementwise e ** x - 1, accurate near 0. JAX: lax.expm1_p."""


class LogOp(_Inexact, name="log"):
    """Elementwise natural logarithm. JAX: lax.log_p."""


class Log1pOp(_Inexact, name="log1p"):
    """Elementwise log(1 + x), accurate near 0. JAX: lax.log1p_p."""


class SqrtOp(_Inexact, name="sqrt"):
    """Elementwise square root. JAX: lax.sqrt_p."""


class RsqrtOp(_Inexact, name="rsqrt"):
    """Elementwise 1 / sqrt(x). JAX: lax.rsqrt_p."""


class CbrtOp(_Real, name="cbrt"):
    """Elementwise cube root. JAX: lax.cbrt_p."""


class SinOp(_Inexact, name="sin"):
    """Elementwise sine. JAX: lax.sin_p."""


class CosOp(_Inexact, name="cos"):
    """Elementwise cosine. JAX: lax.cos_p."""


class TanOp(_Inexact, name="tan"):
    """Elementwise tangent. JAX: lax.tan_p."""


class AsinOp(_Inexact, name="asin"):
    """Elementwise arcsine. JAX: lax.asin_p."""


class AcosOp(_Inexact, name="acos"):
    """Elementwise arccosine. JAX: lax.acos_p."""


class AtanOp(_Inexact, name="atan"):
    """Elementwise arctangent. JAX: lax.atan_p."""


class SinhOp(_Inexact, name="sinh"):
    """Elementwise hyperbolic sine. JAX: lax.sinh_p."""


class CoshOp(_Inexact, name="cosh"):
    """Elementwise hyperbolic cosine. JAX: lax.cosh_p."""


class TanhOp(_Inexact, name="tanh"):
    """Elementwise hyperbolic tangent. JAX: lax.tanh_p."""


class AsinhOp(_Inexact, name="asinh"):
    """Elementwise inverse hyperbolic sine. JAX: lax.asinh_p."""


class AcoshOp(_Inexact, name="acosh"):
    """Elementwise inverse hyperbolic cosine. JAX: lax.acosh_p."""


class AtanhOp(_Inexact, name="atanh"):
    """Elementwise inverse hyperbolic tangent. JAX: lax.atanh_p."""


class LogisticOp(_Inexact, name="logistic"):
    """Elementwise 1 / (1 + e ** -x). JAX: lax.logistic_p."""


class ErfOp(_Real, name="erf"):
    """Elementwise error function. JAX: lax.erf_p."""


class ErfcOp(_Real, name="erfc"):
    """Elementwise complementary error function. JAX: lax.erfc_p."""


class ErfInvOp(_Real, name="erf_inv"):
    """Elementwise inverse error function. JAX: lax.erf_inv_p."""


class LgammaOp(_Real, name="lgamma"):
    """Elementwise log |Gamma(x)|. JAX: lax.lgamma_p."""


class DigammaOp(_Real, name="digamma"):
    """Elementwise digamma (derivative of lgamma). JAX: lax.digamma_p."""


class BesselI0eOp(_Real, name="bessel_i0e"):
    """Elementwise exp(-|x|) I0(x), the exponentially scaled modified Bessel function of
    order 0. JAX: lax.bessel_i0e_p."""


class BesselI1eOp(_Real, name="bessel_i1e"):
    """Elementwise exp(-|x|) I1(x), the exponentially scaled modified Bessel function of
    order 1. JAX: lax.bessel_i1e_p."""


class PolygammaOp(ElementwiseBinary, name="polygamma"):
    """Elementwise polygamma(m, x), the m-th derivative of digamma; m holds nonnegative
    integer values in x's float dtype. JAX: lax.polygamma_p."""
    dtypes = ("float",)


class ZetaOp(ElementwiseBinary, name="zeta"):
    """Elementwise Hurwitz zeta(x, q) = sum_k (k + q)^-x. JAX: lax.zeta_p."""
    dtypes = ("float",)


# ---- bitwise and logical -------------------------------------------------------
class NotOp(ElementwiseUnary, name="not"):
    """Elementwise logical/bitwise not. JAX: lax.not_p."""
    dtypes = ("bool", "int")


class AndOp(ElementwiseBinary, name="and"):
    """Elementwise logical/bitwise and. JAX: lax.and_p."""
    dtypes = ("bool", "int")


class OrOp(ElementwiseBinary, name="or"):
    """Elementwise logical/bitwise or. JAX: lax.or_p."""
    dtypes = ("bool", "int")


class XorOp(ElementwiseBinary, name="xor"):
    """Elementwise logical/bitwise exclusive or. JAX: lax.xor_p."""
    dtypes = ("bool", "int")


class ShiftLeftOp(ElementwiseBinary, name="shift_left"):
    """Elementwise x << y. JAX: lax.shift_left_p."""
    dtypes = ("int",)


class ShiftRightArithmeticOp(ElementwiseBinary, name="shift_right_arithmetic"):
    """Elementwise sign-extending x >> y. JAX: lax.shift_right_arithmetic_p."""
    dtypes = ("int",)


class ShiftRightLogicalOp(ElementwiseBinary, name="shift_right_logical"):
    """Elementwise zero-filling x >> y. JAX: lax.shift_right_logical_p."""
    dtypes = ("int",)


class PopulationCountOp(ElementwiseUnary, name="population_count"):
    """Elementwise count of set bits. JAX: lax.population_count_p."""
    dtypes = ("int",)


class ClzOp(ElementwiseUnary, name="clz"):
    """Elementwise count of leading zero bits. JAX: lax.clz_p."""
    dtypes = ("int",)


# ---- comparisons ---------------------------------------------------------------
class Comparison(ElementwiseBinary):
    """Base of comparisons: result is bool."""
    dtypes = ("any",)

    @classmethod
    def result_dtype(cls, dtype):
        return np.dtype(np.bool_)


class _Ordered(Comparison):
    dtypes = ("bool", "int", "float")


class EqOp(Comparison, name="eq"):
    """Elementwise x == y. JAX: lax.eq_p."""


class NeOp(Comparison, name="ne"):
    """Elementwise x != y. JAX: lax.ne_p."""


class LtOp(_Ordered, name="lt"):
    """Elementwise x < y. JAX: lax.lt_p."""


class LeOp(_Ordered, name="le"):
    """Elementwise x <= y. JAX: lax.le_p."""


class GtOp(_Ordered, name="gt"):
    """Elementwise x > y. JAX: lax.gt_p."""


class GeOp(_Ordered, name="ge"):
    """Elementwise x >= y. JAX: lax.ge_p."""


# ---- complex numbers -----------------------------------------------------------
class RealOp(ElementwiseUnary, name="real"):
    """Real part of a complex array. JAX: lax.real_p."""
    dtypes = ("complex",)

    @classmethod
    def result_dtype(cls, dtype):
        return real_dtype(dtype)


class ImagOp(RealOp, name="imag"):
    """Imaginary part of a complex array. JAX: lax.imag_p."""


class ComplexOp(ElementwiseBinary, name="complex"):
    """x + i*y from two real arrays. JAX: lax.complex_p."""
    dtypes = ("float",)

    @classmethod
    def infer(cls, x, y):
        check_same_shapes("complex", (x, y))
        check_same_dtypes("complex", (x, y))
        if np.dtype(x.dtype) not in (np.float32, np.float64):
            raise TypeError(f"complex requires float32 or float64 operands, got {x.dtype}")
        return (ShapedArray(x.shape, complex_dtype(x.dtype)),)


class ConjOp(ElementwiseUnary, name="conj"):
    """Complex conjugate; a real input gives a complex result. JAX: lax.conj_p."""
    dtypes = ("float", "complex")
    attributes = {"input_dtype": A.DType(default=None)}

    @classmethod
    def infer(cls, x, *, input_dtype=None):
        check_dtype("conj", x, *cls.dtypes)
        if is_complex(x.dtype):
            return (ShapedArray(x.shape, x.dtype),)
        if np.dtype(x.dtype) not in (np.float32, np.float64):
            raise TypeError(f"conj requires float32, float64 or complex operands, got {x.dtype}")
        return (ShapedArray(x.shape, complex_dtype(x.dtype)),)
