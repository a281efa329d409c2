"""JAX-private: jax._src.public_test_util, the tolerance tables and closeness checks that
jax._src.test_util (and jax.test_util's check_grads) build on.

    tolerance(np.float32)                    # 1e-6: the default for that dtype
    tolerance(np.float32, {np.float32: 1e-3})
    check_close(xs, ys, atol=None, rtol=None)   # leaf by leaf, scaled by the size

A tolerance is a number or a dict {dtype: number}; a dict falls back to the default of
each dtype it does not name. check_grads, check_jvp and check_vjp are mjax.test_util's.
"""
from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np

from mjax.config import config
from mjax.specs import dtypes as _dt
from mjax.base.tree_util import tree_map
from mjax.test_util import EPS, check_grads, check_jvp, check_vjp, numerical_jvp  # noqa: F401

__all__ = ["check_grads", "check_jvp", "check_vjp"]

ToleranceDict: TypeAlias = dict

# The dtypes of ml_dtypes whose values NumPy cannot compare directly (compared as f32).
_CUSTOM_FLOATS = tuple(np.dtype(d) for d in (
    _dt.float4_e2m1fn, _dt.float8_e8m0fnu, _dt.float8_e3m4, _dt.float8_e4m3,
    _dt.float8_e4m3b11fnuz, _dt.float8_e4m3fn, _dt.float8_e4m3fnuz, _dt.float8_e5m2,
    _dt.float8_e5m2fnuz, _dt.bfloat16))
_NARROW_INTS = tuple(np.dtype(d) for d in (_dt.int1, _dt.int2, _dt.int4, _dt.uint1,
                                           _dt.uint2, _dt.uint4) if d is not None)

# Exact for integers and booleans; about a unit in the last place or two for floats.
_default_tolerance: dict = {np.dtype(_dt.float0): 0, np.dtype(np.bool_): 0}
_default_tolerance.update({d: 0 for d in _NARROW_INTS})
_default_tolerance.update({np.dtype(d): 0 for d in (np.int8, np.int16, np.int32, np.int64,
                                                    np.uint8, np.uint16, np.uint32,
                                                    np.uint64)})
_default_tolerance.update({np.dtype(_dt.float4_e2m1fn): 1e0, np.dtype(_dt.float8_e8m0fnu): 1e0})
_default_tolerance.update({np.dtype(d): 1e-1 for d in (
    _dt.float8_e3m4, _dt.float8_e4m3, _dt.float8_e4m3b11fnuz, _dt.float8_e4m3fn,
    _dt.float8_e4m3fnuz, _dt.float8_e5m2, _dt.float8_e5m2fnuz)})
_default_tolerance.update({np.dtype(_dt.bfloat16): 1e-2, np.dtype(np.float16): 1e-3,
                           np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-15,
                           np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-15})

# check_grads' defaults (looser: finite differences)
default_gradient_tolerance: dict = {d: v for d, v in _default_tolerance.items()
                                    if d in _CUSTOM_FLOATS and d != np.dtype(_dt.bfloat16)}
default_gradient_tolerance.update({np.dtype(_dt.bfloat16): 1e-1, np.dtype(np.float16): 1e-2,
                                   np.dtype(np.float32): 2e-3, np.dtype(np.float64): 1e-5,
                                   np.dtype(np.complex64): 1e-3,
                                   np.dtype(np.complex128): 1e-5})

# A Python scalar's dtype before canonicalization, as JAX's table has it.
_PY_SCALAR_DTYPES = {bool: np.dtype(bool), int: np.dtype(np.int64),
                     float: np.dtype(np.float64), complex: np.dtype(np.complex128)}


def default_tolerance() -> dict:
    return _default_tolerance


def _dtype(x: Any) -> np.dtype:
    if hasattr(x, "dtype"):
        return x.dtype
    dt = _PY_SCALAR_DTYPES.get(type(x))
    return dt if dt is not None else np.asarray(x).dtype


def is_python_scalar(val: Any) -> bool:
    return not isinstance(val, np.generic) and isinstance(val, (bool, int, float, complex))


def tolerance(dtype, tol=None):
    """`tol` itself when it is a number; else its entry for `dtype` (canonicalized), or
    the default tolerance of that dtype."""
    if tol is None:
        tol = {}
    if not isinstance(tol, dict):
        return tol
    tol = {np.dtype(k): v for k, v in tol.items()}
    dtype = _dt.canonicalize_dtype(np.dtype(dtype))
    return tol.get(dtype, _default_tolerance[dtype])


def _upcast(x: np.ndarray) -> np.ndarray:
    """ml_dtypes' floats as float32, the narrow ints as int8/uint8 (NumPy compares those)."""
    if x.dtype in _CUSTOM_FLOATS:
        return x.astype(np.float32)
    if x.dtype in _NARROW_INTS:
        return x.astype(np.int8 if _dt.iinfo(x.dtype).min < 0 else np.uint8)
    return x


def _assert_numpy_allclose(a, b, atol=None, rtol=None, err_msg=""):
    """np.testing.assert_allclose on NumPy arrays (float0 compared exactly; a tolerance
    of 0 or None leaves NumPy's default)."""
    if a.dtype == b.dtype == _dt.float0:
        np.testing.assert_array_equal(a, b, err_msg=err_msg)
        return
    a, b = _upcast(a), _upcast(b)
    kw = {}
    if atol:
        kw["atol"] = atol
    if rtol:
        kw["rtol"] = rtol
    with np.errstate(invalid="ignore"):     # (NaNs compared equal raise no warning)
        np.testing.assert_allclose(a, b, **kw, err_msg=err_msg)


def _assert_numpy_close(a, b, atol=None, rtol=None, err_msg=""):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    atol = max(tolerance(a.dtype, atol), tolerance(b.dtype, atol))
    rtol = max(tolerance(a.dtype, rtol), tolerance(b.dtype, rtol))
    # (scaled by the number of elements, as JAX's)
    _assert_numpy_allclose(a, b, atol=atol * a.size, rtol=rtol * b.size, err_msg=err_msg)


def check_close(xs, ys, atol=None, rtol=None, err_msg=""):
    """Every leaf of xs close to the matching leaf of ys (tolerances scaled by size)."""
    tree_map(lambda x, y: _assert_numpy_close(x, y, atol, rtol, err_msg), xs, ys)


def _check_dtypes_match(xs, ys):
    def same(x, y):
        if config.read("jax_enable_x64"):
            assert _dtype(x) == _dtype(y)
        else:
            assert _dt.canonicalize_dtype(_dtype(x)) == _dt.canonicalize_dtype(_dtype(y))
    tree_map(same, xs, ys)


def rand_like(rng, x):
    """Standard normal values of x's shape and dtype (complex: both parts); a Python
    scalar for a Python scalar."""
    shape, dtype = np.shape(x), np.dtype(_dtype(x))
    out = np.asarray(rng.randn(*shape), dtype=dtype)
    if np.issubdtype(dtype, np.complexfloating):
        out = out + dtype.type(1j) * np.asarray(rng.randn(*shape), dtype=dtype)
    return out.item() if is_python_scalar(x) else out
