"""custom_jvp_call_p / custom_vjp_call_p .bind with the parameters of a JAX jaxpr equation
(mjax/jaxpr_objects.py): what `jax.core.eval_jaxpr` calls for a custom-derivative equation,
keeping the user's rule."""
from __future__ import annotations

import functools

from mjax import jaxpr_objects, lax
from mjax.ad.custom import custom_jvp
from mjax.ad.staging import stage_function
from mjax.core import current_trace
from mjax.dialect.attributes import Symbol
from mjax.dialect.ops import transforms as T
from mjax.passes import custom_rules
from mjax.registration import REGION_BINDS
from mjax.staging import call_args, emit


def _bind_custom_call(cls, *args, call_jaxpr, rule=None, num_consts=None, jvp_jaxpr=None,
                      **_):
    """custom_jvp_call_p / custom_vjp_call_p .bind with an equation's parameters (mjax/
    jaxpr_objects.py). Under a trace: the callee's jaxpr staged as a function, called
    through the same op with the equation's rule handle (so the user's rule still applies
    when differentiated), or, for a jvp rule traced into the module, as a custom_jvp of the
    two jaxprs. Outside every trace nothing can differentiate it: the callee runs."""
    primal = jaxpr_objects.jaxpr_as_fun(call_jaxpr)
    if current_trace() is None:
        return primal(*args)
    if rule is not None and custom_rules.source_of(rule) is not None:
        traced = stage_function(primal, args, name="custom_call")
        outs = emit(cls, call_args(traced, list(args)), callee=Symbol(traced.name),
                    rule=rule, num_consts=num_consts)
        for t, a in zip(outs, traced.out_avals):
            t.aval = a
        return outs
    if cls is not T.CustomJvpCallOp or jvp_jaxpr is None:
        return primal(*args)
    # The traced rule takes (primals, tangents of the inexact primals) and gives
    # (outputs, tangents of the inexact outputs).
    diff_in = [T.differentiable(a) for a in call_jaxpr.in_avals]
    diff_out = [T.differentiable(a) for a in call_jaxpr.out_avals]
    fun = custom_jvp(lambda *a: primal(*a))

    @fun.defjvp
    def _(primals, tangents):
        outs = jaxpr_objects.jaxpr_as_fun(jvp_jaxpr)(
            *primals, *[t for t, d in zip(tangents, diff_in) if d])
        n = len(diff_out)
        ts = iter(outs[n:])
        return outs[:n], [next(ts) if d else lax.zeros_like_array(o)
                          for o, d in zip(outs[:n], diff_out)]
    return fun(*args)


REGION_BINDS[T.CustomJvpCallOp] = functools.partial(_bind_custom_call, T.CustomJvpCallOp)
REGION_BINDS[T.CustomVjpCallOp] = functools.partial(_bind_custom_call, T.CustomVjpCallOp)
