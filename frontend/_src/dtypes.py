"""JAX-private: jax._src.dtypes (equinox, flax, haiku through flax): mjax.dtypes' names,
and ExtendedDType, the base class flax.linen's fp8 meta dtype derives from at import."""
import abc

import numpy as np

from mjax.dialect.types import KeyType
from mjax.specs.dtypes import *  # noqa: F401,F403
from mjax.specs.dtypes import (TypePromotionError, canonicalize_dtype, float0,  # noqa: F401
                                issubdtype, result_type)


class ExtendedDType(abc.ABC):
    """The base class of dtypes beyond NumPy's (PRNG key types; a library's own, e.g.
    flax's fp8 meta dtype, a dataclass giving `type`, `name` and `_rules`). mjax computes
    only with its key types; a library's own extended dtype can be defined (so the library
    imports) but not used in arrays. JAX: jax._src.dtypes.ExtendedDType."""


ExtendedDType.register(KeyType)
DType = np.dtype   # (JAX's annotation alias)


def supports_inf(dtype) -> bool:
    """Whether the floating dtype has infinities (float8_e4m3fn has none). JAX:
    jax._src.dtypes.supports_inf."""
    return issubdtype(dtype, np.inexact) and bool(np.isinf(np.array(np.inf).astype(dtype)))


# ---- what JAX's tests read from here ------------------------------------------------------
def default_int_dtype() -> np.dtype:
    return np.dtype(np.int64 if x64_enabled() else np.int32)


def default_uint_dtype() -> np.dtype:
    return np.dtype(np.uint64 if x64_enabled() else np.uint32)


def default_float_dtype() -> np.dtype:
    return np.dtype(np.float64 if x64_enabled() else np.float32)


def default_complex_dtype() -> np.dtype:
    return np.dtype(np.complex128 if x64_enabled() else np.complex64)


# (by NumPy's dtype kind)
default_types = {"b": lambda: np.dtype(bool), "i": default_int_dtype, "u": default_uint_dtype,
                 "f": default_float_dtype, "c": default_complex_dtype}

# A Python scalar's dtype before canonicalization
python_scalar_types_to_dtypes = {bool: np.dtype(bool), int: np.dtype(np.int64),
                                 float: np.dtype(np.float64),
                                 complex: np.dtype(np.complex128)}
python_scalar_types = set(python_scalar_types_to_dtypes)

_float8_dtypes = [np.dtype(d) for d in (float8_e3m4, float8_e4m3, float8_e8m0fnu,
                                        float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz,
                                        float8_e5m2, float8_e5m2fnuz)]


def to_numeric_dtype(dtype) -> np.dtype:
    """bool as int32; any other dtype unchanged."""
    dtype = np.dtype(dtype)
    return np.dtype(np.int32) if dtype == np.dtype(bool) else dtype


def is_weakly_typed(x) -> bool:
    """Whether x is a Python int, float or complex, or a weakly typed array."""
    if type(x) in (int, float, complex):
        return True
    aval = getattr(x, "aval", None)
    return bool(getattr(aval, "weak_type", False))


def _dtype_of(x):
    """The canonical dtype of a dtype-like or of a value (JAX's dtypes.dtype)."""
    if isinstance(x, KeyType):
        return x
    if hasattr(x, "dtype") and not isinstance(x, type):
        d = x.dtype
    elif type(x) in (bool, int, float, complex):
        d = np.dtype(type(x))
    else:
        d = np.dtype(x)
    return d if isinstance(d, KeyType) else canonicalize_dtype(d)


def safe_to_cast(input_dtype_or_value, output_dtype_or_value) -> bool:
    """Whether casting to the output dtype loses nothing under the current promotion
    rules: the input promotes with it to it (the output taken as strongly typed). JAX:
    jax._src.dtypes.safe_to_cast."""
    out = _dtype_of(output_dtype_or_value)
    if _dtype_of(input_dtype_or_value) == out:
        return True
    return result_type(input_dtype_or_value, out) == out
