"""colocated_cpu_devices, colocated_python, colocated_python_class.
JAX: jax.experimental.colocated_python.api."""
from __future__ import annotations

import collections

import numpy as np

from mjax.experimental.colocated_python.func import make_callable
from mjax.experimental.colocated_python.obj import wrap_class
from mjax.arrays.placement import devices as _devices
from mjax.specs.sharding_impls import Mesh


def colocated_cpu_devices(devices_or_mesh):
    """The CPU devices colocated with `devices_or_mesh` (a sequence of devices: a list
    of CPU devices, in order; a Mesh: a Mesh of the same shape and axes on them). A CPU
    device is its own colocated device; an accelerator device maps to a CPU device of
    its process, one each, in order."""
    if isinstance(devices_or_mesh, Mesh):
        mesh = devices_or_mesh
        flat = colocated_cpu_devices(tuple(mesh.devices.flat))
        return Mesh(np.array(flat, dtype=object).reshape(mesh.devices.shape),
                    mesh.axis_names, axis_types=mesh.axis_types)
    devices = tuple(devices_or_mesh)
    if not devices:
        raise ValueError("colocated_cpu_devices: got no devices")
    if all(d.platform == "cpu" for d in devices):
        return list(devices)
    free = collections.defaultdict(list)
    for d in reversed(_devices("cpu")):
        free[d.process_index].append(d)
    out = []
    for d in devices:
        if d.platform == "cpu":
            out.append(d)
            continue
        if not free[d.process_index]:
            raise ValueError(f"Process {d.process_index} does not have enough local CPU "
                             f"devices")
        out.append(free[d.process_index].pop())
    return out


def colocated_python(fun):
    """`fun` as a colocated Python callable: calls run `fun` on the CPU devices of the
    arguments (jax.Arrays); `.specialize(in_specs=, out_specs_fn=, devices=)` declares
    the input specs, a function giving the output specs, or the devices (required when
    the function takes no arrays)."""
    return make_callable(fun, None, None)


def colocated_python_class(cls):
    """A wrapper class of `cls` whose instances create the real object (with the
    constructor's arguments) at the first method call, on the devices of that call's
    arrays, and run every method there as a colocated Python function."""
    return wrap_class(cls, None)
