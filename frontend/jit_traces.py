"""The traces of jitted functions, kept per Python function and argument types and
shared by every way of tracing it, as JAX shares one cache of traced jaxprs: a call of
`jit(f)`, `jit(f).trace(...)`/`.lower(...)` and `make_jaxpr(f)` with the same argument
types trace f once (its Python side effects happen once, and the globals it read stay
those of the first trace, as in JAX).

A kept trace is a copy of the traced module (lowering transforms a module in place) and
the TracedFunction's other fields; each reuse gets its own copy. Not kept: traces with
refs among their arguments or captured values, traces under explicit sharding types
(their values' types live in the trace), and traces that captured a tracer.
"""
from __future__ import annotations

import copy
import weakref

from jaxlib.mlir import ir

from mjax import trace_trees
from mjax.config import config
from mjax.core import Tracer
from mjax.dialect.types import RefAval, ShapedArray
from mjax.dtypes import aval_of_value
from mjax.cache_miss_log import arg_names, explain_cache_miss
from mjax.lowering import clone_module, name_as_jax
from mjax.dialect.symbols import symbol_name
from mjax.sharding_impls import current_mesh
from mjax.source_info import name_stack
from mjax.staging import TracedFunction, kept_for, trace_function, trace_key

# function -> {key: _KeptTrace}; an entry goes when its function is collected.
_KEPT: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_PER_FUNCTION = 64           # (the most traces kept per function: the oldest go first)
# function -> {the keys of its traces, as jax_explain_cache_misses compares them: None}.
_SEEN: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class _KeptTrace:
    def __init__(self, traced: TracedFunction):
        self.module = clone_module(traced.module)
        self.traced = copy.copy(traced)

    def fresh(self) -> TracedFunction:
        """A TracedFunction over its own copy of the kept module."""
        module = clone_module(self.module)
        traced = copy.copy(self.traced)
        trace = traced.trace = copy.copy(self.traced.trace)
        traced.module = trace.module = module
        trace.func = next(op for op in module.body.operations
                          if op.operation.name == "func.func"
                          and symbol_name(op) == trace.name)
        trace.block = trace.func.regions[0].blocks[0]
        trace.ip = ir.InsertionPoint(trace.block)
        trace.args = [Tracer(trace, v, t.aval)
                      for v, t in zip(trace.block.arguments, self.traced.trace.args)]
        return traced


def trace(jitted, dyn_args, dyn_kwargs, static_key, n_args) -> TracedFunction:
    """jit(f)'s trace of f for these arguments: a copy of the kept one, or traced now
    (and kept)."""
    leaves, in_tree = trace_trees.tree_flatten((dyn_args, dyn_kwargs))
    k = key(jitted, in_tree, leaves, static_key)
    traced = lookup(jitted.fun, k)
    if traced is not None:
        return traced
    _explain_miss(jitted, in_tree, leaves, static_key)
    if config.read("jax_no_tracing"):
        code = getattr(jitted.fun, "__code__", None)
        where = f" at {code.co_filename}:{code.co_firstlineno}" if code else ""
        raise RuntimeError(f"re-tracing function {jitted._name}{where} for `jit`, but "
                           f"'no_tracing' is set")
    traced = trace_function(jitted._bind_static(static_key, n_args), dyn_args, dyn_kwargs)
    name_as_jax(traced.module, jitted._name, arg_names(jitted.fun, traced.in_tree,
                                                       static_key))
    keep(jitted.fun, k, traced)
    return traced


def _explain_miss(jitted, in_tree, leaves, static_key) -> None:
    """Records the key of a trace about to be made; under jax_explain_cache_misses, logs
    why it is not one traced before (as JAX explains its tracing cache misses)."""
    try:
        avals = tuple(x.aval if isinstance(x, Tracer) else aval_of_value(x) for x in leaves)
        k = (in_tree, avals, static_key, config.trace_state(), None, current_mesh())
        seen = kept_for(_SEEN, jitted.fun)
        hash(k)
    except TypeError:
        return
    if seen is None:
        return
    if config.read("jax_explain_cache_misses"):
        explain_cache_miss(jitted.fun, jitted._name, k, list(seen))
    seen.pop(k, None)
    seen[k] = None
    if len(seen) > _PER_FUNCTION:
        del seen[next(iter(seen))]


def key(jitted, in_tree, leaves, static_key):
    """What a jit's trace depends on besides the function (None: not to be kept)."""
    avals = []
    for x in leaves:
        if isinstance(x, Tracer):
            return None
        try:
            aval = x if isinstance(x, ShapedArray) else aval_of_value(x)
        except TypeError:
            return None
        if type(aval) is RefAval:
            return None
        avals.append(aval)
    # (and the shardings committed arguments carry: they seed the trace's types, and a
    # jit over a mesh of one device lays its results out from them)
    placed = tuple([x._sharding if getattr(x, "_committed", False) else None
                    for x in leaves])
    return trace_key(in_tree, tuple(avals), placed, static_key, jitted.static_argnums,
                     jitted.static_argnames, name_stack())


def lookup(fun, k) -> TracedFunction | None:
    if k is None:
        return None
    kept = kept_for(_KEPT, fun)
    hit = kept.get(k) if kept is not None else None
    return hit.fresh() if hit is not None else None


def keep(fun, k, traced: TracedFunction) -> None:
    if k is None or traced.trace.type_specs is not None:
        return
    if any(isinstance(v, Tracer) for v in traced.captured) or any(
            type(a) is RefAval for a in traced.capture_avals):
        return
    kept = kept_for(_KEPT, fun)
    if kept is None:
        return
    if len(kept) >= _PER_FUNCTION:
        del kept[next(iter(kept))]
    kept[k] = _KeptTrace(traced)


def forget(fun) -> None:
    """Forgets `fun`'s traces (jit(fun).clear_cache())."""
    kept = kept_for(_KEPT, fun)
    if kept:
        kept.clear()


def clear_cache() -> None:
    """Forgets every kept trace (jax.clear_caches)."""
    _KEPT.clear()
    _SEEN.clear()


__all__ = ["clear_cache", "forget", "keep", "key", "lookup", "trace"]
