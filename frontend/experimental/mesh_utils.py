"""`mjax.experimental.mesh_utils`: device arrays for `jax.sharding.Mesh`.

mjax runs on CPU and GPU clients, whose devices have no physical topology to follow: a mesh
lays the devices out in order (GPUs by id), as JAX does on those platforms. JAX's TPU torus
layouts are not modelled.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from mjax.arrays.placement import devices as _all_devices

# device_kind -> fn(mesh_shape, devices, *, contiguous_submeshes) -> device array or None,
# consulted first (JAX: a table of TPU generations' layouts; empty here).
device_kind_handler_dict: dict = {}


def _axis_sizes(mesh_shape, what) -> tuple[int, ...]:
    try:
        return tuple(operator.index(d) for d in mesh_shape)
    except TypeError:
        raise ValueError(f"`{what}` passed to `create_device_mesh` should be a sequence of "
                         f"ints. Got {mesh_shape}") from None


def create_device_mesh(mesh_shape, devices=None, *, contiguous_submeshes=False,
                       allow_split_physical_axes=False) -> np.ndarray:
    """A NumPy array of `devices` (default: all) of shape `mesh_shape`. JAX:
    jax.experimental.mesh_utils.create_device_mesh."""
    devices = list(_all_devices() if devices is None else devices)
    shape = _axis_sizes(mesh_shape, "mesh_shape")
    if math.prod(shape) != len(devices):
        raise ValueError(f"Number of devices {len(devices)} must equal the product of "
                         f"mesh_shape {shape}")
    handler = device_kind_handler_dict.get(getattr(devices[-1], "device_kind", None))
    if handler is not None:
        out = handler(shape, devices, contiguous_submeshes=contiguous_submeshes)
        if out is not None:
            return out
    if getattr(devices[-1], "platform", "cpu") == "gpu":
        devices = sorted(devices, key=lambda d: d.id)
    arr = np.empty(len(devices), dtype=object)
    arr[:] = devices
    return arr.reshape(shape)


def create_hybrid_device_mesh(mesh_shape, dcn_mesh_shape, devices=None, *,
                              process_is_granule=False, should_sort_granules_by_key=True,
                              allow_split_physical_axes=False) -> np.ndarray:
    """A mesh of `dcn_mesh_shape` granules (processes, or slices) each laid out as
    `mesh_shape`; the result's shape is their elementwise product. JAX:
    jax.experimental.mesh_utils.create_hybrid_device_mesh."""
    devices = list(_all_devices() if devices is None else devices)
    inner = _axis_sizes(mesh_shape, "mesh_shape")
    outer = _axis_sizes(dcn_mesh_shape, "dcn_mesh_shape")
    if len(inner) != len(outer):
        raise ValueError(f"mesh_shape {inner} and dcn_mesh_shape {outer} must have the same "
                         f"length")
    attr = "process_index" if process_is_granule else "slice_index"
    if not process_is_granule and not all(hasattr(d, "slice_index") for d in devices):
        raise ValueError("create_hybrid_device_mesh: the devices have no slice_index; pass "
                         "process_is_granule=True to use processes as granules")
    groups: dict = {}
    for d in devices:
        groups.setdefault(getattr(d, attr), []).append(d)
    keys = sorted(groups) if should_sort_granules_by_key else list(groups)
    if len(keys) != math.prod(outer):
        raise ValueError(f"Number of granules {len(keys)} must equal the product of "
                         f"dcn_mesh_shape {outer}")
    per = [create_device_mesh(inner, groups[k]) for k in keys]
    blocks = np.empty(len(per), dtype=object)
    blocks[:] = per
    return np.block(blocks.reshape(outer).tolist())


__all__ = ["create_device_mesh", "create_hybrid_device_mesh", "device_kind_handler_dict"]
