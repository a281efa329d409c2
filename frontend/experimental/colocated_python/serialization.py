"""Serializing colocated Python functions, specs and their shardings: devices travel as
their ids and come back as this process's devices of those ids.
JAX: jax.experimental.colocated_python.serialization (there with cloudpickle; here with
pickle, so functions travel by reference: a module-level name)."""
from __future__ import annotations

import io
import pickle

from jaxlib._jax import DeviceList  # noqa: F401  (JAX's name, as colocated_python's)

from mjax.base import tree_util
from mjax.arrays.placement import devices as _devices


def _device_by_id(device_id: int):
    for d in _devices():
        if d.id == device_id:
            return d
    raise ValueError(f"colocated_python: no device with id {device_id} in this process "
                     f"(devices: {[d.id for d in _devices()]})")


def _is_device(obj) -> bool:
    return type(obj).__name__.endswith("Device") and hasattr(obj, "id") and \
        hasattr(obj, "platform") and hasattr(obj, "client")


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        if _is_device(obj):
            return _device_by_id, (obj.id,)
        if isinstance(obj, DeviceList):
            return _device_list, (tuple(d.id for d in obj),)
        return NotImplemented


def _device_list(ids) -> DeviceList:
    return DeviceList(tuple(_device_by_id(i) for i in ids))


def _serialize(obj) -> bytes:
    buf = io.BytesIO()
    _Pickler(buf).dump(obj)
    return buf.getvalue()


def _deserialize(serialized: bytes):
    return pickle.loads(serialized)


def _serialize_specs(specs_treedef, specs_leaves, devices) -> bytes:
    """The specs (a treedef and ShapeDtypeStruct leaves) as bytes."""
    return _serialize((tree_util.tree_unflatten(specs_treedef, specs_leaves),
                       tuple(devices)))


def _deserialize_specs(serialized: bytes):
    """(treedef, leaves) of specs serialized by _serialize_specs."""
    specs, _ = _deserialize(serialized)
    leaves, treedef = tree_util.tree_flatten(specs)
    return treedef, tuple(leaves)
