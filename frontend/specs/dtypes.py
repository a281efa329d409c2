"""Dtypes as JAX has them: x64 canonicalization, weak types and type promotion.

Promotion is JAX's lattice (jax.numpy type promotion): Python scalars are *weak* kinds
(`int`, `float`, `complex` adopt the other operand's width), bool < ints < floats <
complex, unsigned/signed meet one level up, uint64 and int64 meet at a weak float, and
the narrow ml_dtypes (float8_*, float4, int4, ...) promote only with weak scalars.
`jax_numpy_dtype_promotion='strict'` keeps only the weak-scalar edges.

Two entry points: `promote_types((dtype, weak), ...)` for operands (the result is
x64-canonicalized, with its weak flag) and the user-facing `result_type`,
`numpy_promote_types` (jnp.promote_types: no canonicalization), `can_cast`.
"""
from __future__ import annotations

import functools
import os
import sys
import warnings

import ml_dtypes
import numpy as np

from mjax.config import config
from mjax.dialect.types import KeyType, ShapedArray, extended, prng_key  # noqa: F401

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32,
                                                       np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)
float0 = np.dtype([("float0", np.void, 0)])  # JAX's tangent dtype of integer values

# ml_dtypes' types as JAX exposes them (jax.dtypes.bfloat16, jnp.float8_e4m3fn, jnp.int4).
# The scalar types (like np.float32), as jax.dtypes has them; the dtypes are below.
bfloat16 = ml_dtypes.bfloat16
_ML_FLOAT_NAMES = ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4",
                   "float8_e4m3", "float8_e8m0fnu", "float8_e4m3b11fnuz", "float8_e4m3fn",
                   "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")
_ML_INT_NAMES = ("int1", "int2", "int4", "uint1", "uint2", "uint4")
ML_DTYPE_NAMES = tuple(n for n in ("bfloat16", *_ML_FLOAT_NAMES, *_ML_INT_NAMES)
                       if hasattr(ml_dtypes, n))
globals().update({n: getattr(ml_dtypes, n) for n in ML_DTYPE_NAMES})

_SMALL_FLOATS = [np.dtype(getattr(ml_dtypes, n)) for n in _ML_FLOAT_NAMES
                 if hasattr(ml_dtypes, n)]
_SMALL_INTS = [np.dtype(getattr(ml_dtypes, n)) for n in _ML_INT_NAMES
               if hasattr(ml_dtypes, n)]
_BF16 = np.dtype(bfloat16)
_CUSTOM_FLOATS = frozenset([*_SMALL_FLOATS, _BF16])
_FLOATS = [*_SMALL_FLOATS, _BF16, float16, float32, float64]
_INTS = [*_SMALL_INTS, uint8, uint16, uint32, uint64, int8, int16, int32, int64]
_COMPLEX = [complex64, complex128]
_ALL_DTYPES = frozenset([bool_, *_INTS, *_FLOATS, *_COMPLEX])

_X64_NARROW = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


class TypePromotionError(ValueError):
    """Raised when dtypes have no implicit promotion (JAX: jax.dtypes.TypePromotionError)."""


def x64_enabled() -> bool:
    return config.read("jax_enable_x64")


def _np_dtype(d) -> np.dtype:
    """np.dtype of a dtype specifier (mjax.numpy's scalar types carry a `.dtype`)."""
    if isinstance(d, np.dtype):
        return d
    inner = getattr(d, "dtype", None)
    if isinstance(d, type) and isinstance(inner, np.dtype):
        return inner
    return np.dtype(d)


_CANONICAL: dict = {}


def canonicalize_dtype(dtype, allow_extended_dtype: bool = False) -> np.dtype:
    """The dtype mjax actually uses: 64-bit types become 32-bit unless x64 is enabled."""
    key = (dtype, x64_enabled())
    try:
        return _CANONICAL[key]
    except (KeyError, TypeError):  # TypeError: an unhashable dtype specifier
        pass
    if isinstance(dtype, KeyType):
        return dtype
    d = _np_dtype(dtype)
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


# ---- issubdtype --------------------------------------------------------------------------
# ml_dtypes' scalar types do not subclass NumPy's abstract ones; place them by hand.
_ML_PARENTS = {**{d: (np.floating, np.inexact) for d in _CUSTOM_FLOATS},
               **{d: (np.integer, np.signedinteger if d.name.startswith("int")
                      else np.unsignedinteger) for d in _SMALL_INTS}}


def _abstract(b):
    """An abstract scalar type (np.floating, extended, ...) or None for a concrete dtype."""
    if isinstance(b, type) and issubclass(b, np.generic) and b in (
            np.generic, np.number, np.integer, np.signedinteger, np.unsignedinteger,
            np.inexact, np.floating, np.complexfloating, np.flexible, np.character,
            extended, prng_key):
        return b
    return None


def issubdtype(a, b) -> bool:
    """JAX's jnp.issubdtype: NumPy's, plus ml_dtypes (bfloat16 is `floating`, int4 is
    `signedinteger`) and extended dtypes (PRNG keys are `extended` and `prng_key`)."""
    if a is None:
        return False
    if hasattr(type(a), "__numpy_dtype__") and not isinstance(a, (type, np.dtype, KeyType)):
        a = np.dtype(a)     # (an array, as JAX: warns; a key array's raises ValueError)
    if isinstance(a, KeyType) or (isinstance(a, type) and issubclass(a, extended)):
        if isinstance(b, KeyType):
            return a == b
        a_cls = a if isinstance(a, type) else prng_key
        return b in (extended, prng_key, np.generic) and issubclass(a_cls, b)
    if isinstance(b, KeyType):
        return False
    ab = _abstract(b)
    if ab in (extended, prng_key):
        return False
    try:
        ad = _np_dtype(a)
    except TypeError:
        return False
    parents = _ML_PARENTS.get(ad)
    if parents is not None:
        if ab is None:
            return ad == _np_dtype(b)
        return ab in (np.generic, np.number) or ab in parents
    if ab is None:
        b = _np_dtype(b)
    return bool(np.issubdtype(ad, b))


# NumPy dtype -> (is_float, is_inexact): asked for every differentiated value and
# promoted operand, and NumPy's issubdtype costs microseconds.
_KINDS: dict = {}


def _kinds(d) -> tuple:
    kinds = _KINDS.get(d)
    if kinds is None:
        kinds = (issubdtype(d, np.floating), issubdtype(d, np.inexact))
        if len(_KINDS) >= 256:
            _KINDS.clear()
        _KINDS[d] = kinds
    return kinds


def is_float(d) -> bool:
    if isinstance(d, np.dtype):
        return _kinds(d)[0]
    return issubdtype(d, np.floating)


def is_inexact(d) -> bool:
    if isinstance(d, np.dtype):
        return _kinds(d)[1]
    return issubdtype(d, np.inexact)


def isdtype(dtype, kind) -> bool:
    """The array API's isdtype (JAX: jnp.isdtype)."""
    kinds = {"bool": lambda d: d == bool_,
             "signed integer": lambda d: issubdtype(d, np.signedinteger),
             "unsigned integer": lambda d: issubdtype(d, np.unsignedinteger),
             "integral": lambda d: issubdtype(d, np.integer),
             "real floating": lambda d: issubdtype(d, np.floating),
             "complex floating": lambda d: issubdtype(d, np.complexfloating),
             "numeric": lambda d: d != bool_ and issubdtype(d, np.number)}
    d = _np_dtype(dtype)
    for k in (kind if isinstance(kind, tuple) else (kind,)):
        if isinstance(k, str):
            if k not in kinds:
                raise ValueError(f"Unrecognized kind={k!r} expected one of "
                                 f"{list(kinds)}, or a compatible input for jnp.dtype()")
            if kinds[k](d):
                return True
        elif d == _np_dtype(k):
            return True
    return False


# ---- the promotion lattice ----------------------------------------------------------------
# Nodes are dtypes and the weak kinds of Python scalars: the types int, float, complex.
_WEAK = (int, float, complex)


def _lattice(strict: bool, x64: bool) -> dict:
    """Each node -> the nodes immediately above it (JAX's promotion DAG)."""
    if strict:
        out = {t: [] for t in (bool_, *_INTS, *_FLOATS, *_COMPLEX)}
        out.update({int: [float, *_INTS], float: [complex, *_FLOATS], complex: _COMPLEX})
        return out
    out = {t: [] for t in (*_SMALL_INTS, *_SMALL_FLOATS)}
    out.update({
        bool_: [int], int: [uint8, int8, *_SMALL_INTS],
        uint8: [int16, uint16], uint16: [int32, uint32], uint32: [int64, uint64],
        uint64: [float],
        int8: [int16], int16: [int32], int32: [int64], int64: [float],
        float: [*_SMALL_FLOATS, _BF16, float16, complex],
        _BF16: [float32], float16: [float32], float32: [float64, complex64],
        float64: [complex128],
        complex: [complex64], complex64: [complex128], complex128: [],
    })
    if not x64:
        # Without x64 no promotion may form a 64-bit type from narrower inputs; the one
        # such edge is uint32 x int32 -> int64, so uint32 meets int32 at int32.
        out[uint32] = [int32, uint64]
    return out


@functools.cache
def _upper_bounds(strict: bool, x64: bool) -> dict:
    lattice = _lattice(strict, x64)

    @functools.cache
    def ub(node) -> frozenset:
        return frozenset({node}).union(*(ub(n) for n in lattice[node]))
    return {n: ub(n) for n in lattice}


def _node_name(n) -> str:
    return n.__name__ if n in _WEAK and isinstance(n, type) else str(n)


@functools.lru_cache(maxsize=4096)
def _least_upper_bound(mode: str, x64: bool, *nodes):
    ubs = _upper_bounds(mode == "strict", x64)
    unique = set(nodes)
    try:
        bounds = [ubs[n] for n in unique]
    except KeyError:
        bad = next(n for n in unique if n not in ubs)
        raise ValueError(f"dtype={bad!r} is not a valid dtype for JAX type promotion.")
    common = frozenset.intersection(*bounds)
    least = set(common & unique) or {c for c in common if common <= ubs[c]}
    if len(least) == 1:
        return least.pop()
    names = tuple(_node_name(n) for n in nodes)
    if mode == "strict":
        msg = (f"Input dtypes {names} have no available implicit dtype promotion path when "
               "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the "
               "desired output type, or set jax_numpy_dtype_promotion=standard.")
    elif any(n in _SMALL_FLOATS for n in nodes):
        bits = next(n for n in nodes if n in _SMALL_FLOATS).itemsize * 8
        bits = {"float4": 4, "float6": 6}.get(
            next(n for n in nodes if n in _SMALL_FLOATS).name[:6], bits)
        msg = (f"Input dtypes {names} have no available implicit dtype promotion path. "
               f"To avoid unintended promotion, {bits}-bit floats do not support implicit "
               "promotion. If you'd like your inputs to be promoted to another type, you "
               "can do so explicitly using e.g. x.astype('float32')")
    elif any(n in _SMALL_INTS for n in nodes):
        msg = (f"Input dtypes {names} have no available implicit dtype promotion path. "
               "To avoid unintended promotion, 1-bit, 2-bit and 4-bit integers do not "
               "support implicit promotion. If you'd like your inputs to be promoted to "
               "another type, you can do so explicitly using e.g. x.astype('int32')")
    else:
        msg = (f"Input dtypes {names} have no available implicit dtype promotion path. "
               "Try explicitly casting inputs to the desired output type.")
    raise TypePromotionError(msg)


def _lub(*nodes):
    return _least_upper_bound(config.read("jax_numpy_dtype_promotion"), x64_enabled(),
                              *nodes)


def _weak_node(d: np.dtype):
    """The weak kind a weakly typed value of dtype d stands for (bool stays bool)."""
    if d == bool_:
        return d
    if d in _CUSTOM_FLOATS:
        return float
    return type(d.type(0).item())


def _default_of_node(n) -> np.dtype:
    if n is int:
        return default_int()
    if n is float:
        return default_float()
    if n is complex:
        return default_complex()
    return canonicalize_dtype(n)


def _lattice_result(pairs) -> tuple:
    """(dtype, weak) pairs (dtypes already canonical) -> promoted (dtype, weak)."""
    dts = [d for d, _ in pairs]
    weaks = [w for _, w in pairs]
    if len(pairs) == 1:
        out, weak = dts[0], weaks[0]
    elif all(d == dts[0] for d in dts) and not all(weaks):
        out, weak = dts[0], False      # also lets extended dtypes (keys) through
    elif any(isinstance(d, KeyType) for d in dts):
        raise TypePromotionError(
            f"Input dtypes {tuple(str(d) for d in dts)} have no available implicit dtype "
            "promotion path. PRNG key arrays cannot be combined with other dtypes.")
    elif all(weaks) and config.read("jax_numpy_dtype_promotion") != "strict":
        # All weak: promote the strong counterparts, then mark the result weak (a weak
        # int16 is not a thing).
        r = _lub(*dict.fromkeys(dts))
        out, weak = _default_of_node(r), True
    else:
        r = _lub(*dict.fromkeys(_weak_node(d) if w else d for d, w in pairs))
        out, weak = _default_of_node(r), r in _WEAK and isinstance(r, type)
    return out, weak and out != bool_


_PROMOTE_CACHE: dict = {}


def promote_types(*dtypes_and_weak) -> tuple[np.dtype, bool]:
    """(dtype, weak) pairs of operands -> promoted (dtype, weak), x64-canonicalized."""
    key = (dtypes_and_weak, x64_enabled(), config.read("jax_numpy_dtype_promotion"))
    hit = _PROMOTE_CACHE.get(key)
    if hit is None:
        pairs = tuple((canonicalize_dtype(d), bool(w)) for d, w in dtypes_and_weak)
        hit = _PROMOTE_CACHE[key] = _lattice_result(pairs)
    return hit


def numpy_promote_types(a, b) -> np.dtype:
    """jnp.promote_types: the lattice join of two dtypes, not canonicalized; the Python
    types int/float/complex are weak (promote_types(int8, int) is int8)."""
    na = a if any(a is t for t in _WEAK) else _np_dtype(a)
    nb = b if any(b is t for t in _WEAK) else _np_dtype(b)
    return np.dtype(_lub(na, nb))


def to_inexact_dtype(d) -> np.dtype:
    """The inexact dtype an integer/bool dtype computes in (JAX: dtypes.to_inexact_dtype).

    Integers up to 32 bits become float32, 64-bit ones float64 (then x64-canonicalized).
    """
    d = _np_dtype(d)
    if is_inexact(d):
        return d
    return canonicalize_dtype(float64 if d.itemsize == 8 else float32)


def is_python_scalar(x) -> bool:
    """A bool, int, float or complex of Python's (weakly typed in JAX), not a NumPy
    scalar: np.float64 and np.complex128 subclass float and complex but are strong."""
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


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


# ---- values ------------------------------------------------------------------------
def aval_of_value(x) -> ShapedArray:
    """The aval (with weak_type) mjax gives a Python/NumPy/mjax value: its dtype and weak
    type are this module's rules; arrays and tracers carry their own."""
    cls = type(x)
    if cls is float or cls is int:
        return scalar_aval(x)
    aval = getattr(x, "aval", None)
    if aval is not None and isinstance(aval, ShapedArray):
        return aval
    # (NumPy first: np.float64 and np.complex128 subclass float and complex, but their
    # values are strongly typed, as NumPy scalars are in JAX.)
    if isinstance(x, (np.ndarray, np.generic)):
        check_numpy_value(x)
        return ShapedArray(np.shape(x), canonicalize_dtype(x.dtype))
    if isinstance(x, (bool, int, float, complex)):
        return scalar_aval(x)
    if hasattr(x, "__jax_array__"):
        return aval_of_value(x.__jax_array__())
    for base in cls.__mro__:
        rule = pytype_aval_mappings.get(base)
        if rule is not None:
            return rule(x)
    raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid mjax type "
                    f"(expected an array, a NumPy array or a Python scalar)")


def check_numpy_value(x) -> None:
    """A NumPy value of a dtype JAX has no arrays of (strings, objects) is JAX's
    TypeError, not a failure in the runtime."""
    d = x.dtype
    if d not in _ALL_DTYPES and d != float0 and not isinstance(d, KeyType):
        first = x.flat[0] if x.size else x
        first = first.item() if isinstance(first, np.generic) else first
        raise TypeError(f"Value {first!r} with dtype {d} is not a valid JAX array type. "
                        "Only arrays of numeric types are supported by JAX.")


def _array_aval(x) -> ShapedArray:
    return ShapedArray(np.shape(x), canonicalize_dtype(x.dtype))


# Python type -> its values' aval (JAX: jax.core.pytype_aval_mappings, deprecated there;
# TFP's JAX substrate maps its own classes to the ndarray rule). aval_of_value consults it
# for types it does not know.
pytype_aval_mappings = {np.ndarray: _array_aval, bool: lambda x: scalar_aval(x),
                        int: lambda x: scalar_aval(x), float: lambda x: scalar_aval(x),
                        complex: lambda x: scalar_aval(x)}
pytype_aval_mappings.update({np.dtype(t).type: _array_aval for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128)})

# Python class -> the typeof function of its values, for hijax's high-level types
# (mjax.experimental.hijax.register_hitype); hi_aval gives a value's hi type, or None.
hitype_rules: dict = {}


def hi_aval(x):
    """The hi type (JAX: a HiType / MutableHiType aval) of a registered hijax value, else
    None."""
    if not hitype_rules:
        return None
    for base in type(x).__mro__:
        rule = hitype_rules.get(base)
        if rule is not None:
            return rule(x)
    return None


def scalar_aval(x) -> ShapedArray:
    """The weakly typed aval of a Python scalar (bool: strongly typed)."""
    if isinstance(x, int) and not isinstance(x, bool):
        info = np.iinfo(default_int())
        if not info.min <= x <= info.max:
            raise OverflowError(f"Python int {x} too large to convert to {default_int()}")
    return ShapedArray((), python_scalar_dtype(x), weak_type=not isinstance(x, bool))


def to_numpy(x) -> np.ndarray:
    """Concrete value -> NumPy array in its canonical dtype (an mjax Array: its value)."""
    return np.asarray(x, dtype=aval_of_value(x).dtype)


_PY_TYPE_DTYPES = {bool: bool_, int: int64, float: float64, complex: complex128}


def _dtype_and_weak(x) -> tuple:
    """(canonical dtype, weak) of a value, dtype specifier or Python scalar type."""
    if any(x is t for t in _WEAK):
        return canonicalize_dtype(_PY_TYPE_DTYPES[x]), True
    if x is bool:
        return bool_, False
    is_scalar_type = isinstance(x, type) and (issubclass(x, np.generic) or
                                              isinstance(getattr(x, "dtype", None), np.dtype))
    if isinstance(x, (KeyType, np.dtype, str)) or is_scalar_type:
        d = x if isinstance(x, KeyType) else _np_dtype(x)
        if not isinstance(d, KeyType) and d not in _ALL_DTYPES:
            raise TypeError(f"Value '{x}' with dtype {d} is not a valid JAX array type. "
                            "Only arrays of numeric types are supported by JAX.")
        return canonicalize_dtype(d), False
    av = aval_of_value(x)
    return av.dtype, av.weak_type


def result_type(*args, return_weak_type_flag: bool = False):
    """jax.numpy.result_type: the dtype arrays, scalars and dtypes promote to (None is the
    default float). A weak result is the default dtype of its kind."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    pairs = [(default_float(), False) if a is None else _dtype_and_weak(a) for a in args]
    out, weak = _lattice_result(pairs)
    if weak:
        out = _default_of_node(_weak_node(out))
    return (out, weak) if return_weak_type_flag else out


def can_cast(from_, to, casting: str = "safe") -> bool:
    """jnp.can_cast (NumPy's, over mjax dtypes and arrays)."""
    if not isinstance(from_, (np.dtype, type, str)):
        from_ = getattr(from_, "dtype", from_)
    return bool(np.can_cast(_np_dtype(from_), _np_dtype(to), casting))


def dtype(x) -> np.dtype:
    """mjax.numpy.dtype-like: the dtype of a value or dtype specifier."""
    if isinstance(x, (np.dtype, type, str)):
        return canonicalize_dtype(_np_dtype(x))
    return aval_of_value(x).dtype


def _info_dtype(d) -> np.dtype:
    if isinstance(d, type) and d in _PY_TYPE_DTYPES:
        return _PY_TYPE_DTYPES[d]   # (not canonicalized, as in JAX)
    if not isinstance(d, (type, str, np.dtype)) and hasattr(d, "dtype"):
        d = d.dtype                 # an array
    return _np_dtype(d)


def finfo(d):
    """jnp.finfo (ml_dtypes' finfo: NumPy's plus bfloat16/float8)."""
    return ml_dtypes.finfo(_info_dtype(d))


def iinfo(d):
    """jnp.iinfo (ml_dtypes' iinfo: NumPy's plus int4/uint4)."""
    return ml_dtypes.iinfo(_info_dtype(d))


def itemsize_bits(dtype) -> int:
    """Bits per element (int4: 4), as jax.dtypes.itemsize_bits."""
    d = _np_dtype(dtype)
    if d in _SMALL_INTS:
        return ml_dtypes.iinfo(d).bits
    if d.name.startswith(("float4_", "float6_")):   # (stored in a byte each)
        return int(d.name[5])
    return d.itemsize * 8


def scalar_type_of(x) -> type:
    """The Python scalar type (bool, int, float, complex) of a value's dtype."""
    d = dtype(x)
    if d == bool_:
        return bool
    if issubdtype(d, np.integer):
        return int
    if issubdtype(d, np.floating):
        return float
    if issubdtype(d, np.complexfloating):
        return complex
    raise TypeError(f"Invalid scalar value {x}")


# ---- explicitly requested 64-bit dtypes with x64 off ----------------------------------
def _user_stacklevel() -> int:
    """warnings.warn stacklevel of the first frame outside mjax."""
    frame, level = sys._getframe(2), 2
    here = os.path.dirname(os.path.dirname(__file__)) + os.sep
    while frame is not None and frame.f_code.co_filename.startswith(here):
        frame, level = frame.f_back, level + 1
    return level


def check_user_dtype(dtype_, fun_name: str = "") -> np.dtype:
    """A user-requested dtype, canonicalized; warns as JAX does when x64 is off and the
    request is a 64-bit dtype (`zeros(3, dtype=float64)` is float32, with a warning)."""
    if dtype_ is None:
        raise ValueError("dtype must be specified.")
    if isinstance(dtype_, KeyType):
        return dtype_
    if hasattr(dtype_, "_buf") or type(dtype_).__name__ == "Tracer":
        raise ValueError("Passing an array as a dtype argument is no longer supported; "
                         "instead of dtype=arr use dtype=arr.dtype.")
    if isinstance(dtype_, type) and dtype_ in _PY_TYPE_DTYPES:
        return canonicalize_dtype(_PY_TYPE_DTYPES[dtype_])
    d = _np_dtype(dtype_)
    if d not in _ALL_DTYPES and d != float0:
        where = f" in {fun_name}" if fun_name else ""
        raise TypeError(f"JAX only supports number, bool, and string dtypes, got dtype "
                        f"{dtype_}{where}")
    canon = canonicalize_dtype(d)
    if canon != d:
        where = f" requested in {fun_name}" if fun_name else ""
        if config.read("jax_explicit_x64_dtypes") == 2:      # (ExplicitX64Mode.ERROR)
            raise ValueError(
                f"Explicitly requested dtype {d}{where} is not available. To enable more "
                "dtypes, set the jax_enable_x64 or allow_explicit_x64_dtypes configuration "
                "options.See https://github.com/jax-ml/jax#current-gotchas for more.")
        warnings.warn(
            f"Explicitly requested dtype {d}{where} is not available, and will be "
            f"truncated to dtype {canon.name}. To enable more dtypes, set the "
            "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
            "variable. See https://github.com/jax-ml/jax#current-gotchas for more.",
            stacklevel=_user_stacklevel())
    return canon
