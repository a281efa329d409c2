"""The cached `jit` call's fast path: its markers, and its C form when built.

`Jitted.__call__` (frontend/jit/jitted.py) keeps a memo of the last cache hit; a call like it
goes from its leaves straight to jaxlib's execute (the entry it runs: frontend/
jit/entry.py). `mjax.runtime._fastpath` (runtime/_fastpath.c, built by setup.py when a C
compiler is there) does the same checks and the execution in C, and hands every other
call, and every failed execution, to the Python `__call__`. MJAX_NO_C_FASTPATH=1 (read at
import) keeps the Python path only; docs/performance.md measures both.
"""
from __future__ import annotations

import operator

import numpy as np

from mjax.tracing import registration
from mjax.base import trace_trees
from mjax.arrays.array import Array
from mjax.config import config
from mjax.tracing.core import _state as _trace_state
from mjax.tracing.core import aval_of_value
from mjax.dialect.types import ShapedArray
from mjax.runtime import c_fast_path, get_backend
from mjax.runtime.backend import HostPut
from mjax.runtime.host_call import X64_DTYPES
from mjax.runtime.xla import LAYOUTS_IN_USE
from mjax.jit.entry import CacheEntry, CallMemo, KeyedMemo, committed_entry, spmd_entry
from mjax.specs.sharding_impls import NamedSharding, SingleDeviceSharding
from mjax.specs.sharding_impls import mesh_contexts
from mjax.spmd.jit import fast_results, laid_out

C_FASTPATH = c_fast_path("_fastpath")   # (None: the Python path does it all)
if C_FASTPATH is not None and not hasattr(C_FASTPATH, "set_memos"):
    C_FASTPATH = None      # (built from an older _fastpath.c: rebuild it with setup.py)
if C_FASTPATH is not None:
    C_FASTPATH.setup(Array, config, _trace_state, ShapedArray)
    C_FASTPATH.set_entry(CacheEntry)     # (the named fields it reads)
    C_FASTPATH.set_memos(CallMemo, KeyedMemo)

# A leaf the fast path does not take (host_key's answer): it never equals an aval, so the
# memo comparison fails and the call takes the general path.
NOT_FAST = object()
KEYED = ("keyed",)      # marks table keys (and memos) of calls with keyword/static args
OTHER_TREE = (None,)    # the leaves of a call whose structure differs from the memo's
# The fast path flattens arguments with mjax's pytree registry (jaxlib's C++ one, as the
# general path); a memo is made only where both flattenings give the same leaves.
FAST_TREES = trace_trees.registry


def fast_keys(leaves) -> tuple:
    return tuple([x.aval if type(x) is Array and x._sharding is None else host_key(x)
                  for x in leaves])


# The avals of NumPy array leaves, by (shape, dtype, x64), and of Python scalars, by (type,
# x64): such arguments take the fast path too, copied to the default device as the
# general path copies them (jaxlib's put checks the transfer guard).
_HOST_AVALS: dict = {}


_SCALARS = (int, float, complex, bool)
HOST_LEAVES = (np.ndarray,) + _SCALARS      # (the leaf types host_key may take)
_INT32_MIN, _INT32_MAX = int(np.iinfo(np.int32).min), int(np.iinfo(np.int32).max)
# Device buffers of Python scalar arguments, by (backend, type, repr, dtype): a buffer may
# serve every call passing that value to a program that donates nothing (one that donates
# gets a fresh buffer per call). (mjax's own: jax.live_arrays leaves them out.)
_SCALAR_BUFS: dict = {}
_PUTTERS: dict = {}     # (backend, shape, dtype) -> put for NumPy arguments of that kind


class _Held:
    __slots__ = ("_buf",)

    def __init__(self, buf):
        self._buf = buf


registration.INTERNAL_ARRAYS.append(lambda: [_Held(b) for b in _SCALAR_BUFS.values()])


_ONE_OR_MESH = (SingleDeviceSharding, NamedSharding)
_DEFAULT_MEMORY = ("device", None)


def host_key(x):
    """The aval of a NumPy array or Python scalar leaf for the fast path (NOT_FAST for
    any other leaf): a scalar is an argument like any other, weakly typed. A committed
    Array (on one device's own memory, or laid out over a mesh) is (aval, sharding):
    calls with it run there and commit their results (fast_entry)."""
    t = type(x)
    if t is Array:     # (an uncommitted one has a sharding too once `.sharding` is read:
        # it is keyed by its aval, as one whose sharding was not read; not once some array
        # has had another layout: execute's relayout is skipped)
        s = x._sharding
        if type(s) not in _ONE_OR_MESH or s.memory_kind not in _DEFAULT_MEMORY or \
                LAYOUTS_IN_USE[0]:
            return NOT_FAST
        return (x.aval, s) if getattr(x, "_committed", False) else x.aval
    if t is not np.ndarray:
        if t not in _SCALARS or t is int and not _INT32_MIN <= x <= _INT32_MAX:
            return NOT_FAST     # (a wider int: the general path says what it makes of it)
        key = (t, config.read("jax_enable_x64"))
    else:
        key = (x.shape, x.dtype, config.read("jax_enable_x64"))
    aval = _HOST_AVALS.get(key)
    if aval is None:
        try:
            aval = aval_of_value(x)
        except Exception:   # noqa: BLE001 - (object arrays, ...: the general path says)
            return NOT_FAST
        if type(aval) is not ShapedArray:
            return NOT_FAST
        if len(_HOST_AVALS) >= 1024:
            _HOST_AVALS.clear()
        _HOST_AVALS[key] = aval
    return aval


def _backend_of(entry, backend=None):
    """The backend that compiled `entry` (the general path puts host values on its first
    device); `backend`: the jit's, where the executable does not say."""
    return getattr(entry.executable, "backend", None) or get_backend(backend)


def host_bufs(leaves, avals, entry, backend) -> list:
    """The buffers of a fast call's leaves (of `avals`, host_key's for the NumPy arrays
    and Python scalars among them, which are put on the device)."""
    backend, fresh = _backend_of(entry, backend), entry.donates
    return [x._buf if type(x) is Array else _host_buf(backend, x, a.dtype, fresh)
            for x, a in zip(leaves, avals)]


def host_buf(entry, x, aval):
    """The device buffer of one NumPy array or Python scalar leaf of `aval` (the C fast
    path's)."""
    return _host_buf(_backend_of(entry), x, aval.dtype, entry.donates)


def _host_buf(backend, x, dtype, fresh=False):
    if type(x) is np.ndarray:
        key = (backend, x.shape, dtype)
        put = _PUTTERS.get(key)
        if put is None:
            put = getattr(backend, "putter", None)
            put = put(x.shape, dtype) if put is not None else backend.put
            if len(_PUTTERS) >= 256:
                _PUTTERS.clear()
            _PUTTERS[key] = put
        return put(np.asarray(x, dtype=dtype))
    if fresh:          # (a program that donates arguments may consume this buffer)
        return backend.put(np.asarray(x, dtype=dtype))
    key = (backend, type(x), repr(x), dtype)    # (repr: -0.0 and nan kept apart)
    buf = _SCALAR_BUFS.get(key)
    if buf is None:
        buf = backend.put(np.asarray(x, dtype=dtype))
        if len(_SCALAR_BUFS) >= 256:
            _SCALAR_BUFS.clear()
        _SCALAR_BUFS[key] = buf
    return buf


def static_key(v):
    try:
        hash(v)
    except TypeError:
        raise ValueError(f"Non-hashable static arguments are not supported. An error "
                         f"occurred while trying to hash an object of type {type(v)}, {v}.")
    return v


def keyed_memo(state, args, kwargs, static_argnums, static_argnames, leaves, avals, entry):
    """`Jitted._kmemo` (a KeyedMemo) for a call with keyword or static arguments whose
    dynamic ones are all top-level arrays (`leaves`, in flattening order), else None."""
    n, names = len(args), tuple(kwargs)
    full = args + tuple(kwargs.values())
    static = tuple(i for i in static_argnums if i < n) + tuple(
        n + j for j, k in enumerate(names) if k in static_argnames)
    dyn = tuple(i for i in range(n) if i not in static_argnums) + tuple(
        n + names.index(k) for k in sorted(k for k in names if k not in static_argnames))
    if len(dyn) != len(leaves) or any(full[i] is not x for i, x in zip(dyn, leaves)):
        return None
    return KeyedMemo(state, n, names, static, tuple(full[i] for i in static), dyn, avals,
                     entry)


def override_epoch(local=config._local, meshes=mesh_contexts):
    """The fast path's epoch while some context manager is active (Jitted.__call__):
    this thread's config.trace_state() object, or with a mesh context active one object
    per such state and mesh (None under use_abstract_mesh)."""
    overrides, state = local.overrides, config._trace_key
    if overrides is not None or state is None:
        made = local.trace_state     # (what trace_state made for these overrides last)
        if made is not None and made[1] is overrides and made[0] is state and state:
            state = made[2]
        else:
            state = config.trace_state()
    stack = meshes.stack
    if not stack and meshes.set is None:
        return state
    if meshes.abstract:
        return None
    mesh = stack[-1] if stack else meshes.set     # (current_mesh())
    made = meshes.epoch
    if made is None or made[0] is not state or made[1] is not mesh:
        made = meshes.epoch = (state, mesh, object())
    return made[2]


def fast_entry(entry, leaves, tree_args, keyed: bool, over=None):
    """(The entry the fast path runs, the arguments' treedef, the leaves' keys) for a
    call of `entry` whose arguments `tree_args` flatten to `leaves` (Jitted._remember),
    or None where the fast path does not take such calls. `over`: (the shardings the
    leaves were laid out as, the mesh) of a program over a mesh; it takes calls whose
    arrays are laid out so already."""
    # Cheapest refusal first: calls with other leaves come here on every call.
    if not all([type(x) is Array or type(x) in HOST_LEAVES for x in leaves]):
        return None
    if over is None and entry.run is None or \
            config.read("jax_default_device") is not None or \
            config.read("jax_debug_nans") or config.read("jax_debug_infs"):
        return None
    try:
        fast_leaves, tree = FAST_TREES.flatten(tree_args)
    except Exception:   # noqa: BLE001 - e.g. unsortable dict keys
        return None
    if len(fast_leaves) != len(leaves) or not all(map(operator.is_, fast_leaves, leaves)):
        return None
    keys = fast_keys(leaves)
    if NOT_FAST in keys:
        return None
    if over is not None:
        shardings, mesh = over
        if not all(map(laid_out, leaves, shardings)):
            return None
        entry = spmd_entry(entry, fast_results(entry, mesh, leaves), keyed)
    else:
        committed = {k[1] for k in keys if type(k) is tuple}     # (host_key's pairs)
        if committed:
            entry = committed_entry(entry, committed, keyed)
    return None if entry is None else (entry, tree, keys)


def install(cls):
    """Class decorator of Jitted: its `__call__` becomes the C fast path (which calls the
    Python one for everything it does not take), when the C module is there."""
    if C_FASTPATH is not None:
        cls.__call__ = C_FASTPATH.JitCall(cls.__call__, cls._after_fast_error)
    return cls


if C_FASTPATH is not None and hasattr(C_FASTPATH, "set_host"):
    C_FASTPATH.set_host(host_key, host_buf, LAYOUTS_IN_USE, override_epoch)
if C_FASTPATH is not None and hasattr(C_FASTPATH, "set_numpy"):
    # (an exact ndarray leaf: its aval from _HOST_AVALS, its put from _PUTTERS, read in C
    # where host_key and host_buf would find them there with nothing to convert; or put
    # by the entry's host_run, runtime/host_call.py, where its dtype is not 64-bit)
    C_FASTPATH.set_numpy(np.ndarray, _HOST_AVALS, _PUTTERS, HostPut, X64_DTYPES)

__all__ = ["C_FASTPATH", "CallMemo", "FAST_TREES", "HOST_LEAVES", "KEYED", "NOT_FAST", "OTHER_TREE",
           "fast_entry", "fast_keys", "host_buf", "host_bufs", "host_key", "install",
           "keyed_memo", "override_epoch", "static_key"]
