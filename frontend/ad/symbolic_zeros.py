"""Symbolic zeros: which traced values a differentiation perturbs, and the SymbolicZero
tangents custom rules see for the others.

JAX's JVP trace holds only the values that depend on a differentiated input. A
custom_jvp rule defined with `symbolic_zeros=True` gets a `SymbolicZero` tangent for
each other input, and a custom_vjp fwd a `CustomVJPPrimal` whose `perturbed` is False;
libraries branch on that (equinox's loops find which carries need cotangents). mjax
stages differentiation as ops, so it answers the same question from the IR, at the
moment a custom function is staged inside a differentiation (mjax.ad.levels):

- each function a differentiation API traces records its differentiated arguments
  (`differentiating`);
- a value is perturbed at level L when it depends, through ops other than
  `stop_gradient`, on a differentiated argument of level L's function (`perturbation`:
  True, False, or None when the IR cannot tell); a custom_jvp result whose rule
  returned a symbolic zero tangent is not (`unperturbed`);
- the arguments of a nested trace (a jit's or vmap's function, a cond branch, a loop
  body) are followed to the values they stand for in the enclosing trace
  (`Trace.sources`), and so are the values it captures; a nested jit's result depends
  on the arguments its function's result does. A loop carry is perturbed surely if its
  initial value is, else maybe (the body may perturb it); a result of an op with
  regions maybe, if an operand is; an argument of unknown source maybe.

A custom call with an input surely perturbed traces its rules at once, as JAX does; the
inputs that maybe are count as perturbed there (their tangents are computed, and zero
if they turn out unperturbed). A call with none is staged as outside differentiation,
its rules left to the passes (passes/custom_rules.py), which trace them if the
differentiation reaches the call after all, knowing then exactly which tangents are
zero. Either way a rule never sees a symbolic zero for a tangent that is not zero.
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np

from mjax import lax
from mjax.specs import dtypes
from mjax.tracing import registration
from mjax.tracing.core import Carry, Tracer, aval_of_value, current_trace, trace_stack
from mjax.dialect.values import is_argument
from mjax.passes.perturbation_deps import Dependencies, operands_reaching
from mjax.tracing.primitive import tangent_aval


def primal_dtype_to_tangent_dtype(primal_dtype):
    """float0 for integer and boolean primals (their tangents carry nothing), else the
    primal's dtype."""
    dt = np.dtype(primal_dtype)
    if dtypes.issubdtype(dt, np.inexact) or dtypes.issubdtype(dt, dtypes.extended):
        return dt
    return dtypes.float0


def zeros_like_aval(aval):
    """Zeros of `aval`'s shape and dtype (float0 zeros live on the host, as in JAX)."""
    if np.dtype(aval.dtype) == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    return lax.full(aval.shape, 0, aval.dtype)


class SymbolicZero:
    """A zero tangent a custom rule receives with symbolic_zeros=True (JAX:
    custom_derivatives.SymbolicZero); shape and dtype read through to its aval."""

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return type(self).__name__

    def __getattr__(self, name):
        if name == "aval":
            raise AttributeError(name)
        return getattr(self.aval, name)

    @staticmethod
    def from_primal_value(val) -> "SymbolicZero":
        return SymbolicZero(tangent_aval(aval_of_value(val)))

    def instantiate(self):
        return zeros_like_aval(self.aval)


# ---- what each differentiation level perturbs ----------------------------------------
class _Levels(threading.local):
    def __init__(self):
        self.by_level: dict = {}    # level -> _Level
        self.queries = 0   # perturbation() calls, note_query()s (PERTURBATION_QUERIES)


_levels = _Levels()


class _Level:
    __slots__ = ("block", "roots", "cleared")

    def __init__(self, block, roots):
        self.block = block          # the entry block of the differentiated function
        self.roots = roots          # its differentiated arguments (IR values)
        self.cleared: set = set()   # values known unperturbed (custom_jvp symbolic zeros)


@contextlib.contextmanager
def differentiating(level: int, arguments, diff_leaves):
    """Around the trace of a function differentiated at `level`: `arguments` are its
    argument leaves (tracers of the current trace), `diff_leaves` the differentiated ones'
    indices."""
    trace = current_trace()
    by_level = _levels.by_level
    saved = by_level.get(level)
    if trace is None:
        by_level.pop(level, None)
    else:
        roots = {arguments[i].value for i in diff_leaves
                 if isinstance(arguments[i], Tracer) and arguments[i].trace is trace}
        by_level[level] = _Level(trace.block, roots)
    try:
        yield
    finally:
        if saved is None:
            by_level.pop(level, None)
        else:
            by_level[level] = saved


def unperturbed(level: int, tracers) -> None:
    """Records that `tracers` carry symbolic zero tangents at `level`."""
    entry = _levels.by_level.get(level)
    if entry is not None:
        entry.cleared.update(t.value for t in tracers if isinstance(t, Tracer))


def _source(trace, k):
    """What argument `k` of an active nested trace stands for: a tracer of an enclosing
    trace, a Carry, False (a constant) or None (not known)."""
    n = len(trace.in_avals)
    if k >= n:
        source = trace.captured[k - n]
    elif trace.sources is not None:
        source = trace.sources[k]
    else:
        return None
    if isinstance(source, Carry):
        init = source.init
        return source if isinstance(init, Tracer) and init.trace.active else None
    if isinstance(source, Tracer):
        return source if source.trace.active else None
    return source if source is None else False


def perturbation(x, level: int):
    """Whether differentiation `level` perturbs `x` (a leaf given to a custom function):
    True when it surely does (JAX's JVP trace holds `x`), False when it surely does not
    (`x` is not inexact, not traced, or does not depend on the level's differentiated
    arguments), None when the IR cannot tell (a loop carry, a result of an op with
    regions, an argument of unknown source)."""
    _levels.queries += 1
    if not isinstance(x, Tracer):
        return False
    if not dtypes.issubdtype(np.dtype(x.aval.dtype), np.inexact):
        return False
    entry = _levels.by_level.get(level)
    if entry is None or not x.trace.active:
        return None
    traces = {t.block: t for t in trace_stack()}
    deps = Dependencies()
    todo, seen, maybe = [(x.value, True)], set(), False
    while todo:
        v, sure = todo.pop()
        if (v, sure) in seen or (v, True) in seen or v in entry.cleared:
            continue
        seen.add((v, sure))
        if v in entry.roots:
            if sure:
                return True
            maybe = True
        elif is_argument(v):
            if v.owner == entry.block:
                continue        # an argument this level does not differentiate
            trace = traces.get(v.owner)
            source = _source(trace, v.arg_number) if trace is not None else None
            if source is None:
                maybe = True
            elif isinstance(source, Carry):
                maybe = True    # (perturbed surely if its initial value is)
                todo.append((source.init.value, sure))
            elif source is not False:
                todo.append((source.value, sure))
        else:
            exact, inexact = operands_reaching(v, deps)
            todo.extend((o, sure) for o in exact)
            todo.extend((o, False) for o in inexact)
    return None if maybe else False


@registration.PERTURBATION_QUERIES.fill
def perturbation_queries() -> int:
    return _levels.queries


def note_query() -> None:
    """Counts a decision of tracing that depends on the differentiations around it, other
    than by `perturbation` (a custom call staged at level 0 stages its rules untraced)."""
    _levels.queries += 1


def perturbed(x, level: int) -> bool:
    """Whether differentiation `level` may perturb `x` (`perturbation` not False)."""
    return perturbation(x, level) is not False


__all__ = ["SymbolicZero", "differentiating", "note_query", "perturbation", "perturbed",
           "primal_dtype_to_tangent_dtype", "tangent_aval", "unperturbed", "zeros_like_aval"]
