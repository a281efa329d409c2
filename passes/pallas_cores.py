"""Interpret mode for multi-core Pallas TPU kernels whose TensorCores talk to each other:
`pl.core_map` / `pl.kernel` over `pltpu.create_tensorcore_mesh(num_cores=n)` with
`semaphore_signal(core_index=)`, a DMA or signal with `device_id={core_axis: c}`, or
`pltpu.core_barrier` / the barrier semaphore.

Such a kernel is a pallas_call over a grid of one point per core (`mesh_kernel`). Run
point by point, core 0 would finish before core 1 starts, so a wait for what the other
core sends could never be satisfied. Instead the cores run in lockstep, as a shard_map's
devices do (passes/pallas_mesh.py): the kernel is discharged as one instance of many on
a mesh whose last axis is the cores (`CORE_AXIS`), a signal or copy to another core
becomes a `jaxpr.remote_update` along it, and the call becomes one grid step, the core
index `axis_index(CORE_AXIS)`, batched over the cores (a vmap of n). The cores share
their device's HBM (the kernel's pl.ANY operands): a DMA into it writes every core's
copy, so what one core writes the others read, and the result is core 0's copy. VMEM,
SMEM and semaphores are each core's own, as in JAX's interpreter (which runs the cores
in threads: pallas/mosaic/interpret). Under a shard_map the devices' vmaps then batch
the cores' lockstep function; a DMA to another device lands on the same core there.
A core waiting inside a pl.when for what another core signals later in the program
(JAX's test_allocate_shared_buffer_in_core_map) cannot run in lockstep: such kernels'
cores run in rounds (passes/pallas_rounds.py), batched the same way.
Kernels whose cores do not talk run point by point, as before.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect.builder import Builder
from mjax.dialect.ops.callbacks import CallbackOp
from mjax.dialect.ops.collectives import AxisIndexOp
from mjax.dialect.ops.pallas import SEMAPHORE_SPACES
from mjax.dialect.types import aval_of
from mjax.passes.batching import batch_function
from mjax.passes.ir_util import nested_ops, reachable_functions, set_results, symbol_name
from mjax.passes.jaxpr_pallas_interpret import CORES, discharge_options
from mjax.passes.pallas_rounds import use_rounds
from mjax.passes.rules.pallas_remote import (REPORT, current_mesh, dma_counts_in_bytes,
                                             on_mesh)

# The vmap axis the cores of a kernel run along (no user axis is named so)
CORE_AXIS = "_pallas_tensorcores"
_SHARED = ("any", "hbm")


def _talks(fns, callee: str) -> bool:
    """Whether the kernel (or a function it calls) signals or copies to another core or
    takes the barrier semaphore."""
    for name in reachable_functions(fns.table, roots=[callee]):
        for op in nested_ops(fns.get(name)):
            if op.name == "jaxpr.get_barrier_semaphore" or (
                    "core_ids" in op.attributes
                    and ir.IntegerAttr(op.attributes["core_ids"]).value):
                return True
    return False


def _dead(fns, op) -> bool:
    """Whether only a dead function holds the call (outside a mesh: the untransformed
    original of a kernel a shard_map's vmaps expanded, left until symbol-dce): it is
    expanded as before, never run (without the shard_map's mesh its devices cannot be
    named)."""
    fn = op.parent
    while fn is not None and fn.name != "func.func":
        fn = fn.parent
    return fn is not None and symbol_name(fn) not in reachable_functions(fns.table)


def _cores_of(fns, op):
    """on_mesh's arguments for a call whose cores must run in lockstep, else None."""
    p = op.opview.params
    grid = tuple(p["grid"])
    if not (p.get("mesh_kernel") and p.get("interpret") and len(grid) == 1
            and grid[0] >= 1 and _talks(fns, str(p["callee"]))):
        return None
    mesh = current_mesh()
    if mesh is None and _dead(fns, op):
        return None
    mesh = mesh or ((), ())
    spaces = [s.get("memory_space") for s in list(p["in_specs"]) + list(p["out_specs"])]
    spaces += list(p.get("scratch_memory_spaces") or ())
    first = int(p.get("num_scalar_prefetch") or 0)      # (the kernel's refs, in order)
    shared = frozenset(first + k for k, sp in enumerate(spaces) if sp in _SHARED)
    return ((*mesh[0], CORE_AXIS), (*mesh[1], grid[0]),
            (CORE_AXIS, shared, str(p["callee"])))


def _run(ex, call, arrays, b: Builder, op):
    """The cores' grid points at once: a function running this core's point (its index
    the core axis's), batched over the cores; the arrays as core 0 leaves them."""
    fns = call.fns
    cores = call.grid[0]
    p = op.opview.params
    mesh = _cores_of(fns, op)
    with dma_counts_in_bytes(bool(p.get("dma_bytes", False))), on_mesh(*mesh):
        use_rounds(fns, str(p["callee"]), call.kernel, call.grid, *discharge_options(p))
    fn, block = fns.create(fns.fresh_name(f"{call.kernel}_cores"),
                           [aval_of(v.type) for v in arrays], None, fns.get(call.kernel))
    fb = Builder(ir.InsertionPoint(block), op.location)
    scratch = call.initial_scratch(fb)     # (the call's uninitialized_memory mode)
    core = fb.emit(AxisIndexOp, axes=(CORE_AXIS,))[0]
    new, finals = call.step(fb, [core], list(block.arguments), scratch)
    _report_exit(fb, call, core, cores, finals)
    set_results(fn, new)
    name, dims = batch_function(ex, symbol_name(fn), [None] * len(arrays), cores,
                                CORE_AXIS, False, op)
    outs = []
    for v, d in zip(ex.call(b, name, arrays), dims):
        if d is not None:            # (every core's copy of HBM is the same: core 0's)
            shape = aval_of(v.type).shape
            limit = tuple(1 if k == d else s for k, s in enumerate(shape))
            v = b.slice(v, start_indices=(0,) * len(shape), limit_indices=limit,
                        strides=(1,) * len(shape))
            v = b.reshape(v, new_sizes=shape[:d] + shape[d + 1:])
        outs.append(v)
    return outs


def _report_exit(b: Builder, call, core, cores: int, scratch) -> None:
    """The semaphores a core leaves non-zero are printed (by the frontend's callback),
    with its device's logical id and its global core, as JAX's interpreter reports."""
    sems = [v for v, sp in zip(scratch, call.scratch_spaces)
            if sp in SEMAPHORE_SPACES and sp != "barrier_semaphore"]
    if not sems or "exit_cores_id" not in REPORT:
        return
    axes, shape = current_mesh() or ((), ())
    device = b.constant(np.int32(0))
    for name, size in zip(axes, shape):
        i = b.emit(AxisIndexOp, axes=(name,))[0]
        device = b.add(b.mul(device, b.constant(np.int32(size))), i)
    b.emit(CallbackOp, device, core, b.constant(np.int32(cores)), *sems,
           callback_id=REPORT["exit_cores_id"], effect="unordered", result_shapes=None,
           result_dtypes=None, vmap_method=None)


CORES.update(mesh=_cores_of, run=_run)

__all__ = ["CORE_AXIS"]
