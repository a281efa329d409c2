"""A compiled `jit` cache entry, and the copies of one the fast path runs.

`Jitted` (frontend/jit/jitted.py) keeps one `CacheEntry` per cache key: the executable, the
output structure and avals, the captured constants' buffers. The general path runs its
executable through mjax/arrays/dispatch.py; beside it, the fast path (`Jitted.__call__`, and
runtime/_fastpath.c, which reads the same named fields through their slots) runs an entry
whose `fast` is True: its `run` (jaxlib's execute) and result `handlers`. Calls whose
results are committed to a sharding (arguments committed to one device, or laid out over
a mesh) run a copy of the entry whose `commit` names each result's sharding
(`committed_entry`, `spmd_entry`). `CallMemo` and `KeyedMemo` are the fast path's
records of the last cache hit (`Jitted._memo`, `Jitted._kmemo`), read the same way.
"""
from __future__ import annotations

import copy

from mjax.arrays.placement import on_device
from mjax.runtime.host_call import host_call


class CallMemo:
    """`Jitted._memo`: the fast path's record of the last cache hit of a call without
    keyword or static arguments. `epoch`: the config epoch it holds under (a config change
    makes a new one); `tree`: the arguments' treedef (None: every positional argument is
    a leaf; jit_fast.KEYED: only `table` serves, for keyword/static calls); `avals`: the
    last call's, kept so the next call compares them by identity; `entry`: its CacheEntry;
    `table`: {(treedef, avals): entry} of the epoch's other calls; `structured`: whether
    the table holds calls other than flat ones (worth a flatten)."""
    __slots__ = ("epoch", "tree", "avals", "entry", "table", "structured")

    def __init__(self, epoch, tree, avals, entry, table, structured):
        self.epoch, self.tree, self.avals = epoch, tree, avals
        self.entry, self.table, self.structured = entry, table, structured


class KeyedMemo:
    """`Jitted._kmemo`: the last call with keyword or static arguments whose dynamic ones
    are all top-level arrays (jit_fast.keyed_memo). `nargs`: its number of positional
    arguments; `names`: its keyword names; `static`: the positions of the static values
    among the positional and keyword values, `static_values` those values; `dynamic`: the
    positions of the leaves; `avals`, `entry` as CallMemo's. A call with the same names,
    equal static values and the same avals takes `entry`."""
    __slots__ = ("epoch", "nargs", "names", "static", "static_values", "dynamic", "avals",
                 "entry")

    def __init__(self, epoch, nargs, names, static, static_values, dynamic, avals, entry):
        self.epoch, self.nargs, self.names, self.static = epoch, nargs, names, static
        self.static_values, self.dynamic, self.avals, self.entry = (static_values, dynamic,
                                                                    avals, entry)


class CacheEntry:
    __slots__ = ("executable", "out_tree", "out_avals", "const_bufs", "has_float0",
                 "out_shardings", "constraint_mesh", "constraint_site", "out_canonical",
                 "run", "handlers", "out_tuple", "refs", "fast", "commit", "donates",
                 "host_run")

    def __init__(self):
        # Set up front: reading an unset slot raises AttributeError inside getattr,
        # which cost a few microseconds on every cached call.
        self.constraint_mesh = self.constraint_site = None
        self.out_shardings = self.run = self.handlers = self.host_run = None
        # (True: the fast paths may run this entry: enable_fast_call; None: not)
        self.fast = None
        # (a fast path copy's: per result, the sharding it is committed to, or None)
        self.commit = None
        self.const_bufs = []
        self.out_tuple = self.donates = False   # (donates: the program consumes inputs)
        # Refs (mjax.ref) the program reads and writes: (leaf index or None, captured
        # Ref or None) per ref argument, in order; their final values follow the outputs.
        self.refs = ()

    def enable_fast_call(self, direct=None):
        """Precomputes the fast path's share (`Jitted.__call__`): jaxlib's execute and
        result handlers (`direct`, else those of a one-device XLA program), and whether
        the output is a flat tuple of arrays. Entries this does not apply to keep `run`
        None."""
        if direct is None:
            direct = getattr(self.executable, "direct_call", None)
            direct = direct() if direct is not None and self.constraint_mesh is None \
                else None
        if direct is None or self.has_float0 or self.refs:
            return
        if self.host_run is None and not self.donates:
            # (calls with NumPy arguments: runtime/host_call.py; copies share it)
            self.host_run = host_call(self.executable, direct)
        self.run, self.handlers = direct
        tree = self.out_canonical
        # (a tuple root whose every child is a leaf: one node more than leaves)
        self.out_tuple = (tree is not None and tree.node_data()[0] is tuple and
                          tree.num_leaves == tree.num_nodes - 1)
        self.fast = True


def committed_entry(entry, shardings: set, keyed: bool):
    """`entry` for calls with arguments committed to `shardings` (one device's memory):
    a copy whose results the fast path commits there, as the general path does; None
    where it does not apply (several devices, another device than the program's, outputs
    in other memories, keyword calls)."""
    if keyed or len(shardings) != 1 or entry.run is None or \
            getattr(entry.executable, "out_memory_kinds", None):
        return None
    (sharding,) = shardings
    if getattr(sharding, "_device", None) != entry.executable.devices[0] or \
            entry.out_tree is None:
        return None
    made = copy.copy(entry)
    made.commit = (sharding,) * len(entry.out_avals)
    # (a program compiled for another device than the first has its constants put on the
    # first: the general path moves them each call)
    made.const_bufs = on_device(entry.const_bufs, sharding._device)
    made.enable_fast_call((entry.run, entry.handlers))
    return made


def spmd_entry(entry, results, keyed: bool):
    """`entry` (a program over a mesh) for the fast path: a copy running its many-device
    executable directly and committing its results to `results` (per result: its
    sharding, or None for an uncommitted one); None where it does not apply (keyword
    calls, refs, float0 or host-memory outputs, arrays of several layouts, results XLA
    left on one device)."""
    call = getattr(entry.executable, "sharded_call", None)
    call = call() if call is not None else None
    if keyed or call is None or results is None or entry.out_tree is None or entry.refs:
        return None
    made = copy.copy(entry)
    made.commit = tuple(results)
    made.enable_fast_call(call)
    return made if made.run is not None else None


__all__ = ["CacheEntry", "committed_entry", "spmd_entry"]
