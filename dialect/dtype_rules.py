"""Dtype categories and the checks op inference rules share (no MLIR needed)."""
from __future__ import annotations

import numpy as np

from mjax.dialect.types import KeyType, ShapedArray, short_dtype_name


def is_bool(d) -> bool:
    return not isinstance(d, KeyType) and np.dtype(d) == np.bool_


# ml_dtypes' narrow integers (int4, uint2, ...) are not NumPy `integer` subtypes.
_NARROW_SIGNED = ("int1", "int2", "int4")
_NARROW_UNSIGNED = ("uint1", "uint2", "uint4")


def bitwidth(d) -> int:
    """Bits per element (int4: 4; JAX's dtypes.itemsize_bits)."""
    name = np.dtype(d).name
    if name in _NARROW_SIGNED or name in _NARROW_UNSIGNED:
        return int(name[-1])
    return np.dtype(d).itemsize * 8


def is_int(d) -> bool:
    return is_signed(d) or is_unsigned(d)


def is_signed(d) -> bool:
    return not isinstance(d, KeyType) and (np.issubdtype(np.dtype(d), np.signedinteger)
                                           or np.dtype(d).name in _NARROW_SIGNED)


def is_unsigned(d) -> bool:
    return not isinstance(d, KeyType) and (np.issubdtype(np.dtype(d), np.unsignedinteger)
                                           or np.dtype(d).name in _NARROW_UNSIGNED)


def is_float(d) -> bool:
    # ml_dtypes (bfloat16, float8) register as 'V'-kind-free floating types.
    return not isinstance(d, KeyType) and (np.issubdtype(np.dtype(d), np.floating) or
                                           np.dtype(d).kind == "V" and "float" in np.dtype(d).name
                                           or np.dtype(d).name.startswith(
                                               ("bfloat", "float8", "float6", "float4")))


def is_complex(d) -> bool:
    return not isinstance(d, KeyType) and np.issubdtype(np.dtype(d), np.complexfloating)


def is_inexact(d) -> bool:
    return is_float(d) or is_complex(d)


def is_numeric(d) -> bool:
    return is_int(d) or is_inexact(d)


def _per_dtype(pred):
    """`pred` answered once per dtype (a dict lookup after that): tracing asks these of
    every operand of every op, and np.issubdtype costs microseconds each time."""
    seen: dict = {}

    def cached(d) -> bool:
        try:
            return seen[d]
        except KeyError:
            answer = seen[d] = pred(d)
            return answer
        except TypeError:       # an unhashable dtype-like: ask every time
            return pred(d)
    cached.__name__, cached.__doc__ = pred.__name__, pred.__doc__
    return cached


is_bool, is_int, is_signed, is_unsigned, is_float, is_complex, is_inexact, is_numeric = (
    _per_dtype(p) for p in (is_bool, is_int, is_signed, is_unsigned, is_float, is_complex,
                            is_inexact, is_numeric))

CATEGORIES = {
    "bool": is_bool,
    "int": is_int,
    "signed": is_signed,
    "unsigned": is_unsigned,
    "float": is_float,
    "complex": is_complex,
    "inexact": is_inexact,
    "numeric": is_numeric,
    "any": lambda d: not isinstance(d, KeyType),
}
_DESCRIBE = {"bool": "bool", "int": "integer", "signed": "signed integer",
             "unsigned": "unsigned integer", "float": "floating-point",
             "complex": "complex", "inexact": "floating-point or complex",
             "numeric": "numeric", "any": "array"}


_ALLOWED: dict = {}   # (categories, dtype) -> bool


def check_dtype(op: str, aval: ShapedArray, *categories: str, what: str = "operand"):
    """Raises TypeError unless aval.dtype is in one of `categories`."""
    key = (categories, aval.dtype)
    ok = _ALLOWED.get(key)
    if ok is None:
        ok = _ALLOWED[key] = any(CATEGORIES[c](aval.dtype) for c in categories)
    if ok:
        return
    allowed = " or ".join(_DESCRIBE[c] for c in categories)
    raise TypeError(f"{op} does not accept dtype {short_dtype_name(aval.dtype)} "
                    f"({what} must be {allowed})")


def check_same_dtypes(op: str, avals, what: str = "arguments"):
    dtypes = [a.dtype for a in avals]
    if any(d != dtypes[0] for d in dtypes[1:]):
        names = ", ".join(short_dtype_name(d) for d in dtypes)
        raise TypeError(f"{op} requires {what} to have the same dtypes, got {names}")


def check_same_shapes(op: str, avals):
    shapes = [a.shape for a in avals]
    if any(s != shapes[0] for s in shapes[1:]):
        raise TypeError(f"{op} got incompatible shapes for broadcasting: "
                        + ", ".join(str(s) for s in shapes))


def real_dtype(d) -> np.dtype:
    """complex64 -> float32, complex128 -> float64; others unchanged."""
    d = np.dtype(d)
    if d == np.complex64:
        return np.dtype(np.float32)
    if d == np.complex128:
        return np.dtype(np.float64)
    return d


def complex_dtype(d) -> np.dtype:
    d = np.dtype(d)
    return np.dtype(np.complex128) if d == np.float64 else np.dtype(np.complex64)
