"""Naming the other TensorCores of a multi-core mesh in a Pallas TPU kernel (a v4 or
v5p chip has two per device): `pl.semaphore_signal(..., core_index=c)`, a
`device_id={core_axis: c}` of a remote DMA or signal (pltpu.core_barrier signals so:
mesh_kernels.py), as JAX 0.10.2 lowers them (pallas/mosaic/lowering.py
_device_id_to_logical).

The core axes are the axes of the pl.core_map / pl.kernel mesh the kernel runs over
(JAX's grid names). A device_id dict's core axis gives the op's core index (the
dialect's `core_ids` operand, Mosaic's `core_id`); its other axes are the shard_map
mesh's and name a device as before (with only core axes, inside a shard_map the device
is this one, outside one no device is named: a copy between the chip's cores).

Interpret mode runs the cores of a kernel that names another core in lockstep
(passes/pallas_cores.py).
"""
from __future__ import annotations

import numpy as np

from mjax import lax
from mjax.experimental.pallas.primitives import current_kernel
from mjax.tracing.axis_env import AXIS_ENV
from mjax.tracing.core import aval_of_value


def kernel_core_axes() -> tuple:
    """The core axes of the mesh kernel being traced (bound by core_map / pl.kernel)."""
    return tuple(AXIS_ENV.index_of)


def int32_scalar(what: str, v):
    """`v`, an integer scalar (a core or device index, a count), as int32; TypeError
    naming `what` for anything else."""
    a = aval_of_value(v)
    if a.shape != () or np.dtype(a.dtype).kind not in "iu":
        raise TypeError(f"{what} must be an integer scalar, got {a.str_short()}")
    if isinstance(v, (int, np.integer)):
        return np.int32(v)
    return v if np.dtype(a.dtype) == np.int32 else lax.convert_element_type(v, np.int32)


def split_core_axes(device_id, core_index, what: str):
    """(the device_id left to name a device, or None; the i32 core index, or None) of an
    op given `device_id` and `core_index`; JAX's errors where both name the core or
    the dict names an axis that is neither the kernel's core axis nor a mesh axis."""
    core = None
    if isinstance(device_id, dict):
        cores = kernel_core_axes()
        mesh = AXIS_ENV.meshes[-1][0] if AXIS_ENV.meshes else ()
        named = {k: v for k, v in device_id.items() if k in cores}
        unknown = {k: v for k, v in device_id.items() if k not in cores and k not in mesh}
        if unknown:
            raise ValueError(f"Unrecognized axes in device_id: {unknown}")
        if named:
            if len(cores) > 1:
                raise ValueError(f"Expected zero or one core index, got {named!r}.")
            (core,) = named.values()
            device_id = {k: v for k, v in device_id.items() if k not in cores}
            if not device_id and not mesh:
                device_id = None            # (a copy or signal between this chip's cores)
    if core_index is not None:
        if core is not None:
            raise ValueError("Cannot specify both `core_index` and the core axis in "
                             "`device_id`.")
        core = core_index
    if core is None:
        return device_id, None
    current_kernel(what)
    return device_id, int32_scalar(f"{what} core index", core)


__all__ = ["int32_scalar", "kernel_core_axes", "split_core_axes"]
