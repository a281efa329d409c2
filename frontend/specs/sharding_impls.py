"""Meshes, partition specs and shardings as values, as JAX 0.10 has them (the public
module is `mjax.sharding`; `set_mesh`, `reshard` and the axis-type decorators, which act
on traces, live in mjax.spmd).

    mesh = mjax.make_mesh((4, 2), ("x", "y"))
    s = NamedSharding(mesh, P("x", None))     # rows split over x, replicated over y
    x = mjax.device_put(np.ones((8, 3)), s)   # one shard of (2, 3) per device
    s.devices_indices_map((8, 3))             # device -> tuple of slices

A sharding also knows its XLA form (`hlo_sharding(ndim)`: the tile assignment over the
mesh's devices in order), which lowering writes as `mhlo.sharding` and the runtime uses
to lay out multi-device buffers.
"""
from __future__ import annotations

import collections
import contextlib
import functools
import itertools
import math
import threading
import warnings

import numpy as np
from jaxlib import xla_client as xc

from mjax.config import config
from mjax.runtime import get_backend


from mjax.base.partition_spec import (  # noqa: F401  (re-exported: mjax.sharding's names)
    UNCONSTRAINED, AxisType, P, PartitionSpec, _make_spec)


class _MeshContexts(threading.local):
    """This thread's meshes: `with mesh:`'s stack, use_abstract_mesh's stack and the mesh
    set_mesh set. (The class attributes are the defaults: a read of one needs no failed
    lookup, which cost every jit call under a config context manager 0.7 us.)"""
    stack: tuple = ()
    abstract: tuple = ()
    set = None
    epoch = None    # (jit_fast.override_epoch's, for the meshes above)


mesh_contexts = _MeshContexts()


def _count_mesh_context(delta: int) -> None:
    """An active mesh context (`with mesh:`, set_mesh) counts as a config override, as
    it changes what programs compile for: eager ops' fast paths step aside while one is
    active in any thread, and jit's runs under an epoch of the context's own
    (jit_fast.override_epoch)."""
    if delta > 0:
        config._overriding.append(None)
    else:
        config._overriding.pop()


def _axes_repr(mesh) -> str:
    """JAX's `'x': 4, 'y': 2, axis_types=(Explicit, Explicit)` of a mesh's repr."""
    sizes = ", ".join(f"'{n}': {s}" for n, s in zip(mesh.axis_names, mesh.axis_sizes))
    types = ", ".join(repr(t) for t in mesh.axis_types)
    comma = "," if len(mesh.axis_types) == 1 else ""
    return f"{sizes}, axis_types=({types}{comma})"


class _AxisTypeQueries:
    """What JAX's meshes answer about their axis types (JAX: mesh.BaseMesh's properties)."""

    def _names_of(self, ty) -> tuple:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t == ty)

    @property
    def auto_axes(self) -> tuple:
        return self._names_of(AxisType.Auto)

    @property
    def explicit_axes(self) -> tuple:
        return self._names_of(AxisType.Explicit)

    @property
    def manual_axes(self) -> tuple:
        return self._names_of(AxisType.Manual)

    @property
    def are_all_axes_auto(self) -> bool:
        return bool(self.axis_types) and len(self.auto_axes) == len(self.axis_types)

    @property
    def are_all_axes_explicit(self) -> bool:
        return bool(self.axis_types) and len(self.explicit_axes) == len(self.axis_types)

    @property
    def are_all_axes_manual(self) -> bool:
        return bool(self.axis_types) and len(self.manual_axes) == len(self.axis_types)

    @property
    def _name_to_type(self) -> dict:
        return dict(zip(self.axis_names, self.axis_types))


class Mesh(_AxisTypeQueries):
    """Devices laid out on named axes. JAX: jax.sharding.Mesh."""

    def __init__(self, devices, axis_names, axis_types=None):
        devices = np.asarray(devices, dtype=object)
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        if devices.ndim != len(axis_names):
            raise ValueError(f"Mesh requires the ndim of its first argument (`devices`) to "
                             f"equal the length of its second argument (`axis_names`), got "
                             f"devices.ndim == {devices.ndim} and len(axis_names) == "
                             f"{len(axis_names)}.")
        if len(set(axis_names)) != len(axis_names):
            raise ValueError(f"Mesh axis names must be unique, got {axis_names}")
        self.devices = devices
        self.axis_names = axis_names
        if axis_types is None:
            axis_types = (AxisType.Auto,) * len(axis_names)
        elif isinstance(axis_types, AxisType):
            axis_types = (axis_types,)
        self.axis_types = tuple(axis_types)
        if len(self.axis_types) != len(axis_names):
            raise ValueError("Number of axis names should match the number of axis_types. Got "
                             f"axis_names={tuple(axis_names)} and axis_types={self.axis_types}")
        # Meshes are immutable: their key (compared on every sharded jit call) and hash
        # are computed once.
        self._key_value = (tuple(d.id for d in self.devices.flat), self.devices.shape,
                           self.axis_names, self.axis_types)
        self._hash = hash(self._key_value)

    def update(self, devices=None, axis_names=None, axis_types=None) -> "Mesh":
        """This mesh with the given fields replaced. JAX: Mesh.update."""
        return Mesh(self.devices if devices is None else devices,
                    self.axis_names if axis_names is None else axis_names,
                    self.axis_types if axis_types is None else axis_types)

    @property
    def shape(self):
        return collections.OrderedDict(zip(self.axis_names, self.devices.shape))

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return tuple(self.devices.shape)

    @property
    def size(self) -> int:
        return int(self.devices.size)

    @property
    def device_ids(self):
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self):
        return list(self.devices.flat)

    @property
    def empty(self) -> bool:
        return self.devices.ndim == 0

    @property
    def shape_tuple(self) -> tuple:
        return tuple(zip(self.axis_names, self.devices.shape))

    # (one process addresses every device of its meshes)
    is_multi_process = False
    local_mesh = property(lambda self: self)

    def _key(self):
        return self._key_value

    def __eq__(self, other):
        return self is other or (isinstance(other, Mesh) and
                                 self._key_value == other._key_value)

    def __hash__(self):
        return self._hash

    def __str__(self):
        return f"Mesh({_axes_repr(self)})"

    def __repr__(self):
        # (JAX: str names the axes' sizes, repr lists the sizes and names apart)
        types = ", ".join(repr(t) for t in self.axis_types)
        types = f"({types},)" if len(self.axis_types) == 1 else f"({types})"
        return (f"Mesh(axis_sizes={tuple(self.devices.shape)}, axis_names="
                f"{self.axis_names!r}, axis_types={types})")

    def __enter__(self):
        if config.read("jax_disallow_mesh_context_manager"):
            raise RuntimeError("Mesh context manager is disabled.")
        warnings.warn("`with mesh:` context manager has been deprecated. Please use `with "
                      "jax.set_mesh(mesh):` instead.", DeprecationWarning, stacklevel=2)
        mesh_contexts.stack = (*mesh_contexts.stack, self)
        _count_mesh_context(1)
        return self

    def __exit__(self, *exc):
        mesh_contexts.stack = mesh_contexts.stack[:-1]
        _count_mesh_context(-1)
        return False


class AbstractMesh(_AxisTypeQueries):
    """A mesh's axis sizes, names and types, without devices: what types and tracing see.
    JAX: jax.sharding.AbstractMesh."""

    def __init__(self, axis_sizes, axis_names, axis_types=None, *, abstract_device=None):
        self.axis_sizes = tuple(int(s) for s in axis_sizes)
        self.axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if len(self.axis_sizes) != len(self.axis_names):
            raise ValueError(f"AbstractMesh got {len(self.axis_sizes)} axis sizes and "
                             f"{len(self.axis_names)} axis names")
        if axis_types is None:   # (as JAX 0.10's AbstractMesh and Mesh: Auto unless told)
            axis_types = (AxisType.Auto,) * len(self.axis_names)
        elif isinstance(axis_types, AxisType):
            axis_types = (axis_types,)
        self.axis_types = tuple(axis_types)
        if len(self.axis_types) != len(self.axis_names):
            raise ValueError("Number of axis names should match the number of axis_types. Got "
                             f"axis_names={self.axis_names} and axis_types={self.axis_types}")
        self.abstract_device = abstract_device

    @property
    def shape(self):
        return collections.OrderedDict(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self) -> int:
        return math.prod(self.axis_sizes)

    @property
    def empty(self) -> bool:
        return not self.axis_names

    abstract_mesh = property(lambda self: self)   # (an AbstractMesh is its own)

    def update_axis_types(self, name_to_type: dict) -> "AbstractMesh":
        types = tuple(name_to_type.get(n, t) for n, t in zip(self.axis_names,
                                                             self.axis_types))
        return AbstractMesh(self.axis_sizes, self.axis_names, types,
                            abstract_device=self.abstract_device)

    def update(self, axis_sizes=None, axis_names=None, axis_types=None,
               **kwargs) -> "AbstractMesh":
        """This mesh with the given fields replaced (abstract_device by keyword)."""
        kwargs.setdefault("abstract_device", self.abstract_device)
        return AbstractMesh(self.axis_sizes if axis_sizes is None else axis_sizes,
                            self.axis_names if axis_names is None else axis_names,
                            self.axis_types if axis_types is None else axis_types, **kwargs)

    def _key(self):
        return (self.axis_sizes, self.axis_names, self.axis_types, self.abstract_device)

    def __eq__(self, other):
        return isinstance(other, AbstractMesh) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        if self.empty:
            return "AbstractMesh((), axis_types=())"
        d = self.abstract_device
        where = (f", device_kind={d.device_kind}, num_cores={d.num_cores}, "
                 f"platform={d.platform}" if d is not None else "")
        return f"AbstractMesh({_axes_repr(self)}{where})"


class AbstractDevice(collections.namedtuple("AbstractDevice",
                                           ["device_kind", "num_cores", "platform"])):
    """The kind of device a mesh is made of (its repr is part of AbstractMesh's)."""


_EMPTY_ABSTRACT_MESH = AbstractMesh((), ())


def _mesh_abstract(mesh: Mesh) -> AbstractMesh:
    dev = mesh.devices.flat[0]
    kind = AbstractDevice(getattr(dev, "device_kind", dev.platform), None, dev.platform)
    return AbstractMesh(mesh.axis_sizes, mesh.axis_names, mesh.axis_types,
                        abstract_device=kind)


Mesh.abstract_mesh = property(_mesh_abstract)


def get_abstract_mesh() -> AbstractMesh:
    """The mesh types and tracing see: `use_abstract_mesh`'s, else the current mesh's,
    else an empty one. JAX: jax.sharding.get_abstract_mesh."""
    stack = mesh_contexts.abstract
    if stack:
        return stack[-1]
    mesh = current_mesh()
    return _EMPTY_ABSTRACT_MESH if mesh is None else mesh.abstract_mesh


def concrete_mesh_for(abstract: AbstractMesh, what: str) -> Mesh:
    """The concrete mesh `abstract` describes, for placing values by a sharding over an
    abstract mesh, as JAX resolves it: jax.set_mesh's mesh, or (inside
    `use_abstract_mesh`) that mesh's devices in the abstract mesh's shape."""
    mesh = current_mesh()
    if mesh is not None and (mesh.axis_names, mesh.axis_sizes) == (abstract.axis_names,
                                                                   abstract.axis_sizes):
        return mesh
    if mesh_contexts.abstract and abstract == get_abstract_mesh():
        devices = (list(mesh.devices.flat) if mesh is not None
                   else get_backend().devices()[:abstract.size])
        return reshaped_mesh(tuple(devices), abstract)
    raise ValueError(f"{what}: a NamedSharding over the abstract mesh {abstract!r} "
                     f"needs the concrete mesh it describes to be set (jax.set_mesh); "
                     f"the current mesh is {mesh!r}")


@functools.lru_cache(maxsize=64)
def reshaped_mesh(devices: tuple, abstract: AbstractMesh) -> Mesh:
    """`devices` laid out as the mesh `abstract` (cached: one Mesh per pair)."""
    if len(devices) != abstract.size:
        raise ValueError(f"the abstract mesh {abstract!r} has {abstract.size} devices, "
                         f"but {len(devices)} are available")
    arr = np.empty(len(devices), dtype=object)
    arr[:] = devices
    return Mesh(arr.reshape(abstract.axis_sizes), abstract.axis_names, abstract.axis_types)


@contextlib.contextmanager
def use_abstract_mesh(mesh: AbstractMesh):
    """Within the block, get_abstract_mesh() is `mesh`, and PartitionSpecs name its axes
    (over the current mesh's devices). It cannot change the mesh's size. JAX:
    jax.sharding.use_abstract_mesh."""
    if not isinstance(mesh, AbstractMesh):
        raise ValueError(f"Expected mesh of type `jax.sharding.AbstractMesh`. Got "
                         f"{type(mesh)}")
    prev = get_abstract_mesh()
    if not prev.empty and not mesh.empty and prev.size != mesh.size:
        raise ValueError(f"use_abstract_mesh cannot change the size of the mesh. Got new "
                         f"mesh: {mesh} with size={mesh.size} and prev mesh: {prev} with "
                         f"size={prev.size}")
    stack = mesh_contexts.abstract
    mesh_contexts.abstract = (*stack, mesh)
    try:
        yield
    finally:
        mesh_contexts.abstract = stack


def current_mesh() -> Mesh | None:
    """The innermost `with mesh:`, else the mesh `set_mesh` set (None: neither)."""
    stack = mesh_contexts.stack
    return stack[-1] if stack else mesh_contexts.set


def computation_mesh() -> Mesh | None:
    """The mesh that computations outside jit (eager ops, jit calls without sharded
    arguments) compile for: set_mesh's. A `with mesh:` places nothing, as in JAX (it
    only names the mesh of bare PartitionSpecs); set_mesh of one device makes results
    NamedShardings of it."""
    return mesh_contexts.set


def swap_set_mesh(mesh: Mesh | None) -> Mesh | None:
    """Makes `mesh` the one `set_mesh` set for this thread; returns the previous one."""
    previous, mesh_contexts.set = mesh_contexts.set, mesh
    if (previous is None) != (mesh is None):
        _count_mesh_context(1 if mesh is not None else -1)
    return previous


def get_mesh() -> Mesh | None:
    """The mesh `set_mesh` (or `with mesh:`) made current. JAX: jax.sharding.get_mesh."""
    return current_mesh()


def as_sharding(s, fn: str) -> "Sharding":
    """`s` itself, or a NamedSharding of the current mesh for a PartitionSpec; `fn`
    names the API in errors."""
    if isinstance(s, PartitionSpec):
        mesh = current_mesh()
        if mesh_contexts.abstract:     # (inside use_abstract_mesh)
            abstract = get_abstract_mesh()
            if not abstract.empty:
                mesh = concrete_mesh_for(abstract, fn)
        if mesh is None:
            raise ValueError(f"{fn} got the PartitionSpec {s!r} outside a mesh context: "
                             f"pass NamedSharding(mesh, spec), or call inside `with mesh:` "
                             f"or `with mjax.set_mesh(mesh):`")
        return NamedSharding(mesh, s)
    if isinstance(s, Sharding):
        return s
    raise TypeError(f"{fn} shardings must be Sharding objects or PartitionSpecs, got "
                    f"{type(s).__name__}: {s!r}")


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None) -> Mesh:
    """A mesh over the first prod(axis_shapes) devices. JAX: jax.make_mesh (0.10 makes
    Explicit axes by default)."""
    axis_shapes = tuple(int(s) for s in axis_shapes)
    devices = list(devices if devices is not None else get_backend().devices())
    n = math.prod(axis_shapes)
    if n > len(devices):
        raise ValueError(f"Number of devices {len(devices)} must be >= the product of "
                         f"mesh_shape {axis_shapes}")
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(axis_shapes)
    arr = np.empty(n, dtype=object)
    arr[:] = devices[:n]
    return Mesh(arr.reshape(axis_shapes), axis_names, axis_types)


# Whether this process has made a sharding in host memory (frontend/specs/memory_kinds.py: until
# then programs and jit calls skip every memory-kind step).
HOST_MEMORY_IN_USE = [False]


def checked_memory_kind(kind, device):
    """`kind` (None: "device") if `device` can address memory of that kind, as JAX checks
    when a sharding is made."""
    if kind is None:
        return "device"
    memories = getattr(device, "addressable_memories", None)
    kinds = [m.kind for m in memories()] if memories is not None else ["device"]
    if kind != "device":
        HOST_MEMORY_IN_USE[0] = True
    if kind not in kinds:
        # (jaxlib's message names the device kind: 'cpu', 'TPU v5 lite')
        name = getattr(device, "device_kind", getattr(device, "platform", device))
        raise ValueError(f"Could not find memory addressable by device {name}. Device "
                         f"{name} can address the following memory kinds: "
                         f"{', '.join(kinds)}. Got memory kind: {kind}")
    return kind


def check_rank(sharding, ndim: int, what: str) -> None:
    """JAX's ValueError for a NamedSharding whose spec is longer than the value's rank
    (`what`: "One of device_put args", ...)."""
    spec = getattr(sharding, "spec", ())
    if isinstance(sharding, NamedSharding) and len(spec) > ndim:
        raise ValueError(f"{what} is incompatible with its sharding annotation {sharding!r}: "
                         f"Sharding {sharding!r} is only valid for values of rank at least "
                         f"{len(spec)}, but was applied to a value of rank {ndim}."
                         + (" For scalars the PartitionSpec should be P()" if ndim == 0
                            else ""))


class Sharding:
    """Base of mjax shardings. JAX: jax.sharding.Sharding."""

    memory_kind = "device"
    # (mjax runs one process per host, which addresses every device it sees)
    is_fully_addressable = True
    has_addressable_devices = True

    @property
    def device_set(self) -> set:
        return set(self._device_list())

    @property
    def num_devices(self) -> int:
        return len(self._device_list())

    @property
    def addressable_devices(self) -> set:
        return self.device_set

    # JAX-private names orbax reads: its (addressable) devices, in order.
    _device_assignment = property(lambda s: tuple(s._device_list()))
    _addressable_device_assignment = property(lambda s: tuple(
        d for d in s._device_list() if d in s.addressable_devices))

    def shard_shape(self, global_shape) -> tuple[int, ...]:
        tiles = self._tiles(len(global_shape))
        out = []
        for d, (size, t) in enumerate(zip(global_shape, tiles)):
            if size % t:
                raise ValueError(f"Sharding spec {tuple(self._spec_for_errors())} implies "
                                 f"that array axis {d} is partitioned {t} times, but does "
                                 f"not evenly divide the dimension size {size}. Got shape: "
                                 f"{tuple(global_shape)} and sharding {self!r}")
            out.append(size // t)
        return tuple(out)

    def devices_indices_map(self, global_shape) -> dict:
        """device -> tuple of slices of the global array it holds."""
        shard = self.shard_shape(global_shape)
        out = {}
        for dev, coords in self._tile_coords(len(global_shape)):
            out[dev] = tuple(slice(c * s, (c + 1) * s) if t > 1 else slice(None)
                             for c, s, t in zip(coords, shard, self._tiles(len(shard))))
        return out

    def addressable_devices_indices_map(self, global_shape) -> dict:
        """devices_indices_map of this process's devices (all of them: mjax runs one
        process per host, each addressing its own devices)."""
        mine = self.addressable_devices
        return {d: idx for d, idx in self.devices_indices_map(global_shape).items()
                if d in mine}

    def is_equivalent_to(self, other, ndim: int) -> bool:
        return (self._device_list() == other._device_list() and
                hlo_key(self.hlo_sharding(ndim)) == hlo_key(other.hlo_sharding(ndim)))


class SingleDeviceSharding(Sharding):
    """Everything on one device. JAX: jax.sharding.SingleDeviceSharding."""

    def __init__(self, device, *, memory_kind=None):
        self._device = device
        self.memory_kind = checked_memory_kind(memory_kind, device)

    def with_memory_kind(self, kind: str) -> "SingleDeviceSharding":
        return SingleDeviceSharding(self._device, memory_kind=kind)

    def _device_list(self):
        return [self._device]

    def _tiles(self, ndim):
        return (1,) * ndim

    def _tile_coords(self, ndim):
        yield self._device, (0,) * ndim

    def _spec_for_errors(self):
        return ()

    is_fully_replicated = True

    def hlo_sharding(self, ndim: int):
        return xc.HloSharding.replicate()

    def __eq__(self, other):
        return (isinstance(other, SingleDeviceSharding) and other._device == self._device
                and other.memory_kind == self.memory_kind)

    def __hash__(self):
        return hash(("single", self._device, self.memory_kind))

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self.memory_kind})"


class NamedSharding(Sharding):
    """An array laid out over a mesh by a PartitionSpec. JAX: jax.sharding.NamedSharding."""

    def __init__(self, mesh: Mesh | AbstractMesh, spec, *, memory_kind=None):
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(f"NamedSharding expects a Mesh, got {type(mesh).__name__}")
        spec = spec if isinstance(spec, PartitionSpec) else PartitionSpec(*spec)
        used = [a for d in range(len(spec)) for a in spec.axes_of(d)]
        for a in sorted(spec.unreduced | spec.reduced):
            if a not in mesh.axis_names:
                raise ValueError(f"Unreduced or reduced axis {a} of {spec} is not found "
                                 f"in mesh: {tuple(mesh.axis_names)}.")
        for a in used:
            if a not in mesh.axis_names:
                raise ValueError(f"Resource axis: {a} of {spec} is not found in mesh: "
                                 f"{tuple(mesh.axis_names)}.")
        if len(set(used)) != len(used):
            raise ValueError(f"A single NamedSharding spec specification can map every "
                             f"mesh axis to at most one positional dimension, but {spec} "
                             f"has duplicate entries")
        self.mesh = mesh
        self.spec = spec
        if isinstance(mesh, AbstractMesh):   # (JAX's: None unless given; "device" else)
            self.memory_kind = memory_kind
        else:
            self.memory_kind = checked_memory_kind(memory_kind, mesh.devices.flat[0])
        # The spec without trailing unsplit dimensions: P("x") == P("x", None).
        norm = [spec.axes_of(d) for d in range(len(spec))]
        while norm and not norm[-1]:
            norm.pop()
        # (Unreduced axes: each device along them holds a partial sum of the value;
        # reduced axes: a replicated value whose cotangent will be unreduced. Both lay
        # out the buffers as replicated along those axes.)
        self._norm = tuple(norm) + ((("unreduced", spec.unreduced),) if spec.unreduced
                                    else ()) + ((("reduced", spec.reduced),)
                                                if spec.reduced else ())
        self._hash = None

    def with_memory_kind(self, kind: str) -> "NamedSharding":
        return NamedSharding(self.mesh, self.spec, memory_kind=kind)

    def update(self, **kwargs) -> "NamedSharding":
        """A copy with `mesh`, `spec` or `memory_kind` replaced. JAX: NamedSharding.update."""
        unknown = set(kwargs) - {"mesh", "spec", "memory_kind"}
        if unknown:
            raise TypeError(f"NamedSharding.update got unexpected arguments {sorted(unknown)}")
        return NamedSharding(kwargs.get("mesh", self.mesh), kwargs.get("spec", self.spec),
                             memory_kind=kwargs.get("memory_kind", self.memory_kind))

    def _device_list(self):
        return list(self.mesh.devices.flat)

    def _spec_for_errors(self):
        return self.spec

    def _layout(self, ndim: int):
        """(mesh axes per tensor dim, unused mesh axes) for an array of rank ndim."""
        if any(p is not None for p in self.spec[ndim:]):   # (extra Nones: as JAX's maps)
            raise ValueError(f"Sharding {self!r} is only valid for values of rank at "
                             f"least {len(self.spec)}, but was applied to a value of rank "
                             f"{ndim}")
        per_dim = [self.spec.axes_of(d) for d in range(ndim)]
        used = {a for axes in per_dim for a in axes}
        unused = [a for a in self.mesh.axis_names if a not in used]
        return per_dim, unused

    def _tiles(self, ndim):
        per_dim, _ = self._layout(ndim)
        return tuple(math.prod(self.mesh.shape[a] for a in axes) for axes in per_dim)

    def _tile_array(self, ndim):
        """Device positions (in mesh order) arranged as [tile dims..., replicas]."""
        per_dim, unused = self._layout(ndim)
        order = [a for axes in per_dim for a in axes] + unused
        perm = [self.mesh.axis_names.index(a) for a in order]
        ids = np.arange(self.mesh.size).reshape(self.mesh.axis_sizes).transpose(perm)
        return ids.reshape(self._tiles(ndim) + (math.prod(self.mesh.shape[a]
                                                            for a in unused),))

    def _tile_coords(self, ndim):
        devs = self._device_list()
        arr = self._tile_array(ndim)
        for idx in np.ndindex(arr.shape):
            yield devs[arr[idx]], idx[:ndim]

    @property
    def is_fully_replicated(self) -> bool:
        return self._blocks_replicated() and not any(self.mesh.shape[a] > 1
                                                     for a in self.spec.unreduced)

    def _blocks_replicated(self) -> bool:
        return all(not self.spec.axes_of(d) or
                   math.prod(self.mesh.shape[a] for a in self.spec.axes_of(d)) == 1
                   for d in range(len(self.spec)))

    def hlo_sharding(self, ndim: int):
        """The XLA sharding over the mesh's devices in order (logical ids 0..n-1); over
        unreduced axes the buffers' layout (replicated), not the partial sums in them."""
        arr = self._tile_array(ndim)
        if arr.size == 1 or self._blocks_replicated():
            return xc.HloSharding.replicate()
        op = xc.OpSharding()
        op.type = xc.OpSharding.Type.OTHER
        replicas = arr.shape[-1]
        dims = list(arr.shape) if replicas > 1 else list(arr.shape[:-1])
        op.tile_assignment_dimensions = dims
        op.tile_assignment_devices = [int(i) for i in arr.reshape(-1)]
        op.replicate_on_last_tile_dim = replicas > 1
        return xc.HloSharding.from_proto(op)

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, NamedSharding):
            return False
        return (self.mesh == other.mesh and self._norm == other._norm
                and self.memory_kind == other.memory_kind)

    def __hash__(self):
        if self._hash is None:
            self._hash = hash((self.mesh, self._norm, self.memory_kind))
        return self._hash

    def __repr__(self):
        kind = "" if self.memory_kind is None else f", memory_kind={self.memory_kind}"
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}{kind})"


class HloShardingOnDevices(Sharding):
    """A layout XLA chose that no NamedSharding of the mesh spells: the HLO sharding over
    a device list. JAX: GSPMDSharding."""

    def __init__(self, devices, hlo):
        self._devices = list(devices)
        self._hlo = hlo
        # (The accessors expand an iota tile assignment, `<=[8]`, which Shardy emits.)
        self._replicated = hlo.is_replicated()
        self._dims = [] if self._replicated else list(hlo.tile_assignment_dimensions())
        self._ids = [] if self._replicated else list(hlo.tile_assignment_devices())
        self._last_replicated = bool(hlo.replicate_on_last_tile_dim())

    def _device_list(self):
        return self._devices

    def _spec_for_errors(self):
        return ()

    def _tiles(self, ndim):
        if self._replicated:
            return (1,) * ndim
        return tuple(self._dims[:ndim])

    def _tile_coords(self, ndim):
        if self._replicated:
            for d in self._devices:
                yield d, (0,) * ndim
            return
        ids = np.array(self._ids).reshape(self._dims)
        for idx in np.ndindex(ids.shape):
            yield self._devices[ids[idx]], idx[:ndim]

    @property
    def is_fully_replicated(self) -> bool:
        return self._replicated

    def hlo_sharding(self, ndim: int):
        return self._hlo

    def __eq__(self, other):
        return (isinstance(other, HloShardingOnDevices) and self._devices == other._devices
                and hlo_key(self._hlo) == hlo_key(other._hlo))

    def __hash__(self):
        return hash((tuple(d.id for d in self._devices), hlo_key(self._hlo)))

    def __repr__(self):
        return f"GSPMDSharding({self._hlo})"


def hlo_key(hlo) -> tuple:
    """An HloSharding in one normal form: the same layout written with an explicit or an
    iota tile assignment (`<=[4,2]T(1,0)`) gives the same key."""
    if hlo.is_replicated():
        return ("replicated",)
    if not hlo.is_tiled():
        return ("other", str(hlo))
    return (tuple(hlo.tile_assignment_dimensions()), tuple(hlo.tile_assignment_devices()),
            bool(hlo.replicate_on_last_tile_dim()), tuple(map(int, hlo.subgroup_types())))


def named_from_hlo(mesh: Mesh, hlo, ndim: int) -> Sharding:
    """The NamedSharding of `mesh` whose XLA form is `hlo` (each dim over at most one mesh
    axis), or the HLO sharding itself when none is."""
    target = hlo_key(hlo)
    options = [None] + list(mesh.axis_names)
    for combo in itertools.product(options, repeat=ndim):
        used = [a for a in combo if a is not None]
        if len(set(used)) != len(used):
            continue
        candidate = NamedSharding(mesh, P(*combo))
        if hlo_key(candidate.hlo_sharding(ndim)) == target:
            if AxisType.Explicit not in mesh.axis_types:
                # (JAX writes a layout the compiler chose without trailing Nones; on
                # Explicit axes the result's type gives one entry per dimension.)
                while combo and combo[-1] is None:
                    combo = combo[:-1]
                return NamedSharding(mesh, P(*combo))
            return candidate
    return HloShardingOnDevices(mesh.devices.flat, hlo)


__all__ = ["AxisType", "Mesh", "NamedSharding", "P", "PartitionSpec", "Sharding",
           "SingleDeviceSharding", "make_mesh", "current_mesh", "UNCONSTRAINED",
           "HloShardingOnDevices", "named_from_hlo", "get_mesh", "AbstractMesh",
           "get_abstract_mesh", "use_abstract_mesh"]
