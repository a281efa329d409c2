"""Smaller `pl` names: `estimate_cost`, `with_scoped`, `reciprocal`, `broadcast_to`,
`empty`/`empty_like`, `delay`, and `core_map`/`kernel` (not supported: they raise
NotImplementedError naming what is missing). JAX: pallas/helpers.py, pallas/core.py.
"""
from __future__ import annotations

import functools

from mjax import numpy as jnp
from mjax import trace_trees, tree_util
from mjax.experimental.pallas.core import CostEstimate
from mjax.experimental.pallas.memory import run_scoped


def estimate_cost(fun, *args, **kwargs) -> CostEstimate:
    """A pl.CostEstimate for `fun(*args, **kwargs)` (arrays or ShapeDtypeStructs; keyword
    arguments are static): XLA's cost analysis of the function, lowered for the
    default backend. JAX: pl.estimate_cost (JAX counts from its jaxpr, so the
    numbers can differ; they only guide XLA's scheduling of the kernel)."""
    from mjax import ShapeDtypeStruct
    from mjax.jitted import jit
    leaves, tree = trace_trees.tree_flatten(args)
    specs = [ShapeDtypeStruct(tuple(x.shape), x.dtype) if hasattr(x, "shape") else x
             for x in leaves]
    try:
        lowered = jit(functools.partial(fun, **kwargs)).lower(
            *tree_util.tree_unflatten(tree, specs))
        cost = lowered.cost_analysis() or {}
        if isinstance(cost, (list, tuple)):
            cost = cost[0] if cost else {}
    except Exception:       # (no cost analysis on this backend: no estimate)
        cost = {}
    return CostEstimate(flops=int(cost.get("flops", 0) or 0),
                        transcendentals=int(cost.get("transcendentals", 0) or 0),
                        bytes_accessed=int(cost.get("bytes accessed", 0) or 0))


def with_scoped(*types, collective_axes=(), **kw_types):
    """Decorator form of run_scoped: `@pl.with_scoped(pltpu.VMEM(...))` calls the
    function at once with the scoped refs and gives its result. JAX: pl.with_scoped."""
    def wrap(f):
        return run_scoped(f, *types, collective_axes=collective_axes, **kw_types)
    return wrap


def reciprocal(x, *, approx: bool = False, full_range: bool = True):
    """1 / x (interpret mode computes it exactly). JAX: pl.reciprocal."""
    return 1.0 / jnp.asarray(x)


def broadcast_to(a, shape):
    """jnp.broadcast_to inside kernels. JAX: pl.broadcast_to."""
    return jnp.broadcast_to(a, tuple(shape))


def empty(shape, dtype, *, out_sharding=None):
    """An array whose contents do not matter (zeros here). JAX: pl.empty."""
    return jnp.zeros(shape, dtype)


def empty_like(x):
    """An array shaped like `x` whose contents do not matter (zeros). JAX: pl.empty_like."""
    return jnp.zeros(x.shape, x.dtype)


def delay(nanos) -> None:
    """Stalls the core for `nanos` nanoseconds on a TPU; nothing when interpreting.
    JAX: pl.delay."""


def _not_supported(name: str, what: str):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"pl.{name} is not supported by mjax: {what}")
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Not supported by mjax: {what}. JAX: pl.{name}."
    return fn


core_map = _not_supported("core_map", "kernels over a mesh of cores (pl.core_map); use "
                                      "pl.pallas_call with a grid")
kernel = _not_supported("kernel", "mesh kernels (pl.kernel); use pl.pallas_call with a grid")


class semaphore:
    """The dtype of regular semaphores. JAX: pl.semaphore."""


__all__ = ["broadcast_to", "core_map", "delay", "empty", "empty_like", "estimate_cost",
           "kernel", "reciprocal", "semaphore", "with_scoped"]
