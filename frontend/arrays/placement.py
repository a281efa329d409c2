"""Where arrays live: devices, processes, and putting values on them (`device_put`,
`device_get`), including the placement rules of computations on committed arrays.
JAX: jax.devices, jax.device_put, ... and dispatch's placement."""
from __future__ import annotations

import warnings

import numpy as np

from mjax.specs import sharding_impls as S
from mjax.tracing import registration
from mjax.base import trace_trees, tree_util
from mjax.arrays.array import Array
from mjax.config import config
from mjax.dialect import ShapedArray
from mjax.specs.dtypes import aval_of_value, to_numpy
from mjax.base.errors import UnexpectedTracerError
from mjax.specs.layout import Format, Layout, relayout
from mjax.specs.memory_kinds import Space, in_use, kind_of_space, known_kind, memory_kind_of
from mjax.runtime import buffer_to_numpy, get_backend
from mjax.runtime.backend import backend_of_device
from mjax.runtime.xla import block_until_ready as wait_for_buffers
from mjax.arrays.sharding_types import typeof_array
from mjax.tracing.tracer import Tracer, escaped_tracer_message
from mjax.arrays.transfer_guard import explicit_device_get, explicit_device_put


# ---- devices and processes ----------------------------------------------------------------
def devices(backend=None):
    return list(get_backend(backend).devices())   # backend: 'iree', 'cpu', ... or None


def local_devices(process_index=None, backend=None, host_id=None):
    """This process's devices (another one's with `process_index`; see mjax.distributed).
    `host_id` is JAX's deprecated name for `process_index`."""
    if host_id is not None:
        warnings.warn("The argument to jax.local_devices has been renamed from `host_id` "
                      "to `process_index`. This alias will eventually be removed; please "
                      "update your code.", UserWarning, stacklevel=2)
        process_index = host_id
    me = _this_process() if process_index is None else process_index
    return [d for d in devices(backend) if _process_of(d) == me]


def device_count(backend=None):
    return len(devices(backend))


def local_device_count(backend=None):
    return len(local_devices(backend=backend))


def process_index(backend=None):
    """This process's index among the processes of mjax.distributed (0 alone)."""
    return _this_process()


def _this_process() -> int:
    client = getattr(get_backend(), "client", None)  # (IREE: one process)
    return client.process_index() if client is not None else 0


def process_count(backend=None):
    return len({_process_of(d) for d in devices(backend)})


def process_indices(backend=None) -> list[int]:
    """The indices of every process of the computation (range(process_count()))."""
    return list(range(process_count(backend)))


def _renamed(old: str, new: str, fn):
    def alias(backend=None):
        warnings.warn(f"jax.{old} has been renamed to jax.{new}. This alias will eventually "
                      f"be removed; please update your code.", stacklevel=2)
        return fn(backend)
    alias.__name__ = old
    return alias


host_id = _renamed("host_id", "process_index", lambda b: process_index(b))
host_count = _renamed("host_count", "process_count", process_count)
host_ids = _renamed("host_ids", "process_indices", process_indices)


def copy_to_host_async(x):
    """Starts the host copy of every leaf of `x` that has a `copy_to_host_async` method
    (mjax arrays); other leaves are left alone. Returns `x`."""
    for leaf in tree_util.tree_leaves(x):
        start = getattr(leaf, "copy_to_host_async", None)
        if start is not None:
            start()
    return x


def _process_of(device) -> int:
    return getattr(device, "process_index", 0)


def default_backend():
    return get_backend().platform


def device_put_value(value, device=None, *, weak_type=False) -> Array:
    """A NumPy value (already in its final dtype) on a device."""
    value = np.asarray(value)
    aval = ShapedArray(value.shape, value.dtype, weak_type)
    return Array(backend_of_device(device).put(value, device), aval)


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Moves a pytree of arrays to `device`: a device, a Sharding (or a pytree prefix of
    them), or None (the first device). JAX: jax.device_put."""
    leaves, tree = trace_trees.tree_flatten(x)
    if device is None or not isinstance(device, (tuple, list, dict)) or \
            isinstance(device, S.PartitionSpec):
        targets = [device] * len(leaves)
    else:
        targets = tree_util.prefix_entries(
            "device_put device", device, x,
            lambda t: t is None or not isinstance(t, (tuple, list, dict)) or
            isinstance(t, S.PartitionSpec))
    outs = []
    for leaf, target in zip(leaves, targets):
        if isinstance(target, S.PartitionSpec):
            target = S.as_sharding(target, "device_put")
        with explicit_device_put():     # (only the '*_explicit' transfer guards refuse it)
            out = _put_leaf(leaf, target, S)
        if donate and isinstance(leaf, Array) and out is not leaf and \
                getattr(out, "_buf", None) is not leaf._buf:     # (not the same buffer)
            leaf.delete()
        outs.append(out)
    return tree_util.tree_unflatten(tree, outs)


def _put_leaf(leaf, target, S):
    if isinstance(target, Space):       # (jax.memory.Space: that memory of its device)
        target = _space_sharding(leaf, target, S)
    if isinstance(leaf, Tracer):
        if isinstance(target, S.NamedSharding):     # (inside a program: a reshard)
            leaf = registration.DEVICE_PUT_TRACED(leaf, target)
        if isinstance(target, S.Sharding) and in_use():    # (memory kinds in use)
            return registration.DEVICE_PUT_MEMORY(leaf, target.memory_kind)
        return leaf
    if isinstance(target, Format):
        return _put_format(leaf, target, S)
    if _moves_memory(leaf, target, S):
        return _put_in_memory(leaf, target, S)
    S.check_rank(target, np.ndim(leaf) if not hasattr(leaf, "ndim") else leaf.ndim,
                 "One of device_put args")
    if isinstance(target, S.SingleDeviceSharding):
        target = target._device
    if isinstance(target, S.NamedSharding) and isinstance(target.mesh, S.AbstractMesh):
        target = S.NamedSharding(S.concrete_mesh_for(target.mesh, "device_put"), target.spec)
    if isinstance(target, S.Sharding):
        if isinstance(target, S.NamedSharding) and (target.spec.unreduced or (
                isinstance(leaf, Array) and isinstance(leaf._sharding, S.NamedSharding)
                and leaf._sharding.spec.unreduced)):
            return registration.DEVICE_PUT_UNREDUCED(leaf, target)   # (mjax.lax.unreduced)
        if isinstance(leaf, Array) and leaf._sharding == target:
            if not isinstance(target, S.NamedSharding) or \
                    tuple(leaf._sharding.spec) == tuple(target.spec):
                return leaf
            return Array(leaf._buf, leaf.aval, target)   # (the same layout, as written)
        aval = aval_of_value(leaf)
        value = np.asarray(to_numpy(leaf), dtype=aval.dtype)
        return mark_committed(put_sharded(value, aval, target))
    if isinstance(leaf, Array) and target is None:
        return leaf     # (it stays where it is, as in JAX)
    if isinstance(leaf, Array) and target in leaf.devices() and not leaf.is_sharded:
        named = isinstance(leaf._sharding, S.NamedSharding)
        if getattr(leaf, "_committed", False) and not named:
            return leaf
        # (the same buffer, committed to the device; `leaf` stays as it was)
        return mark_committed(Array(leaf._buf, leaf.aval, None if named else leaf._sharding))
    aval = aval_of_value(leaf)
    out = device_put_value(to_numpy(leaf), getattr(target, "_device", target))
    out.aval = aval
    if target is not None:
        mark_committed(out)     # (placed on a device the user named, as JAX's commit)
    return out


def _moves_memory(leaf, target, S) -> bool:
    """Whether device_put(leaf, target) involves host memory: the target's or the
    array's (a Device target of a host array is JAX's ValueError)."""
    if not in_use():
        return False
    kind = getattr(target, "memory_kind", None)
    if kind is not None and kind != "device":
        return True
    return isinstance(leaf, Array) and memory_kind_of(leaf) != "device"


def _put_in_memory(leaf, target, S):
    """device_put to or from host memory: JAX: dispatch._device_put_sharding_impl."""
    have = memory_kind_of(leaf)
    if target is None:      # (it stays where it is)
        return leaf
    if not isinstance(target, S.Sharding):
        raise ValueError(f"Memory kind mismatch with xla::PjRtBuffers. Got sharding with "
                         f"memory kind 'device' and a buffer with memory_kind '{have}'")
    S.check_rank(target, np.ndim(leaf), "One of device_put args")
    if isinstance(target, S.NamedSharding) and isinstance(target.mesh, S.AbstractMesh):
        target = S.NamedSharding(S.concrete_mesh_for(target.mesh, "device_put"), target.spec,
                                 memory_kind=target.memory_kind)
    if isinstance(leaf, Array) and leaf._sharding == target:
        return leaf
    aval = aval_of_value(leaf)
    value = np.asarray(to_numpy(leaf), dtype=aval.dtype)
    if isinstance(target, S.SingleDeviceSharding):
        buf = backend_of_device(target._device).put(value, target._device,
                                                    target.memory_kind)
        return mark_committed(Array(buf, aval, target))
    return mark_committed(put_sharded(value, aval, target))


def _space_sharding(leaf, space, S):
    """The sharding of `leaf`'s device(s) in memory `space` (JAX: device_put to a
    jax.memory.Space keeps the placement and changes the memory)."""
    kind = kind_of_space(space)
    s = getattr(leaf, "_sharding", None)
    if s is None:
        devs = leaf.devices() if isinstance(leaf, Array) else None
        return S.SingleDeviceSharding(next(iter(devs)) if devs else devices()[0],
                                      memory_kind=kind)
    if isinstance(s, S.NamedSharding) and (s.memory_kind or "device") != kind:
        return S.NamedSharding(s.mesh, _spec_as_hlo_reads_it(s), memory_kind=kind)
    return s.with_memory_kind(kind)


def _spec_as_hlo_reads_it(s):
    """The spec JAX gives the result of a device_put that moved `s`'s array to another
    memory: the program's result sharding is no longer equivalent to `s` (its memory
    differs), so JAX reads the spec back from XLA's sharding (pxla.
    _get_out_sharding_from_orig_sharding): axes of size 1 split nothing, and trailing
    unsplit dimensions are dropped (over a mesh of one device: P())."""
    sizes = dict(zip(s.mesh.axis_names, s.mesh.devices.shape))
    entries = []
    for e in s.spec:
        names = tuple(n for n in ((e,) if isinstance(e, str) else
                                    tuple(e) if isinstance(e, (tuple, list)) else ())
                      if sizes.get(n, 1) > 1)
        entries.append(None if not names else names[0] if isinstance(e, str) else names)
    while entries and entries[-1] is None:
        entries.pop()
    return S.PartitionSpec(*entries)


def cotangent_in_memory(primal, ct):
    """`ct`, the cotangent grad or vjp gives for `primal`, in pinned host memory where
    tracing knows `primal` is there (memory_kinds.known_kind). JAX's cotangent has its
    primal's type, memory space included (device_put's transpose moves it back); mjax's
    transpose knows a device_put's source only where tracing did, not inside loop
    bodies or for jit arguments, so the differentiation puts the result there."""
    if not in_use() or known_kind(primal) != "pinned_host":
        return ct
    if isinstance(ct, Tracer):
        return registration.DEVICE_PUT_MEMORY(ct, "pinned_host")
    if isinstance(ct, Array) and memory_kind_of(ct) != "pinned_host":
        return _put_in_memory(ct, _space_sharding(ct, Space.Host, S), S)
    return ct


def _put_format(leaf, fmt: Format, S):
    """device_put(x, Format(layout, sharding)): placed by the sharding, then copied into
    the layout on the device (mjax/specs/layout.py). JAX: dispatch._device_put_impl."""
    if fmt.layout is None:
        return _put_leaf(leaf, fmt.sharding, S)
    aval = aval_of_value(leaf)
    if not isinstance(fmt.sharding, S.Sharding) or not isinstance(fmt.layout, Layout):
        raise ValueError(f"sharding and layout in `Layout` instance should be concrete. "
                         f"Got layout: {fmt} for input {aval.str_short()}")
    fmt.layout.check_compatible_aval(aval.shape)
    if isinstance(leaf, Array) and getattr(leaf, "_committed", False) and \
            leaf.format == fmt:
        return leaf
    # JAX places it with a jit whose out_shardings is the Format: under a context mesh
    # (set_mesh) a sharding over other devices is refused as that jit refuses it.
    mesh = S.current_mesh()
    ids = [d.id for d in fmt.sharding._device_list()]
    if mesh is not None and sorted(d.id for d in mesh.devices.flat) != sorted(ids):
        device = fmt.sharding._device_list()[0]
        raise ValueError(f"Received incompatible devices for jitted computation. Got "
                         f"jit's context mesh with device ids "
                         f"{[d.id for d in mesh.devices.flat]} on platform "
                         f"{device.platform.upper()} and explicit output sharding with "
                         f"device ids {ids} on platform {device.platform.upper()}")
    placed = _put_leaf(leaf, fmt.sharding, S)
    return mark_committed(Array(relayout(placed._buf, fmt.layout), placed.aval,
                                fmt.sharding))


def put_sharded(value: np.ndarray, aval, sharding) -> Array:
    """A host value laid out over `sharding`'s devices (one shard per device)."""
    index = sharding.devices_indices_map(value.shape)
    # jaxlib pairs shards with devices in this order; over several processes
    # (mjax.distributed) each one puts the shards of its own devices.
    me = process_index()
    devs = [d for d in sharding._device_list() if _process_of(d) == me]
    buf = get_backend().put_sharded([value[index[d]] for d in devs], devs,
                                    sharding._device_list(),
                                    sharding.hlo_sharding(value.ndim), value.shape,
                                    value.dtype, memory_kind=sharding.memory_kind)
    return Array(buf, aval, sharding)


def device_get(x):
    """A pytree with every mjax.Array leaf copied to the host as a NumPy array."""
    with explicit_device_get():
        return trace_trees.tree_map(lambda leaf: np.asarray(leaf) if isinstance(leaf, Array)
                                    else leaf, x)


def block_until_ready(x):
    """`x`, once every mjax.Array leaf's computation has finished (one batched wait)."""
    bufs = []
    for leaf in trace_trees.tree_leaves(x):
        if isinstance(leaf, Array):
            leaf._check_alive()
            bufs.append(leaf._buf)
    wait_for_buffers(bufs)
    return x


# ---- where a computation runs -------------------------------------------------------------
def device_buffer(x, aval, backend=None):
    """The device buffer for a concrete value (an Array's own, else a fresh copy on
    `backend`, default the process's)."""
    buf = getattr(x, "_buf", None)
    if buf is not None:
        return buf
    if isinstance(x, Tracer):    # (one that outlived its trace: a leaked tracer)
        raise UnexpectedTracerError(escaped_tracer_message(x))
    return get_backend(backend).put(np.asarray(x, dtype=aval.dtype))


def default_device():
    """jax_default_device as a device of the backend (None: the backend's first)."""
    dev = config.read("jax_default_device")
    if isinstance(dev, str):      # a platform name, as JAX accepts
        return get_backend(dev).devices()[0]
    return getattr(dev, "_device", dev)


def on_device(bufs, device) -> list:
    """bufs, each one not on `device` copied there (through the host)."""
    return [b if device in _devices_of(b) else
            backend_of_device(device).put(buffer_to_numpy(b), device) for b in bufs]


def committed_device(args, describe=None, mesh=None):
    """The one device the committed operands among `args` are on, or None when there are
    none (or they lie over several devices: a mesh's). As in JAX, committed operands
    (placed by `device_put`, or computed from such) decide where a computation runs; the
    others are copied there. Committed operands on different devices, or on other
    devices than `mesh` (the context mesh the computation compiles for), raise JAX's
    ValueError, naming them by `describe(index)` ("x of add"; default: args[i])."""
    describe = describe or (lambda k: f"args[{k}]")
    found = None   # (index, array, devices) of the first committed operand
    for k, x in enumerate(args):
        if type(x) is not Array or not getattr(x, "_committed", False):
            continue
        devices = _devices_of(x._buf)
        if mesh is not None and set(devices) != set(mesh.devices.flat):
            raise ValueError(
                f"Received incompatible devices for jitted computation. Got argument "
                f"{_described(describe(k), x, devices)} and jit's context mesh with "
                f"device ids {[d.id for d in mesh.devices.flat]} on platform "
                f"{devices[0].platform.upper()}")
        if found is None:
            found = (k, x, devices)
        elif set(devices) != set(found[2]):
            j, y, other = found
            raise ValueError(
                f"Received incompatible devices for jitted computation. Got argument "
                f"{_described(describe(j), y, other)} and argument "
                f"{_described(describe(k), x, devices)}")
    return None if found is None or len(found[2]) != 1 else found[2][0]


def _described(name, x, devices) -> str:
    """JAX's words for an operand in its devices error: "x of add with shape
    float32[4@x] and with device ids [1] on platform CPU"."""
    shape = typeof_array(x).update(weak_type=False)     # (JAX prints no weak type here)
    return (f"{name} with shape {shape} and with device ids "
            f"{[d.id for d in devices]} on platform {devices[0].platform.upper()}")


def commit(arrays):
    """Marks `arrays` (a list) committed to their device: results of a computation placed
    by committed operands are committed too, as in JAX."""
    for x in arrays:
        mark_committed(x)
    return arrays


def commit_tree(result):
    """`result` (a pytree), its Arrays marked committed (a call on committed arguments)."""
    commit([x for x in trace_trees.tree_leaves(result) if type(x) is Array])
    return result


def mark_committed(x):
    """`x` (an Array) committed to its devices. A committed array carries its sharding
    object, which keeps it off the fast paths of jit and eager ops (they serve arrays
    without one: uncommitted, on the default device) and on the paths that place a
    computation by its committed operands."""
    x._committed = True
    if x._sharding is None:
        x._sharding = x.sharding
    return x


def _devices_of(buf) -> tuple:
    sharding = getattr(buf, "_sharding", None)
    if sharding is None:     # (an IREE buffer: on its one device)
        device = getattr(buf, "device", None)
        return () if device is None else (device,)
    return tuple(getattr(sharding, "_internal_device_list", ()))


def live_arrays(platform=None) -> list[Array]:
    """The arrays alive on `platform`'s devices (default: the default backend's), one per
    device buffer jaxlib holds, as Arrays over those buffers (deleting one frees it),
    except those of mjax's own caches. JAX: jax.live_arrays."""
    backend = get_backend(platform)
    client = getattr(backend, "client", None)
    if client is None:
        raise NotImplementedError(f"jax.live_arrays: the {backend.platform} backend does "
                                  f"not list its buffers")
    internal = {id(a._buf) for arrays in registration.INTERNAL_ARRAYS for a in arrays()}
    return [Array(buf, ShapedArray(tuple(buf.aval.shape), np.dtype(buf.aval.dtype)))
            for buf in client.live_arrays() if id(buf) not in internal]
