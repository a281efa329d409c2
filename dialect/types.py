"""Abstract values (shape + dtype) and their MLIR tensor types.

Element types are spelled as StableHLO spells them (`i1`, `ui8`, `bf16`, `complex<f32>`).
PRNG key arrays use the opaque element type `!jaxpr.key<impl>`.
"""
from __future__ import annotations

import functools
import math

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir

from mjax.dialect.context import context
from mjax.dialect.shape_poly import (InconclusiveDimensionOperation, dims_of_text,
                                     is_symbolic_dim, spelled_dims)

# numpy dtype name -> MLIR element type spelling. One table, read both ways.
_ELEMENT_TYPES = {
    "bool": "i1",
    "int2": "i2", "int4": "i4", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint2": "ui2", "uint4": "ui4", "uint8": "ui8", "uint16": "ui16", "uint32": "ui32",
    "uint64": "ui64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2",
    "float8_e4m3fnuz": "f8E4M3FNUZ", "float8_e5m2fnuz": "f8E5M2FNUZ",
    "float8_e4m3b11fnuz": "f8E4M3B11FNUZ",
    "float8_e4m3": "f8E4M3", "float8_e3m4": "f8E3M4", "float8_e8m0fnu": "f8E8M0FNU",
    "float4_e2m1fn": "f4E2M1FN",
    "complex64": "complex<f32>", "complex128": "complex<f64>",
}
_DTYPES_BY_ELEMENT = {v: k for k, v in _ELEMENT_TYPES.items()}


KEY_TAGS = {"threefry2x32": "fry", "rbg": "rbg", "unsafe_rbg": "urbg",   # (JAX's short
            "pallas_tpu": "pl", "_pallas_internal_stateful": "_pl_stateful"}  # names)
_KEY_BYTES = {"threefry2x32": 8, "rbg": 16, "unsafe_rbg": 16,    # (2 or 4 uint32 words)
              "pallas_tpu": 8, "_pallas_internal_stateful": 4}


def register_key_type(impl: str, tag: str, nbytes: int) -> None:
    """A user-defined PRNG implementation's key type (its tag, the bytes of one key)."""
    KEY_TAGS[impl], _KEY_BYTES[impl] = tag, nbytes


# Abstract scalar types of dtypes that are not NumPy's, as in jax.dtypes.
class extended(np.generic):
    """Scalar type of extended dtypes (PRNG keys): issubdtype(key.dtype, extended)."""


class prng_key(extended):
    """Scalar type of PRNG key dtypes: issubdtype(key.dtype, prng_key)."""


class KeyType:
    """Element type of a typed PRNG key array, e.g. `!jaxpr.key<threefry2x32>`."""

    __slots__ = ("impl",)
    type = prng_key     # (JAX's extended dtypes' scalar type: key.dtype.type)

    def __init__(self, impl: str = "threefry2x32"):
        self.impl = impl

    @property
    def name(self) -> str:
        return repr(self)   # (JAX's name: key<fry>)

    @property
    def itemsize(self) -> int:
        """Bytes of one key's data (flax sizes parameters by it)."""
        return _KEY_BYTES.get(self.impl, 8)

    def __eq__(self, other):
        return isinstance(other, KeyType) and other.impl == self.impl

    def __hash__(self):
        return hash(("key", self.impl))

    def __repr__(self):
        # Users see JAX's spelling, by the impl's tag: key<fry>, key<rbg>, key<urbg>.
        return f"key<{KEY_TAGS.get(self.impl, self.impl)}>"

    __str__ = __repr__


def dtype_of(name) -> np.dtype:
    """np.dtype for a numpy name, a numpy/ml_dtypes type, or an existing dtype."""
    if isinstance(name, KeyType):
        return name
    if isinstance(name, str) and hasattr(ml_dtypes, name):
        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


def element_type_name(dtype) -> str:
    """MLIR spelling of a dtype: float32 -> 'f32', KeyType -> '!jaxpr.key<...>'."""
    if isinstance(dtype, KeyType):
        return f"!jaxpr.key<{dtype.impl}>"
    try:
        return _ELEMENT_TYPES[np.dtype(dtype).name]
    except KeyError:
        raise TypeError(f"dtype {np.dtype(dtype).name} has no MLIR element type") from None


def short_dtype_name(dtype) -> str:
    """JAX's short spelling used in pretty printing: f32, i32, bool, bf16, c64, key<...>."""
    if isinstance(dtype, KeyType):
        return dtype.name
    name = np.dtype(dtype).name
    if name == "bool":
        return "bool"
    if name.startswith("complex"):
        return "c" + name[len("complex"):]
    if name.startswith(("float8_", "float6_", "float4_")):
        return "f" + name[len("float"):]      # (JAX's f8_e4m3fn, f4_e2m1fn)
    if name.startswith("uint"):
        return "u" + name[len("uint"):]       # (JAX's u8, u32)
    return _ELEMENT_TYPES.get(name, name)


# JAX's tangent dtype of integer values (the same dtype as mjax.dtypes.float0)
_FLOAT0 = np.dtype([("float0", np.void, 0)])


_JAX_AVAL_KEYWORDS = frozenset({"sharding", "vma", "memory_space", "manual_type"})


class ShapedArray:
    """An abstract value: a static shape and a dtype (plus JAX's weak_type flag).

    weak_type only steers dtype promotion while tracing; the IR does not record it.
    """

    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape, dtype, weak_type: bool = False, **jax_only):
        # (jax_only: JAX's `sharding`, `vma`, `memory_space`, `manual_type`, which libraries
        # pass when they build avals; mjax's types carry no layout: the frontend's
        # sharding_types keeps shardings beside them, and `typeof` reports them.)
        if jax_only and not jax_only.keys() <= _JAX_AVAL_KEYWORDS:
            raise TypeError(f"ShapedArray got unexpected keyword arguments "
                            f"{sorted(jax_only.keys() - _JAX_AVAL_KEYWORDS)}")
        # (map and the isinstance test first: tracing builds several avals per op.)
        try:
            self.shape = tuple(map(int, shape))
        except InconclusiveDimensionOperation:   # symbolic dimensions (shape_poly.py)
            self.shape = tuple(d if is_symbolic_dim(d) else int(d) for d in shape)
        self.dtype = dtype if isinstance(dtype, (np.dtype, KeyType)) else np.dtype(dtype)
        self.weak_type = weak_type if weak_type is True or weak_type is False \
            else bool(weak_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        try:
            return int(np.prod(self.shape, dtype=np.int64))
        except InconclusiveDimensionOperation:   # (the size is a dimension expression)
            return math.prod(self.shape)

    def update(self, shape=None, dtype=None, weak_type=None) -> "ShapedArray":
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def strip_weak_type(self) -> "ShapedArray":
        return ShapedArray(self.shape, self.dtype) if self.weak_type else self

    def to_tangent_aval(self) -> "ShapedArray":
        """The aval of this value's tangents (JAX's name): float0 for integer, boolean and
        key values."""
        name = getattr(self.dtype, "name", "")
        inexact = "float" in name or "complex" in name     # (bfloat16, float8_* too)
        return ShapedArray(self.shape, self.dtype if inexact else _FLOAT0)

    at_least_vspace = to_tangent_aval   # (JAX's older name, still read by libraries)

    # hijax's lowering interface (mjax/experimental/hijax_types.py): an array type is its
    # own one lo type, and its values their own lo values.
    def lo_ty(self) -> list:
        return [self]

    def lower_val(self, val) -> list:
        return [val]

    def raise_val(self, val):
        return val

    def normalize(self) -> "ShapedArray":
        return self.strip_weak_type()

    def __eq__(self, other):
        return (isinstance(other, ShapedArray) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        # Cached: jit hashes every argument's aval on every call (avals are never changed
        # after construction).
        try:
            return self._hash
        except AttributeError:
            self._hash = hash((self.shape, self.dtype, self.weak_type))
            return self._hash

    def str_short(self) -> str:
        dims = ",".join(str(d) for d in self.shape)
        return f"{short_dtype_name(self.dtype)}[{dims}]"

    def __str__(self):
        # As JAX prints avals: float32[3], ~float32[] when weakly typed (str_short is the
        # compact f32[3]).
        return ("~" if self.weak_type else "") + self._str_strong()

    def _str_strong(self) -> str:
        name = getattr(self.dtype, "name", str(self.dtype))
        return f"{name}[{','.join(str(d) for d in self.shape)}]"

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self._str_strong()}{weak})"


class RefAval(ShapedArray):
    """A mutable reference to an array (a Pallas kernel's `Ref`), typed in the IR as the
    builtin `memref<SHAPExDTYPE>`: builtin, so it parses and prints with no C++ dialect,
    and it carries shape and element type. Its weak_type is its contents': a ref made
    from a Python scalar reads weakly typed values for its whole life, as JAX's (like
    a value's, the IR does not record it). Never equal to a ShapedArray of the same
    shape (a ref is not a value)."""

    __slots__ = ()

    def update(self, shape=None, dtype=None, weak_type=None) -> "RefAval":
        return RefAval(self.shape if shape is None else shape,
                       self.dtype if dtype is None else dtype,
                       self.weak_type if weak_type is None else weak_type)

    def strip_weak_type(self) -> "RefAval":
        return RefAval(self.shape, self.dtype) if self.weak_type else self

    @property
    def inner_aval(self) -> ShapedArray:
        """The aval of the value the ref holds."""
        return ShapedArray(self.shape, self.dtype, self.weak_type)

    def __eq__(self, other):
        return (isinstance(other, RefAval) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash(("ref", self.shape, self.dtype, self.weak_type))

    def str_short(self) -> str:
        return f"Ref{{{super().str_short()}}}"

    def __str__(self):
        return f"Ref{{{self._str_strong()}}}"

    __repr__ = __str__      # (as JAX's AbstractRef)


@functools.lru_cache(maxsize=None)
def element_type(dtype) -> ir.Type:
    return ir.Type.parse(element_type_name(dtype), context())


@functools.lru_cache(maxsize=4096)
def _tensor_type(shape: tuple, dtype) -> ir.Type:
    return ir.RankedTensorType.get(list(shape), element_type(dtype),
                                   loc=ir.Location.unknown(context()))


@functools.lru_cache(maxsize=1024)
def _memref_type(shape: tuple, dtype) -> ir.Type:
    return ir.MemRefType.get(list(shape), element_type(dtype),
                             loc=ir.Location.unknown(context()))


def tensor_type(aval: ShapedArray) -> ir.Type:
    """`tensor<2x3xf32>` for ShapedArray((2, 3), float32); `memref<2x3xf32>` for a
    RefAval; `tensor<?x3xf32, "b, 3">` for symbolic dimensions."""
    if type(aval) is RefAval:
        return _memref_type(aval.shape, aval.dtype)
    try:
        return _tensor_type(aval.shape, aval.dtype)
    except TypeError:
        if not any(map(is_symbolic_dim, aval.shape)):
            raise
        return _symbolic_tensor_type(aval.shape, aval.dtype)


# ---- symbolic dimensions --------------------------------------------------------------
# A dimension expression is a `?` of the tensor type, and the type's encoding spells every
# dimension: tensor<?x3xf32, "2*b, 3">. The type keeps the expressions through passes and
# text, so shape rules and the verifier check them; lowering reads them to build
# StableHLO's dynamic shapes, then drops the encodings.

_SYMBOLIC_MADE = [False]


def symbolic_types_made() -> bool:
    """Whether this process has made or read a type with symbolic dimensions (lowering
    then drops their encodings; programs without them skip that walk)."""
    return _SYMBOLIC_MADE[0]


def _symbolic_tensor_type(shape: tuple, dtype) -> ir.Type:
    _SYMBOLIC_MADE[0] = True
    ctx = context()
    dims = [ir.ShapedType.get_dynamic_size() if is_symbolic_dim(d) else d for d in shape]
    spelled = ir.StringAttr.get(spelled_dims(shape), ctx)
    t = ir.RankedTensorType.get(dims, element_type(dtype), spelled,
                                loc=ir.Location.unknown(ctx))
    # The type reads back as the aval it was made from, with that aval's scope (its
    # constraints): the latest trace's expressions win over an earlier one's spelled alike.
    _AVALS_BY_TYPE[t] = ShapedArray(shape, dtype)
    return t


def _symbolic_dims(t) -> tuple:
    enc = t.encoding
    _SYMBOLIC_MADE[0] = True
    if not isinstance(enc, ir.StringAttr):
        raise TypeError(f"expected a statically shaped tensor, or one whose encoding spells "
                        f"its symbolic dimensions, got {t}")
    try:
        dims = dims_of_text(enc.value)
    except ValueError as e:
        raise TypeError(f"{t}: bad symbolic dimensions: {e}") from None
    static = t.shape
    if len(dims) != len(static) or any(
            (s == ir.ShapedType.get_dynamic_size()) != is_symbolic_dim(d) or
            (not is_symbolic_dim(d) and d != s) for d, s in zip(dims, static)):
        raise TypeError(f"{t}: the encoding's dimensions {enc.value!r} do not match the "
                        "shape (a '?' for each symbolic dimension, the others equal)")
    return dims


_AVALS_BY_TYPE: dict = {}


def dtype_of_element_type(elt: ir.Type):
    name = str(elt)
    if name.startswith("!jaxpr.key<") and name.endswith(">"):
        return KeyType(name[len("!jaxpr.key<"):-1])
    try:
        return dtype_of(_DTYPES_BY_ELEMENT[name])
    except KeyError:
        raise TypeError(f"element type {name} is not supported by mjax") from None


def aval_of(t: ir.Type) -> ShapedArray:
    """ShapedArray for a ranked tensor type, RefAval for a memref type; TypeError for
    anything else."""
    aval = _AVALS_BY_TYPE.get(t)
    if aval is None:
        if isinstance(t, ir.MemRefType):
            if not t.has_static_shape:
                raise TypeError(f"expected a statically shaped memref, got {t}")
            aval = RefAval(t.shape, dtype_of_element_type(t.element_type))
            _AVALS_BY_TYPE[t] = aval
            return aval
        if not isinstance(t, ir.RankedTensorType):
            raise TypeError(f"expected a ranked tensor type, got {t}")
        rt = t
        shape = rt.shape if rt.has_static_shape else _symbolic_dims(rt)
        aval = ShapedArray(shape, dtype_of_element_type(rt.element_type))
        _AVALS_BY_TYPE[t] = aval
    return aval
