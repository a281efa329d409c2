"""Eager basic indexing and indexed updates as one cached jit (issue 25).

`x[i, :, None]` and `x.at[i].set(v)` on an `mjax.Array` outside any trace ran mjax.numpy's
indexing op by op (a dynamic_slice and a squeeze; for an update a dozen ops). Here a
*basic* index (ints, slices with int/None bounds, None, Ellipsis) runs the same code
(`indexing.getitem`, `_IndexUpdateRef._update`) under one `mjax.jit` per (index
structure, aval), whose cache hit runs in C (runtime/_fastpath.c). The ints are operands
(int32 scalars kept on the device, as the op-by-op path passes them to dynamic_slice), so
`x[i]` for every in-bounds i reuses one program; negative ints are wrapped here first.

Everything else takes the general path, unchanged: an index of another kind (arrays,
bools, lists, jax.ds), an int out of bounds (clamped or an IndexError there), a
too-long index or one that selects all of x, arrays with a sharding object (committed or
sharded), non-ShapedArray avals or other dtypes (float8s, ...); updates with keywords,
with values other than Python scalars of a kind x's dtype holds and Arrays of x's dtype
(no conversion that might warn), other than .set on 16-bit floats, on an empty or 0-d x;
and any call made under a trace, a config context manager, a default device, jax_disable_jit,
jax_debug_nans/infs, jax_no_execution or a host-to-device transfer guard (the general
path transfers the index, which the guard sees). A call whose jit raises runs the general
path too, which raises its own error.
"""
from __future__ import annotations

import numpy as np

from mjax.specs import dtypes as _dt
from mjax.arrays import eager
from mjax.tracing import registration
from mjax.arrays.array import Array
from mjax.config import config
from mjax.tracing.core import _state as trace_state
from mjax.dialect import ShapedArray
from mjax.jit.jitted import jit
from mjax.numpy.conversion import asarray
from mjax.numpy.elementwise import negative
from mjax.numpy.index_update import _IndexUpdateHelper, _IndexUpdateRef
from mjax.numpy.indexing import getitem

_VALUES = config._values
_INT = object()                 # the token of an int in an index's structure
_NP_INTS = frozenset((np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                      np.uint32, np.uint64))
_PLANS: dict = {}               # (structure, aval[, update kind]) -> plan, or None
_PLANS_MAX = 1024
_INDEX_ARRAYS: dict = {}        # k -> int32 scalar Array (0 <= k < _INDEX_ARRAYS_MAX)
_INDEX_ARRAYS_MAX = 4096
_SCALARS: dict = {}             # (type, repr) of a Python scalar -> asarray of it
_SCALARS_MAX = 64
_EPOCH = [None]                 # the config epoch accepted last
_PY_SCALAR_KINDS = {bool: "biufc", int: "iufc", float: "fc", complex: "c"}
# The dtypes taken, by kind (float8s and 4-bit types take the general path); updates other
# than set of 16-bit floats too (XLA may keep a fused conversion's excess precision).
_KIND = {np.dtype(t): np.dtype(t).kind for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128)}
_KIND[np.dtype(_dt.bfloat16)] = "f"
_HALF = frozenset(map(np.dtype, (np.float16, _dt.bfloat16)))
STATS = {"hits": 0}             # calls the cached jit completed (for tests)
registration.INTERNAL_ARRAYS.append(
    lambda: list(_INDEX_ARRAYS.values()) + list(_SCALARS.values()))


def clear() -> None:
    """Forgets the plans and the device constants (eager.clear_cache: jax.clear_caches)."""
    _PLANS.clear()
    _INDEX_ARRAYS.clear()
    _SCALARS.clear()
    _EPOCH[0] = None


eager.CLEAR_HOOKS.append(clear)


def _usable() -> bool:
    """Whether the cached jit may run this call: no trace, no config context manager, and
    an epoch (config.update starts one) without a default device, jax_no_execution,
    jax_debug_nans/infs, jax_disable_jit or a host-to-device transfer guard."""
    if trace_state.stack or config._overriding:
        return False
    key = config._trace_key
    if key is not None and key is _EPOCH[0]:
        return True
    ok = (_VALUES["jax_default_device"] is None and not _VALUES["jax_no_execution"]
          and not _VALUES["jax_debug_nans"] and not _VALUES["jax_debug_infs"]
          and not _VALUES["jax_disable_jit"]
          and _VALUES.get("jax_transfer_guard_host_to_device") in (None, "allow"))
    if ok:
        epoch = config.trace_state()
        if epoch is not _EPOCH[0]:   # (x64 and the platform decide the constants)
            _INDEX_ARRAYS.clear()
            _SCALARS.clear()
            _EPOCH[0] = epoch
    return ok


def _structure(idx):
    """(the index's static structure, its ints), or None for an index of another kind."""
    parts = idx if type(idx) is tuple else (idx,)
    tokens, ints = [], []
    for p in parts:
        t = type(p)
        if t is int or t in _NP_INTS:
            tokens.append(_INT)
            ints.append(p)
        elif t is slice:
            s, e, st = p.start, p.stop, p.step
            if (s is not None and type(s) is not int) or (e is not None and type(e) is not int) \
                    or (st is not None and type(st) is not int) or st == 0:
                return None   # (step 0: the general path's ValueError)
            tokens.append((s, e, st))
        elif p is None or p is Ellipsis:
            tokens.append(p)
        else:
            return None
    return tuple(tokens), ints


def _int_axes(tokens, shape):
    """The size of the axis each int of the index takes, or None where the general path
    decides (two ellipses, too many indices, an index that selects all of x)."""
    ndim = len(shape)
    consumed = sum(1 for t in tokens if t is not None and t is not Ellipsis)
    n_ellipsis = sum(1 for t in tokens if t is Ellipsis)
    if n_ellipsis > 1 or consumed > ndim:
        return None
    sizes, axis, trivial = [], 0, True
    for t in tokens:
        if t is Ellipsis:
            axis += ndim - consumed
        elif t is None:
            trivial = False
        elif t is _INT:
            sizes.append(shape[axis])
            axis += 1
            trivial = False
        else:
            if slice(*t).indices(shape[axis]) != (0, shape[axis], 1):
                trivial = False
            axis += 1
    # (an index that leaves x as it is: the general path says whether x itself comes back)
    return None if trivial else tuple(sizes)


def _rebuild(tokens, ints):
    it = iter(ints)
    return tuple(next(it) if t is _INT else slice(*t) if type(t) is tuple else t
                 for t in tokens)


def _getitem_fn(tokens):
    def fn(x, *ints):
        return getitem(x, _rebuild(tokens, ints))
    fn.__name__ = fn.__qualname__ = "getitem"
    return jit(fn)


def _update_fn(tokens, kind):
    def fn(x, values, *ints):
        ref = _IndexUpdateRef(x, _rebuild(tokens, ints))
        if kind == "sub":   # (as .subtract: add the negated values)
            kind_, values = "add", negative(values)
        else:
            kind_ = kind
        # (a basic index selects each position once: unique, as the general path says)
        return ref._update(kind_, values, None, unique_indices=True)
    fn.__name__ = fn.__qualname__ = f"scatter_{kind}"
    return jit(fn)


def _plan(key, tokens, aval, make):
    """(jitted, sizes of the int axes) for key, made once; None: the general path."""
    plan = _PLANS.get(key, False)
    if plan is False:
        sizes = None
        if type(aval) is ShapedArray and aval.dtype in _KIND and \
                all(type(n) is int for n in aval.shape):
            sizes = _int_axes(tokens, aval.shape)
        plan = None if sizes is None else (make(), sizes)
        if len(_PLANS) >= _PLANS_MAX:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan


def _index_operands(ints, sizes):
    """The ints as int32 device scalars, wrapped into [0, n); None if one is out of
    bounds (the general path clamps it, or raises for an empty axis)."""
    out = []
    for i, n in zip(ints, sizes):
        i = int(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            return None
        a = _INDEX_ARRAYS.get(i)
        if a is None:
            a = asarray(np.int32(i))
            if i < _INDEX_ARRAYS_MAX:
                _INDEX_ARRAYS[i] = a
        out.append(a)
    return out


def _run(plan, ints, *operands):
    """The plan's jit on `operands` and the index's ints, or None: no plan, an int out of
    bounds, or the jit raised (the general path then raises its own error)."""
    if plan is None:
        return None
    ops = _index_operands(ints, plan[1])
    if ops is None:
        return None
    try:
        out = plan[0](*operands, *ops)
    except Exception:
        return None
    STATS["hits"] += 1
    return out


def fast_getitem(x, idx):
    """x[idx] through the cached jit, or None when the general path takes it."""
    if x._sharding is not None or not _usable():
        return None
    st = _structure(idx)
    if st is None:
        return None
    tokens, ints = st
    aval = x.aval
    return _run(_plan((tokens, aval), tokens, aval, lambda: _getitem_fn(tokens)), ints, x)


def _value_operand(values, dtype):
    """The update's values as a jit operand, or None: an Array on its own device of x's
    dtype, or a Python scalar whose kind x's dtype holds (no conversion warns)."""
    t = type(values)
    if t is Array:
        av = values.aval
        if values._sharding is None and type(av) is ShapedArray and av.dtype == dtype:
            return values
        return None
    kinds = _PY_SCALAR_KINDS.get(t)
    if kinds is None or _KIND.get(dtype, "-") not in kinds:
        return None
    key = (t, repr(values))
    a = _SCALARS.get(key)
    if a is None:
        try:
            a = asarray(values)
        except Exception:   # (out of range: the general path raises it)
            return None
        if len(_SCALARS) >= _SCALARS_MAX:
            _SCALARS.clear()
        _SCALARS[key] = a
    return a


def fast_update(x, idx, kind, values):
    """x.at[idx].<kind>(values) through the cached jit, or None (the general path)."""
    if x._sharding is not None or not _usable():
        return None
    aval = x.aval
    if type(aval) is not ShapedArray or not aval.shape or 0 in aval.shape:
        return None   # (0-d: the general path; an empty x comes back as it is)
    dtype = aval.dtype
    if kind != "set" and dtype in _HALF:
        return None   # (XLA may keep a fused 16-bit conversion's excess precision)
    st = _structure(idx)
    if st is None:
        return None
    v = _value_operand(values, dtype)
    if v is None:
        return None
    tokens, ints = st
    return _run(_plan((tokens, aval, kind), tokens, aval, lambda: _update_fn(tokens, kind)),
                ints, x, v)


def _fast_first(kind, general):
    """The update method `general` of _IndexUpdateRef, trying the cached jit of update
    `kind` first when it is given no keywords."""
    def update(self, values, **kw):
        out = None if kw else fast_update(self.array, self.index, kind, values)
        return general(self, values, **kw) if out is None else out
    update.__name__ = update.__qualname__ = general.__name__
    return update


class _FastUpdateRef(_IndexUpdateRef):
    """x.at[idx] of a concrete Array: .set/.add/.subtract/.multiply/.min/.max without
    keywords try the cached jit first."""

    __slots__ = ()
    set = _fast_first("set", _IndexUpdateRef.set)
    add = _fast_first("add", _IndexUpdateRef.add)
    subtract = _fast_first("sub", _IndexUpdateRef.subtract)
    multiply = mul = _fast_first("mul", _IndexUpdateRef.multiply)
    min = _fast_first("min", _IndexUpdateRef.min)  # noqa: A003
    max = _fast_first("max", _IndexUpdateRef.max)  # noqa: A003


class _FastUpdateHelper(_IndexUpdateHelper):
    __slots__ = ()

    def __getitem__(self, idx):
        return _FastUpdateRef(self.array, idx)


def at(x):
    """x.at: for a concrete Array, with the cached jit's updates."""
    return _FastUpdateHelper(x) if type(x) is Array else _IndexUpdateHelper(x)


__all__ = ["STATS", "at", "clear", "fast_getitem", "fast_update"]
