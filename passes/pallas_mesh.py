"""Interpret mode for Pallas TPU kernels whose devices talk to each other: remote DMAs,
remote semaphore signals and barrier semaphores in a kernel traced inside a shard_map.

mjax runs a shard_map body under one vmap per mesh axis (frontend/spmd/shard_map.py), so
when such a vmap meets an interpreted `jaxpr.pallas_call` whose kernel names its axis,
every device's kernel instance is in the one batched call. Instead of batching the call
(passes/rules/pallas.py), the call is first expanded into its grid loop
(passes/jaxpr_pallas_interpret.py) with the kernel discharged as one instance of many
(passes/rules/pallas_remote.py's `on_mesh`): a remote DMA or signal becomes a
`jaxpr.remote_update`, `lax.axis_index` stays the named-axis op. That loop is then
batched like any function: the instances run in lockstep, op by op, and once every mesh
axis is batched each remote write is a scatter into the stacked devices' buffers.

Lockstep is exact for kernels whose devices run the same DMAs and waits in the same
order, the guide's and JAX's tests' kernels: a DMA lands when it starts, so every wait
finds what the devices' earlier ops sent. Control flow that differs across devices
around a remote write is masked (only the devices taking the branch write). A wait that
finds too small a count could only be satisfied by a later op of another device, which
lockstep cannot run first: the count is poisoned and the call reports it
(passes/rules/pallas_remote.py). JAX: pallas/mosaic/interpret (one thread per device).
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.builder import Builder
from mjax.dialect.types import aval_of
from mjax.passes.batching import batch_function
from mjax.passes.ir_util import callee_of, clone_into, nested_ops, set_results, symbol_name
from mjax.passes.jaxpr_pallas_interpret import expand_pallas_call
from mjax.passes.rules.pallas import MESH_BATCH
from mjax.passes.rules.pallas_remote import on_mesh


_TALK = ("jaxpr.dma_start", "jaxpr.dma_wait", "jaxpr.semaphore_signal")


def _names_devices(batcher, op) -> bool:
    """Whether the kernel (or a function it calls) reads the batched mesh axis or names
    another device (a remote DMA or signal, the barrier semaphore)."""
    if batcher.reads_axis(op):
        return True
    seen, todo = set(), [str(op.opview.params["callee"])]
    while todo:
        name = todo.pop()
        if name in seen or name not in batcher.fns:
            continue
        seen.add(name)
        for inner in nested_ops(batcher.fns.get(name)):
            if inner.name == "jaxpr.get_barrier_semaphore" or (
                    inner.name in _TALK and "device_ids" in inner.attributes
                    and ir.IntegerAttr(inner.attributes["device_ids"]).value):
                return True
            callee = callee_of(inner)
            if callee is not None:
                todo.append(callee)
    return False


def _batch_on_mesh(batcher, op, vals, dims, b):
    """vmap along a mesh axis of an interpreted pallas_call under a shard_map: its grid
    loop, then that batched."""
    fns = batcher.fns
    p = op.opview.params
    callee = str(p["callee"])
    avals = [aval_of(v.type) for v in op.operands]
    fn, block = fns.create(fns.fresh_name(f"{callee}_on_mesh"), avals, None,
                           fns.get(callee))
    clone = clone_into(op, ir.InsertionPoint(block), dict(zip(op.operands, block.arguments)))
    set_results(fn, list(clone.results))
    with on_mesh(p["mesh_axes"], p["mesh_shape"]):
        expand_pallas_call(fns, clone, {})
    name, out_dims = batch_function(batcher.ex, symbol_name(fn), dims, batcher.axis_size,
                                    batcher.axis_name, False, op)
    return batcher.ex.call(b, name, vals), list(out_dims)


MESH_BATCH.update(rule=_batch_on_mesh, applies=_names_devices)

__all__: list[str] = []
