"""The traces of jitted functions, kept per Python function and argument types and
shared by every way of tracing it, as JAX shares one cache of traced jaxprs: a call of
`jit(f)`, `jit(f).trace(...)`/`.lower(...)` and `make_jaxpr(f)` with the same argument
types trace f once (its Python side effects happen once, and the globals it read stay
those of the first trace, as in JAX). The traces of its calls under other traces
(mjax.jit.nested_traces) are shared too, both ways: `.trace`/`.lower` under a trace, or
outside every trace, reuse a call's trace (as a module of its own), and a call under a
trace reuses a trace made by either (renamed as a nested trace's function).

A kept trace is a copy of the traced module (lowering transforms a module in place) and
the TracedFunction's other fields; each reuse gets its own copy. Not kept: traces with
refs among their arguments or captured values, traces under explicit sharding types
(their values' types live in the trace), and traces that captured a tracer.
"""
from __future__ import annotations

import copy
import weakref

from jaxlib.mlir import ir

from mjax.jit import nested_traces
from mjax.tracing import registration
from mjax.base import trace_trees
from mjax.config import config
from mjax.tracing.core import Tracer
from mjax.dialect import context
from mjax.dialect.types import RefAval, ShapedArray
from mjax.specs.dtypes import aval_of_value
from mjax.jit.cache_miss_log import arg_names, explain_cache_miss
from mjax.tracing.lowering import clone_module, name_as_jax
from mjax.dialect.symbols import symbol_name
from mjax.jaxpr.pretty import _N_CAPTURED, mark_captured
from mjax.specs.sharding_impls import current_mesh
from mjax.tracing.source_info import name_stack
from mjax.tracing.staging import TracedFunction, fresh_name, kept_for, trace_function, trace_key

# function -> {key: _KeptTrace}; an entry goes when its function is collected.
_KEPT: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_PER_FUNCTION = 64           # (the most traces kept per function: the oldest go first)
# function -> {the keys of its traces, as jax_explain_cache_misses compares them: None}.
_SEEN: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class _KeptTrace:
    """A kept trace; `asked`: whether tracing asked which values a differentiation
    perturbs (mjax.jit.nested_traces)."""

    def __init__(self, traced: TracedFunction, module=None, arg_avals=None, asked=False):
        self.module = clone_module(traced.module) if module is None else module
        self.traced = copy.copy(traced)
        self.arg_avals = (arg_avals if arg_avals is not None
                          else [t.aval for t in traced.trace.args])
        self.asked = asked

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
        trace.args = [Tracer(trace, v, a) for v, a in zip(trace.block.arguments,
                                                          self.arg_avals)]
        return traced


def trace(jitted, dyn_args, dyn_kwargs, static_key, n_args, flat=None) -> TracedFunction:
    """jit(f)'s trace of f for these arguments: a copy of the kept one, or traced now
    (and kept). `flat`: the arguments' (leaves, treedef, avals) where the caller has them
    (a call of the jit flattens once)."""
    leaves, in_tree = flat[:2] if flat is not None else trace_trees.tree_flatten(
        (dyn_args, dyn_kwargs))
    k = key(jitted, in_tree, leaves, static_key, flat[2] if flat is not None else None)
    traced = lookup(jitted.fun, k)
    if traced is not None:
        return traced
    # The traces the jit's calls under other traces keep (mjax.jit.nested_traces)
    nested, nk = _nested_key(jitted, in_tree, leaves, static_key)
    hit = nested_traces.lookup(nested, nk, leaves) if k is None or not name_stack() else None
    if hit is not None and _keepable(hit.traced) and hit.traced.trace.varying is None:
        if hit.standalone is None:
            hit.standalone = _standalone(jitted, hit, static_key)
        return hit.standalone.fresh()
    _explain_miss(jitted, in_tree, leaves, static_key)
    if config.read("jax_no_tracing"):
        code = getattr(jitted.fun, "__code__", None)
        where = f" at {code.co_filename}:{code.co_firstlineno}" if code else ""
        raise RuntimeError(f"re-tracing function {jitted._name}{where} for `jit`, but "
                           f"'no_tracing' is set")
    asked = nested_traces.perturbation_queries()
    traced = trace_function(jitted._bind_static(static_key, n_args), dyn_args, dyn_kwargs,
                            flat=flat)
    name_as_jax(traced.module, jitted._name, arg_names(jitted.fun, traced.in_tree,
                                                       static_key))
    asked = nested_traces.perturbation_queries() != asked
    keep(jitted.fun, k, traced, asked)
    if k is None and nk is not None and _keepable(traced):
        nested_traces.keep(nested, nk, leaves, *_as_nested(jitted, traced), asked,
                           _KeptTrace(traced, asked=asked))
    return traced


def nested(jitted, in_tree, leaves, static_key) -> tuple:
    """(the traces kept for the jit's calls under other traces, their key for these
    arguments), the trace of a call of the jit outside every trace with these argument
    types among them (as JAX's one cache serves both)."""
    kept, nk = nested_traces.of_jit(jitted, in_tree, leaves, static_key)
    if nk is None or nested_traces.lookup(kept, nk, leaves) is not None:
        return kept, nk
    avals = tuple(x.aval if isinstance(x, Tracer) else aval_of_value(x) for x in leaves)
    k = trace_key(in_tree, avals, (None,) * len(leaves), static_key, jitted.static_argnums,
                  jitted.static_argnames, name_stack())
    top = kept_for(_KEPT, jitted.fun)
    hit = top.get(k) if k is not None and top is not None else None
    # (one that asked about differentiations serves calls outside them only)
    if hit is not None and (not hit.asked
                            or registration.DIFFERENTIATION_STATE(leaves)[0] == 0):
        nested_traces.keep(kept, nk, leaves, *_as_nested(jitted, hit.fresh()), hit.asked,
                           hit)
    return kept, nk


def _nested_key(jitted, in_tree, leaves, static_key) -> tuple:
    """(the jit's nested traces, their key for these arguments: mjax.jit.nested_traces); key
    None: not to be kept there."""
    if any(getattr(x, "_committed", False) for x in leaves):
        return None, None
    try:
        nested, k = nested_traces.of_jit(jitted, in_tree, leaves, static_key)
    except TypeError:
        return None, None
    if k is None or any(type(a) is RefAval for a in k[1]):
        return None, None
    return nested, k


def _as_nested(jitted, traced) -> tuple:
    """(a copy of `traced` (a jit's trace outside other traces) as a nested trace, its
    module): its function renamed as the jit's calls under a trace name theirs."""
    module = clone_module(traced.module)
    with context():
        table = ir.SymbolTable(module.operation)
        fn = table["main"].operation
        # (the clone holds the functions of the jit's module, named there)
        name = fresh_name(module, jitted._name, taken=lambda n: n in table)
        table.set_symbol_name(fn, name)
        fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
        if traced.captured:    # (JAX's jaxprs list a closure's values first)
            mark_captured(fn, len(traced.captured))
    as_nested = copy.copy(traced)
    as_nested.name = name
    return as_nested, module


def _standalone(jitted, hit, static_key) -> _KeptTrace:
    """A nested trace (made by a call of the jit under another trace) as a module of its
    own, its function @main: for .trace()/.lower() with the same argument types."""
    with context():
        module = ir.Module.parse(hit.text)
        fn = ir.SymbolTable(module.operation)[hit.name].operation
        ir.SymbolTable(module.operation).set_symbol_name(fn, "main")
        for attr in ("sym_visibility", _N_CAPTURED):
            if attr in fn.attributes:
                del fn.attributes[attr]
    traced = copy.copy(hit.traced)
    traced.trace = copy.copy(traced.trace)
    traced.name = traced.trace.name = "main"
    name_as_jax(module, jitted._name, arg_names(jitted.fun, traced.in_tree, static_key))
    return _KeptTrace(traced, module, hit.arg_avals)


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


def key(jitted, in_tree, leaves, static_key, known_avals=None):
    """What a jit's trace depends on besides the function (None: not to be kept).
    `known_avals`: the leaves' avals, where the caller has them (a call of concrete
    values: no tracers among them)."""
    if known_avals is not None:
        if any(type(a) is RefAval for a in known_avals):
            return None
        avals = known_avals
    else:
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


def _keepable(traced: TracedFunction) -> bool:
    return traced.trace.type_specs is None and not any(
        isinstance(v, Tracer) for v in traced.captured) and not any(
            type(a) is RefAval for a in traced.capture_avals)


def keep(fun, k, traced: TracedFunction, asked: bool = False) -> None:
    if k is None or not _keepable(traced):
        return
    kept = kept_for(_KEPT, fun)
    if kept is None:
        return
    if len(kept) >= _PER_FUNCTION:
        del kept[next(iter(kept))]
    kept[k] = _KeptTrace(traced, asked=asked)


def forget(fun) -> None:
    """Forgets `fun`'s traces (jit(fun).clear_cache())."""
    kept = kept_for(_KEPT, fun)
    if kept:
        kept.clear()
    nested_traces.forget(fun)


def clear_cache() -> None:
    """Forgets every kept trace (jax.clear_caches)."""
    _KEPT.clear()
    _SEEN.clear()
    nested_traces.clear_cache()


__all__ = ["clear_cache", "forget", "keep", "key", "lookup", "trace"]
