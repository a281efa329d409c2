"""`jit`: a function traced once per argument types (and static arguments, and the
config that changes tracing), compiled with XLA (or IREE) and cached; a call with the
arguments of the last one takes a fast path straight to jaxlib's execute. Stages
(`.trace`, `.lower`) are in stages.py, the many-device path in spmd/jit.py."""
from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import threading
import time
import types
import warnings

import numpy as np

from mjax.specs import layout as layout_api
from mjax.jaxpr import dump as jaxpr_dump
from mjax.jit import traces as jit_traces, nested_traces
from mjax.tracing import registration
from mjax.base import trace_trees, tree_util
from mjax.arrays.array import Array, raise_if_deleted_by_user
from mjax.config import config
from mjax.tracing.core import _state as _trace_state
from mjax.tracing.core import aval_of_value, bind, current_trace
from mjax.dialect.types import RefAval
from mjax.specs.dtypes import hitype_rules, to_numpy
from mjax.tracing.hijax_lowering import jit_dispatch, lo_call, trace_dispatch
from mjax.arrays.eager import (DEOPTIMIZED, hashable, locate_nonfinite, nonfinite_kind,
                               rerun_announced)
from mjax.jit.arguments import jit_arguments
from mjax.jit.caches import ALL_JITTED, CLEARERS, deleted_on_first_call, share_cache
from mjax.jit.fast import FAST_TREES as _FAST_TREES, KEYED as _KEYED, keyed_memo
from mjax.jit.fast import OTHER_TREE as _OTHER_TREE, host_bufs as _host_bufs
from mjax.jit.fast import install as _install_fast_path, static_key as _static_key
from mjax.jit.fast import fast_entry, host_key as _host_key, override_epoch
from mjax.jit.entry import CacheEntry as _CacheEntry, CallMemo as _CallMemo
from mjax.base.traceback_util import api_boundary
from mjax.jit.refs import check_ref_args, ref_aliases, ref_slots
from mjax.jit.cache_miss_log import describer
from mjax.arrays.dispatch import execute
from mjax.specs.float0 import restore_float0
from mjax.tracing.lowering import (compile_printed, finishing_passes, lower_to_stablehlo,
                                   refuse_symbolic)
from mjax.specs import memory_kinds
from mjax.passes.user_passes import PassList, pass_list
from mjax.arrays.placement import (commit_tree, committed_device, default_device, device_buffer,
                                   on_device)
from mjax.runtime import get_backend
from mjax.runtime.xla import xla_compile_options
from mjax.specs.sharding_impls import NamedSharding, P, current_mesh
from mjax.tracing.source_info import at_user_line, wraps
from mjax.spmd import jit as spmd
from mjax.jit.stages import Traced, placement_of
from mjax.tracing.staging import TracedFunction, eval_shape
from mjax.lax.unreduced import apply_unreduced, is_unreduced, keep_reduced

# JAX logs compilations from its dispatch/pxla modules; mjax from this one, under the
# name it has always had ('mjax.api', which eager ops share).
logger = logging.getLogger("mjax.api")


# ---- jit ------------------------------------------------------------------------------
@_install_fast_path
class Jitted:
    """`mjax.jit(f)`: call it, or stage it with `.trace(...)` / `.lower(...)`."""

    def __getattr__(self, name):
        # (names the object lacks) the function's own attributes, as JAX's jit copies
        # fun.__dict__ onto its wrapper: jit(module).field reads the module's field
        fun = self.__dict__.get("fun")
        attributes = getattr(fun, "__dict__", None)
        if isinstance(attributes, dict) and name in attributes and not name.startswith("__"):
            return attributes[name]
        if isinstance(fun, Jitted) and not name.startswith("_"):
            return getattr(fun, name)      # (jit of a jit: the inner one's)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __repr__(self):     # (as JAX's: <PjitFunction of <function f at 0x...>>)
        return f"<PjitFunction of {self.fun!r}>"

    # (as JAX's: the function's own, also for inspect.signature(follow_wrapped=False))
    __signature__ = property(lambda self: inspect.signature(self.fun))

    def __init__(self, fun, static_argnums=None, static_argnames=None, donate_argnums=(),
                 donate_argnames=(), keep_unused=False, device=None, backend=None,
                 inline=False, in_shardings=None, out_shardings=None, compiler_options=None,
                 passes=()):
        self._device = getattr(device, "_device", device)
        if self._device is not None and (in_shardings is not None or
                                         out_shardings is not None):
            raise ValueError("If device is specified, jit cannot take in_shardings or "
                             "out_shardings")
        self._compiler_options = dict(compiler_options or {})
        # Users' passes for this function (docs/passes.md), after mjax_extra_passes'.
        self._passes = pass_list(passes)
        if backend is not None and not str(backend).lower().startswith("iree") and \
                backend not in ("cpu", get_backend().platform):
            raise NotImplementedError(f"jit(backend={backend!r}): this process uses the "
                                      f"'{get_backend().platform}' XLA backend (set "
                                      f"MJAX_PLATFORM before the first use); 'iree' is "
                                      f"the other backend")
        # None: the process default (XLA, or IREE with MJAX_BACKEND=iree).
        self._backend = str(backend).lower() if backend is not None else None
        # Formats given as shardings: their layouts apart (mjax/specs/layout.py; None: none).
        in_shardings, out_shardings, self._layouts, device = \
            layout_api.split_jit_formats(in_shardings, out_shardings)
        self._device = device or self._device
        if self._device is None and self._backend is not None and in_shardings is None \
                and out_shardings is None and self._backend in ("cpu", get_backend().platform):
            # (as JAX's: the backend's first device, where the results are committed, as
            # under jit(device=...), whatever device committed arguments are on; the host
            # CPU beside an accelerator too, whose results uncommitted the default
            # platform's ops would take for its own buffers)
            self._device = get_backend(self._backend).devices()[0]
        # Pytree prefixes of shardings (None: unconstrained); see frontend/spmd.py. A
        # prefix of Nones alone (flax's nnx.jit passes `(None, None)`) constrains nothing,
        # as in JAX: such a jit is one without shardings, and takes the fast path.
        self._in_shardings, self._out_shardings = (
            s if s is not None and tree_util.tree_leaves(s) else None
            for s in (in_shardings, out_shardings))
        self.fun = fun
        # updated=(): copying fun.__dict__ would overwrite our own attributes when fun
        # is itself a Jitted (or carries a __dict__ from functools.wraps).
        wraps(fun)(self)
        (self.static_argnums, self.static_argnames, self.donate_argnums,
         self.donate_argnames) = jit_arguments(fun, static_argnums, static_argnames,
                                               donate_argnums, donate_argnames)
        self._cache: dict = {}
        self._nested: dict = {}   # traces made under other traces (mjax/jit/nested_traces.py)
        ALL_JITTED.add(self)
        self._memo = None    # (the fast path's last cache hit, a CallMemo: __call__)
        self._kmemo = None   # (the last call with keyword/static arguments: _call_keyed)
        # Calls without shardings can take the fast path; those with keyword or static
        # arguments its keyed form (see _call_keyed).
        self._fast_ok = not (self._in_shardings is not None or
                             self._out_shardings is not None or
                             self._device is not None or self._compiler_options or
                             self._layouts is not None)
        self._has_static = bool(self.static_argnums or self.static_argnames)
        # Re-entrant: tracing may run user code that calls this function again.
        self._fill_lock = threading.RLock()
        self._name = getattr(fun, "__name__", "fun")

    # -- argument handling -------------------------------------------------------------
    def _split(self, args, kwargs):
        """Separates static arguments (part of the cache key) from dynamic ones."""
        if not kwargs and not self.static_argnums:
            return args, {}, ()  # the common case, kept cheap: it is on every call
        n = len(args)
        static = tuple((i, _static_key(args[i])) for i in self.static_argnums if i < n)
        dyn_args = tuple(a for i, a in enumerate(args) if i not in self.static_argnums)
        static_kw = tuple(sorted((k, _static_key(v)) for k, v in kwargs.items()
                                 if k in self.static_argnames))
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return dyn_args, dyn_kwargs, static + static_kw

    def _bind_static(self, static_key, n_args):
        static_pos = {i: v for i, v in static_key if isinstance(i, int)}
        static_kw = {k: v for k, v in static_key if isinstance(k, str)}

        def call(*dyn_args, **dyn_kwargs):
            it = iter(dyn_args)
            full = [static_pos[i] if i in static_pos else next(it)
                    for i in range(n_args)]
            return self.fun(*full, *it, **dyn_kwargs, **static_kw)
        return call

    # -- the call path ---------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        # The fast path: a call whose positional arguments are mjax.Arrays on their own
        # device (in tuples, lists, dicts, namedtuples), made with the config of the last
        # cache hit (`_memo`), no mesh context and no trace, goes from the leaves straight
        # to jaxlib's execute. `config._trace_key` is the epoch: a new object after every
        # config.update, so a memo made before one never matches (under this thread's
        # config overrides, config.trace_state()'s object). A call like the last one (same
        # structure, avals) compares the aval tuple by identity first (the memo keeps the
        # last call's avals), so it neither hashes avals nor runs ShapedArray.__eq__;
        # other structures/avals seen under the same epoch are found in the memo's table.
        memo = self._memo
        if memo is not None and not _trace_state.stack and (
                memo.epoch is config._trace_key if not config._overriding
                else memo.epoch is override_epoch()):
            if kwargs or self._has_static:
                return self._call_keyed(args, kwargs, memo.table, memo.epoch)
            tree = memo.tree
            if tree is None:         # the memo's arguments are all leaves: no flattening
                leaves = args
            else:
                try:
                    leaves, tree = _FAST_TREES.flatten(args)
                except Exception:   # noqa: BLE001 - e.g. unsortable dict keys
                    leaves = _OTHER_TREE
            avals = tuple([x.aval if type(x) is Array and x._sharding is None
                           else _host_key(x) for x in leaves])
            if avals == memo.avals and tree == memo.tree:
                memo.avals = avals
                entry = memo.entry
            else:
                table = memo.table
                entry = table.get((tree, avals))
                if entry is None and tree is None and memo.structured:
                    # Not all Arrays: the table knows other structures by treedef.
                    try:
                        leaves, tree = _FAST_TREES.flatten(args)
                    except Exception:   # noqa: BLE001 - e.g. unsortable dict keys
                        leaves = _OTHER_TREE
                    avals = tuple([x.aval if type(x) is Array and x._sharding is None
                                   else _host_key(x) for x in leaves])
                    entry = table.get((tree, avals))
                if entry is not None:
                    if tree is not None and tree.num_leaves == len(args) == \
                            tree.num_nodes - 1:
                        tree = None           # a flat call: the next one needs no flatten
                    self._memo = _CallMemo(memo.epoch, tree, avals, entry, table,
                                           memo.structured)
            if entry is not None:
                try:
                    bufs = [x._buf for x in leaves]
                except AttributeError:   # (NumPy arrays among them)
                    bufs = _host_bufs(leaves, avals, entry, self._backend)
                if entry.const_bufs:
                    bufs += entry.const_bufs
                try:
                    results = entry.run(bufs)
                except Exception:    # noqa: BLE001 - the general path explains the error
                    raise_if_deleted_by_user(leaves)   # (or places the call elsewhere)
                    return self._call(args, kwargs)
                else:
                    outs = results.consume_with_handlers(entry.handlers)
                if entry.commit is not None:    # (committed results: jit/entry.py)
                    return entry.out_tree.unflatten(list(map(Array, outs, entry.out_avals,
                                                             entry.commit)))
                if entry.out_canonical is None:
                    return Array(outs[0], entry.out_avals[0])
                if entry.out_tuple:
                    return tuple(map(Array, outs, entry.out_avals))
                return entry.out_canonical.unflatten(list(map(Array, outs, entry.out_avals)))
        return self._call(args, kwargs)

    def _after_fast_error(self, args, kwargs, leaves):
        """The C fast path's execution failed (jit/fast.py): explain it, or run elsewhere."""
        raise_if_deleted_by_user(leaves)
        return self._call(args, kwargs)

    __call__ = api_boundary(__call__)   # (errors reach the user without mjax's frames)

    def _call_keyed(self, args, kwargs, table, epoch):
        """The fast path of a call with keyword or static arguments: a call like the last
        such call (`_kmemo`: keyword names, static values, avals) takes its entry; others
        are found in the memo's table by (structure of the dynamic arguments, their avals,
        the static arguments), hashed as the general cache key hashes them."""
        entry, km = None, self._kmemo
        try:
            if km is not None and km.epoch is epoch and km.nargs == len(args) and \
                    km.names == tuple(kwargs):
                full = args + tuple(kwargs.values()) if kwargs else args
                if tuple([full[i] for i in km.static]) == km.static_values:
                    leaves = [full[i] for i in km.dynamic]
                    avals = tuple([x.aval if type(x) is Array and x._sharding is None
                                   else _host_key(x) for x in leaves])
                    if avals == km.avals:
                        entry = km.entry
            if entry is None:
                dyn_args, dyn_kwargs, static_key = self._split(args, kwargs)
                leaves, tree = _FAST_TREES.flatten((dyn_args, dyn_kwargs))
                avals = tuple([x.aval if type(x) is Array and x._sharding is None
                               else _host_key(x) for x in leaves])
                entry = table.get((_KEYED, tree, avals, static_key))
        except Exception:   # noqa: BLE001 - unhashable statics, unsortable keys: explained there
            entry = None
        if entry is None:
            return self._call(args, kwargs)
        # (The same steps as the end of __call__'s fast path, written out in both: a shared
        # helper is one more Python call on the hottest path.)
        try:
            bufs = [x._buf for x in leaves]
        except AttributeError:   # (NumPy arrays among them)
            bufs = _host_bufs(leaves, avals, entry, self._backend)
        if entry.const_bufs:
            bufs += entry.const_bufs
        try:
            results = entry.run(bufs)
        except Exception:    # noqa: BLE001 - the general path explains the error
            raise_if_deleted_by_user(leaves)   # (or places the call elsewhere)
            return self._call(args, kwargs)
        else:
            outs = results.consume_with_handlers(entry.handlers)
        if entry.out_canonical is None:
            return Array(outs[0], entry.out_avals[0])
        if entry.out_tuple:
            return tuple(map(Array, outs, entry.out_avals))
        return entry.out_canonical.unflatten(list(map(Array, outs, entry.out_avals)))

    def _remember(self, args, leaves, entry, state, dyn=None, static_key=(), kwargs=None,
                  over=None):
        """Makes `entry` the fast path's memo when this call qualifies (see __call__):
        `leaves` are the arguments' leaves (tree_flatten's), `state` is the
        config.trace_state() the entry was looked up with; `over`: (the shardings the
        leaves were laid out as, the mesh) of a program over a mesh."""
        if not self._fast_ok or _trace_state.stack:
            return
        # (`state` must be a fresh object per epoch: an empty tuple is a singleton.)
        if not config._overriding:
            if not state or state is not config._trace_key:
                return
        elif state is not config.trace_state() or (state := override_epoch()) is None:
            return
        keyed = dyn is not None    # a call with keyword or static arguments
        found = fast_entry(entry, leaves, dyn if keyed else args, keyed, over)
        if found is None:
            return
        entry, tree, avals = found
        memo = self._memo
        if keyed:
            self._kmemo = keyed_memo(state, args, kwargs, self.static_argnums,
                                     self.static_argnames, leaves, avals, entry)
            # The table serves other such calls; the memo's last-call fields stay.
            if memo is not None and memo.epoch is state:
                memo.table[_KEYED, tree, avals, static_key] = entry
            else:
                self._memo = _CallMemo(state, _KEYED, (), None,
                                       {(_KEYED, tree, avals, static_key): entry}, False)
            return
        # The table: (structure, avals) -> entry for this epoch (no larger than the
        # cache); a flat call is there under its treedef and under None.
        same_epoch = memo is not None and memo.epoch is state
        table = memo.table if same_epoch else {}
        table[tree, avals] = entry
        if len(args) == len(leaves) and all(a is x for a, x in zip(args, leaves)):
            tree = None     # (each argument its own leaf: Arrays, NumPy arrays, scalars)
            table[None, avals] = entry
        # Whether the table has other structures than flat calls (worth a flatten).
        structured = tree is not None or (same_epoch and memo.structured)
        self._memo = _CallMemo(state, tree, avals, entry, table, structured)

    def _call(self, args, kwargs, found=None):
        """The general path of a call: every case (tracing, static and donated arguments,
        shardings, config context managers, non-Array arguments). `found`: a list the
        cache entry run is appended to (_call_on's)."""
        if config.read("jax_disable_jit") or _trace_state.user is not None:
            return registration.UNSTAGED_JIT_CALL(self, args, kwargs)   # (user_traces.py)
        if hitype_rules and not lo_call(self):    # (hijax values: mjax/hijax_lowering)
            return jit_dispatch(self, Jitted, args, kwargs, found)
        if self._device is not None and config.read("jax_default_device") is not self._device:
            return self._call_on(self._device, args, kwargs)   # (jit(device=d))
        dyn_args, dyn_kwargs, static_key = self._split(args, kwargs)
        leaves, in_tree = trace_trees.tree_flatten((dyn_args, dyn_kwargs))
        outer = current_trace()
        if outer is not None:
            # Nested jit
            if self._passes:
                _warn_passes_not_run(self._name)
            if any(getattr(type(x), "_inline_in_jit", False) for x in leaves):
                # (Pallas kernel refs, no values: inline, as JAX's Mosaic lowers a jit)
                return self._bind_static(static_key, len(args))(*dyn_args, **dyn_kwargs)
            # (a call of a private function of the enclosing module, inlined before
            # lowering; traced the first time these argument types come)
            kept, key = jit_traces.nested(self, in_tree, leaves, static_key)
            return nested_traces.call(kept, self._bind_static(static_key, len(args)),
                                      self._name, outer, dyn_args, dyn_kwargs, key, leaves)
        if config.read("jax_no_execution"):
            raise RuntimeError(f"JAX tried to execute function {self._name}, but the "
                               f"no_execution config option is set")
        # (A list comprehension, and an Array's aval read directly: this is per call.)
        avals = tuple([x.aval if type(x) is Array else aval_of_value(x) for x in leaves])
        donated = self._donated_leaves(args, dyn_kwargs) if (
            self.donate_argnums or self.donate_argnames) else None
        if self._layouts is not None:
            layout_api.check_jit_args(self._layouts, dyn_args, leaves)
        if spmd.wants_spmd(self, leaves):
            return self._call_spmd(args, dyn_args, dyn_kwargs, static_key, leaves, in_tree,
                                   avals, donated)
        state = config.trace_state()
        key = (in_tree, avals, static_key, state, donated, current_mesh(),
               memory_kinds.host_kinds(leaves))
        entry = self._cache.get(key)   # the hit path takes no lock
        if entry is None or donated is not None:
            # (after compiling, as JAX: an unusable donation warns first)
            filled = entry is None
            entry = entry or self._fill(key, dyn_args, dyn_kwargs, static_key, len(args),
                                        donated, flat=(leaves, in_tree, avals))
            try:
                deleted_on_first_call(self, key, leaves)
            except RuntimeError:
                if filled:    # (a failed first call caches nothing in JAX: the next call
                    self._cache.pop(key, None)      # is a first call again)
                raise
        if found is not None:
            found.append(entry)
        if entry.run is not None:
            if kwargs or self._has_static:
                self._remember(args, leaves, entry, state, (dyn_args, dyn_kwargs),
                               static_key, kwargs)
            else:
                self._remember(args, leaves, entry, state)
        if entry.constraint_mesh is not None:
            mesh = entry.constraint_mesh
            spmd.check_committed_on(leaves, mesh, entry.constraint_site,
                                    describer(self.fun, self._name, in_tree, static_key))
            shardings = spmd.replicated_over(mesh, leaves)
            if not (kwargs or self._has_static):
                self._remember(args, leaves, entry, state, over=(shardings, mesh))
            return self._run_spmd(entry, leaves, avals, mesh, shardings)
        committed = None
        if config.read("jax_default_device") is None:
            # (arguments committed to a device: run there, results committed, as JAX)
            committed = committed_device(leaves, describer(self.fun, self._name, in_tree,
                                                           static_key))
            if committed is not None and committed != entry.executable.devices[0]:
                return self._call_on(committed, args, kwargs)
        if entry.refs:
            check_ref_args(self.fun, args, kwargs, leaves,
                           [c for i, c in entry.refs if i is None])
            return self._run_with_refs(entry, leaves, avals)
        bufs = [x._buf if type(x) is Array else device_buffer(x, a, self._backend)
                for x, a in zip(leaves, avals)]
        if entry.const_bufs:
            bufs += entry.const_bufs
        if config.read("jax_default_device") is not None:
            bufs = on_device(bufs, entry.executable.devices[0])
        outs = execute(entry.executable, bufs, None, leaves)
        if committed is not None:
            return commit_tree(self._results(entry, outs, args, kwargs))
        return self._results(entry, outs, args, kwargs)

    def _run_with_refs(self, entry, leaves, avals):
        """A call of a program over refs: each Ref's current value goes in, its final
        value (after the outputs) is written back into it."""
        values = [x._buffer_value() if type(a) is RefAval else x
                  for x, a in zip(leaves, avals)]
        bufs = [v._buf if type(v) is Array else
                get_backend(self._backend).put(np.asarray(v, dtype=a.dtype))
                for v, a in zip(values, avals)]
        refs = [leaves[i] if i is not None else c for i, c in entry.refs]
        captured = iter(c for i, c in entry.refs if i is None)
        bufs += [b if b is not None else next(captured)._buffer_value()._buf
                 for b in entry.const_bufs]
        outs = execute(entry.executable, bufs, None, leaves)
        n = len(entry.out_avals)
        for ref, buf in zip(refs, outs[n:]):
            ref._write_back(buf)
        return self._results(entry, outs[:n], (), {})

    def _results(self, entry, outs, args, kwargs):
        # out_canonical: the output treedef, None for one bare array.
        if getattr(entry.executable, "out_memory_kinds", None):   # (in host memory)
            result = entry.out_tree.unflatten([Array(b, a, s) for b, a, s in zip(
                outs, entry.out_avals, memory_kinds.result_shardings(entry.executable))])
        elif entry.out_canonical is None:      # a function returning one array
            result = Array(outs[0], entry.out_avals[0])
        else:
            result = entry.out_canonical.unflatten(
                [Array(b, a) for b, a in zip(outs, entry.out_avals)])
        if getattr(entry.executable, "custom_layouts", False):
            layout_api.mark_laid_out(trace_trees.tree_leaves(result))
        if config.read("jax_debug_nans") or config.read("jax_debug_infs"):
            self._debug_floats(result, args, kwargs)
        return restore_float0(result) if entry.has_float0 else result

    def _call_on(self, device, args, kwargs):
        """The call run with `device` as the default device; its results committed there.
        Positional calls of arrays committed there take the fast path next: the entry
        compiled for that device, made the memo under the caller's epoch."""
        state, found = config.trace_state(), []
        with config.override(jax_default_device=device):
            result = self._call(args, kwargs, found)
        if found and not (kwargs or self._has_static) and self._device is None:
            self._remember(args, trace_trees.tree_leaves(args), found[0], state)
        return commit_tree(result)

    def _call_spmd(self, args, dyn_args, dyn_kwargs, static_key, leaves, in_tree, avals,
                   donated):
        """A call compiled for a mesh (frontend/spmd.py)."""
        shardings, mesh = spmd.in_shardings_for(self, dyn_args, leaves, in_tree)
        key = ("spmd", in_tree, avals, static_key, config.trace_state(), donated, shardings,
               memory_kinds.host_kinds(leaves))
        entry = self._cache.get(key)
        if entry is None:
            entry = self._fill(key, dyn_args, dyn_kwargs, static_key, len(args), donated,
                               (shardings, mesh), flat=(leaves, in_tree, avals))
        if not (dyn_kwargs or static_key):     # (the fast path takes positional calls)
            self._remember(args, leaves, entry, key[4], over=(shardings, mesh))
        return self._run_spmd(entry, leaves, avals, mesh, shardings)

    def _fill(self, key, dyn_args, dyn_kwargs, static_key, n_args, donated,
              mesh_layout=None, flat=None) -> _CacheEntry:
        """Compiles the entry for `key` once, however many threads miss on it together:
        the others wait for it (hits never take the lock). `flat`: the call's (leaves,
        treedef, avals), flattened once by the caller (None: flattened here)."""
        with self._fill_lock:
            entry = self._cache.get(key)
            if entry is None:
                entry = self._compile(dyn_args, dyn_kwargs, static_key, n_args, donated,
                                      mesh_layout, flat)
                self._cache[key] = entry
            return entry

    def _run_spmd(self, entry, leaves, avals, mesh, shardings):
        replicated = NamedSharding(mesh, P())
        bufs = [spmd.put_for(x._buffer_value() if type(a) is RefAval else x, a, s)
                for x, a, s in zip(leaves, avals, shardings)]
        captured = iter(c for i, c in entry.refs if i is None)
        bufs += [b if b is not None else spmd.put_for(
                     v := next(captured)._buffer_value(), v.aval, replicated)
                 for b in entry.const_bufs]
        outs = execute(entry.executable, bufs, None, leaves)
        n = len(entry.out_avals)
        if entry.refs:      # (each ref's final value, after the outputs, written back)
            # (a Ref argument keeps the layout it came in; a captured one is replicated)
            for (i, c), buf in zip(entry.refs, outs[n:]):
                if i is not None:
                    leaves[i]._write_back(buf, shardings[i])
                else:
                    c._write_back(buf, replicated)
            outs = outs[:n]
        arrays = spmd.wrap_outputs(outs, entry.out_avals, entry.out_shardings,
                                   entry.executable, mesh,
                                   any(getattr(x, "_committed", False) for x in leaves))
        result = tree_util.tree_unflatten(entry.out_tree, arrays)
        return restore_float0(result) if entry.has_float0 else result

    def _debug_floats(self, result, args, kwargs):
        """jax_debug_nans/infs: a NaN/inf output re-runs the function op by op, where the
        eager check names the primitive and the user's line (JAX re-runs the
        de-optimized function the same way)."""
        kind = next((k for leaf in trace_trees.tree_leaves(result)
                     if (k := nonfinite_kind(leaf)) is not None), None)
        if kind is None:
            return
        print(DEOPTIMIZED)
        try:
            # (as JAX: the Python function again, its ops eager; jits inside it check
            # their own outputs, announcing themselves the same way)
            with rerun_announced(self.fun):
                self.fun(*args, **kwargs)
            why = "re-running it op by op did not reproduce it"
        except (FloatingPointError, ZeroDivisionError):
            raise   # (JAX: e.g. Python float division in the de-optimized run)
        except Exception:  # noqa: BLE001 - grad/vmap bodies cannot run op by op in Python
            dyn_args, dyn_kwargs, static_key = self._split(args, kwargs)
            traced = self._trace(dyn_args, dyn_kwargs, static_key, len(args))
            leaves = trace_trees.tree_leaves((dyn_args, dyn_kwargs))
            locate_nonfinite(traced.module, [*leaves, *traced.captured])  # raises if found
            why = "the transformed function cannot be re-run op by op to find the primitive"
        # (JAX's message starts with the same tuple)
        raise FloatingPointError(at_user_line(
            f"{(f'jit({self._name})', kind)}. Because jax_debug_nans and/or jax_debug_infs "
            f"is set, the function was called de-optimized (as without jit) to find the "
            f"operation making the invalid value, but {why}: jit's optimizations, or nan/inf "
            f"constants among the inputs or outputs, can cause this"))

    def _donated_leaves(self, args, dyn_kwargs) -> tuple[bool, ...]:
        """Per flattened dynamic leaf: is it donated (donate_argnums/donate_argnames)?"""
        flags = []
        for i, a in enumerate(args):
            if i not in self.static_argnums:
                flags += [i in self.donate_argnums] * len(trace_trees.tree_leaves(a))
        for k, v in dyn_kwargs.items():
            flags += [k in self.donate_argnames] * len(trace_trees.tree_leaves(v))
        return tuple(flags)

    def _memory_kinds(self, arguments, in_shardings, traced) -> tuple:
        """(argument memory kinds, result memory kinds out_shardings gave) of a call
        whose dynamic arguments are `arguments` (a pytree; its leaves, a list):
        mjax/specs/memory_kinds.py."""
        if not memory_kinds.in_use():
            return (), ()
        leaves = arguments if isinstance(arguments, list) else trace_trees.tree_leaves(
            arguments)
        outs = [None] * len(traced.out_avals) if self._out_shardings is None else \
            spmd.flat_shardings(self._out_shardings, tree_util.tree_unflatten(
                traced.out_tree, traced.out_avals), "out_shardings")
        # (the kinds jit's own in_shardings give; a committed array's; none for others)
        given = in_shardings if self._in_shardings is not None else None
        eager = self in _SHARDED_CACHE.values()   # (an eager op: operands meet its memory)
        kinds = memory_kinds.argument_kinds(leaves, given, memory_kinds.ANY if eager else None)
        memory_kinds.check_traced(traced.module, kinds)   # (JAX's errors, as it traces)
        return kinds, [getattr(s, "memory_kind", None) for s in outs]

    def _user_passes(self) -> PassList:
        """mjax_extra_passes (with `mjax.passes.extra`'s), then jit(passes=)'s."""
        return config.read("mjax_extra_passes") + self._passes

    def _trace(self, dyn_args, dyn_kwargs, static_key, n_args, flat=None) -> TracedFunction:
        return jit_traces.trace(self, dyn_args, dyn_kwargs, static_key, n_args, flat)

    def _compile(self, dyn_args, dyn_kwargs, static_key, n_args,
                 donated=None, mesh_layout=None, flat=None) -> _CacheEntry:
        level = logging.WARNING if config.read("jax_log_compiles") else logging.DEBUG
        start = time.perf_counter()
        traced = self._trace(dyn_args, dyn_kwargs, static_key, n_args, flat)
        refuse_symbolic(traced.in_avals, f"jit({self._name})")
        logger.log(level, "Finished tracing %s for jit in %.9f sec", self._name,
                   time.perf_counter() - start)
        logger.log(level, "Compiling jit(%s) with global shapes and types %s.", self._name,
                   tuple(traced.in_avals))
        jaxpr_dump.maybe_dump(traced, self._name)     # (jax_dump_ir_modes' jaxpr files)
        start = time.perf_counter()
        entry = _CacheEntry()
        entry.out_tree = traced.out_tree
        # None: the output is one bare array (no treedef to rebuild on each call).
        entry.out_canonical = (None if traced.out_tree.num_nodes == 1 and
                               traced.out_tree.num_leaves == 1
                               else traced.out_tree)
        entry.has_float0, entry.out_avals = traced.has_float0, traced.out_avals
        entry.donates = donated is not None and any(donated)
        if mesh_layout is None:
            # Sharding constraints inside an unsharded call: compile for their mesh.
            mesh = spmd.constraint_mesh(traced.module)
            if mesh is not None:
                entry.constraint_mesh = mesh
                entry.constraint_site = spmd.first_constraint_site(traced.module, mesh)
                mesh_layout = (spmd.replicated_over(mesh, traced.in_avals), mesh)
        if mesh_layout is not None:
            leaves = trace_trees.tree_leaves((dyn_args, dyn_kwargs))
            spmd.check_constraint_devices(traced.module, mesh_layout[1], leaves, describer(
                self.fun, self._name, traced.in_tree, static_key))
            return self._compile_spmd(traced, entry, donated, *mesh_layout, leaves)
        out_avals = traced.out_avals + ref_slots(entry, traced, self.fun)
        kinds = self._memory_kinds(flat[0] if flat is not None else (dyn_args, dyn_kwargs),
                                   None, traced)   # (before lowering)
        devs = None if config.read("jax_default_device") is None else [default_device()]
        backend_name = self._backend_for(devs)
        backend = get_backend(backend_name)
        finishing = finishing_passes(backend, layout_api.layout_modes_pass(
            self._layouts, traced), memory_kinds.memory_kinds_pass(*kinds, backend.platform))
        printed = lower_to_stablehlo(traced.module, donated=donated, out_avals=out_avals,
                                     user_passes=self._user_passes(),
                                     aliases=ref_aliases(entry, traced),
                                     backend=backend_name, finishing=finishing)
        entry.executable = compile_printed(printed, backend, devs, out_avals=out_avals,
                                           options=xla_compile_options(
                                               self._compiler_options))
        logger.log(level, "Finished XLA compilation of jit(%s) in %.9f sec", self._name,
                   time.perf_counter() - start)
        entry.const_bufs = [c._buf if isinstance(c, Array) else
                            None if type(aval_of_value(c)) is RefAval else  # (per call)
                            backend.put(to_numpy(c))
                            for c in traced.captured]
        entry.enable_fast_call()
        return entry

    def _backend_for(self, devs) -> str | None:
        """The backend that compiles a call placed on `devs` (jax_default_device's): the
        jit's own, unless the device is another platform's (the host CPU beside an
        accelerator, by jit(device=), committed operands or a mesh of its devices), whose
        backend compiles and runs it, as in JAX."""
        platform = getattr(devs[0], "platform", None) if devs else None
        if platform is not None and platform != get_backend(self._backend).platform:
            return platform
        return self._backend

    def _compile_spmd(self, traced, entry, donated, in_shardings, mesh,
                      leaves=()) -> _CacheEntry:
        replicated = NamedSharding(mesh, P())
        out_example = tree_util.tree_unflatten(traced.out_tree, traced.out_avals)
        entry.out_shardings = spmd.typed_out_shardings(
            spmd.flat_shardings(self._out_shardings, out_example, "out_shardings")
            if self._out_shardings is not None else [None] * len(traced.out_avals),
            traced, mesh)
        all_in = list(in_shardings) + [replicated] * len(traced.captured)
        # (the refs' final values follow the outputs, as in _compile: a Ref argument's
        # laid out as it came in, a captured Ref's replicated)
        ref_avals = ref_slots(entry, traced, self.fun)
        out_avals = traced.out_avals + ref_avals
        ref_outs = [in_shardings[i] if i is not None else replicated for i, _ in entry.refs]
        backend = get_backend(backend_name := self._backend_for(list(mesh.devices.flat[:1])))
        finishing = finishing_passes(backend, layout_api.layout_modes_pass(
            self._layouts, traced), memory_kinds.memory_kinds_pass(
                *self._memory_kinds(list(leaves), in_shardings, traced), backend.platform))
        printed = spmd.lower(traced.module, all_in, list(entry.out_shardings) + ref_outs,
                             out_avals, mesh, donated, user_passes=self._user_passes(),
                             finishing=finishing, backend=backend_name)
        entry.executable = compile_printed(
            printed, backend, list(mesh.devices.flat), num_partitions=mesh.size,
            out_avals=out_avals, options=xla_compile_options(self._compiler_options))
        entry.const_bufs = [None if type(aval_of_value(c)) is RefAval else  # (per call)
                            spmd.put_for(c, aval_of_value(c), replicated)
                            for c in traced.captured]
        return entry

    # -- stages ----------------------------------------------------------------------------
    def trace(self, *args, **kwargs):
        if hitype_rules and not lo_call(self):    # (hijax values: mjax/hijax_lowering)
            return trace_dispatch(self, Jitted, args, kwargs)
        dyn_args, dyn_kwargs, static_key = self._split(args, kwargs)
        traced = self._trace(dyn_args, dyn_kwargs, static_key, len(args))
        leaves = trace_trees.tree_leaves((dyn_args, dyn_kwargs))
        layout = None
        if spmd.wants_spmd(self, leaves):
            shardings, mesh = spmd.in_shardings_for(self, dyn_args, leaves)
            out_example = tree_util.tree_unflatten(traced.out_tree, traced.out_avals)
            outs = (spmd.flat_shardings(self._out_shardings, out_example, "out_shardings")
                    if self._out_shardings is not None else [None] * len(traced.out_avals))
            outs = spmd.typed_out_shardings(outs, traced, mesh)
            layout = (list(shardings) + [NamedSharding(mesh, P())] * len(traced.captured),
                      outs, mesh)
        elif (mesh := spmd.constraint_mesh(traced.module)) is not None:
            layout = (spmd.replicated_over(mesh, list(traced.in_avals) + traced.captured),
                      spmd.typed_out_shardings([None] * len(traced.out_avals), traced, mesh),
                      mesh)
        donation = (tuple(self.donate_argnums), self._donated_leaves(args, dyn_kwargs))
        stage = Traced(traced, self._name, layout, self._user_passes(), donation)
        if layout is None:    # (one device: where it lowers, compiles and runs)
            stage._place = lambda: placement_of(self, leaves, traced, static_key)
        stage._layouts = self._layouts   # (Formats given: mjax/specs/layout.py)
        stage._retrace = lambda: self.trace(*args, **kwargs)   # (lowering_platforms=)
        stage._memory_kinds = self._memory_kinds(
            leaves, layout[0][:len(leaves)] if layout else None, traced)
        if self._layouts is not None:    # (the names its layout errors use)
            traced.arg_names = layout_api.arg_names(self.fun, traced.in_tree,
                                                    bool(self.static_argnums))
        return stage

    def lower(self, *args, **kwargs):
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        return eval_shape(self.fun, *args, **kwargs)

    def clear_cache(self):
        self._memo = self._kmemo = None
        self._cache.clear()
        self._nested.clear()
        jit_traces.forget(self.fun)       # (as JAX's, the function's traces too)

    def _cache_size(self):
        return len(self._cache)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return types.MethodType(self, obj)      # (a bound method, as JAX's)


# JAX's class name, by which libraries (chex) recognise jits; mjax's code says Jitted.
Jitted.__name__ = Jitted.__qualname__ = "PjitFunction"
PjitFunction = Jitted


def jit(fun=None, /, *, in_shardings=None, out_shardings=None, static_argnums=None,
        static_argnames=None, donate_argnums=None, donate_argnames=None, keep_unused=False,
        device=None, backend=None, inline=False, compiler_options=None, passes=None):
    """Compiles `fun` with XLA: traced once per argument avals/static args, then cached.
    `device` runs every call there (committed results); `compiler_options` are XLA
    options (`{"xla_...": value}`) for this function's compilations; `passes` are users'
    passes (mjax.passes.Pass instances) its compilations run (docs/passes.md)."""
    def none_as_empty(v):   # (0 is an argument number: not `v or ()`)
        return () if v is None else v
    options = dict(static_argnums=static_argnums, static_argnames=static_argnames,
                   donate_argnums=none_as_empty(donate_argnums),
                   donate_argnames=none_as_empty(donate_argnames),
                   keep_unused=keep_unused, device=device, backend=backend, inline=inline,
                   in_shardings=in_shardings, out_shardings=out_shardings,
                   compiler_options=compiler_options, passes=pass_list(passes))
    if fun is None:
        return functools.partial(jit, **options)
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    jitted = Jitted(fun, **options)
    share_cache(jitted, fun, options)
    return jitted


def _warn_passes_not_run(name: str) -> None:
    warnings.warn(f"jit({name}, passes=...) is called inside another traced function "
                  f"(a jit, grad, vmap, ...): it becomes part of that function, whose "
                  f"compilation runs only its own passes; give the passes to the "
                  f"outermost jit or use mjax.passes.extra (docs/passes.md)", stacklevel=4)


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    with config.override(jax_disable_jit=disable):
        yield


# ---- filling the registration points of the floors below ---------------------------------
def _apply_sharded(opcls, args, params):
    """An op on arrays laid out over several devices: run as a jit of the op, so it
    compiles SPMD for their mesh and the result keeps a sharded layout (as JAX)."""
    if any(is_unreduced(x) for x in args):    # (partial sums: mjax/lax/unreduced.py)
        return apply_unreduced(opcls, args, params)
    key = (opcls, hashable(params) if params else ())
    jitted = _SHARDED_CACHE.get(key)
    if jitted is None:
        def one_op(*xs):
            out = bind(opcls, *xs, **params)
            return list(out) if isinstance(out, (list, tuple)) else [out]
        jitted = _SHARDED_CACHE[key] = jit(one_op)
    return keep_reduced(args, jitted(*args))


_SHARDED_CACHE: dict = {}
CLEARERS.append(_SHARDED_CACHE.clear)

registration.JIT.fill(jit)
registration.APPLY_SHARDED.fill(_apply_sharded)
