"""A custom_jvp rule under an eager `jvp`, run as JAX runs it: on the Python values.

JAX's `jvp` called outside jit evaluates op by op; a custom_jvp function called on the
jvp's own inputs gets its rule called with their raw primal and tangent values (Python
floats stay Python floats), and whatever the rule returns is what jvp returns for an
output the function passes on unchanged: `jax.jvp(f, (2.0,), (3.0,))` can be
`(5.0, 9.0)`, two Python floats (equinox tests this). So are an argument the function
returns unchanged, and a constant it returns (whose tangent is a zero array).

mjax stages the jvp. When every dynamic argument of a custom_jvp call is one of the
eager jvp's scalar primals (Python or NumPy, with a scalar tangent), in the trace of the
jvp's function itself, the rule runs outside every trace on those values (once, as in
JAX); the call is staged with a rule that returns its results as constants (the
program then depends on the values: the call is not cached), and the outputs of the
function that are those results come back as the rule returned them. Departure: on
array arguments the rule is traced as before, so what it returns comes back as arrays
(JAX: as it returned it, e.g. a Python float).
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np

from mjax.tracing import registration
from mjax.base import trace_trees, tree_util
from mjax.ad import levels
from mjax.arrays.array import Array
from mjax.tracing.core import Tracer, current_trace
from mjax.tracing.core import _state as _trace_state
from mjax.specs.dtypes import canonicalize_dtype
from mjax.tracing.primitive import JVPS
from mjax.tracing.source_info import wraps

_SCALARS = (float, complex)


class _Running(threading.local):
    def __init__(self):
        self.ctx = None


_running = _Running()


class _Eager:
    """One eager jvp: its arguments' Python values, and what its trace learnt."""

    def __init__(self, primals, tangents):
        self.primals, self.tangents = list(primals), list(tangents)
        self.trace = self.depth = None
        self.args: dict = {}        # id(argument tracer) -> (primal, tangent) values
        self.results: dict = {}     # id(custom call result tracer) -> (tracer, primal, tangent)
        self.raw = None             # per output leaf of the function: (primal, tangent)


@contextlib.contextmanager
def running(primals, tangents):
    """Around an eager jvp of arguments `primals`, `tangents` (flat leaves); yields its
    record (`raw_outputs` reads it afterwards)."""
    saved, _running.ctx = _running.ctx, _Eager(primals, tangents)
    try:
        yield _running.ctx
    finally:
        _running.ctx = saved


def seen(fun, ctx):
    """`fun` (the jvp's function), noting its trace, arguments and outputs in `ctx`."""
    @wraps(fun)
    def entered(*args):
        ctx.trace, ctx.depth = current_trace(), levels.depth()
        leaves = trace_trees.tree_leaves(args)
        if len(leaves) == len(ctx.primals):
            for t, p, dt in zip(leaves, ctx.primals, ctx.tangents):
                if isinstance(t, Tracer) and _passed(p) and _passed(dt):
                    ctx.args[id(t)] = (t, p, dt)
        try:
            out = fun(*args)
            raw = []
            for x in trace_trees.tree_leaves(out):
                if not isinstance(x, Tracer):     # (a constant: its tangent a zero array)
                    raw.append((x, None))
                    continue
                # (a custom_jvp rule's result; an argument passed on unchanged)
                hit = ctx.results.get(id(x)) or ctx.args.get(id(x))
                raw.append(None if hit is None or hit[0] is not x else hit[1:])
            ctx.raw = raw if any(r is not None for r in raw) else None
        finally:    # (no tracer outlives its trace here: mjax.tracing.leak_check)
            ctx.trace, ctx.args, ctx.results = None, {}, {}
        return out
    return entered


def _passed(v) -> bool:
    """Whether mjax gives JAX's rule `v` (a jvp argument) as it is: a Python float or
    complex, or a NumPy scalar of a canonical inexact dtype (JAX converts a float64 one
    first). Not arrays: a rule run so makes the program depend on the values (traced
    and compiled again each call), which an eager jvp of jax.nn.relu on arrays in a loop
    should not pay; JAX's rule then gets arrays and mostly returns arrays."""
    if type(v) in _SCALARS:
        return True
    return isinstance(v, np.generic) and np.issubdtype(v.dtype, np.inexact) and \
        canonicalize_dtype(v.dtype) == v.dtype


def python_arguments(leaves):
    """The (primals, tangents) Python values JAX's rule would get for a custom_jvp call
    on `leaves`, or None when it would not get Python values for all of them."""
    ctx = _running.ctx
    if ctx is None or ctx.trace is None or current_trace() is not ctx.trace or \
            levels.depth() != ctx.depth or not leaves:
        return None
    got = [ctx.args.get(id(x)) for x in leaves]
    if any(g is None or g[0] is not x for g, x in zip(got, leaves)):
        return None
    return [g[1] for g in got], [g[2] for g in got]


def run_rule(rule, *args):
    """rule(*args) outside every trace (JAX's eager evaluation), at level 0 (the top-level
    call traces again at each call, as every eager differentiation does)."""
    saved, _trace_state.stack = _trace_state.stack, []
    try:
        with levels.at(0):
            return rule(*args)
    finally:
        _trace_state.stack = saved


def eager_rule(custom, call, leaves, closed_over_tracers):
    """For a custom_jvp call on `leaves` (`call`: mjax.ad.custom's record): the rule's
    (primal, tangent) outputs, run now on the Python values JAX's rule would get, or
    None where JAX's rule would not get Python values alone (or where the function or
    its rule close over tracers: `closed_over_tracers(*funs)` lists them)."""
    got = python_arguments(leaves)
    if got is None or closed_over_tracers(custom.fun, custom.jvp):
        return None
    primals = tree_util.tree_unflatten(call.tree, got[0])
    tangents = tree_util.tree_unflatten(call.tree, got[1])
    return run_rule(custom.jvp, *call.nd, tuple(primals), tuple(tangents))


@registration.EAGER_PRIMITIVE_JVP.fill
def primitive_bind(prim, args, params, stage):
    """A user primitive bound on the eager jvp's own scalar arguments (see the module's
    docstring): its JVP rule runs on their values, and the results the rule returns
    come back from jvp as they are; `stage()` stages the bind (its outputs returned)."""
    got = python_arguments(list(args)) if _running.ctx is not None else None
    rule = JVPS.get(prim) if got is not None else None
    eager = None if rule is None else run_rule(
        lambda p, t: rule(p, t, **params), tuple(got[0]), tuple(got[1]))
    outs = stage()
    note_results(outs, eager)
    return outs


def note_results(outs, eager) -> None:
    """The custom call's result tracers `outs` stand for the rule's outputs `eager`
    (as eager_rule returned them; None: not run so)."""
    ctx = _running.ctx
    if ctx is None or eager is None:
        return
    primals, tangents = (trace_trees.tree_leaves(x) for x in eager)
    if len(primals) != len(outs) or len(tangents) != len(outs):
        return
    for t, p, dt in zip(outs, primals, tangents):
        if _raw(p) or _raw(dt):
            ctx.results[id(t)] = (t, p, dt)


def _raw(v) -> bool:
    """Whether JAX's jvp returns `v` (a value the rule returned) as it is: a Python or
    NumPy value, or an array (concrete: the rule ran eagerly)."""
    return type(v) in (bool, int, float, complex) or isinstance(
        v, (np.ndarray, np.generic, Array))


def raw_outputs(ctx, out, tout, aux=()):
    """(out, tout, *aux): the jvp's primal and tangent outputs (and aux output, if it has
    one: a 1-tuple) with the leaves JAX returns as they were put back."""
    if ctx.raw is None:
        return (out, tout) + tuple(aux)
    o_leaves, o_tree = trace_trees.tree_flatten(out)
    t_leaves, t_tree = trace_trees.tree_flatten(tout)
    a_leaves, a_tree = trace_trees.tree_flatten(tuple(aux))
    n = len(o_leaves)
    if len(t_leaves) != n or n + len(a_leaves) != len(ctx.raw):
        return (out, tout) + tuple(aux)
    for k, r in enumerate(ctx.raw):
        if r is None:
            continue
        if k >= n:      # (the aux output: its primal values)
            a_leaves[k - n] = r[0] if _raw(r[0]) else a_leaves[k - n]
            continue
        if _raw(r[0]):
            o_leaves[k] = r[0]
        if r[1] is not None and _raw(r[1]):
            t_leaves[k] = r[1]
    return (tree_util.tree_unflatten(o_tree, o_leaves),
            tree_util.tree_unflatten(t_tree, t_leaves)) + tree_util.tree_unflatten(
                a_tree, a_leaves)


__all__ = ["eager_rule", "note_results", "python_arguments", "raw_outputs", "run_rule", "running", "seen"]
