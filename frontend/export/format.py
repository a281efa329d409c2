"""JAX's serialized form of an `Exported`: a FlatBuffer whose schema JAX defines in
jax/_src/export/serialization.fbs. `Exported.serialize()` writes it, so
`jax.export.deserialize` reads mjax's exports, and `mjax.export.deserialize` reads JAX's.

The root table `Exported` has 26 fields, by slot: 0 serialization version (uint16), 1
function name, 2/4 in/out trees, 3/5 in/out avals (the older per-argument form), 6 a
short device count, 7/8 in/out shardings (older form), 9 platforms, 10/11 ordered and
unordered effects, 12 disabled safety checks, 13 the module (a StableHLO portable
artifact), 14 calling convention version (uint16), 15 module_kept_var_idx (uint16s), 16
uses_global_constants, 17 the VJP (an Exported), 18 device count (uint32), 19 unique
avals, 20/21 unique abstract meshes and named shardings, 22/23 in/out aval indices
(uint32s into 19), 24/25 in/out sharding indices (0: none). Both aval forms are written,
as JAX writes them. A symbolic dimension is its text ("2*b + 1"); JAX keeps no
constraints in this form, so mjax keeps them in the module (export.py). Shardings are
NamedShardings over abstract meshes (20, 21; also in 7/8, each with its whole mesh, as
JAX still writes them); the HLO shardings of exports older than 2026 are not read.
"""
from __future__ import annotations

import json
import types

import flatbuffers
import ml_dtypes
import numpy as np
from flatbuffers import number_types as N
from flatbuffers.table import Table

from mjax.specs import dtypes as _dtypes
from mjax.base import trace_trees
from mjax.base.tree_util import NODE_TYPES
from mjax.dialect.shape_poly import SymbolicScope, symbolic_shape
from mjax.dialect.types import ShapedArray
from mjax.specs.sharding_impls import AbstractDevice, AbstractMesh, AxisType, NamedSharding, P

_VERSION = 3          # (what JAX writes, for its older readers' sake)
_EXPORTED_FIELDS = 26

# The DType enum, by numpy/ml_dtypes name.
_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128", "bfloat16", "int4",
           "uint4", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
           "float8_e5m2fnuz", "float0", "float8_e4m3", "float8_e3m4", "float8_e8m0fnu",
           "float4_e2m1fn"]
_LEAF, _NONE, _TUPLE, _LIST, _DICT, _CUSTOM = range(6)      # PyTreeDefKind
_PLATFORM_CHECK, _CUSTOM_CALL_CHECK, _SHAPE_ASSERTION_CHECK = range(3)


# ---- custom pytree nodes -------------------------------------------------------------
# type -> (serialized name, serialize_auxdata); name -> (type, deserialize_auxdata,
# from_children). JAX: export.register_pytree_node_serialization.
_BY_TYPE: dict = {}
_BY_NAME: dict = {}


def register_pytree_node_serialization(nodetype, *, serialized_name: str,
                                       serialize_auxdata, deserialize_auxdata,
                                       from_children=None):
    """Lets trees with `nodetype` nodes (registered with mjax.tree_util first) be
    serialized: their auxdata as `serialize_auxdata(aux) -> bytes`, read back with
    `deserialize_auxdata`, the node rebuilt with `from_children(aux, children)` (default:
    the type's unflatten function). JAX: jax.export.register_pytree_node_serialization."""
    if nodetype in _BY_TYPE:
        raise ValueError(f"Duplicate serialization registration for type `{nodetype}`. "
                         f"Previous registration was with serialized_name "
                         f"`{_BY_TYPE[nodetype][0]}`.")
    if serialized_name in _BY_NAME:
        raise ValueError(f"Duplicate serialization registration for serialized_name "
                         f"`{serialized_name}`. Previous registration was for type "
                         f"`{_BY_NAME[serialized_name][0]}`.")
    if from_children is None:
        if nodetype not in NODE_TYPES:
            raise ValueError(f"If `from_children` is not present, you must call first "
                             f"`jax.tree_util.register_pytree_node` for {nodetype}")
        from_children = NODE_TYPES[nodetype].from_iter
    _BY_TYPE[nodetype] = (serialized_name, serialize_auxdata)
    _BY_NAME[serialized_name] = (nodetype, deserialize_auxdata, from_children)
    return nodetype


def register_namedtuple_serialization(nodetype, *, serialized_name: str):
    """register_pytree_node_serialization for a namedtuple type: its field names are the
    auxdata (as JAX writes them). JAX: jax.export.register_namedtuple_serialization."""
    if not (isinstance(nodetype, type) and issubclass(nodetype, tuple)
            and hasattr(nodetype, "_fields")):
        raise ValueError("Use `jax.export.register_pytree_node_serialization` for types "
                         "other than `collections.namedtuple`.")

    def from_children(fields, children):
        if list(fields) != list(nodetype._fields):
            raise ValueError(f"The namedtuple type {nodetype} was serialized with fields "
                             f"{list(fields)}; it now has {list(nodetype._fields)}")
        return nodetype(*children)
    return register_pytree_node_serialization(
        nodetype, serialized_name=serialized_name,
        serialize_auxdata=lambda _: json.dumps(list(nodetype._fields)).encode("utf-8"),
        deserialize_auxdata=lambda b: json.loads(b.decode("utf-8")),
        from_children=from_children)


def _dtype_code(dtype) -> int:
    name = "float0" if dtype == _dtypes.float0 else getattr(dtype, "name", str(dtype))
    if name not in _DTYPES:
        raise NotImplementedError(f"mjax.export: serializing arrays of dtype {dtype} is "
                                  f"not supported")
    return _DTYPES.index(name)


def _dtype_of(code: int):
    if not 0 <= code < len(_DTYPES):
        raise ValueError(f"mjax.export.deserialize: unknown dtype code {code}")
    name = _DTYPES[code]
    if name == "float0":
        return _dtypes.float0
    return np.dtype(getattr(ml_dtypes, name) if hasattr(ml_dtypes, name) else name)


# ---- writing ---------------------------------------------------------------------------
def _vector(b: flatbuffers.Builder, offsets) -> int:
    b.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def _table(b: flatbuffers.Builder, n_fields: int, fields) -> int:
    """A table from (slot, kind, value): kind 'off' (an offset), 'i8', 'u16', 'u32',
    'bool'."""
    b.StartObject(n_fields)
    for slot, kind, value in fields:
        if kind == "off":
            b.PrependUOffsetTRelativeSlot(slot, value, 0)
        elif kind == "i8":
            b.PrependInt8Slot(slot, value, 0)
        elif kind == "u16":
            b.PrependUint16Slot(slot, value, 0)
        elif kind == "u32":
            b.PrependUint32Slot(slot, value, 0)
        else:
            b.PrependBoolSlot(slot, value, False)
    return b.EndObject()


def _write_aval(b, aval: ShapedArray) -> int:
    dims = _vector(b, [b.CreateString(str(d)) for d in aval.shape])
    # (kind 0: a shaped array; memory space 1: device)
    return _table(b, 4, [(0, "i8", 0), (1, "off", dims), (2, "i8", _dtype_code(aval.dtype)),
                         (3, "i8", 1)])


def _write_tree(b, treedef) -> int:
    data = treedef.node_data()
    children = [_write_tree(b, c) for c in treedef.children()]
    names = None
    if data is None:
        kind = _LEAF
    elif data[0] is types.NoneType:
        kind = _NONE
    elif data[0] is tuple:
        kind = _TUPLE
    elif data[0] is list:
        kind = _LIST
    elif data[0] is dict:
        if not all(isinstance(k, str) for k in data[1]):
            raise TypeError(f"Serialization is supported only for dictionaries with string "
                            f"keys. Found keys {list(data[1])}.")
        kind, names = _DICT, _vector(b, [b.CreateString(k) for k in data[1]])
    elif data[0] in _BY_TYPE:
        name, serialize_aux = _BY_TYPE[data[0]]
        aux = serialize_aux(data[1])
        if not isinstance(aux, (bytes, bytearray)):
            raise ValueError(f"The custom serialization function for `{data[0]}` must "
                             f"return a `bytes` object. It returned a {type(aux)}.")
        kind, custom = _CUSTOM, (b.CreateString(name), b.CreateByteVector(bytes(aux)))
    else:
        raise ValueError(f"Cannot serialize PyTreeDef containing an unregistered type "
                         f"`{data[0]}`. Use `export.register_pytree_node_serialization` "
                         f"or `export.register_namedtuple_serialization`.")
    fields = [(0, "i8", kind)]
    if kind == _CUSTOM:
        fields += [(3, "off", custom[0]), (4, "off", custom[1])]
    if children:
        fields.append((1, "off", _vector(b, children)))
    if names is not None:
        fields.append((2, "off", names))
    return _table(b, 5, fields)


def _write_check(b, check) -> int:
    target = check.is_custom_call()
    if target is not None:
        return _table(b, 2, [(0, "i8", _CUSTOM_CALL_CHECK),
                             (1, "off", b.CreateString(target))])
    return _table(b, 2, [(0, "i8", _PLATFORM_CHECK)])


# ---- shardings (NamedShardings over abstract meshes) ----------------------------------
_AXIS_TYPES = {AxisType.Auto: 1, AxisType.Explicit: 2, AxisType.Manual: 3}


def _write_mesh(b, mesh: AbstractMesh) -> int:
    sizes = b.CreateNumpyVector(np.asarray(mesh.axis_sizes, np.uint32))
    names = _vector(b, [b.CreateString(n) for n in mesh.axis_names])
    types = b.CreateNumpyVector(np.asarray([_AXIS_TYPES[t] for t in mesh.axis_types],
                                           np.uint8))
    fields = [(0, "off", sizes), (1, "off", names), (2, "off", types)]
    d = mesh.abstract_device
    if d is not None:
        dev = [(0, "off", b.CreateString(str(d.device_kind))),
               (2, "off", b.CreateString(str(d.platform)))]
        if d.num_cores is not None:
            dev.append((1, "u32", int(d.num_cores)))
        fields.append((3, "off", _table(b, 3, dev)))
    return _table(b, 4, fields)


def _write_spec(b, spec) -> int:
    def one(entry):
        axes = () if entry is None else (entry,) if isinstance(entry, str) else entry
        if not isinstance(axes, tuple):
            raise NotImplementedError(f"mjax.export: serializing the PartitionSpec {spec} "
                                      f"(entry {entry!r}) is not supported")
        return _table(b, 1, [(0, "off", _vector(b, [b.CreateString(a) for a in axes]))])
    parts = _vector(b, [one(e) for e in spec])
    reduced = _vector(b, [b.CreateString(a) for a in sorted(spec.reduced)])
    unreduced = _vector(b, [b.CreateString(a) for a in sorted(spec.unreduced)])
    return _table(b, 3, [(0, "off", parts), (1, "off", reduced), (2, "off", unreduced)])


def _write_shardings(b, exp):
    """(unique meshes, unique named shardings, per-argument and per-result Sharding
    tables, argument and result indices into the unique shardings, 0 for none)."""
    named = list(exp._in_named_shardings) + list(exp._out_named_shardings)
    unique = list(dict.fromkeys(s for s in named if s is not None))
    meshes = list(dict.fromkeys(s.mesh for s in unique))

    def named_table(s):
        fields = [(0, "off", _write_mesh(b, s.mesh)), (1, "off", _write_spec(b, s.spec)),
                  (3, "u32", meshes.index(s.mesh))]
        if s.memory_kind is not None:
            fields.append((2, "off", b.CreateString(s.memory_kind)))
        return _table(b, 4, fields)

    def sharding_table(s):
        return _table(b, 3, [] if s is None else [(2, "off", named_table(s))])
    per_in = _vector(b, [sharding_table(s) for s in exp._in_named_shardings])
    per_out = _vector(b, [sharding_table(s) for s in exp._out_named_shardings])
    mesh_vec = _vector(b, [_write_mesh(b, m) for m in meshes])
    named_vec = _vector(b, [named_table(s) for s in unique])

    def idxs(shardings):
        return b.CreateNumpyVector(np.asarray(
            [0 if s is None else 1 + unique.index(s) for s in shardings], np.uint32))
    return (mesh_vec, named_vec, per_in, per_out, idxs(exp._in_named_shardings),
            idxs(exp._out_named_shardings))


def _read_mesh(r) -> AbstractMesh:
    by_code = {v: k for k, v in _AXIS_TYPES.items()}
    sizes = r.numbers(0, N.Uint32Flags)
    names = r.strings(1)
    types = tuple(by_code.get(t, AxisType.Auto) for t in r.numbers(2, N.Uint8Flags))
    d = r.table(3)
    device = None
    if d is not None:
        num_cores = d.scalar(1, N.Uint32Flags, None)
        device = AbstractDevice(d.string(0), num_cores, d.string(2) or "cpu")
    return AbstractMesh(tuple(sizes), tuple(names), types or None, abstract_device=device)


def _read_spec(r):
    parts = []
    for one in r.tables(0):
        axes = tuple(one.strings(0))
        parts.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    return P(*parts, reduced=frozenset(r.strings(1)), unreduced=frozenset(r.strings(2)))


def _read_named(r, meshes):
    mesh = meshes[r.scalar(3, N.Uint32Flags)] if meshes else _read_mesh(r.table(0))
    return NamedSharding(mesh, _read_spec(r.table(1)), memory_kind=r.string(2))


def _read_shardings(r, n_in: int, n_out: int):
    """(argument shardings, result shardings): NamedShardings over abstract meshes, None
    where unspecified."""
    meshes = [_read_mesh(m) for m in r.tables(20)]
    unique = [_read_named(s, meshes) for s in r.tables(21)]
    in_idx, out_idx = r.numbers(24, N.Uint32Flags), r.numbers(25, N.Uint32Flags)
    if in_idx or out_idx:
        return ([None if i == 0 else unique[i - 1] for i in in_idx] or [None] * n_in,
                [None if i == 0 else unique[i - 1] for i in out_idx] or [None] * n_out)

    def one(t):
        named = t.table(2)
        if named is not None:
            return _read_named(named, [])
        if t._off(1):
            raise NotImplementedError("mjax.export.deserialize: an Exported with HLO "
                                      "shardings (written by JAX before 2026) is not "
                                      "supported")
        return None
    return ([one(t) for t in r.tables(7)] or [None] * n_in,
            [one(t) for t in r.tables(8)] or [None] * n_out)


def _write_exported(b, exp, vjp_order: int) -> int:
    vjp = None
    if vjp_order > 0:
        if not exp.has_vjp():
            raise ValueError("serialize: vjp_order > 0 but this Exported has no VJP (it was "
                             "deserialized without one)")
        vjp = _write_exported(b, exp.vjp(), vjp_order - 1)
    avals = list(exp.in_avals) + list(exp.out_avals)
    unique = list(dict.fromkeys(a.strip_weak_type() for a in avals))
    index = {a: i for i, a in enumerate(unique)}
    meshes, named, per_in, per_out, in_sh, out_sh = _write_shardings(b, exp)

    def idxs(values):
        return b.CreateNumpyVector(np.asarray(values, np.uint32))
    fields = [
        (0, "u16", _VERSION), (1, "off", b.CreateString(exp.fun_name)),
        (2, "off", _write_tree(b, exp.in_tree)),
        (3, "off", _vector(b, [_write_aval(b, a) for a in exp.in_avals])),
        (4, "off", _write_tree(b, exp.out_tree)),
        (5, "off", _vector(b, [_write_aval(b, a) for a in exp.out_avals])),
        (7, "off", per_in), (8, "off", per_out),
        (9, "off", _vector(b, [b.CreateString(p) for p in exp.platforms])),
        (10, "off", _vector(b, [])), (11, "off", _vector(b, [])),
        (12, "off", _vector(b, [_write_check(b, c) for c in exp.disabled_safety_checks])),
        (13, "off", b.CreateByteVector(exp.mlir_module_serialized)),
        (14, "u16", exp.calling_convention_version),
        (15, "off", b.CreateNumpyVector(np.asarray(exp.module_kept_var_idx, np.uint16))),
        (16, "bool", bool(exp.uses_global_constants)),
        (18, "u32", exp.nr_devices),
        (19, "off", _vector(b, [_write_aval(b, a) for a in unique])),
        (20, "off", meshes), (21, "off", named),
        (22, "off", idxs([index[a.strip_weak_type()] for a in exp.in_avals])),
        (23, "off", idxs([index[a.strip_weak_type()] for a in exp.out_avals])),
        (24, "off", in_sh), (25, "off", out_sh),
    ]
    if vjp is not None:
        fields.append((17, "off", vjp))
    return _table(b, _EXPORTED_FIELDS, fields)


def to_jax_bytes(exp, vjp_order: int = 0) -> bytearray:
    """exp in JAX's serialized form (with `vjp_order` orders of VJPs)."""
    b = flatbuffers.Builder(1024)
    b.Finish(_write_exported(b, exp, vjp_order))
    return b.Output()


# ---- reading ---------------------------------------------------------------------------
class _Reader:
    """Field access on one table of the buffer, by slot."""

    def __init__(self, buf, pos: int):
        self.t = Table(buf, pos)

    def _off(self, slot: int) -> int:
        return self.t.Offset(4 + 2 * slot)

    def scalar(self, slot: int, flags, default=0):
        o = self._off(slot)
        return self.t.Get(flags, o + self.t.Pos) if o else default

    def string(self, slot: int) -> str | None:
        o = self._off(slot)
        return self.t.String(o + self.t.Pos).decode("utf-8") if o else None

    def table(self, slot: int) -> "_Reader | None":
        o = self._off(slot)
        return _Reader(self.t.Bytes, self.t.Indirect(o + self.t.Pos)) if o else None

    def tables(self, slot: int) -> list["_Reader"]:
        o = self._off(slot)
        if not o:
            return []
        start = self.t.Vector(o)
        return [_Reader(self.t.Bytes, self.t.Indirect(start + 4 * i))
                for i in range(self.t.VectorLen(o))]

    def strings(self, slot: int) -> list[str]:
        o = self._off(slot)
        if not o:
            return []
        start = self.t.Vector(o)
        return [self.t.String(start + 4 * i).decode("utf-8")
                for i in range(self.t.VectorLen(o))]

    def numbers(self, slot: int, flags) -> list[int]:
        o = self._off(slot)
        return self.t.GetVectorAsNumpy(flags, o).tolist() if o else []

    def raw_bytes(self, slot: int) -> bytes:
        o = self._off(slot)
        return self.t.GetVectorAsNumpy(N.Uint8Flags, o).tobytes() if o else b""


class _Leaf:
    """A placeholder leaf while a treedef is rebuilt."""


def _read_tree(r: _Reader):
    kind = r.scalar(0, N.Int8Flags)
    children = [_read_tree(c) for c in r.tables(1)]
    if kind == _LEAF:
        return _Leaf()
    if kind == _NONE:
        return None
    if kind == _TUPLE:
        return tuple(children)
    if kind == _LIST:
        return children
    if kind == _DICT:
        return dict(zip(r.strings(2), children))
    if kind == _CUSTOM:
        name = r.string(3)
        if name not in _BY_NAME:
            raise ValueError(f"mjax.export.deserialize: a PyTreeDef with the unregistered "
                             f"custom node `{name}`: register it with "
                             f"`export.register_pytree_node_serialization` first")
        _, deserialize_aux, from_children = _BY_NAME[name]
        return from_children(deserialize_aux(r.raw_bytes(4)), children)
    raise ValueError(f"mjax.export.deserialize: unknown pytree node kind {kind}")


def _read_aval(r: _Reader, scope) -> ShapedArray:
    """scope(): the scope symbolic dimensions are read in (made when one appears)."""
    if r.scalar(0, N.Int8Flags) != 0:
        raise NotImplementedError("mjax.export.deserialize: token arguments (effects) are "
                                  "not supported")
    dims = r.strings(1)
    shape = tuple(int(d) if d.lstrip("-").isdigit() else symbolic_shape(d, scope=scope())[0]
                  for d in dims)
    return ShapedArray(shape, _dtype_of(r.scalar(2, N.Int8Flags)))


def _read_exported(r: _Reader, make_exported, scope_for):
    avals_r = r.tables(19)
    scope = lambda: scope_for(r)      # noqa: E731
    if avals_r:    # (the newer form: unique avals and indices into them)
        unique = [_read_aval(a, scope) for a in avals_r]
        in_avals = [unique[i] for i in r.numbers(22, N.Uint32Flags)]
        out_avals = [unique[i] for i in r.numbers(23, N.Uint32Flags)]
    else:
        in_avals = [_read_aval(a, scope) for a in r.tables(3)]
        out_avals = [_read_aval(a, scope) for a in r.tables(5)]
    in_shardings, out_shardings = _read_shardings(r, len(in_avals), len(out_avals))
    if r.tables(10) or r.tables(11):
        raise NotImplementedError("mjax.export.deserialize: an Exported with effects is "
                                  "not supported")
    checks = []
    for c in r.tables(12):
        kind = c.scalar(0, N.Int8Flags)
        checks.append("platform" if kind == _PLATFORM_CHECK else
                      f"custom_call:{c.string(1)}" if kind == _CUSTOM_CALL_CHECK else
                      "shape_assertions")
    vjp_r = r.table(17)
    in_tree = trace_trees.tree_structure(_read_tree(r.table(2)),
                                         is_leaf=lambda x: isinstance(x, _Leaf))
    out_tree = trace_trees.tree_structure(_read_tree(r.table(4)),
                                          is_leaf=lambda x: isinstance(x, _Leaf))
    return make_exported(
        fun_name=r.string(1) or "", in_tree=in_tree, in_avals=in_avals,
        out_tree=out_tree, out_avals=out_avals, platforms=r.strings(9),
        mlir_module_serialized=r.raw_bytes(13),
        nr_devices=r.scalar(18, N.Uint32Flags) or r.scalar(6, N.Int16Flags) or 1,
        calling_convention_version=r.scalar(14, N.Uint16Flags),
        disabled_safety_checks=checks,
        in_named_shardings=in_shardings, out_named_shardings=out_shardings,
        vjp=None if vjp_r is None else _read_exported(vjp_r, make_exported, scope_for))


def from_jax_bytes(blob, make_exported, constraints_of=lambda module: ()):
    """The Exported JAX's serialized form holds, made by `make_exported(**fields)`;
    `constraints_of(module bytes)`: the symbolic constraints to read dimensions with."""
    buf = bytearray(blob)
    try:
        root = flatbuffers.encode.Get(N.UOffsetTFlags.packer_type, buf, 0)
        reader = _Reader(buf, root)

        def scope_for(r: _Reader) -> SymbolicScope:
            return SymbolicScope(constraints_of(r.raw_bytes(13)))
        return _read_exported(reader, make_exported, _scoped(scope_for))
    except NotImplementedError:
        raise
    except Exception as e:  # noqa: BLE001  (any failure to read: bad bytes)
        if isinstance(e, ValueError) and str(e).startswith("mjax.export.deserialize"):
            raise
        raise ValueError(f"mjax.export.deserialize: the serialized bytes are truncated or "
                         f"corrupt ({type(e).__name__}: {e})") from None


def _scoped(scope_for):
    """One scope per serialized Exported (its avals' dimensions mix), made once."""
    made = {}

    def get(r: _Reader) -> SymbolicScope:
        key = r.t.Pos
        if key not in made:
            made[key] = scope_for(r)
        return made[key]
    return get


__all__ = ["from_jax_bytes", "register_namedtuple_serialization",
           "register_pytree_node_serialization", "to_jax_bytes"]
