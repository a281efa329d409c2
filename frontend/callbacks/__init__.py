"""Host callbacks: `pure_callback`, `experimental.io_callback`, and the staging
`mjax.debug` shares.

A callback becomes one `jaxpr.callback` op whose `callback_id` indexes the process-wide
registry of flat callables (flat arrays in, flat results out) in host_callbacks.py, which
also prepares compiled programs to call them. Outside any trace a callback simply runs.

    y = mjax.pure_callback(np.sin, mjax.ShapeDtypeStruct(x.shape, x.dtype), x)

JAX: jax/_src/callback.py.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from mjax.specs import dtypes
from mjax.base import trace_trees, tree_util
from mjax.tracing.axis_env import AXIS_ENV
from mjax.tracing.core import bind, current_trace
from mjax.dialect.ops.callbacks import VMAP_METHODS, CallbackOp
from mjax.dialect.types import ShapedArray
from mjax.arrays.host_callbacks import register, run_now
from mjax.runtime.host_effects import wait_for_effects
from mjax.specs.sharding_impls import get_abstract_mesh

_ALLOWED_VMAP_METHODS = [*VMAP_METHODS[:2], "expand_dims", "broadcast_all",
                         "legacy_vectorized", None]


# ---- binding -----------------------------------------------------------------------------
def _result_avals(result_shape_dtypes):
    leaves, tree = trace_trees.tree_flatten(result_shape_dtypes)
    avals = []
    for leaf in leaves:
        dt = np.dtype(leaf.dtype)
        if dtypes.canonicalize_dtype(dt) != dt:
            raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                             "`jax_enable_x64` is disabled")
        avals.append(ShapedArray(tuple(leaf.shape), dt))
    return avals, tree


def call(name: str, effect: str, flat: Callable, key, dyn_args, out_avals,
         vmap_method=None, manual_axes=None) -> list:
    """Stages one `jaxpr.callback` (or runs `flat` now, outside any trace); returns the
    flat results."""
    if effect == "pure" and not out_avals:
        return []   # nothing could use it: JAX drops it (also eagerly, as dead code)
    cid = register(flat, name, key)
    if current_trace() is None:
        return run_now(cid, dyn_args, out_avals)
    outs = bind(CallbackOp, *dyn_args, callback_id=cid, effect=effect,
                result_shapes=tuple(tuple(a.shape) for a in out_avals) or None,
                result_dtypes=tuple(a.dtype for a in out_avals) or None,
                vmap_method=vmap_method, manual_axes=manual_axes,
                _weak_type=False)
    return list(outs) if isinstance(outs, list) else [outs]


def _flat_callable(callback, in_tree):
    def flat(*arrays):
        args, kwargs = tree_util.tree_unflatten(in_tree, list(arrays))
        return trace_trees.tree_leaves(callback(*args, **kwargs))
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
    flat_args, in_tree = trace_trees.tree_flatten((args, kwargs))
    out_avals, out_tree = _result_avals(result_shape_dtypes)
    # (In a shard_map or pmap body JAX calls it once per device: mjax's vmaps of the body
    # over the manual mesh axes (pmap's axis) do so when the op names them.)
    manual = None if vmap_method is not None else (
        tuple(get_abstract_mesh().manual_axes) + AXIS_ENV.device_axes) or None
    outs = call("pure_callback", "pure", _flat_callable(callback, in_tree),
                _key(callback, in_tree, "pure"), flat_args, out_avals, vmap_method,
                manual)
    return tree_util.tree_unflatten(out_tree, outs)


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                sharding=None, ordered: bool = False, **kwargs: Any):
    """Calls a Python function with side effects from staged code: never removed, in
    program order when `ordered`. JAX: jax.experimental.io_callback."""
    _check_sharding(sharding)
    flat_args, in_tree = trace_trees.tree_flatten((args, kwargs))
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
    jax.effects_barrier. On the host CPU an execution returns only after its host
    callbacks ran; on an accelerator they are host transfers served while the program
    runs on, and this waits for those programs to finish."""
    wait_for_effects()
