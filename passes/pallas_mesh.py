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
finds what the devices' earlier ops sent. A pl.when whose index may differ across the
devices runs predicated (`_predicated_cond`: each branch in turn, its updates only on the
devices taking it, its remote writes from those devices into any device); a loop whose
trip count differs across the devices around a remote write is refused. A kernel with a
wait inside such a pl.when whose semaphore a later op of the program may signal from
another device runs in rounds instead (passes/pallas_rounds.py: `use_rounds` replaces
the discharged kernel). Elsewhere a wait that finds too small a count could only be
satisfied by a later op of another device, which lockstep cannot run first (or the
devices deadlock): the count is poisoned and a host callback raises in the caller.
Semaphores left non-zero are printed, as JAX does.
JAX: pallas/mosaic/interpret (one thread per device).
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect.types import aval_of
from mjax.passes.batching import batch_function
from mjax.passes.jaxpr_discharge_state import PREDICATED_COND, Discharge, is_ref
from mjax.passes.ir_util import (clone_into, nested_ops, reachable_functions,
                                 set_results, symbol_name)
from mjax.dialect.ops.callbacks import CallbackOp
from mjax.dialect.ops.collectives import AxisIndexOp
from mjax.dialect.ops.pallas import SEMAPHORE_SPACES
from mjax.passes.jaxpr_pallas_interpret import AT_EXIT, Discharged, expand_pallas_call
from mjax.passes.rules.pallas import MESH_BATCH
from mjax.passes.pallas_rounds import use_rounds
from mjax.passes.rules.pallas_remote import (REPORT, core_axis, current_mesh,
                                             dma_counts_in_bytes, on_mesh,
                                             running_in_rounds)


_TALK = ("jaxpr.dma_start", "jaxpr.dma_wait", "jaxpr.semaphore_signal")


def _names_devices(batcher, op) -> bool:
    """Whether the kernel (or a function it calls) reads the batched mesh axis or names
    another device (a remote DMA or signal, the barrier semaphore)."""
    if batcher.reads_axis(op):
        return True
    fns, callee = batcher.fns.table, str(op.opview.params["callee"])
    if callee not in fns:
        return False
    for name in reachable_functions(fns, roots=[callee]):
        for inner in nested_ops(fns[name]):
            if inner.name == "jaxpr.get_barrier_semaphore" or (
                    inner.name in _TALK and "device_ids" in inner.attributes
                    and ir.IntegerAttr(inner.attributes["device_ids"]).value):
                return True
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
    cache: dict = {}
    with on_mesh(p["mesh_axes"], p["mesh_shape"]):
        expand_pallas_call(fns, clone, cache, batcher.ex)
        for key, value in list(cache.items()):
            # (a kernel's talking cores go to rounds in pallas_cores's _run)
            if isinstance(key, Discharged) and key.cores is None:
                with dma_counts_in_bytes(key.in_bytes):
                    use_rounds(fns, key.callee, value[0], key.grid, key.checks, key.skip)
    name, out_dims = batch_function(batcher.ex, symbol_name(fn), dims, batcher.axis_size,
                                    batcher.axis_name, False, op)
    return batcher.ex.call(b, name, vals), list(out_dims)


MESH_BATCH.update(rule=_batch_on_mesh, applies=_names_devices)


# ---- conds as predicated code ------------------------------------------------------------
_SYNC = ("jaxpr.dma_start", "jaxpr.dma_wait", "jaxpr.semaphore_signal",
         "jaxpr.semaphore_wait", "jaxpr.get_barrier_semaphore")


# ops whose results are the same on every device (given the same operands)
_UNIFORM = ("jaxpr.program_id", "jaxpr.num_programs", "jaxpr.constant")


def _uniform(v, seen=None) -> bool:
    """Whether value `v` of a kernel is the same on every device: made from grid queries
    and constants only (a cond's block argument: the cond's operand). Anything read
    from a ref, the device's axis_index or a loop's carry counts as varying."""
    seen = set() if seen is None else seen
    if v in seen:
        return False
    seen.add(v)
    if isinstance(v, ir.BlockArgument):
        parent = v.owner.owner
        if parent is None or parent.name != "jaxpr.cond":
            return False
        return _uniform(list(parent.operands)[1 + v.arg_number], seen)
    owner = v.owner
    if owner.name == "jaxpr.program_id" and core_axis():
        return False            # (cores in lockstep: the program id is the core index)
    if owner.name in _UNIFORM:
        return True
    if len(owner.regions) or owner.name in ("jaxpr.axis_index", "jaxpr.ref_get") or (
            is_ref(v)):
        return False
    return all(_uniform(x, seen) for x in owner.operands)


def _syncs(op) -> bool:
    """Whether `op`, discharged for devices in lockstep, holds DMAs or semaphore ops."""
    return current_mesh() is not None and any(inner.name in _SYNC
                                              for inner in nested_ops(op))


def _predicated(op) -> bool:
    """Whether cond `op` must run predicated: it synchronizes and its index may differ
    across the devices (or they run in rounds, each at its own step)."""
    return _syncs(op) and (running_in_rounds() or not _uniform(op.operands[0]))


def _predicated_cond(d, op):
    """A cond (a pl.when) holding DMAs or semaphore ops, each device on a shard_map
    running its own branch: every branch runs in turn, its ref updates only where this
    device takes it (`active`), its remote writes only from the devices taking it (and
    into any device, whichever branch that one takes: a select of the branches' results,
    as batching a cond makes, would drop them), its results selected by the index."""
    b = d.builder(op)
    index, *ops = list(op.operands)
    idx = d.env[index]
    outs = []
    for k, region in enumerate(op.regions):
        block = region.blocks[0]
        env = dict(zip(block.arguments, [d.env[v] for v in ops]))
        hit = b.eq(idx, b.constant(np.array(k, aval_of(idx.type).dtype)))
        inner = Discharge(d.ip, env, d.grid, d.grid_ids, d.grid_bounds)
        inner.active = hit if d.active is None else b.emit("and", d.active, hit)[0]
        outs.append(inner.run(block))
        for a, v in zip(block.arguments, ops):
            if is_ref(v):
                d.env[v] = env[a]
    for j, r in enumerate(op.results):
        cases = [o[j] for o in outs]
        d.env[r] = cases[0] if len(cases) == 1 else b.select_n(idx, *cases)


_predicated_cond.masks_itself = True
PREDICATED_COND.update(rule=_predicated_cond, applies=_predicated, syncs=_syncs)

__all__: list[str] = []


# ---- semaphores left non-zero ------------------------------------------------------------
def _at_exit(b, call, scratch) -> None:
    """On a shard_map's devices, the semaphores a kernel leaves non-zero are reported
    (printed, as JAX's interpreter does) by the frontend's callback, with the device's
    logical id."""
    mesh = current_mesh()
    if mesh is None or "exit_id" not in REPORT:
        return
    sems = [v for v, sp in zip(scratch, call.scratch_spaces)
            if sp in SEMAPHORE_SPACES and sp != "barrier_semaphore"]
    if not sems:
        return
    axes, shape = mesh
    device = b.constant(np.int32(0))
    for k, name in enumerate(axes):
        i = b.emit(AxisIndexOp, axes=(name,))[0]
        device = b.add(b.mul(device, b.constant(np.int32(shape[k]))), i)
    b.emit(CallbackOp, device, *sems, callback_id=REPORT["exit_id"], effect="unordered",
           result_shapes=None, result_dtypes=None, vmap_method=None)


AT_EXIT["rule"] = _at_exit
