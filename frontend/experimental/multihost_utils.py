"""`mjax.experimental.multihost_utils`: synchronising and exchanging values across
processes.

mjax runs one process per program (mjax.distributed.initialize records the process
topology, but executables run on one process's devices), so each function here is what
JAX's does with one process: the source's values are everyone's, a gather has one entry.
With more than one process they raise NotImplementedError rather than answer for one.
"""
from __future__ import annotations

import numpy as np

from mjax.base import trace_trees, tree_util
from mjax.arrays.placement import device_put, process_count
from mjax.specs.sharding_impls import NamedSharding, PartitionSpec


def _one_process(fn: str) -> None:
    if process_count() != 1:
        raise NotImplementedError(f"multihost_utils.{fn} across {process_count()} processes: "
                                  f"mjax runs one process per program")


def broadcast_one_to_all(in_tree, is_source=None):
    """in_tree as the source process has it (every process's copy). JAX:
    multihost_utils.broadcast_one_to_all."""
    _one_process("broadcast_one_to_all")
    return trace_trees.tree_map(lambda x: np.asarray(x), in_tree)


def sync_global_devices(name: str) -> None:
    """A barrier across processes named `name` (nothing to wait for with one)."""
    _one_process("sync_global_devices")


def process_allgather(in_tree, tiled: bool = False):
    """Each leaf gathered from every process as NumPy: stacked on a new leading axis of
    size process_count(), or concatenated along axis 0 when tiled."""
    _one_process("process_allgather")
    return trace_trees.tree_map(
        lambda x: np.asarray(x) if tiled else np.asarray(x)[None], in_tree)


def assert_equal(in_tree, fail_message: str = "") -> None:
    """Checks every process holds equal values (trivially true for one)."""
    _one_process("assert_equal")


def reached_preemption_sync_point(step_id: int) -> bool:
    """Whether a preemption notice asks this step to checkpoint: never without a
    distributed client, as in JAX (mjax has no preemption service)."""
    _one_process("reached_preemption_sync_point")
    return False


def host_local_array_to_global_array(local_inputs, global_mesh, pspecs):
    """Arrays each process holds its part of, as global arrays laid out by `pspecs` over
    `global_mesh` (one process: its part is the whole)."""
    _one_process("host_local_array_to_global_array")
    return _put(local_inputs, global_mesh, pspecs)


def global_array_to_host_local_array(global_inputs, global_mesh, pspecs):
    """The part of each global array this process holds (one process: all of it)."""
    _one_process("global_array_to_host_local_array")
    return _put(global_inputs, global_mesh, pspecs)


def _put(tree, mesh, pspecs):
    leaves, treedef = trace_trees.tree_flatten(tree)
    specs = tree_util.prefix_entries("pspecs", pspecs, tree,
                                     lambda p: p is None or isinstance(p, PartitionSpec))
    return tree_util.tree_unflatten(treedef, [
        device_put(x, NamedSharding(mesh, PartitionSpec() if s is None else s))
        for x, s in zip(leaves, specs)])


__all__ = ["assert_equal", "broadcast_one_to_all", "global_array_to_host_local_array",
           "host_local_array_to_global_array", "process_allgather",
           "reached_preemption_sync_point", "sync_global_devices"]
