"""Mosaic lowering of what names other devices in a Pallas TPU kernel traced inside a
shard_map: `lax.axis_index` of a mesh axis (`tpu.device_id` divided down to the axis),
the device ids of remote DMAs and semaphore signals (dialect/ops/pallas_tpu.py's
`device_ids` operands, and the `core_ids` operand naming another core of the chip) and the barrier semaphore (`tpu.sem_barrier`), as JAX's Pallas TPU
lowering emits them.

A device named by its mesh coordinates (device_id_type "mesh") is the logical id
`0 + c0 * stride0 + c1 * stride1 ...` (row-major strides of the pallas_call's
`mesh_shape`), computed at each op that names it, as JAX's `_device_id_to_logical`;
a logical id is used as it is.

    %i = "jaxpr.axis_index"() {axes = ["x"]}       (mesh x=4, y=2)
  ==>
    %d = tpu.device_id : i32
    %i = arith.remsi (arith.divsi %d, 2), 4
"""
from __future__ import annotations

import math

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith
from jaxlib.mosaic.python import tpu

from mjax.dialect.ops import collectives as C
from mjax.dialect.ops import pallas_tpu as PT
from mjax.passes.mosaic.table import MOSAIC
from mjax.passes.mosaic.types import MosaicLoweringError, full, ref_type


def kernel_mesh(kl) -> tuple[tuple, tuple]:
    """(axis names, axis sizes) of the shard_map mesh the kernel was traced in."""
    return getattr(kl, "mesh", ((), ()))


def logical_device(kl, ids, device_id_type: str) -> ir.Value | None:
    """The i32 logical id of the device `ids` (lowered operands) name, or None."""
    if not ids:
        return None
    if device_id_type == "logical":
        return kl.value(ids[0], np.int32)
    names, shape = kernel_mesh(kl)
    if len(ids) != len(shape):
        raise MosaicLoweringError(f"Number of device ids must match the number of mesh "
                                  f"axes, but got {len(ids)} ids for a {len(shape)}D mesh.")
    total = None
    for k, v in enumerate(ids):
        term = arith.muli(kl.value(v, np.int32),
                          full(math.prod(shape[k + 1:]), np.int32))
        # (JAX sums them with Python's sum: 0 + the first term, then each next one)
        total = arith.addi(full(0, np.int32) if total is None else total, term)
    return total


def split_remote(operands, device_ids=0, device_id_type="mesh"):
    """(the lowered operands before the device id, the lowered device id operands)."""
    n = int(device_ids or 0)
    operands = list(operands)
    return operands[:len(operands) - n], operands[len(operands) - n:]


def split_core(operands, core_ids=0) -> tuple[list, object]:
    """(the lowered operands before the core index, the core index operand or None): an
    op with `core_ids` names a core of the chip by its last operand (Mosaic's core_id;
    made an i32 value by core_value where JAX's lowering makes its operands values)."""
    operands, core = PT.split_core_id(operands, core_ids)
    return operands, (core[0] if core else None)


def core_value(kl, core) -> ir.Value | None:
    return None if core is None else kl.value(core, np.int32)


@MOSAIC.register(C.AxisIndexOp)
def _axis_index(kl, op, *, axes, **params):
    names, shape = kernel_mesh(kl)
    (name,) = tuple(axes)
    if name not in names:
        raise MosaicLoweringError(f"axis_index of {name!r}: in a TPU kernel, only axes of "
                                  f"the shard_map mesh the pallas_call runs in (here "
                                  f"{tuple(names)}) name devices")
    k = names.index(name)
    device = tpu.device_id()
    size = full(shape[k], np.int32)
    minor = full(math.prod(shape[k + 1:]), np.int32)
    return [arith.remsi(arith.divsi(device, minor), size)]


@MOSAIC.register(PT.GetBarrierSemaphoreOp)
def _barrier_semaphore(kl, op, **params):
    return [tpu.sem_barrier(ref_type((), np.int32, "barrier_semaphore"))]


def mesh_axes_used(kernel: ir.Operation, mesh_axes) -> list[str]:
    """The mesh axes the kernel's axis_index ops name, sorted (JAX's kernel_metadata
    `mesh_axes`: the kernel's named-axis effects on mesh axes)."""
    found = set()

    def walk(op):
        for region in op.regions:
            for block in region.blocks:
                for o in block.operations:
                    if o.operation.name == C.AxisIndexOp.OPERATION_NAME:
                        found.update(str(ir.StringAttr(a).value)
                                     for a in ir.ArrayAttr(o.operation.attributes["axes"]))
                    walk(o.operation)
    walk(kernel)
    return sorted(a for a in found if a in tuple(mesh_axes or ()))


__all__ = ["kernel_mesh", "logical_device", "mesh_axes_used", "core_value", "split_core",
           "split_remote"]
