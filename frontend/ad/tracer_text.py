"""How traced values print inside grad & co., as JAX prints its tracers there.

JAX's reverse-mode tracer prints `GradTracer(primal=2.0, typeof(tangent)=f32[])` for a
value computed from a differentiated argument, its primal being the concrete value
(outside jit), the jit's tracer (under jit) or the tracer of an enclosing
differentiation; values no differentiation perturbs are plain arrays there (in forward
mode too). mjax traces the function once into its dialect, so it finds the same facts
from the IR: which arguments of each enclosing trace a value is computed from
(`Trace.sources` leads from one trace's arguments to the enclosing one's tracers), and
the concrete value from mjax.ad.concrete. A value jvp alone perturbs prints as JAX's
`JVPTracer(primal=2.0, tangent=1.0)` (its tangent computed by a jvp of the ops it
depends on, staged in the trace around: mjax.ad.jvp_text); under other transformations
too keeps mjax's text."""
from __future__ import annotations

import functools
import weakref

from mjax.base import trace_trees
from mjax.ad.jvp_text import jvp_text
from mjax.tracing.core import current_trace
from mjax.dialect.types import short_dtype_name
from mjax.dialect.values import argument_number
from mjax.tracing.source_info import wraps
from mjax.tracing.tracer import Tracer, arguments_reached, jit_text, known_value

# trace -> (the numbers of its arguments it differentiates, in reverse mode or not)
_DIFFERENTIATED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def showing_gradients(fun, diff_leaves, reverse=True, tangents=None):
    """fun, whose tracers print as JAX's tracers while it is traced (its argument leaves
    `diff_leaves` are differentiated, in reverse mode unless `reverse` is False; forward
    mode's `tangents`, one per diff leaf, are values of the trace around it)."""
    diff_leaves = sorted(diff_leaves)
    # (the tangents, tracers of the trace around, are let go of once fun is traced: the
    # leak checker would find them kept)
    tangent_of = [dict(zip(diff_leaves, tangents or ()))]
    diff_leaves = frozenset(diff_leaves)

    @wraps(fun)
    def shown(*args, **kwargs):
        trace = current_trace()
        leaves = trace_trees.tree_leaves((args, kwargs))
        numbers = {i: n for i, t in enumerate(leaves)
                   if i in diff_leaves and isinstance(t, Tracer) and t.trace is trace and
                   (n := argument_number(t.value)) is not None}
        differentiated = set(numbers.values())
        _DIFFERENTIATED[trace] = (differentiated, reverse,
                                  {n: tangent_of[0][i] for i, n in numbers.items()
                                   if i in tangent_of[0]})
        previous, trace.shows = trace.shows, functools.partial(_shows, trace.shows)
        try:
            return fun(*args, **kwargs)
        finally:
            trace.shows = previous
            _DIFFERENTIATED[trace] = (differentiated, reverse, {})
            tangent_of[0] = {}
    return shown


def _shows(previous, t):
    differentiated, reverse, tangents = _DIFFERENTIATED[t.trace]
    reached = arguments_reached(t.value)
    if not reverse and reached & differentiated:
        text = jvp_text(t, reached, differentiated, tangents)
        if text is not None:
            return text
        return previous(t) if previous is not None else None
    levels = _perturbing(t.trace, reached, depth=8)
    value = known_value(t)
    if not levels:
        if value is not None:
            return value      # (a plain array in JAX: printed as one)
        return previous(t) if previous is not None else None
    text = str(value) if value is not None else jit_text(t.aval)
    tangent = f"{short_dtype_name(t.aval.dtype)}[{','.join(map(str, t.aval.shape))}]"
    for _ in range(levels):
        text = f"GradTracer(primal={text}, typeof(tangent)={tangent})"
    return text


def _perturbing(trace, reached, depth) -> int:
    """How many reverse-mode differentiations (this trace's and enclosing ones) perturb
    a value of `trace` computed from its arguments `reached`."""
    differentiated, reverse, _ = _DIFFERENTIATED.get(trace, (set(), False, None))
    here = 1 if reverse and reached & differentiated else 0
    if depth == 0:
        return here
    sources, n_in = trace.sources or (), len(trace.in_avals)
    outer = 0
    for n in reached:
        src = sources[n] if n < min(n_in, len(sources)) else \
            trace.captured[n - n_in] if n >= n_in else None
        if isinstance(src, Tracer) and src.trace.active:
            outer = max(outer, _perturbing(src.trace, arguments_reached(src.value),
                                           depth - 1))
    return here + outer
