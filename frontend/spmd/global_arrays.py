"""Global arrays built shard by shard, each process providing its own devices' shards.

    s = NamedSharding(mesh, P("data"))
    x = mjax.make_array_from_callback((8, 4), s, lambda index: host[index])
    y = mjax.make_array_from_single_device_arrays((8, 4), s, per_device_arrays)
    z = mjax.make_array_from_process_local_data(s, this_process_rows)

Over several processes (mjax.distributed) each process builds only the shards of its own
devices, so no process needs the whole value. JAX: jax.make_array_from_callback,
jax.make_array_from_single_device_arrays, jax.make_array_from_process_local_data.
"""
from __future__ import annotations

import numpy as np

from mjax.arrays.array import Array
from mjax.tracing.core import to_numpy
from mjax.dialect import ShapedArray
from mjax.specs.dtypes import canonicalize_dtype
from mjax.arrays.placement import _process_of, device_put, process_count, process_index
from mjax.runtime import get_backend
from mjax.base import tree_util
from mjax.dialect.ops.random import KEY_SHAPES
from mjax.lax.prng import PRNGKeyArray
from mjax.specs.sharding_impls import PartitionSpec, Sharding, as_sharding


def _local_devices(sharding) -> list:
    me = process_index()
    return [d for d in sharding._device_list() if _process_of(d) == me]


def _check_sharding(fn, sharding):
    if not isinstance(sharding, Sharding):
        raise TypeError(f"{fn}: sharding must be a Sharding, got {type(sharding).__name__}")


def _assemble(shape, sharding, shards: dict, dtype) -> Array:
    """One Array from host shards {device: value} of this process's devices."""
    devs = list(shards)
    dtype = canonicalize_dtype(dtype)      # (float64 is float32 with x64 off, as JAX)
    if sharding.num_devices == 1:
        # (the sharding asked for, as JAX's: a mesh of one device stays a NamedSharding)
        return device_put(np.asarray(shards[devs[0]], dtype), sharding)
    buf = get_backend().put_sharded([np.asarray(shards[d], dtype) for d in devs], devs,
                                    sharding._device_list(), sharding.hlo_sharding(len(shape)),
                                    shape, dtype)
    return Array(buf, ShapedArray(shape, dtype), sharding)


def _host(x) -> np.ndarray:
    return np.asarray(to_numpy(x))


def make_array_from_callback(shape, sharding, data_callback, dtype=None) -> Array:
    """An array of global `shape` laid out as `sharding`, whose shard on each of this
    process's devices is `data_callback(index)` (index: a tuple of slices of the global
    array)."""
    _check_sharding("make_array_from_callback", sharding)
    shape = tuple(int(n) for n in shape)
    index = sharding.devices_indices_map(shape)
    shard_shape = sharding.shard_shape(shape)
    shards, cache, impls = {}, {}, set()
    for d in _local_devices(sharding):
        key = tuple((s.start, s.stop, s.step) for s in index[d])
        if key not in cache:     # replicas of a shard ask the callback once
            value = data_callback(index[d])
            if isinstance(value, PRNGKeyArray) != bool(impls) and cache:
                raise TypeError("make_array_from_callback: the callback returned key arrays "
                                "for some shards and arrays of other dtypes for others")
            if isinstance(value, PRNGKeyArray):     # (keys: their data, key dims trailing)
                impls.add(value.impl)
                value = value._base
            value = _host(value)
            if value.shape[:max(value.ndim - len(kshape(impls)), 0)] != shard_shape:
                raise ValueError(f"make_array_from_callback: the callback returned an array "
                                 f"of shape {value.shape} for index {index[d]}, expected the "
                                 f"shard shape {shard_shape} of {sharding!r} over {shape}")
            cache[key] = value
        shards[d] = cache[key]
    if impls:
        return _keys_of(impls, lambda ks: _assemble(shape + ks, sharding, shards, np.uint32))
    if dtype is None:
        dtype = next(iter(shards.values())).dtype if shards else np.float32
    return _assemble(shape, sharding, shards, dtype)


def kshape(impls) -> tuple:
    """The key shape of the one key implementation in `impls` (() when none)."""
    if len(impls) > 1:
        raise TypeError(f"arrays of several key dtypes ({sorted(impls)}) for one array")
    return KEY_SHAPES[next(iter(impls))] if impls else ()


def _keys_of(impls, make_data) -> PRNGKeyArray:
    """Key array of the one implementation in `impls` over make_data(its key shape)
    (whose sharding leaves the trailing key dimensions whole)."""
    impl = next(iter(impls))
    return PRNGKeyArray(impl, make_data(kshape(impls)))


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None) -> Array:
    """An array of global `shape` laid out as `sharding`, from one single-device array per
    device of this process (each on its device, holding that device's shard)."""
    _check_sharding("make_array_from_single_device_arrays", sharding)
    shape = tuple(int(n) for n in shape)
    arrays = list(arrays)
    impls = {a.impl for a in arrays if isinstance(a, PRNGKeyArray)}
    if impls:                   # keys: an array of their data, the key dims trailing
        if not all(isinstance(a, PRNGKeyArray) for a in arrays):
            raise TypeError("make_array_from_single_device_arrays: key arrays mixed with "
                            "arrays of other dtypes")
        return _keys_of(impls, lambda ks: make_array_from_single_device_arrays(
            shape + ks, sharding, [a._base for a in arrays]))
    local = _local_devices(sharding)
    shard_shape = sharding.shard_shape(shape)
    if len(arrays) != len(local):
        raise ValueError(f"make_array_from_single_device_arrays: got {len(arrays)} arrays "
                         f"for the {len(local)} devices of {sharding!r} in this process")
    shards = {}
    for a in arrays:
        devs = a.devices() if isinstance(a, Array) else None
        if devs is None or len(devs) != 1:
            raise ValueError("make_array_from_single_device_arrays: every array must be an "
                             "mjax.Array on one device")
        (dev,) = devs
        if dev not in local:
            raise ValueError(f"make_array_from_single_device_arrays: an array is on {dev}, "
                             f"which is not a device of {sharding!r} in this process")
        if dev in shards:
            raise ValueError(f"make_array_from_single_device_arrays: two arrays are on {dev}")
        if tuple(a.shape) != shard_shape:
            raise ValueError(f"make_array_from_single_device_arrays: an array of shape "
                             f"{tuple(a.shape)} on {dev}, expected the shard shape "
                             f"{shard_shape} of {sharding!r} over {shape}")
        shards[dev] = a
    if dtype is None:
        dtype = arrays[0].dtype if arrays else np.float32
    dtype = canonicalize_dtype(dtype)
    backend = get_backend()
    if len(local) > 1 and hasattr(backend, "assemble") and all(
            type(a) is Array and a.dtype == dtype for a in arrays):
        # The device buffers themselves make the array (as JAX's): no host round trip.
        buf = backend.assemble([shards[d]._buf for d in local], sharding._device_list(),
                               sharding.hlo_sharding(len(shape)), shape, dtype)
        return Array(buf, ShapedArray(shape, dtype), sharding)
    return _assemble(shape, sharding, {d: _host(shards[d]) for d in local}, dtype)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """Arrays laid out as `sharding` (a Sharding or a PartitionSpec of the set_mesh mesh,
    or a pytree prefix of them) from this process's part of `local_data` (an array or a
    pytree of them): the block of each global array its devices hold (the whole array
    with one process)."""
    what = "make_array_from_process_local_data"
    leaves, tree = tree_util.tree_flatten(local_data)
    shardings = [as_sharding(s, what) for s in tree_util.prefix_entries(
        f"{what} sharding", sharding, local_data,
        lambda x: isinstance(x, (Sharding, PartitionSpec)))]
    shapes = tree_util.prefix_entries(f"{what} global_shape", global_shape, local_data,
                                      lambda x: x is None or isinstance(x, tuple))
    if process_count() == 1:
        for shape, data in zip(shapes, leaves):
            if shape is not None and tuple(shape) != np.shape(data):
                raise ValueError(f"When calling `{what}` on a single process, global_shape "
                                 f"should be None or equal to local_data.shape.Got "
                                 f"global_shape={tuple(shape)} and local_data.shape="
                                 f"{np.shape(data)}.")
    out = [_from_process_local_data(s, d, shape)
           for s, d, shape in zip(shardings, leaves, shapes)]
    return tree_util.tree_unflatten(tree, out)


def _from_process_local_data(sharding, local_data, global_shape) -> Array:
    local_data = _host(local_data)
    if global_shape is None:
        if process_count() > 1:
            raise NotImplementedError("make_array_from_process_local_data over several "
                                      "processes needs global_shape")
        global_shape = local_data.shape
    global_shape = tuple(int(n) for n in global_shape)
    index = sharding.devices_indices_map(global_shape)
    local = _local_devices(sharding)
    # This process's block: from the lowest start to the highest stop of its shards.
    starts = [min((index[d][k].start or 0) for d in local) for k in range(len(global_shape))]
    stops = [max((index[d][k].stop if index[d][k].stop is not None else global_shape[k])
                 for d in local) for k in range(len(global_shape))]
    block = tuple(b - a for a, b in zip(starts, stops))
    if local_data.shape != block:
        raise ValueError(f"make_array_from_process_local_data: local_data has shape "
                         f"{local_data.shape}, but this process's devices hold the block "
                         f"{tuple(slice(a, b) for a, b in zip(starts, stops))} of the "
                         f"global shape {global_shape} (shape {block})")
    shards = {}
    for d in local:
        idx = tuple(slice((s.start or 0) - a, (s.stop if s.stop is not None else n) - a)
                    for s, a, n in zip(index[d], starts, global_shape))
        shards[d] = local_data[idx]
    return _assemble(global_shape, sharding, shards, local_data.dtype)


__all__ = ["make_array_from_callback", "make_array_from_single_device_arrays",
           "make_array_from_process_local_data"]
