"""How a value jvp perturbs prints, as JAX's JVPTracer: `JVPTracer(primal=2.0,
tangent=1.0)` outside jit (JAX evaluates jvp op by op, so it knows both),
`JVPTracer(primal=JitTracer(~float32[]), tangent=JitTracer(~float32[]))` under jit.

mjax traces the function once; the tangent of a value is found by a `jaxpr.jvp` of the
ops it depends on (mjax.tracing.value_prefix), staged in the trace around the jvp on the
arguments' primals and tangents, whose concrete value mjax.ad.concrete gives there.
Nothing is staged unless a tracer is printed; nothing uses the staged jvp, so the
passes drop it."""
from __future__ import annotations

from mjax.dialect import Builder, aval_of, context
from mjax.dialect.attributes import Symbol
from mjax.dialect.ops import transforms as T
from mjax.tracing.source_info import user_location
from mjax.tracing.tracer import Tracer, jit_text, known_value
from mjax.tracing.value_prefix import prefix_function, prefix_ops


def jvp_text(t: Tracer, reached: set, differentiated: set, tangents: dict):
    """JAX's text for `t`, a value of a jvp's trace computed from its differentiated
    arguments `reached & differentiated` (`tangents`: argument number -> its tangent, a
    value of the trace around), or None where another transformation also perturbs it
    (mjax's text is kept there)."""
    trace = t.trace
    sources, n_in = trace.sources or (), len(trace.in_avals)
    if any(n >= min(n_in, len(sources)) or _perturbed(sources[n]) for n in reached) or \
            not reached & differentiated <= tangents.keys():
        return None
    primal = known_value(t)
    if primal is None:                # (under jit: JAX's tracers of the jit, both)
        text = jit_text(t.aval)
        return f"JVPTracer(primal={text}, tangent={text})"
    tangent = _tangent(t, sources, differentiated, tangents)
    if tangent is None:
        return None
    return f"JVPTracer(primal={primal}, tangent={tangent})"


def _perturbed(source) -> bool:
    """Whether an argument's source in the trace around is itself a value another
    transformation maps or differentiates (nested transformations: not shown so)."""
    return isinstance(source, Tracer) and (
        getattr(source.trace, "shows", None) is not None or not source.trace.active)


def _tangent(t, sources, differentiated, tangents):
    outer = sources[0].trace if sources and isinstance(sources[0], Tracer) else None
    if outer is None or not outer.active:
        return None
    ops, used = prefix_ops(t.value)
    name = prefix_function(t.trace, ops, used, t.value, "jvp_text")
    primals = [outer.to_tracer(sources[a.arg_number]) for a in used]
    diff = [k for k, a in enumerate(used) if a.arg_number in differentiated]
    dots = [outer.to_tracer(tangents[used[k].arg_number]) for k in diff]
    with context():
        b = Builder(outer.ip, user_location())
        _, r = T.emit_transform(b, T.JvpOp, *[x.value for x in primals + dots],
                                callee=Symbol(name), diff_args=tuple(diff),
                                diff_results=(0,))
    return known_value(Tracer(outer, r, aval_of(r.type).update(
        weak_type=t.aval.weak_type)))


__all__ = ["jvp_text"]
