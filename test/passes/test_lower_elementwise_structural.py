"""Every elementwise and structural op, lowered with --jaxpr-to-stablehlo and run by XLA,
against NumPy/SciPy (and, for integer corner cases XLA defines, JAX's lax as oracle).

Each case compiles one small module; cases pack many inputs into one array so the whole
file stays a few hundred compiles.
"""
from __future__ import annotations

import math
import os

import ml_dtypes
import numpy as np
import pytest
import scipy.special

from op_runner import run_op  # noqa: E402  (test/ is on sys.path via conftest)

F16, BF16 = np.float16, ml_dtypes.bfloat16
F32, F64, C64, C128 = np.float32, np.float64, np.complex64, np.complex128
I8, I16, I32, I64 = np.int8, np.int16, np.int32, np.int64
U8, U32, U64 = np.uint8, np.uint32, np.uint64
BOOL = np.bool_

# Relative tolerance of transcendental functions per dtype.
RTOL = {F32: 2e-6, F64: 1e-13, C64: 5e-6, C128: 1e-12, BF16: 1e-2, F16: 2e-3}

# On a TPU (MJAX_TEST_TPU=1, test/conftest.py) the chip's XLA differs from the CPU's where
# JAX's tests allow for it: float32/complex64 transcendentals are approximations (lax_test
# widens them to 2e-4 there, lgamma to 1e-3; XLA's inverse functions built on log1p/atan2
# alike), a float32 dot's default precision is one bfloat16 pass, float64 is emulated with
# float32 pairs (float32's range) and some complex128 ops abort XLA's TPU compiler (JAX's
# tests leave float64 and complex128 out on TPUs): there float64's corners are checked
# against JAX's program on the chip (the same StableHLO op), complex128 not at all.
ON_TPU = os.environ.get("MJAX_TEST_TPU", "") not in ("", "0")
TPU_TOL = dict.fromkeys(("acosh", "asinh", "cos", "cosh", "digamma", "exp", "exp2", "log",
                         "log1p", "logistic", "pow", "sin", "sinh", "tan", "asin", "acos",
                         "atan", "atanh", "polygamma"), 2e-4) | {"lgamma": 1e-3}
NO_C128 = "TPU: no complex128 (XLA's TPU compiler aborts on some of its ops; JAX's tests " \
          "leave complex128 out on TPUs)"


def _tol(op, cpu: float) -> float:
    """`cpu`, or on the chip at least JAX's float32/complex64 tolerance for `op` there."""
    return max(cpu, TPU_TOL.get(op, 0.0)) if ON_TPU else cpu


def _jax_on_chip(op, *args, **params):
    """JAX's lax.<op> of `args` (x64 on): on the chip, the same program run there."""
    import jax
    with jax.enable_x64(True):
        return np.asarray(jax.jit(lambda *a: getattr(jax.lax, op)(*a, **params))(*args))


def _name(dtype) -> str:
    return np.dtype(dtype).name


def run1(op, *args, **params) -> np.ndarray:
    outs = run_op(op, *args, **params)
    assert len(outs) == 1, f"{op}: expected 1 result, got {len(outs)}"
    return outs[0]


def check(op, args, expected, *, rtol=0.0, atol=0.0, **params):
    """run `op` and compare to `expected`, including dtype and shape (NaNs must match)."""
    expected = np.asarray(expected)
    got = run1(op, *args, **params)
    assert got.dtype == expected.dtype, f"{op}: dtype {got.dtype}, expected {expected.dtype}"
    assert got.shape == expected.shape, f"{op}: shape {got.shape}, expected {expected.shape}"
    if got.dtype in (BF16, F16):  # numpy's testing helpers do not know ml_dtypes
        got, expected = got.astype(F64), expected.astype(F64)
    if rtol == 0 and atol == 0:
        np.testing.assert_array_equal(got, expected, err_msg=f"{op} {params}")
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=f"{op} {params}")


# ---- unary floating-point (and complex) math ---------------------------------------
def _vec(f):
    return np.vectorize(f, otypes=[np.float64])


def _logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


# op -> (oracle on float64/complex128, real domain, accepts complex)
UNARY = {
    "exp": (np.exp, (-5, 5), True),
    "exp2": (np.exp2, (-5, 5), True),
    "expm1": (np.expm1, (-1, 1), True),
    "log": (np.log, (0.01, 10), True),
    "log1p": (np.log1p, (-0.5, 2), True),
    "sqrt": (np.sqrt, (0, 10), True),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 10), True),
    "cbrt": (np.cbrt, (-8, 8), False),
    "sin": (np.sin, (-4, 4), True),
    "cos": (np.cos, (-4, 4), True),
    "tan": (np.tan, (-1.4, 1.4), True),
    "asin": (np.arcsin, (-0.99, 0.99), True),
    "acos": (np.arccos, (-0.99, 0.99), True),
    "atan": (np.arctan, (-5, 5), True),
    "sinh": (np.sinh, (-3, 3), True),
    "cosh": (np.cosh, (-3, 3), True),
    "tanh": (np.tanh, (-3, 3), True),
    "asinh": (np.arcsinh, (-5, 5), True),
    "acosh": (np.arccosh, (1.01, 5), True),
    "atanh": (np.arctanh, (-0.95, 0.95), True),
    "logistic": (_logistic, (-6, 6), True),
    "erf": (_vec(math.erf), (-3, 3), False),
    "erfc": (_vec(math.erfc), (-3, 3), False),
    "erf_inv": (scipy.special.erfinv, (-0.99, 0.99), False),
    "lgamma": (_vec(math.lgamma), (0.1, 8), False),
    "digamma": (scipy.special.digamma, (0.1, 8), False),
}
# A few ops whose XLA implementations are approximations need a looser f32/f64 bound.
LOOSE = {"lgamma": 1e-5, "digamma": 1e-5, "erf_inv": 1e-5, "tan": 1e-5, "acosh": 1e-5,
         "atanh": 1e-5, "erfc": 1e-5, "expm1": 1e-5, "log1p": 1e-5, "exp2": 1e-5}


@pytest.mark.parametrize("dtype", [F32, F64], ids=_name)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_real(op, dtype):
    oracle, (lo, hi), _ = UNARY[op]
    x = np.linspace(lo, hi, 13).astype(dtype)
    expected = oracle(x.astype(F64)).astype(dtype)
    rtol = max(RTOL[dtype], LOOSE.get(op, 0) if dtype == F32 else LOOSE.get(op, 0) ** 2)
    if dtype == F32:
        rtol = _tol(op, rtol)
    check(op, [x], expected, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", [C64, C128], ids=_name)
@pytest.mark.parametrize("op", sorted(o for o, (_, _, c) in UNARY.items() if c))
def test_unary_complex(op, dtype):
    if ON_TPU and dtype == C128:
        pytest.skip(NO_C128)
    oracle, (lo, hi), _ = UNARY[op]
    # Stay off the real axis so branch cuts do not decide the answer.
    re = np.linspace(max(lo, -2), min(hi, 2), 5)
    z = (re + 1j * np.array([0.5, -0.3, 0.7, -0.9, 0.2])).astype(dtype)
    expected = oracle(z.astype(C128)).astype(dtype)
    tol = _tol(op, 1e-5) if dtype == C64 else 1e-11
    check(op, [z], expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("op", ["exp", "sin", "tanh", "sqrt", "log", "logistic"])
def test_unary_bf16(op):
    oracle, (lo, hi), _ = UNARY[op]
    x = np.linspace(lo, hi, 9).astype(BF16)
    expected = oracle(x.astype(F64)).astype(BF16)
    check(op, [x], expected, rtol=1e-2, atol=1e-2)


def test_unary_special_values():
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0], F32)
    with np.errstate(all="ignore"):
        check("exp", [x], np.exp(x))
        check("log", [x], np.log(x))
        check("sqrt", [x], np.sqrt(x))
        check("tanh", [x], np.tanh(x))


# ---- rounding, sign, abs, neg, is_finite --------------------------------------------
def test_floor_ceil():
    x = np.array([-2.5, -1.0, -0.5, 0.0, 0.4, 1.5, 2.7, np.inf, np.nan], F32)
    check("floor", [x], np.floor(x))
    check("ceil", [x], np.ceil(x))
    x64 = x.astype(F64)   # (on the chip floor(inf) of an emulated float64 is JAX's answer)
    check("floor", [x64], _jax_on_chip("floor", x64) if ON_TPU else np.floor(x64))
    check("ceil", [x.astype(BF16)], np.ceil(x.astype(F32)).astype(BF16))


def _round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


@pytest.mark.parametrize("dtype", [F32, F64, BF16], ids=_name)
def test_round(dtype):
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49, -3.7, 3.2], dtype)
    ref = x.astype(F64)
    check("round", [x], _round_half_away(ref).astype(dtype))  # default: away from zero
    check("round", [x], _round_half_away(ref).astype(dtype), rounding_method=0)
    check("round", [x], np.round(ref).astype(dtype), rounding_method=1)  # to nearest even


def test_sign():
    x = np.array([-3.5, -0.0, 0.0, 2.0, np.inf, -np.inf], F32)
    check("sign", [x], np.sign(x))
    check("sign", [np.array([-5, 0, 7, -128], I8)], np.array([-1, 0, 1, -1], I8))
    check("sign", [np.array([-5, 0, 7], I64)], np.array([-1, 0, 1], I64))
    # JAX: sign of an unsigned integer is 0 or 1.
    check("sign", [np.array([0, 1, 200, 255], U8)], np.array([0, 1, 1, 1], U8))
    check("sign", [np.array([0, 2**32 - 1], U32)], np.array([0, 1], U32))
    z = np.array([3 + 4j, -2j, 0], C64)
    check("sign", [z], np.array([0.6 + 0.8j, -1j, 0], C64), rtol=1e-6, atol=1e-7)


def test_abs():
    check("abs", [np.array([-3.5, 0.0, 2.0, -np.inf], F32)], np.array([3.5, 0, 2, np.inf], F32))
    check("abs", [np.array([-5, 0, 7, -127], I8)], np.array([5, 0, 7, 127], I8))
    check("abs", [np.array([-(2**40), 3], I64)], np.array([2**40, 3], I64))
    # complex -> real magnitude
    check("abs", [np.array([3 + 4j, -1j], C64)], np.array([5.0, 1.0], F32), rtol=1e-6)
    if not ON_TPU:  # (complex128: see ON_TPU)
        check("abs", [np.array([3 + 4j, -1j], C128)], np.array([5.0, 1.0], F64), rtol=1e-14)


def test_neg():
    check("neg", [np.array([1.5, -0.0, np.inf], F32)], np.array([-1.5, 0.0, -np.inf], F32))
    check("neg", [np.array([1, -128, 127], I8)], np.array([-1, -128, -127], I8))  # wraps
    check("neg", [np.array([0, 1, 255], U8)], np.array([0, 255, 1], U8))
    check("neg", [np.array([1 + 2j], C128)], np.array([-1 - 2j], C128))


def test_is_finite():
    x = np.array([1.0, np.inf, -np.inf, np.nan, 0.0], F32)
    check("is_finite", [x], np.isfinite(x))
    check("is_finite", [x.astype(F64)], np.isfinite(x))
    check("is_finite", [x.astype(BF16)], np.isfinite(x))


# ---- binary arithmetic ---------------------------------------------------------------
_RNG = np.random.default_rng(0)


def _ints(dtype, n=16, lo=None, hi=None):
    info = np.iinfo(dtype)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return _RNG.integers(lo, hi, size=n, endpoint=True, dtype=dtype)


@pytest.mark.parametrize("dtype", [I8, I32, I64, U8, U32, U64], ids=_name)
def test_add_sub_mul_int_wraparound(dtype):
    x, y = _ints(dtype), _ints(dtype)
    with np.errstate(over="ignore"):
        check("add", [x, y], x + y)
        check("sub", [x, y], x - y)
        check("mul", [x, y], x * y)


@pytest.mark.parametrize("dtype", [F32, F64, C64, BF16], ids=_name)
def test_add_sub_mul_div_inexact(dtype):
    x = np.array([1.5, -2.0, 3.25, 1e3, -0.5], F64)
    y = np.array([0.5, 4.0, -1.5, 7.0, 3.0], F64)
    if dtype == C64:
        x, y = x + 1j * y[::-1], y - 0.5j
    x, y = x.astype(dtype), y.astype(dtype)
    tol = 1e-2 if dtype == BF16 else 1e-6
    ref = x.astype(np.result_type(x.dtype, F64)) if dtype != BF16 else x.astype(F64)
    yref = y.astype(ref.dtype)
    for op, f in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                  ("div", np.divide)):
        check(op, [x, y], f(ref, yref).astype(dtype), rtol=tol, atol=tol)


def test_div_float_special():
    x = np.array([1.0, -1.0, 0.0, np.inf], F32)
    y = np.array([0.0, 0.0, 0.0, np.inf], F32)
    with np.errstate(all="ignore"):
        check("div", [x, y], x / y)


def _xla_int_div(x, y):
    """XLA's integer division: rounds toward zero; x/0 is -1 (all ones); MIN/-1 is MIN."""
    out = np.empty_like(x)
    for i, (a, b) in enumerate(zip(x.tolist(), y.tolist())):
        if b == 0:
            out[i] = np.array(-1).astype(x.dtype) if np.issubdtype(x.dtype, np.signedinteger) \
                else np.iinfo(x.dtype).max
        elif np.issubdtype(x.dtype, np.signedinteger) and a == np.iinfo(x.dtype).min and b == -1:
            out[i] = a
        else:
            q = abs(a) // abs(b)
            out[i] = q if (a >= 0) == (b >= 0) else -q
    return out


def _xla_int_rem(x, y):
    """XLA's integer remainder: sign of x; x%0 is x; MIN%-1 is 0."""
    out = np.empty_like(x)
    for i, (a, b) in enumerate(zip(x.tolist(), y.tolist())):
        if b == 0:
            out[i] = a
        elif b == -1:
            out[i] = 0
        else:
            r = abs(a) % abs(b)
            out[i] = r if a >= 0 else -r
    return out


@pytest.mark.parametrize("dtype", [I8, I32, I64, U8, U32], ids=_name)
def test_div_rem_int(dtype):
    signed = np.issubdtype(dtype, np.signedinteger)
    info = np.iinfo(dtype)
    base_x = [7, -7, 7, -7, 0, 5, info.min, info.min, info.max, 3, -3, 1]
    base_y = [2, 2, -2, -2, 3, 0, -1, 1, 7, 0, 0, -1]
    if not signed:
        base_x = [7, 7, 0, 5, info.max, 3, info.max, 1]
        base_y = [2, 3, 3, 0, 7, 0, info.max, info.max]
    x, y = np.array(base_x).astype(dtype), np.array(base_y).astype(dtype)
    check("div", [x, y], _xla_int_div(x, y))
    check("rem", [x, y], _xla_int_rem(x, y))


@pytest.mark.parametrize("dtype", [F32, F64], ids=_name)
def test_rem_float(dtype):
    x = np.array([5.5, -5.5, 5.5, -5.5, 1.0, np.inf, 3.0], dtype)
    y = np.array([2.0, 2.0, -2.0, -2.0, 0.0, 1.0, np.inf], dtype)
    with np.errstate(all="ignore"):  # (on the chip rem(3, inf) is JAX's answer there)
        expected = _jax_on_chip("rem", x, y) if ON_TPU else np.fmod(x, y)  # like C fmod
    check("rem", [x, y], expected)


def test_pow():
    x = np.array([2.0, 0.5, 3.0, 10.0, 0.0], F32)
    y = np.array([3.0, -2.0, 0.5, -1.0, 0.0], F32)
    r32, r64 = _tol("pow", 1e-6), _tol("pow", 1e-5)
    check("pow", [x, y], np.power(x, y), rtol=r32)
    x64, y64 = x.astype(F64), y.astype(F64)
    check("pow", [x64, y64], _jax_on_chip("pow", x64, y64) if ON_TPU else np.power(x64, y64),
          rtol=1e-14)
    # integer exponent with a float base: JAX converts the exponent to the base's dtype
    yi = np.array([3, -2, 0, 5, 2], I32)
    check("pow", [x, yi], np.power(x.astype(F64), yi.astype(F64)).astype(F32), rtol=r32)
    xn = np.array([-2.0, -0.5, -3.0], F32)
    check("pow", [xn, np.array([3, -3, 2], I32)], np.array([-8.0, -8.0, 9.0], F32), rtol=r32)
    z = np.array([1 + 1j, 2 - 1j], C64)
    check("pow", [z, np.array([2, 3], I32)], (z.astype(C128) ** np.array([2, 3])).astype(C64),
          rtol=r64)
    check("pow", [z, z], (z.astype(C128) ** z.astype(C128)).astype(C64), rtol=r64)


@pytest.mark.parametrize("y", [0, 1, 2, 3, 7, -1, -2])
def test_integer_pow_float(y):
    x = np.array([1.5, -2.0, 0.5, 3.0], F32)
    check("integer_pow", [x], (x.astype(F64) ** y).astype(F32), rtol=1e-6, y=y)


def test_integer_pow_other_dtypes():
    xi = np.array([2, -3, 0, 5], I32)
    check("integer_pow", [xi], xi ** 3, y=3)
    check("integer_pow", [xi.astype(I8)], (xi ** 4).astype(I8), y=4)  # wraps like XLA mul
    check("integer_pow", [xi], np.ones(4, I32), y=0)
    z = np.array([1 + 1j, -2j], C64)
    check("integer_pow", [z], (z.astype(C128) ** 5).astype(C64), rtol=1e-6, y=5)
    check("integer_pow", [z], (z.astype(C128) ** -2).astype(C64), rtol=1e-6, y=-2)
    check("integer_pow", [np.array([1.5, 2.0], BF16)], np.array([3.375, 8.0], BF16), y=3)


@pytest.mark.parametrize("dtype", [F32, F64], ids=_name)
def test_max_min_float_nan_propagating(dtype):
    x = np.array([1.0, np.nan, -0.5, 3.0, -np.inf], dtype)
    y = np.array([2.0, 1.0, np.nan, -3.0, 0.0], dtype)
    check("max", [x, y], np.maximum(x, y))
    check("min", [x, y], np.minimum(x, y))


@pytest.mark.parametrize("dtype", [I8, U8, I64, U64, BOOL], ids=_name)
def test_max_min_int_bool(dtype):
    if dtype == BOOL:
        x, y = np.array([True, True, False, False]), np.array([True, False, True, False])
    else:
        x, y = _ints(dtype), _ints(dtype)
    check("max", [x, y], np.maximum(x, y))
    check("min", [x, y], np.minimum(x, y))


def test_max_min_complex_lexicographic():
    # JAX orders complex numbers by real part, then imaginary part.
    x = np.array([1 + 2j, 1 - 1j, -1 + 0j, 2 + 0j], C64)
    y = np.array([1 + 1j, 1 + 1j, -1 + 5j, 1 + 9j], C64)
    check("max", [x, y], np.array([1 + 2j, 1 + 1j, -1 + 5j, 2 + 0j], C64))
    check("min", [x, y], np.array([1 + 1j, 1 - 1j, -1 + 0j, 1 + 9j], C64))


@pytest.mark.parametrize("dtype", [F32, F64], ids=_name)
def test_atan2(dtype):
    y = np.array([1.0, -1.0, 1.0, -1.0, 0.0, 0.0, 3.0], dtype)
    x = np.array([1.0, 1.0, -1.0, -1.0, -1.0, 1.0, 0.0], dtype)
    check("atan2", [y, x], np.arctan2(y, x), rtol=RTOL[dtype])


@pytest.mark.parametrize("dtype", [F32, F64], ids=_name)
def test_polygamma(dtype):
    m = np.array([0, 1, 2, 3, 1, 4], dtype)
    x = np.array([0.3, 1.0, 2.5, 5.0, 7.5, 1.7], dtype)
    expected = scipy.special.polygamma(m.astype(F64), x.astype(F64)).astype(dtype)
    tol = _tol("polygamma", 1e-5) if dtype == F32 else 1e-10
    check("polygamma", [m, x], expected, rtol=tol, atol=tol)


# ---- bitwise and logical ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", [BOOL, I8, I32, U8, U64], ids=_name)
def test_bitwise(dtype):
    if dtype == BOOL:
        x, y = np.array([True, True, False, False]), np.array([True, False, True, False])
        check("not", [x], ~x)
    else:
        x, y = _ints(dtype), _ints(dtype)
        check("not", [x], np.invert(x))
    check("and", [x, y], x & y)
    check("or", [x, y], x | y)
    check("xor", [x, y], x ^ y)


def _shift_oracle(kind, x, y):
    """XLA's shifts act on bit patterns: an amount outside [0, bits) (read as unsigned for
    unsigned types) gives 0 (left, logical) or the sign fill (arithmetic, even for
    unsigned types, whose top bit then counts as a sign)."""
    bits = x.dtype.itemsize * 8
    utype, stype = np.dtype(f"u{x.dtype.itemsize}"), np.dtype(f"i{x.dtype.itemsize}")
    out = []
    for ua, sa, s in zip(x.view(utype).tolist(), x.view(stype).tolist(),
                         y.astype(np.int64).tolist()):
        in_range = 0 <= s < bits
        if kind == "shift_left":
            r = ua << s if in_range else 0
        elif kind == "shift_right_logical":
            r = ua >> s if in_range else 0
        else:
            r = sa >> s if in_range else (-1 if sa < 0 else 0)
        out.append(r % (1 << bits))
    return np.array(out, dtype=utype).view(x.dtype)


@pytest.mark.parametrize("dtype", [I8, I32, U8, U32, I64], ids=_name)
@pytest.mark.parametrize("op", ["shift_left", "shift_right_arithmetic", "shift_right_logical"])
def test_shifts(op, dtype):
    bits = np.dtype(dtype).itemsize * 8
    signed = np.issubdtype(dtype, np.signedinteger)
    x = np.array([1, 3, -1 if signed else 200, np.iinfo(dtype).min, np.iinfo(dtype).max,
                  5, 5, 5]).astype(dtype)
    amounts = [0, 1, 1, bits - 1, 2, bits, bits + 3, -1 if signed else 2 * bits]
    y = np.array(amounts).astype(dtype)
    check(op, [x, y], _shift_oracle(op, x, y))


@pytest.mark.parametrize("dtype", [I8, I32, U8, U64, I64], ids=_name)
def test_population_count_clz(dtype):
    info = np.iinfo(dtype)
    x = np.concatenate([_ints(dtype, 10), np.array([0, 1, info.max, info.min], dtype)])
    bits = np.dtype(dtype).itemsize * 8
    unsigned = x.view(np.dtype(f"u{np.dtype(dtype).itemsize}")).tolist()
    check("population_count", [x], np.array([bin(u).count("1") for u in unsigned], dtype))
    check("clz", [x], np.array([bits - u.bit_length() for u in unsigned], dtype))


# ---- comparisons ---------------------------------------------------------------------
CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
       "gt": np.greater, "ge": np.greater_equal}


@pytest.mark.parametrize("dtype", [F32, F64, I8, U8, U64, I64, BOOL, BF16], ids=_name)
def test_comparisons(dtype):
    if dtype == BOOL:
        x, y = np.array([True, True, False, False]), np.array([True, False, True, False])
    elif np.issubdtype(dtype, np.integer):
        x, y = _ints(dtype), _ints(dtype)
        x[:3], y[:3] = x[3:6], x[3:6]  # some equal pairs
    else:
        x = np.array([1.0, np.nan, -0.0, 2.0, -np.inf, 3.0], dtype)
        y = np.array([1.0, np.nan, 0.0, 1.0, 1.0, np.nan], dtype)
    for op, f in CMP.items():
        with np.errstate(invalid="ignore"):
            expected = f(x, y)
        check(op, [x, y], expected)


def test_eq_ne_complex():
    x = np.array([1 + 2j, 1 + 2j, np.nan + 0j], C64)
    y = np.array([1 + 2j, 1 - 2j, np.nan + 0j], C64)
    check("eq", [x, y], x == y)
    check("ne", [x, y], x != y)


# ---- complex numbers ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [C64, C128], ids=_name)
def test_real_imag_conj(dtype):
    z = np.array([1 + 2j, -3.5 - 0.25j, 0j], dtype)
    check("real", [z], z.real)
    check("imag", [z], z.imag)
    check("conj", [z], np.conj(z))
    check("conj", [z], np.conj(z), input_dtype=np.dtype(dtype))


@pytest.mark.parametrize("dtype", [F32, F64], ids=_name)
def test_complex_and_conj_of_real(dtype):
    x = np.array([1.0, -2.5, 0.0], dtype)
    y = np.array([0.5, 3.0, -1.0], dtype)
    cdtype = C64 if dtype == F32 else C128
    check("complex", [x, y], (x + 1j * y).astype(cdtype))
    check("conj", [x], x.astype(cdtype))  # a real input gives a complex result (JAX)


# ---- structural: dtype conversion ------------------------------------------------------
FLOATS_WITH_SPECIALS = np.array([0.0, -0.0, 1.5, -1.5, 2.7, -2.7, 100.9, 1e10, -1e10,
                                 np.inf, -np.inf, np.nan], F32)


@pytest.mark.parametrize("new_dtype", [I8, I32, I64, U8, U32], ids=_name)
def test_convert_float_to_int(new_dtype):
    # XLA (and so JAX): truncate toward zero, saturate out-of-range values, NaN -> 0.
    info = np.iinfo(new_dtype)
    x = FLOATS_WITH_SPECIALS
    expected = [0 if np.isnan(v) else int(np.clip(np.trunc(v), info.min, info.max))
                if np.isfinite(v) else (info.max if v > 0 else info.min) for v in x.tolist()]
    check("convert_element_type", [x], np.array(expected, new_dtype), new_dtype=new_dtype)


def test_convert_between_numeric():
    i = np.array([-3, 0, 7, 127], I8)
    check("convert_element_type", [i], i.astype(F32), new_dtype=F32)
    check("convert_element_type", [i], i.astype(I64), new_dtype=I64)
    check("convert_element_type", [i], i.astype(U8), new_dtype=U8)  # wraps, like numpy
    big = np.array([2**31 - 1, -(2**31), 70000, -70000], I32)
    check("convert_element_type", [big], big.astype(I16), new_dtype=I16)  # keeps low bits
    f = np.array([1.0, 3.14159, -2.5, 65504.0, 1e-3], F32)
    check("convert_element_type", [f], f.astype(F64), new_dtype=F64)
    check("convert_element_type", [f], f.astype(BF16), new_dtype=BF16)
    check("convert_element_type", [f], f.astype(F16), new_dtype=F16)
    check("convert_element_type", [f], f.astype(C64), new_dtype=C64)
    check("convert_element_type", [f.astype(F64)], f.astype(F64).astype(F32), new_dtype=F32)


def test_convert_to_and_from_bool():
    x = np.array([0.0, -0.0, 0.5, -2.0, np.nan, np.inf], F32)
    check("convert_element_type", [x], x.astype(BOOL), new_dtype=BOOL)  # nonzero -> True
    i = np.array([0, 2, -1, 256], I32)
    check("convert_element_type", [i], i.astype(BOOL), new_dtype=BOOL)
    u = np.array([0, 2, 255], U8)
    check("convert_element_type", [u], u.astype(BOOL), new_dtype=BOOL)
    b = np.array([True, False, True])
    check("convert_element_type", [b], b.astype(F32), new_dtype=F32)
    check("convert_element_type", [b], b.astype(I32), new_dtype=I32)
    check("convert_element_type", [b], b, new_dtype=BOOL)


def test_convert_complex():
    z = np.array([1.5 + 2j, -3 - 0.5j, 0 + 1j, 0j], C64)
    # JAX drops the imaginary part when converting complex to real.
    check("convert_element_type", [z], z.real.copy(), new_dtype=F32)
    check("convert_element_type", [z], z.real.astype(I32), new_dtype=I32)
    check("convert_element_type", [z], z.real != 0, new_dtype=BOOL)
    if not ON_TPU:  # (complex128: see ON_TPU)
        check("convert_element_type", [z], z.astype(C128), new_dtype=C128)


def test_bitcast_convert_type():
    f = np.array([1.0, -2.5, 0.0, np.inf], F32)
    check("bitcast_convert_type", [f], f.view(I32), new_dtype=I32)
    check("bitcast_convert_type", [f], f.view(U32), new_dtype=U32)
    # narrower: adds a minor dimension (little-endian order, as XLA on CPU)
    check("bitcast_convert_type", [f], f.view(np.uint16).reshape(4, 2), new_dtype=np.uint16)
    check("bitcast_convert_type", [f], f.view(U8).reshape(4, 4), new_dtype=U8)
    # wider: consumes the minor dimension
    b = np.arange(16, dtype=U8).reshape(2, 8)
    if ON_TPU:  # (arange's bytes are ~1e-275, which the chip's emulated float64 reads as 0)
        b = np.array([1.5, -2.25], F64).view(U8).reshape(2, 8)
    check("bitcast_convert_type", [b], b.view(F64).reshape(2), new_dtype=F64)
    h = np.array([1.0, 2.0], BF16)
    check("bitcast_convert_type", [h], h.view(np.uint16), new_dtype=np.uint16)


def test_reduce_precision():
    x = np.array([1.0, 1.1, -3.14159, 1000.7, 1e-3, 0.0, np.inf, np.nan], F32)
    # (8, 7) is bfloat16's format, (5, 10) float16's (values stay normal and in range).
    check("reduce_precision", [x], x.astype(BF16).astype(F32), exponent_bits=8,
          mantissa_bits=7)
    check("reduce_precision", [x], x.astype(F16).astype(F32), exponent_bits=5,
          mantissa_bits=10)
    check("reduce_precision", [x.astype(F64)], x.astype(F64), exponent_bits=11,
          mantissa_bits=52)


# ---- structural: identity, creation ----------------------------------------------------
@pytest.mark.parametrize("op", ["stop_gradient", "copy"])
def test_identity_ops(op):
    for x in (np.arange(6, dtype=F32).reshape(2, 3), np.array([True, False]),
              np.array(7, I64), np.array([1 + 1j], C64)):
        check(op, [x], x)


@pytest.mark.parametrize("value", [
    np.array([[1.5, -2.0, 3.0]], F32), np.array(3.25, F64), np.array([1, -2, 3], I64),
    np.array([True, False, True]), np.array([0, 255], U8), np.array([1 + 2j, -1j], C64),
    np.array([1.5, -2.25], BF16), np.full((2, 2), 7, I32), np.zeros((0, 3), F32),
    np.array([np.nan, np.inf, -np.inf], F32),
], ids=lambda v: f"{v.dtype}{list(v.shape)}")
def test_constant(value):
    check("constant", [], value, value=value)


def test_iota():
    check("iota", [], np.arange(5, dtype=I32), dtype=I32, shape=(5,), dimension=0)
    check("iota", [], np.arange(4, dtype=F32), dtype=F32, shape=(4,))
    expected = np.broadcast_to(np.arange(4, dtype=U8), (3, 4))
    check("iota", [], expected, dtype=U8, shape=(3, 4), dimension=1)
    expected = np.broadcast_to(np.arange(3, dtype=I64)[:, None, None], (3, 2, 2))
    check("iota", [], expected, dtype=I64, shape=(3, 2, 2), dimension=0)
    check("iota", [], np.arange(3).astype(C64), dtype=C64, shape=(3,))


# ---- structural: shapes --------------------------------------------------------------
def test_broadcast_in_dim():
    x = np.arange(3, dtype=F32)
    check("broadcast_in_dim", [x], np.broadcast_to(x, (2, 3)), shape=(2, 3),
          broadcast_dimensions=(1,))
    check("broadcast_in_dim", [x], np.broadcast_to(x[:, None], (3, 4)), shape=(3, 4),
          broadcast_dimensions=(0,))
    s = np.array(5, I32)
    check("broadcast_in_dim", [s], np.full((2, 2), 5, I32), shape=(2, 2),
          broadcast_dimensions=())
    y = np.arange(2, dtype=I8).reshape(2, 1)
    check("broadcast_in_dim", [y], np.broadcast_to(y[:, None, :], (2, 3, 4)),
          shape=(2, 3, 4), broadcast_dimensions=(0, 2))


def test_reshape():
    x = np.arange(24, dtype=F32).reshape(2, 3, 4)
    check("reshape", [x], x.reshape(6, 4), new_sizes=(6, 4))
    check("reshape", [x], x.reshape(24), new_sizes=(24,))
    check("reshape", [np.array([5], I32)], np.array(5, I32), new_sizes=())
    # `dimensions`: transpose first, then reshape (JAX's reshape_p semantics)
    check("reshape", [x], x.transpose(2, 0, 1).reshape(4, 6), new_sizes=(4, 6),
          dimensions=(2, 0, 1))


def test_squeeze_expand_dims():
    x = np.arange(6, dtype=I32).reshape(1, 6, 1)
    check("squeeze", [x], x.reshape(6), dimensions=(0, 2))
    check("squeeze", [x], x.reshape(6, 1), dimensions=(0,))
    y = np.arange(6, dtype=F32).reshape(2, 3)
    check("expand_dims", [y], y.reshape(1, 2, 3), dimensions=(0,))
    check("expand_dims", [y], y.reshape(2, 1, 3, 1), dimensions=(1, 3))


def test_transpose_rev():
    x = np.arange(24, dtype=F32).reshape(2, 3, 4)
    check("transpose", [x], x.transpose(2, 0, 1), permutation=(2, 0, 1))
    check("transpose", [x], x, permutation=(0, 1, 2))
    check("rev", [x], x[::-1, :, ::-1], dimensions=(0, 2))
    check("rev", [x.astype(BOOL)], x.astype(BOOL)[:, ::-1], dimensions=(1,))


def test_concatenate():
    a, b, c = (np.arange(6, dtype=F32).reshape(2, 3), np.ones((1, 3), F32),
               np.zeros((3, 3), F32))
    check("concatenate", [a, b, c], np.concatenate([a, b, c], 0), dimension=0)
    d = np.arange(4, dtype=I32).reshape(2, 2)
    check("concatenate", [a.astype(I32), d], np.concatenate([a.astype(I32), d], 1),
          dimension=1)
    check("concatenate", [a], a, dimension=1)


def _pad_oracle(x, value, config):
    out = x
    for axis, (lo, hi, interior) in enumerate(config):
        # interior padding
        if interior and out.shape[axis] > 1:
            n = out.shape[axis]
            shape = list(out.shape)
            shape[axis] = n + (n - 1) * interior
            grown = np.full(shape, value, out.dtype)
            idx = [slice(None)] * out.ndim
            idx[axis] = slice(None, None, interior + 1)
            grown[tuple(idx)] = out
            out = grown
        # low/high edge padding (negative crops)
        widths = [(0, 0)] * out.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, widths, constant_values=value)
        idx = [slice(None)] * out.ndim
        idx[axis] = slice(-min(lo, 0), out.shape[axis] + min(hi, 0))
        out = out[tuple(idx)]
    return out


@pytest.mark.parametrize("config", [((1, 2, 0),), ((0, 0, 2),), ((-1, 1, 1),),
                                    ((-2, -1, 0),), ((2, -3, 1),)], ids=str)
def test_pad_1d(config):
    x = np.arange(1, 6, dtype=F32)
    v = np.array(-9, F32)
    check("pad", [x, v], _pad_oracle(x, -9, config), padding_config=config)


def test_pad_2d_int():
    x = np.arange(1, 7, dtype=I32).reshape(2, 3)
    config = ((1, 0, 1), (0, 2, 1))
    check("pad", [x, np.array(0, I32)], _pad_oracle(x, 0, config), padding_config=config)


def test_slice():
    x = np.arange(60, dtype=F32).reshape(3, 4, 5)
    check("slice", [x], x[1:3, 0:4, 2:5], start_indices=(1, 0, 2), limit_indices=(3, 4, 5))
    check("slice", [x], x[0:3:2, 1:4:2, 0:5:3], start_indices=(0, 1, 0),
          limit_indices=(3, 4, 5), strides=(2, 2, 3))
    check("slice", [x], x[1:1, :, :], start_indices=(1, 0, 0), limit_indices=(1, 4, 5))


# ---- structural: selection ------------------------------------------------------------
def test_select_n():
    a, b = np.arange(4, dtype=F32), -np.arange(4, dtype=F32)
    which = np.array([True, False, True, False])
    check("select_n", [which, a, b], np.where(which, b, a))  # True picks the second case
    check("select_n", [np.array(True), a, b], b)
    check("select_n", [np.array(False), a, b], a)
    c = np.full(4, 100.0, F32)
    w = np.array([0, 1, 2, 1], I32)
    check("select_n", [w, a, b, c], np.choose(w, [a, b, c]))
    five = [np.full(3, i, I8) for i in range(5)]
    w5 = np.array([4, 0, 3], I32)
    check("select_n", [w5, *five], np.choose(w5, five))
    check("select_n", [np.array(2, I32), *five], five[2])
    check("select_n", [np.array([1, 0, 1], I32), a[:3]], a[:3])  # one case: passthrough


def test_clamp():
    x = np.array([-3.0, 0.5, 2.0, 9.0, np.nan], F32)
    check("clamp", [np.array(0.0, F32), x, np.array(1.0, F32)], np.clip(x, 0, 1))
    lo, hi = np.array([-5.0, 1.0, 1.0, 0.0, 0.0], F32), np.array([-4.0, 2.0, 3.0, 10.0, 1.0], F32)
    check("clamp", [lo, x, hi], np.clip(x, lo, hi))
    xi = np.array([-100, 5, 100], I8)
    check("clamp", [np.array(-10, I8), xi, np.array(10, I8)], np.clip(xi, -10, 10))
    xu = np.array([0, 5, 200], U8)
    check("clamp", [np.array(3, U8), xu, np.array(150, U8)], np.clip(xu, 3, 150))


# ---- structural: dot_general ----------------------------------------------------------
def test_dot_general_matmul():
    a = np.arange(6, dtype=F32).reshape(2, 3)
    b = np.arange(12, dtype=F32).reshape(3, 4) / 7
    # (on the chip float32's accuracy is the highest precision's; see ON_TPU)
    hi = {"precision": ("HIGHEST", "HIGHEST")} if ON_TPU else {}
    dims = (((1,), (0,)), ((), ()))
    check("dot_general", [a, b], a @ b, rtol=1e-6, dimension_numbers=dims, **hi)
    a64, b64 = a.astype(F64), b.astype(F64)
    expected = _jax_on_chip("dot_general", a64, b64, dimension_numbers=dims,
                            precision="highest") if ON_TPU else a64 @ b64
    check("dot_general", [a64, b64], expected, rtol=1e-14, dimension_numbers=dims, **hi)
    # contracting rhs dim 1 of b.T: a @ b again
    check("dot_general", [a, np.ascontiguousarray(b.T)], a @ b, rtol=1e-6,
          dimension_numbers=(((1,), (1,)), ((), ())), **hi)


def test_dot_general_batch_and_outer():
    a = np.arange(24, dtype=F32).reshape(2, 3, 4)
    b = np.arange(40, dtype=F32).reshape(2, 4, 5)
    check("dot_general", [a, b], np.einsum("bij,bjk->bik", a, b), rtol=1e-6,
          dimension_numbers=(((2,), (1,)), ((0,), (0,))))
    # batch dims that are not leading: result is batch + lhs free + rhs free
    bt = np.ascontiguousarray(b.transpose(1, 2, 0))  # (4, 5, 2)
    check("dot_general", [a, bt], np.einsum("bij,jkb->bik", a, bt), rtol=1e-6,
          dimension_numbers=(((2,), (0,)), ((0,), (2,))))
    u, v = np.arange(3, dtype=I32), np.arange(4, dtype=I32)
    check("dot_general", [u, v], np.outer(u, v), dimension_numbers=(((), ()), ((), ())))
    check("dot_general", [u, u], np.array(u @ u, I32), dimension_numbers=(((0,), (0,)), ((), ())))


def test_dot_general_preferred_element_type():
    a = np.full((2, 64), 100, I8)
    b = np.full((64, 3), 100, I8)
    expected = (a.astype(np.int64) @ b.astype(np.int64)).astype(I32)  # no int8 overflow
    check("dot_general", [a, b], expected, dimension_numbers=(((1,), (0,)), ((), ())),
          preferred_element_type=I32)
    x = np.array([[1.5, 2.25, -3.0]], BF16)
    y = np.array([[2.0], [4.0], [1.0]], BF16)
    check("dot_general", [x, y], np.array([[3.0 + 9.0 - 3.0]], F32),
          dimension_numbers=(((1,), (0,)), ((), ())), preferred_element_type=F32)


def test_dot_general_complex_and_bool():
    a = np.array([[1 + 1j, 2 - 1j]], C64)
    b = np.array([[3j], [1 + 0j]], C64)
    check("dot_general", [a, b], a @ b, rtol=1e-6, dimension_numbers=(((1,), (0,)), ((), ())))
    p = np.array([[True, False], [False, False]])
    q = np.array([[True], [True]])
    check("dot_general", [p, q], np.array([[True], [False]]),
          dimension_numbers=(((1,), (0,)), ((), ())))


# ---- JAX as oracle for the corners XLA defines -------------------------------------------
JAX_CASES = [
    ("div", [np.array([7, -7, 5, -128, 0], I8), np.array([-2, 0, 0, -1, 0], I8)], {}),
    ("rem", [np.array([7, -7, 5, -128, 0], I8), np.array([-2, 0, 0, -1, 0], I8)], {}),
    ("div", [np.array([7, 5, 0], U32), np.array([0, 2, 0], U32)], {}),
    ("shift_left", [np.array([1, -1, 3, 3], I32), np.array([31, 32, 33, -5], I32)], {}),
    ("shift_right_arithmetic", [np.array([-8, -8, 8, 8], I32),
                                np.array([1, 32, 40, -1], I32)], {}),
    ("shift_right_logical", [np.array([-8, -8, 8, 8], I32), np.array([1, 32, 40, -1], I32)], {}),
    ("sign", [np.array([0, 3, 255], U8)], {}),
    ("round", [np.array([0.5, 1.5, 2.5, -0.5, -2.5], F32)], {"rounding_method": 0}),
    ("round", [np.array([0.5, 1.5, 2.5, -0.5, -2.5], F32)], {"rounding_method": 1}),
    ("convert_element_type", [FLOATS_WITH_SPECIALS], {"new_dtype": I32}),
    ("convert_element_type", [FLOATS_WITH_SPECIALS], {"new_dtype": U8}),
    ("convert_element_type", [np.array([1 + 2j, 0 + 3j, 0j], C64)], {"new_dtype": BOOL}),
    ("pow", [np.array([2.0, -2.0, 0.0], F32), np.array([-3, 3, 0], I32)], {}),
    ("integer_pow", [np.array([3, -2], I32)], {"y": 5}),
    ("max", [np.array([1 + 2j, 1 - 1j], C64), np.array([1 + 1j, -5 + 0j], C64)], {}),
    ("min", [np.array([1 + 2j, 1 - 1j], C64), np.array([1 + 1j, 1 + 0j], C64)], {}),
    ("clz", [np.array([0, 1, -1, 255], I16)], {}),
    ("population_count", [np.array([0, -1, 255], I16)], {}),
    ("atan2", [np.array([1 + 1j], C64), np.array([2 - 1j], C64)], {}),
]


@pytest.mark.parametrize("op,args,params", JAX_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(JAX_CASES)])
def test_matches_jax_lax(op, args, params):
    import jax
    from jax import lax
    fn = {"div": lax.div, "rem": lax.rem, "shift_left": lax.shift_left,
          "shift_right_arithmetic": lax.shift_right_arithmetic,
          "shift_right_logical": lax.shift_right_logical, "sign": lax.sign,
          "round": lax.round, "convert_element_type": lax.convert_element_type,
          "pow": lax.pow, "integer_pow": lax.integer_pow, "max": lax.max, "min": lax.min,
          "clz": lax.clz, "population_count": lax.population_count, "atan2": lax.atan2}[op]
    with jax.enable_x64(True):
        expected = np.asarray(fn(*args, **params))
    tol = 1e-6 if np.issubdtype(expected.dtype, np.inexact) else 0
    check(op, args, expected, rtol=tol, atol=tol, **params)
