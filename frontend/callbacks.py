"""Host callbacks: `pure_callback`, `experimental.io_callback`, and the machinery
`mjax.debug` shares.

A callback becomes one `jaxpr.callback` op whose `callback_id` indexes `_REGISTRY`, a
process-wide table of flat callables (flat arrays in, flat results out). Compiling a
program that calls back (`host_callbacks`) renumbers its host callback custom calls
0..k-1 and hands XLA one wrapper per call, which checks the results against the types
the program expects. Outside any trace a callback simply runs.

    y = mjax.pure_callback(np.sin, mjax.ShapeDtypeStruct(x.shape, x.dtype), x)

JAX: jax/_src/callback.py.
"""
from __future__ import annotations

import itertools
import logging
import threading
import traceback
from typing import Any, Callable

import numpy as np

from mjax import dtypes, tree_util
from mjax.dialect.ops.callbacks import VMAP_METHODS, CallbackOp

_ALLOWED_VMAP_METHODS = [*VMAP_METHODS[:2], "expand_dims", "broadcast_all",
                         "legacy_vectorized", None]


# ---- the registry ------------------------------------------------------------------------
class _Entry:
    """A registered callable: `flat(*arrays)` returns the flat result leaves."""

    def __init__(self, flat: Callable, name: str):
        self.flat = flat
        self.name = name        # pure_callback, io_callback, debug.callback

    def call(self, *arrays):
        """Runs the callable; a failure is logged (with its traceback) before it
        propagates, as JAX does."""
        try:
            return self.flat(*arrays)
        except BaseException:
            _logger.exception("mjax.%s failed", self.name)
            raise


_logger = logging.getLogger("mjax.callbacks")


_REGISTRY: dict[int, _Entry] = {}
_KEYS: dict = {}              # hashable description of a callable -> its id
_IDS = itertools.count()
_LOCK = threading.Lock()


def register(flat: Callable, name: str, key=None) -> int:
    """The id of `flat` in the registry. Equal `key`s (the same user function with the
    same argument structure) share an id, so retracing gives the same IR."""
    with _LOCK:
        if key is not None:
            try:
                hit = _KEYS.get(key)
            except TypeError:   # unhashable static arguments
                key = None
                hit = None
            if hit is not None:
                return hit
        cid = next(_IDS)
        _REGISTRY[cid] = _Entry(flat, name)
        if key is not None:
            _KEYS[key] = cid
        return cid


def lookup(callback_id: int) -> _Entry:
    try:
        return _REGISTRY[callback_id]
    except KeyError:
        raise ValueError(f"no host callback with id {callback_id} is registered in this "
                         f"process (jaxpr.callback ops only run in the process that "
                         f"traced them)") from None


# ---- running a callback ------------------------------------------------------------------
def _as_arrays(values) -> list:
    """Host values as mjax Arrays, which JAX hands callbacks."""
    from mjax.api import device_put_value
    return [device_put_value(np.asarray(v)) for v in values]


def check_results(outs, avals) -> tuple[np.ndarray, ...]:
    """`outs` as NumPy arrays of exactly `avals`' shapes and dtypes; RuntimeError with
    JAX's text otherwise. JAX: callback.emit_python_callback's result checks."""
    outs = list(outs)
    if len(outs) != len(avals):
        raise RuntimeError(f"Mismatched number of outputs from callback. Expected: "
                           f"{len(avals)}, Actual: {len(outs)}")
    checked = []
    for i, (out, aval) in enumerate(zip(outs, avals)):
        arr = np.asarray(out)
        arr = arr.astype(dtypes.canonicalize_dtype(arr.dtype), copy=False)
        if arr.shape != tuple(aval.shape):
            raise RuntimeError(f"Incorrect output shape for return value #{i}: Expected: "
                               f"{tuple(aval.shape)}, Actual: {arr.shape}")
        if arr.dtype != aval.dtype:
            raise RuntimeError(f"Incorrect output dtype for return value #{i}: Expected: "
                               f"{aval.dtype}, Actual: {arr.dtype}")
        checked.append(np.asarray(arr, order="C"))  # (ascontiguousarray makes 0-d 1-d)
    return tuple(checked)


def _runtime_error(e: BaseException) -> Exception:
    """The error a failed callback raises in the caller: JAX's JaxRuntimeError (a
    RuntimeError) carrying the callback's traceback and message."""
    from jaxlib import _jax
    tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    return _jax.JaxRuntimeError(f"INTERNAL: CpuCallback error calling callback: {tb}")


def run_now(callback_id: int, args, out_avals) -> list:
    """Eager mode: runs the callback on concrete values, returns mjax Arrays."""
    from mjax.api import device_put_value
    from mjax.array import Array
    from mjax.core import to_numpy
    entry = lookup(callback_id)
    try:
        arrays = [a if isinstance(a, Array) else _as_arrays([to_numpy(a)])[0] for a in args]
        outs = check_results(entry.call(*arrays), out_avals)
    except Exception as e:  # noqa: BLE001 - reaches the caller as in jit
        raise _runtime_error(e) from e
    return [device_put_value(o) for o in outs]


class _HostCall:
    """What XLA calls for one custom call: NumPy in, a tuple of checked NumPy out (the
    token first and back for ordered callbacks)."""

    def __init__(self, entry: _Entry, out_avals, ordered: bool):
        self.entry, self.out_avals, self.ordered = entry, out_avals, ordered

    def __call__(self, *arrays):
        if self.ordered:
            token, *arrays = arrays
        outs = check_results(self.entry.call(*_as_arrays(arrays)), self.out_avals)
        return (token, *outs) if self.ordered else outs


def host_callbacks(text: str, platform: str = "cpu") -> tuple[str, list | None]:
    """(text, callables) for compiling a lowered program: its host callback custom calls
    renumbered 0..k-1, the k-th one calling `callables[k]`. (text, None) when the program
    calls no Python."""
    if "xla_ffi_python_cpu_callback" not in text:
        return text, None
    from jaxlib.mlir import ir
    from mjax.dialect import aval_of, context
    from mjax.passes.rules.callbacks import CALL_TARGET
    with context():
        module = ir.Module.parse(text)
        calls = []

        def visit(op):
            if (op.name == "stablehlo.custom_call" and ir.StringAttr(
                    op.attributes["call_target_name"]).value == CALL_TARGET):
                calls.append(op)
            return ir.WalkResult.ADVANCE
        module.operation.walk(visit)
        u64 = ir.IntegerType.get_unsigned(64)
        callables = []
        for k, op in enumerate(calls):
            cid = ir.IntegerAttr(ir.DictAttr(op.attributes["backend_config"])["index"]).value
            types = [r.type for r in op.results]
            ordered = len(op.operands) > 0 and "token" in str(op.operands[0].type)
            if ordered:
                types = types[1:]
            callables.append(_HostCall(lookup(cid), [aval_of(t) for t in types], ordered))
            op.attributes["backend_config"] = ir.DictAttr.get(
                {"index": ir.IntegerAttr.get(u64, k)})
            if platform in ("cuda", "rocm", "gpu"):
                op.attributes["call_target_name"] = ir.StringAttr.get(
                    "xla_ffi_python_gpu_callback")
        text = module.operation.get_asm(enable_debug_info=True)
    return text, callables


def backend_host_callbacks(text: str, backend) -> tuple[str, list | None]:
    """`host_callbacks` for a backend object (its platform picks the call target)."""
    return host_callbacks(text, getattr(backend, "platform", "cpu"))


# ---- binding -----------------------------------------------------------------------------
def _result_avals(result_shape_dtypes):
    from mjax.dialect.types import ShapedArray
    leaves, tree = tree_util.tree_flatten(result_shape_dtypes)
    avals = []
    for leaf in leaves:
        dt = np.dtype(leaf.dtype)
        if dtypes.canonicalize_dtype(dt) != dt:
            raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                             "`jax_enable_x64` is disabled")
        avals.append(ShapedArray(tuple(leaf.shape), dt))
    return avals, tree


def call(name: str, effect: str, flat: Callable, key, dyn_args, out_avals,
         vmap_method=None) -> list:
    """Stages one `jaxpr.callback` (or runs `flat` now, outside any trace); returns the
    flat results."""
    from mjax.core import bind, current_trace
    if effect == "pure" and not out_avals:
        return []   # nothing could use it: JAX drops it (also eagerly, as dead code)
    cid = register(flat, name, key)
    if current_trace() is None:
        return run_now(cid, dyn_args, out_avals)
    outs = bind(CallbackOp, *dyn_args, callback_id=cid, effect=effect,
                result_shapes=tuple(tuple(a.shape) for a in out_avals) or None,
                result_dtypes=tuple(a.dtype for a in out_avals) or None,
                vmap_method=vmap_method,
                _weak_type=False)
    return list(outs) if isinstance(outs, list) else [outs]


def _flat_callable(callback, in_tree):
    def flat(*arrays):
        args, kwargs = tree_util.tree_unflatten(in_tree, list(arrays))
        return tree_util.tree_leaves(callback(*args, **kwargs))
    return flat


def _key(callback, in_tree, *extra):
    return (callback, in_tree, *extra)


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding=None, vmap_method: str | None = None, **kwargs: Any):
    """Calls a pure Python function from staged code (jit, vmap, scan, ...): results must
    match `result_shape_dtypes`; unused calls may be removed, vmap batches per
    `vmap_method`. JAX: jax.pure_callback."""
    if vmap_method not in _ALLOWED_VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods "
                         f"{_ALLOWED_VMAP_METHODS}, but got: {vmap_method}")
    _check_sharding(sharding)
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    out_avals, out_tree = _result_avals(result_shape_dtypes)
    outs = call("pure_callback", "pure", _flat_callable(callback, in_tree),
                _key(callback, in_tree, "pure"), flat_args, out_avals, vmap_method)
    return tree_util.tree_unflatten(out_tree, outs)


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                sharding=None, ordered: bool = False, **kwargs: Any):
    """Calls a Python function with side effects from staged code: never removed, in
    program order when `ordered`. JAX: jax.experimental.io_callback."""
    _check_sharding(sharding)
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    out_avals, out_tree = _result_avals(result_shape_dtypes)
    outs = call("io_callback", "ordered" if ordered else "unordered",
                _flat_callable(callback, in_tree), _key(callback, in_tree, "io"),
                flat_args, out_avals)
    return tree_util.tree_unflatten(out_tree, outs)


def _check_sharding(sharding) -> None:
    if sharding is None:
        return
    devices = getattr(sharding, "device_set", None)
    if devices is not None and len(devices) > 1:
        raise NotImplementedError("callbacks with a sharding over several devices are not "
                                  "supported yet; pass sharding=None or a single-device "
                                  "sharding")


def effects_barrier() -> None:
    """Waits until every effect of programs run so far has happened. JAX:
    jax.effects_barrier. An mjax execution returns only after its host callbacks ran
    (the XLA client runs them while executing, before handing back results), so there is
    nothing left to wait for."""
