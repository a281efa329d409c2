"""Python values <-> MLIR attributes, and the typed attribute schemas ops declare.

Encoding is generic: ints become i64, int tuples `array<i64: ...>`, nested tuples
`[...]` arrays, dicts dictionaries, dtypes type attributes, `Symbol`s `@name` refs.
Each op declares the kind of every attribute (`Ints()`, `DType()`, ...); the kind checks
a decoded value and says what it expected.
"""
from __future__ import annotations

import re

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _mlir

from mjax.dialect.context import context
from mjax.dialect import types as T
from mjax.dialect.shape_poly import dims_of_text, is_symbolic_dim, spelled_dims

REQUIRED = object()


def _install_dense_casters() -> None:
    """Lets mjax's context hand back every dense attribute, leaving other contexts alone.

    Reading an attribute downcasts it through process-wide casters; the built-in ones
    know only int and float element types and raise (or, inside `NamedAttribute.attr`,
    abort the process) on `dense<...> : tensor<2xcomplex<f32>>` or `array<ui32: 1>`.
    The bindings cannot scope a caster to a context or give back the built-in one, so
    ours do what the built-in ones do (same classes, same TypeError) for attributes of
    any other context (jax's included), and fall back to the untyped base class only
    for attributes of mjax's context, which `decode` then accepts or rejects with a
    message.
    """
    ours = context()

    def caster(candidates, fallback, kind):
        def cast(attr):
            for cls in candidates:
                try:
                    return cls(attr)
                except (ValueError, TypeError):
                    pass
            if attr.context == ours:
                return fallback(attr)
            # The built-in casters' error, word for word.
            raise TypeError(f"Can't cast unknown element type {kind} ({attr!r})")
        return cast

    elements = ir.DenseElementsAttr.get(np.zeros(1, np.float32), context=ours)
    _mlir.register_type_caster(elements.typeid, replace=True)(caster(
        (ir.DenseFPElementsAttr, ir.DenseIntElementsAttr), ir.DenseElementsAttr,
        "DenseTypedElementsAttr"))
    array = ir.DenseI64ArrayAttr.get([0], context=ours)
    _mlir.register_type_caster(array.typeid, replace=True)(caster(
        # i64 first: it is what mjax writes (a failed try raises, which is slow).
        (ir.DenseI64ArrayAttr, ir.DenseBoolArrayAttr, ir.DenseI8ArrayAttr,
         ir.DenseI16ArrayAttr, ir.DenseI32ArrayAttr, ir.DenseF32ArrayAttr,
         ir.DenseF64ArrayAttr), ir.Attribute, "DenseArrayAttr"))


_install_dense_casters()


class Symbol(str):
    """A symbol reference (`@f`) attribute value, e.g. the callee of `jaxpr.jvp`."""


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


_EXACT_INT = frozenset({int})
_ENCODED: dict = {}     # exact ints and exact-int tuples -> their (uniqued) attribute


def _int_tree(value) -> bool:
    """Whether `value` is an exact int or a tuple of such (dimension numbers)."""
    kind = type(value)
    return kind is int or (kind is tuple and all(map(_int_tree, value)))


def encode(value) -> ir.Attribute:
    # Ints and (nested) int tuples (shapes, dimensions, axes, dimension numbers) repeat
    # across the ops of a trace: encoded once each. Keys are exact ints only (True == 1
    # hashes alike but encodes as a BoolAttr).
    kind = type(value)
    if kind is int or (kind is tuple and (_EXACT_INT.issuperset(map(type, value))
                                          or _int_tree(value))):
        hit = _ENCODED.get(value)
        if hit is None:
            if len(_ENCODED) > 4096:
                _ENCODED.clear()
            hit = _ENCODED[value] = _encode(value)
        return hit
    return _encode(value)


def _encode(value) -> ir.Attribute:
    ctx = context()
    if isinstance(value, ir.Attribute):
        return value
    if isinstance(value, (bool, np.bool_)):
        return ir.BoolAttr.get(bool(value), ctx)
    if _is_int(value):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64, ctx), int(value))
    if isinstance(value, (float, np.floating)):
        return ir.FloatAttr.get_f64(float(value), ctx)
    if isinstance(value, Symbol):
        return ir.FlatSymbolRefAttr.get(str(value), ctx)
    if isinstance(value, str):
        return ir.StringAttr.get(value, ctx)
    if isinstance(value, T.RefAval):    # a Pallas scratch buffer: memref type attr
        return ir.TypeAttr.get(T.tensor_type(value))
    if isinstance(value, (np.dtype, T.KeyType)) or (isinstance(value, type) and issubclass(value, np.generic)):
        return ir.TypeAttr.get(T.element_type(T.dtype_of(value)))
    if isinstance(value, np.ndarray):
        return dense_elements(value)
    if isinstance(value, dict) or hasattr(value, "_asdict"):
        items = value.items() if isinstance(value, dict) else value._asdict().items()
        return ir.DictAttr.get({k: encode(v) for k, v in items}, ctx)
    if is_symbolic_dim(value):     # (in a shape: its text, read back by the Shape kind)
        return ir.StringAttr.get(spelled_dims((value,)), ctx)
    if isinstance(value, (tuple, list)):
        if all(_is_int(v) for v in value):
            return ir.DenseI64ArrayAttr.get([int(v) for v in value], ctx)
        return ir.ArrayAttr.get([encode(v) for v in value], ctx)
    raise TypeError(f"cannot encode {value!r} ({type(value).__name__}) as an MLIR attribute")


_NATIVE_DENSE = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float16", "float32", "float64", "complex64", "complex128"}
_BUFFER_READABLE = _NATIVE_DENSE - {"complex64", "complex128"}
_RAW_VIEW = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


_DENSE_CACHE: dict = {}
_DENSE_CACHE_SIZE = 16  # elements: scalars and splats, the constants tracing repeats


def dense_elements(array: np.ndarray) -> ir.Attribute:
    """A DenseElementsAttr holding `array` with its exact tensor type. An array broadcast
    from one value (all strides 0) becomes a splat, without materializing it.

    Small arrays and splats are cached by (context, dtype, shape, bytes): attributes are
    immutable and uniqued in their context, and a traced function repeats the same few
    constants (`x * 1.01 + 0.5` in a loop) hundreds of times."""
    splat = array.size > 1 and not any(array.strides)
    if not splat and array.size > _DENSE_CACHE_SIZE and _uniform(array):
        # (np.full/zeros of an activation's shape, as AD rules make: building the full
        # attribute costs ~0.3 ms for 64K elements, only for MLIR to find it a splat.)
        array = np.broadcast_to(array[(0,) * array.ndim], array.shape)
        splat = True
    if splat or array.size <= _DENSE_CACHE_SIZE:
        data = (np.asarray(array[(0,) * array.ndim]).tobytes() if splat
                else np.asarray(array).tobytes())
        key = (context(), array.dtype, array.shape, splat, data)
        hit = _DENSE_CACHE.get(key)
        if hit is None:
            if len(_DENSE_CACHE) > 4096:
                _DENSE_CACHE.clear()
            hit = _DENSE_CACHE[key] = _dense_elements(array)
        return hit
    return _dense_elements(array)


_UNIFORM_TESTED = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                             "uint64", "float16", "float32", "float64"})


def _uniform(array: np.ndarray) -> bool:
    """Whether every element has the first one's bits (-0.0 is not 0.0, NaNs compare)."""
    if array.dtype.name not in _UNIFORM_TESTED:
        return False
    bits = np.ravel(array).view(_RAW_VIEW[array.dtype.itemsize])
    return bool(bits[0] == bits[-1]) and bool((bits == bits[0]).all())


def _dense_elements(array: np.ndarray) -> ir.Attribute:
    if array.size > 1 and not any(array.strides):
        one = dense_elements(np.asarray(array).reshape(-1)[:1].copy())
        try:
            return ir.DenseElementsAttr.get_splat(
                T.tensor_type(T.ShapedArray(array.shape, array.dtype)), one.get_splat_value())
        except (TypeError, ValueError):  # element kinds get_splat cannot take (complex)
            array = np.ascontiguousarray(array)
    array = np.asarray(array, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
    elt = T.element_type(array.dtype)
    if array.dtype.name not in _NATIVE_DENSE:
        # bf16, float8, int4: hand over the bits; MLIR reinterprets them as `elt`.
        array = array.view(_RAW_VIEW[array.dtype.itemsize])
    return ir.DenseElementsAttr.get(array, type=elt, context=context())


def decode(attr: ir.Attribute):
    """The Python value of an attribute, inverse of `encode`."""
    if isinstance(attr, ir.BoolAttr):
        return ir.BoolAttr(attr).value
    if isinstance(attr, ir.IntegerAttr):
        return ir.IntegerAttr(attr).value
    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value
    if isinstance(attr, ir.FlatSymbolRefAttr):
        return Symbol(ir.FlatSymbolRefAttr(attr).value)
    if isinstance(attr, ir.StringAttr):
        return ir.StringAttr(attr).value
    if isinstance(attr, ir.TypeAttr):
        t = ir.TypeAttr(attr).value
        if isinstance(t, ir.MemRefType):
            return T.aval_of(t)
        return T.dtype_of_element_type(t)
    if isinstance(attr, ir.DenseI64ArrayAttr):
        return tuple(ir.DenseI64ArrayAttr(attr))
    if isinstance(attr, ir.ArrayAttr):
        # Passes decode the same uniqued array attributes (dimension numbers, specs) again
        # and again; a decoded value made only of immutable parts is handed out again.
        hit = _DECODED_ARRAYS.get(attr)
        if hit is None:
            hit = tuple(decode(a) for a in ir.ArrayAttr(attr))
            if immutable(hit):
                if len(_DECODED_ARRAYS) > 4096:
                    _DECODED_ARRAYS.clear()
                _DECODED_ARRAYS[attr] = hit
        return hit
    if isinstance(attr, ir.DictAttr):
        d = ir.DictAttr(attr)
        return {d[i].name: decode(d[i].attr) for i in range(len(d))}
    if isinstance(attr, ir.DenseElementsAttr):
        return dense_to_numpy(attr)
    raise TypeError(f"unsupported attribute {attr}")


_DECODED_ARRAYS: dict = {}
_IMMUTABLE = (int, float, str, np.dtype, T.KeyType)   # (bool and Symbol are subclasses)


def immutable(value) -> bool:
    """Whether `value` (ints, floats, strings, dtypes, tuples of them) can be shared."""
    if type(value) is tuple:
        return all(immutable(v) for v in value)
    return isinstance(value, _IMMUTABLE)


_SPLAT_VALUES: dict = {}


def dense_to_numpy(attr: ir.Attribute) -> np.ndarray:
    """The numpy array held by a DenseElementsAttr (splat or not)."""
    if attr.is_splat:
        # Splats of native dtypes decode to read-only broadcast views, so one can be
        # handed out again: lowering decodes every traced scalar constant (attributes
        # hash by their uniqued storage).
        hit = _SPLAT_VALUES.get(attr)
        if hit is None:
            hit = _dense_to_numpy(attr)
            if not hit.flags.writeable:
                if len(_SPLAT_VALUES) > 4096:
                    _SPLAT_VALUES.clear()
                _SPLAT_VALUES[attr] = hit
        return hit
    return _dense_to_numpy(attr)


def _dense_to_numpy(attr: ir.Attribute) -> np.ndarray:
    aval = T.aval_of(attr.type)
    name = np.dtype(aval.dtype).name
    if name in _BUFFER_READABLE:
        # i1 data comes out one byte per element; a splat holds one element.
        raw = np.frombuffer(bytes(memoryview(attr)),
                            np.uint8 if name == "bool" else aval.dtype).astype(aval.dtype)
        if attr.is_splat:  # a read-only broadcast view: re-encoding keeps it a splat
            return np.broadcast_to(raw[0] if raw.size else aval.dtype.type(0), aval.shape)
        return raw[: aval.size].reshape(aval.shape)
    # complex, bf16, float8, int4 have no buffer protocol: read the printed form.
    text = str(attr)
    hexdata = re.search(r'dense<"0x([0-9A-Fa-f]*)">', text)
    if hexdata:
        raw = bytes.fromhex(hexdata.group(1))
        return np.frombuffer(raw, aval.dtype)[: aval.size].reshape(aval.shape).copy()
    body = text[text.index("<") + 1: text.rindex(">")]
    numbers = re.findall(r"[-+]?(?:0x[0-9A-Fa-f]+|[0-9.]+(?:[eE][-+]?\d+)?|inf|nan)",
                         body.split(" : ")[0])
    dtype = np.dtype(aval.dtype)
    # Each number is decimal or a raw bit pattern (NaN, inf); a complex value prints as
    # two components of half its size.
    part = np.dtype(f"f{dtype.itemsize // 2}") if dtype.kind == "c" else dtype
    values = np.array([_number(v, part) for v in numbers], dtype=np.float64)
    if dtype.kind == "c":
        pairs = values.reshape(-1, 2)
        values = np.empty(len(pairs), dtype)
        values.real, values.imag = pairs[:, 0], pairs[:, 1]
    if attr.is_splat:   # (a read-only view, as above: a splat of any size costs nothing)
        return np.broadcast_to(values[:1].astype(aval.dtype).reshape(()), aval.shape)
    return values.astype(aval.dtype).reshape(aval.shape)


def _number(text: str, part: np.dtype) -> float:
    if text.startswith("0x"):
        bits = np.array([int(text, 16)], dtype=np.uint64).astype(_RAW_VIEW[part.itemsize])
        return float(bits.view(part)[0])
    return float(text)


# ---- attribute kinds ----------------------------------------------------------


class AttrKind:
    """Declares one attribute of an op: what Python values it accepts, and a default."""

    expected = "a value"

    def __init__(self, default=REQUIRED):
        self.default = default

    def accepts(self, value) -> bool:
        return True

    def normalize(self, value):
        return value

    def check(self, op_name: str, attr_name: str, value):
        if not self.accepts(value):
            raise TypeError(f"'{op_name}' op attribute '{attr_name}' must be "
                            f"{self.expected}, got {value!r}")
        return self.normalize(value)


class Int(AttrKind):
    expected = "an integer"

    def accepts(self, v):
        return _is_int(v)

    def normalize(self, v):
        return int(v)


class Ints(AttrKind):
    expected = "a sequence of integers"

    def accepts(self, v):
        return isinstance(v, (tuple, list)) and all(_is_int(x) for x in v)

    def normalize(self, v):
        return tuple(int(x) for x in v)

    def check(self, op_name: str, attr_name: str, value):
        if type(value) is tuple and _EXACT_INT.issuperset(map(type, value)):
            return value        # already normal (the common case, checked per op)
        return super().check(op_name, attr_name, value)


class Shape(Ints):
    """A shape: integers, or symbolic dimensions (shape_poly.py), which the IR spells as
    strings: `shape = ["b", 4]`."""

    expected = "a shape (integers or symbolic dimensions)"

    def accepts(self, v):
        return isinstance(v, (tuple, list)) and all(
            _is_int(x) or is_symbolic_dim(x) or isinstance(x, str) for x in v)

    def normalize(self, v):
        try:
            return tuple(x if is_symbolic_dim(x) else
                         dims_of_text(x)[0] if isinstance(x, str) else int(x) for x in v)
        except (ValueError, IndexError) as e:
            raise TypeError(f"bad symbolic dimension in {v!r}: {e}") from None


class Dim(AttrKind):
    """One dimension: an integer or a symbolic dimension (spelled as a string)."""

    expected = "a dimension (an integer or a symbolic dimension)"

    def accepts(self, v):
        return Shape().accepts((v,))

    def normalize(self, v):
        return Shape().normalize((v,))[0]


class Float(AttrKind):
    expected = "a number"

    def accepts(self, v):
        return isinstance(v, (float, int, np.floating, np.integer)) and not isinstance(v, bool)

    def normalize(self, v):
        return float(v)


class Bool(AttrKind):
    expected = "a boolean"

    def accepts(self, v):
        return isinstance(v, (bool, np.bool_))

    def normalize(self, v):
        return bool(v)


class Str(AttrKind):
    expected = "a string"

    def __init__(self, default=REQUIRED, choices=None):
        super().__init__(default)
        self.choices = choices
        if choices:
            self.expected = "one of " + ", ".join(repr(c) for c in choices)

    def accepts(self, v):
        return isinstance(v, str) and not isinstance(v, Symbol) and (
            not self.choices or v in self.choices)


class DType(AttrKind):
    expected = "a dtype"

    def accepts(self, v):
        try:
            T.dtype_of(v)
            return True
        except (TypeError, ValueError, SyntaxError):   # (numpy parses "a,b" as a record)
            return False

    def normalize(self, v):
        return T.dtype_of(v)


class Sym(AttrKind):
    expected = "a symbol reference (@name)"

    def accepts(self, v):
        return isinstance(v, Symbol)


class Array(AttrKind):
    expected = "a dense elements attribute"

    def accepts(self, v):
        return isinstance(v, np.ndarray)


def _exact_ints(x, depth: int) -> bool:
    """Whether x is tuples nested `depth` deep with exact ints at the bottom."""
    if type(x) is not tuple or depth < 1:
        return False
    if depth == 1:
        return _EXACT_INT.issuperset(map(type, x))
    return all(_exact_ints(y, depth - 1) for y in x)


class Nested(AttrKind):
    """A nested tuple of integer tuples, e.g. dot_general's dimension_numbers; with
    `dims`, the integers may be symbolic dimensions too (pad's padding amounts)."""

    expected = "nested integer sequences"

    def __init__(self, default=REQUIRED, depth=2, dims=False):
        super().__init__(default)
        self.depth, self.dims = depth, dims

    def accepts(self, v):
        leaf = Dim().accepts if self.dims else _is_int

        def ok(x, d):
            if d == 0:
                return leaf(x)
            return isinstance(x, (tuple, list)) and all(ok(y, d - 1) for y in x)
        return ok(v, self.depth)

    def check(self, op_name: str, attr_name: str, value):
        if _exact_ints(value, self.depth):
            return value        # already normal (what decoding gives): nothing to convert
        return super().check(op_name, attr_name, value)

    def normalize(self, v):
        leaf = Dim().normalize if self.dims else int

        def norm(x, d):
            return leaf(x) if d == 0 else tuple(norm(y, d - 1) for y in x)
        return norm(v, self.depth)


class Dict(AttrKind):
    """A dictionary with integer-tuple fields, e.g. gather's dimension_numbers."""

    def __init__(self, fields, default=REQUIRED):
        super().__init__(default)
        self.fields = tuple(fields)
        self.expected = "a dictionary with integer-sequence fields " + ", ".join(self.fields)

    def accepts(self, v):
        if hasattr(v, "_asdict"):
            v = v._asdict()
        return (isinstance(v, dict) and set(v) == set(self.fields)
                and all(Ints().accepts(v[f]) for f in self.fields))

    def normalize(self, v):
        if hasattr(v, "_asdict"):
            v = v._asdict()
        return {f: tuple(int(x) for x in v[f]) for f in self.fields}


class AnyAttr(AttrKind):
    expected = "any value"
