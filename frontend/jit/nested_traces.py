"""The traces of a jit called inside another trace, kept and reused as JAX reuses a jitted
function's jaxpr: a second call with the same argument types (in the same outer trace or
another one, through the same jit object or another jit of the same function) calls the
function traced the first time instead of running the Python function again (so its
Python side effects happen once, as in JAX).

A trace is kept as the text of its function and the functions it calls, printed when it
is made (the module it was traced into is transformed in place later); a reuse in
another module parses that text in under a prefix, once per module. A trace that
captured a value of an enclosing trace (a closure over a tracer) is not kept: the value
exists only there.
"""
from __future__ import annotations

import copy
import weakref

from mjax.tracing import registration
from mjax.base import tree_util
from mjax.tracing.core import Tracer, aval_of_value
from mjax.dialect.attributes import Symbol
from mjax.dialect.functions import symbols_of
from mjax.dialect.ops.transforms import CallOp
from mjax.passes.ir_util import functions_text
from mjax.passes.rules.export import _clone_functions
from mjax.passes.rules.op_names import note_callee
from mjax.jaxpr.pretty import mark_captured
from mjax.tracing.staging import (call_args, copy_prefix, emit, kept_for, stage_function,
                           trace_key)


class NestedTrace:
    """One kept trace: what calling it needs, and its functions as text. A jit's trace
    also serves `jit(f).trace(...)`/`.lower(...)` under another trace, as JAX's one cache
    of traced jaxprs does (mjax.jit.traces): `standalone` is its copy as a module of its
    own (made from the text when first needed), `traced` the TracedFunction it was, with
    its ties to the module it was traced into cut (`arg_avals`: its arguments' avals)."""

    def __init__(self, traced, module, standalone=None):
        self.name = traced.name
        self.out_tree, self.out_avals = traced.out_tree, traced.out_avals
        self.captured = list(traced.captured)
        self.text = functions_text(module, [traced.name])
        self.prefix = copy_prefix()
        self.origin = weakref.ref(module)     # (names are unique only within a module)
        self.standalone = standalone
        self.arg_avals = [t.aval for t in traced.trace.args]      # (weak types included)
        self.traced = _detached(traced)

    def callee_in(self, module) -> str:
        """The name of the traced function in `module`, copied in if it is not there.
        (Names of traced functions are unique only within a module: another module
        holding the name may hold another function.)"""
        if module is self.origin():
            return self.name
        table = symbols_of(module)
        copied = f"{self.prefix}_{self.name}"
        if copied not in table:
            _clone_functions(module.operation, self.text, self.prefix)
        return copied


def _detached(traced):
    """A copy of `traced` and its trace holding nothing of their module (an IR value
    keeps its module alive); without its arguments' tracers."""
    traced = copy.copy(traced)
    trace = traced.trace = copy.copy(traced.trace)
    traced.module = trace.module = trace.func = trace.block = trace.ip = None
    trace.args, trace.sources, trace._captured_ids = None, None, {}
    return traced


# jitted function -> {key: NestedTrace (or {differentiation state: NestedTrace})}: the
# traces of every jit of one function, shared as JAX's cache of traced jaxprs is (jit(f)
# made anew at each call under a trace traces f once); an entry goes with its function.
_JITS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_PER_FUNCTION = 64           # (the most traces kept per function: the oldest go first)


def of_jit(jitted, in_tree, leaves, static_key) -> tuple:
    """(the traces kept for calls of `jitted`'s function under other traces, the key of
    these arguments); the jit's own table when its function cannot be a weak key."""
    kept = kept_for(_JITS, jitted.fun)
    return (kept if kept is not None else jitted._nested,
            key(in_tree, leaves, (static_key, jitted.static_argnums, jitted.static_argnames)))


def forget(fun) -> None:
    """Forgets the nested traces of `fun` (jit(fun).clear_cache())."""
    kept = kept_for(_JITS, fun)
    if kept:
        kept.clear()


def clear_cache() -> None:
    _JITS.clear()


def key(in_tree, leaves, static_key):
    """What a nested trace depends on besides the function: the arguments' structure and
    types, static arguments, the options that change tracing, the named axes and meshes
    around it. None when something is unhashable."""
    avals = tuple(x.aval if isinstance(x, Tracer) else aval_of_value(x) for x in leaves)
    return trace_key(in_tree, avals, static_key)


# A trace that asked which values a differentiation perturbs (a custom rule traced at
# once, an isinstance(x, JVPTracer)) depends on the differentiations around it too: it
# is kept per differentiation state, in a dict under the key. (Asking is rare; computing
# the state for every call would walk the IR back from each argument.)
def perturbation_queries() -> int:
    return registration.PERTURBATION_QUERIES()


def lookup(kept: dict, key, leaves) -> NestedTrace | None:
    """The trace kept for `key` (and the differentiation state of `leaves`, if it
    depends on it), or None."""
    entry = kept.get(key) if key is not None else None
    if isinstance(entry, dict):
        return entry.get(registration.DIFFERENTIATION_STATE(leaves))
    return entry


def keep(kept: dict, key, leaves, traced, module, asked: bool, standalone=None) -> None:
    trace = NestedTrace(traced, module, standalone)
    if key not in kept and len(kept) >= _PER_FUNCTION:
        del kept[next(iter(kept))]
    if not asked:
        kept[key] = trace
        return
    per_state = kept.get(key)
    if not isinstance(per_state, dict):
        per_state = kept[key] = {}
    per_state[registration.DIFFERENTIATION_STATE(leaves)] = trace


def keepable(traced) -> bool:
    """Whether a trace can be kept: it captured no tracer of an enclosing trace."""
    return not any(isinstance(v, Tracer) for v in traced.captured)


def kept_or_staged(kept: dict | None, key, leaves, module, stage) -> tuple:
    """(the name in `module` of the function to call on `leaves`, its operands, out tree,
    out avals): the trace `kept` holds for `key` (copied into `module` if need be), else
    `stage()`'s new one, kept when it can be (key None: not kept)."""
    trace = lookup(kept, key, leaves)
    if trace is not None:
        return (trace.callee_in(module), list(leaves) + trace.captured, trace.out_tree,
                trace.out_avals)
    asked = perturbation_queries()
    traced = stage()
    if key is not None and keepable(traced):
        keep(kept, key, leaves, traced, module, perturbation_queries() != asked)
    return traced.name, call_args(traced, leaves), traced.out_tree, traced.out_avals


def call(kept: dict, fun, name, outer, args, kwargs, key, leaves):
    """fun(*args, **kwargs) under the trace `outer`: a `jaxpr.call` of fun's function,
    traced now unless `kept` (a jit's traces) holds one for `key` (None: not kept)."""
    def stage():
        traced = stage_function(fun, args, kwargs, name=name)
        if traced.captured:   # (JAX's jaxprs list a closure's values first)
            mark_captured(traced.trace.func, len(traced.captured))
        return traced
    callee, operands, out_tree, out_avals = kept_or_staged(kept, key, leaves, outer.module,
                                                           stage)
    # (its inlined ops: jit(g)/sin, as JAX's)
    note_callee(outer.module, callee, f"jit({name})")
    outs = emit(CallOp, operands, callee=Symbol(callee))
    for t, a in zip(outs, out_avals):
        t.aval = a
    return tree_util.tree_unflatten(out_tree, outs)


__all__ = ["NestedTrace", "call", "clear_cache", "forget", "keep", "keepable",
           "kept_or_staged", "key", "lookup", "of_jit", "perturbation_queries"]
