"""Dtypes as JAX has them: x64 canonicalization, weak types and type promotion.

Promotion follows JAX's lattice: Python scalars are *weak* (they adopt the other operand's
dtype), bool < ints < floats < complex, and unsigned/signed meet one level up.
"""
from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

from mjax.config import config
from mjax.dialect.types import KeyType

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32,
                                                       np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
bfloat16 = np.dtype(ml_dtypes.bfloat16)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)
float0 = np.dtype([("float0", np.void, 0)])  # JAX's tangent dtype of integer values

_X64_NARROW = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


class TypePromotionError(ValueError):
    """Raised when two dtypes have no promotion (JAX: jax.errors... TypePromotionError)."""


def x64_enabled() -> bool:
    return config.read("jax_enable_x64")


_CANONICAL: dict = {}


def canonicalize_dtype(dtype) -> np.dtype:
    """The dtype mjax actually uses: 64-bit types become 32-bit unless x64 is enabled."""
    key = (dtype, x64_enabled())
    try:
        return _CANONICAL[key]
    except (KeyError, TypeError):  # TypeError: an unhashable dtype specifier
        pass
    if isinstance(dtype, KeyType):
        return dtype
    d = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
    if not key[1]:
        d = _X64_NARROW.get(d, d)
    try:
        _CANONICAL[key] = d
    except TypeError:
        pass
    return d


def default_int() -> np.dtype:
    return int64 if x64_enabled() else int32


def default_float() -> np.dtype:
    return float64 if x64_enabled() else float32


def default_complex() -> np.dtype:
    return complex128 if x64_enabled() else complex64


def issubdtype(a, b) -> bool:
    if isinstance(a, KeyType):
        return False
    a = np.dtype(a)
    if a.name == "bfloat16" or a.name.startswith("float8"):
        # ml_dtypes' floats are not numpy `floating` subclasses.
        return b in (np.floating, np.inexact, np.number, np.generic)
    return np.issubdtype(a, b)


def is_float(d) -> bool:
    return issubdtype(d, np.floating)


def is_inexact(d) -> bool:
    return issubdtype(d, np.floating) or issubdtype(d, np.complexfloating)


# ---- promotion lattice -----------------------------------------------------------
# Nodes are dtypes or the weak kinds 'i*', 'f*', 'c*' (Python int/float/complex).
_EDGES = {
    bool_: ["i*"],
    "i*": [uint8, int8],
    uint8: [int16, uint16], uint16: [int32, uint32], uint32: [int64, uint64],
    uint64: ["f*"],
    int8: [int16], int16: [int32], int32: [int64], int64: ["f*"],
    "f*": [bfloat16, float16, "c*"],
    bfloat16: [float32], float16: [float32], float32: [float64, complex64],
    float64: [complex128],
    "c*": [complex64], complex64: [complex128], complex128: [],
}


@functools.cache
def _upper_bounds(node) -> frozenset:
    out = {node}
    for n in _EDGES.get(node, []):
        out |= _upper_bounds(n)
    return frozenset(out)


def _node(dtype, weak: bool):
    if weak:
        if issubdtype(dtype, np.complexfloating):
            return "c*"
        if is_float(dtype):
            return "f*"
        if issubdtype(dtype, np.integer):
            return "i*"
    return dtype


def _join(a, b):
    common = _upper_bounds(a) & _upper_bounds(b)
    for c in common:
        if common <= _upper_bounds(c):
            return c
    raise TypePromotionError(f"no promotion between {a} and {b}")


@functools.lru_cache(maxsize=1024)
def _promote(nodes: tuple, x64: bool):
    result = nodes[0]
    for n in nodes[1:]:
        if n not in _EDGES or result not in _EDGES:
            if n != result:
                raise TypePromotionError(
                    f"Input dtypes {', '.join(str(x) for x in nodes)} have no available "
                    f"implicit dtype promotion path. Convert explicitly with .astype().")
            continue
        result = _join(result, n)
    return result


_PROMOTE_CACHE: dict = {}


def promote_types(*dtypes_and_weak) -> tuple[np.dtype, bool]:
    """(dtype, weak) pairs -> promoted (dtype, weak), canonicalized for x64."""
    key = (dtypes_and_weak, x64_enabled())
    hit = _PROMOTE_CACHE.get(key)
    if hit is None:
        hit = _PROMOTE_CACHE[key] = _promote_types(dtypes_and_weak)
    return hit


def _promote_types(dtypes_and_weak) -> tuple[np.dtype, bool]:
    # JAX canonicalizes (x64) the inputs first: int8 + uint64 is int8 + uint32 -> int64
    # -> int32 without x64, not float32.
    nodes = tuple(_node(canonicalize_dtype(d), w) for d, w in dtypes_and_weak)
    if any(isinstance(n, KeyType) for n in nodes):
        if all(n == nodes[0] for n in nodes):
            return nodes[0], False
        raise TypePromotionError("PRNG key arrays cannot be combined with other dtypes")
    r = _promote(nodes, x64_enabled())
    if r == "i*":
        return default_int(), True
    if r == "f*":
        return default_float(), True
    if r == "c*":
        return default_complex(), True
    return canonicalize_dtype(r), False


def to_inexact_dtype(d) -> np.dtype:
    """The inexact dtype an integer/bool dtype computes in (JAX: dtypes.to_inexact_dtype).

    Integers up to 32 bits become float32, 64-bit ones float64 (then x64-canonicalized).
    """
    d = np.dtype(d)
    if is_inexact(d):
        return d
    return canonicalize_dtype(float64 if d.itemsize == 8 else float32)


def python_scalar_dtype(x) -> np.dtype:
    """Dtype of a Python scalar (weak except bool), canonicalized."""
    if isinstance(x, (bool, np.bool_)):
        return bool_
    if isinstance(x, int):
        return default_int()
    if isinstance(x, float):
        return default_float()
    if isinstance(x, complex):
        return default_complex()
    raise TypeError(f"not a Python scalar: {x!r}")


def result_type(*args) -> np.dtype:
    """mjax.numpy.result_type: dtype that arrays/scalars/dtypes promote to."""
    from mjax.core import aval_of_value
    pairs = []
    for a in args:
        if isinstance(a, (np.dtype, type, str)) and not isinstance(a, (bool, int, float,
                                                                     complex)):
            pairs.append((np.dtype(a), False))
        else:
            av = aval_of_value(a)
            pairs.append((av.dtype, av.weak_type))
    return promote_types(*pairs)[0]


def dtype(x) -> np.dtype:
    """mjax.numpy.dtype-like: the dtype of a value or dtype specifier."""
    from mjax.core import aval_of_value
    if isinstance(x, (np.dtype, type, str)):
        return canonicalize_dtype(np.dtype(x))
    return aval_of_value(x).dtype


def finfo(d):
    return ml_dtypes.finfo(np.dtype(d))


def iinfo(d):
    return ml_dtypes.iinfo(np.dtype(d))
