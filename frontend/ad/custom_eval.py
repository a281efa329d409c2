"""custom_jvp_call_p / custom_vjp_call_p .bind with the parameters of a JAX jaxpr equation
(mjax/jaxpr/objects.py): what `jax.core.eval_jaxpr` calls for a custom-derivative equation,
keeping the user's rule."""
from __future__ import annotations

import functools

from mjax import lax
from mjax.jaxpr import objects as jaxpr_objects
from mjax.ad.custom import custom_jvp
from mjax.ad.forward import jvp as _jvp
from mjax.ad.staging import stage_function
from mjax.tracing.core import current_trace
from mjax.dialect.attributes import Symbol
from mjax.dialect.ops import transforms as T
from mjax.passes import custom_rules
from mjax.tracing.registration import BIND_PARAMS, REGION_BINDS
from mjax.tracing.staging import call_args, emit


def _bind_custom_call(cls, *args, call_jaxpr=None, rule=None, num_consts=None,
                      jvp_jaxpr=None, subfuns=None, **_):
    """custom_jvp_call_p / custom_vjp_call_p .bind with an equation's parameters (mjax/
    jaxpr/objects.py). Under a trace: the callee's jaxpr staged as a function, called
    through the same op with the equation's rule handle (so the user's rule still applies
    when differentiated), or, for a jvp rule traced into the module, as a custom_jvp of the
    two jaxprs. Outside every trace nothing can differentiate it: the callee runs.
    (`subfuns`: the functions `get_bind_params` gave in place of the jaxprs.)"""
    if call_jaxpr is None:
        call_jaxpr, jvp_jaxpr = subfuns[0].jaxpr, getattr(subfuns[1], "jaxpr", None)
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


class _Subfun:
    """A function of a custom call's equation as JAX's `get_bind_params` gives them
    (`call_wrapped`, as a WrappedFun's): the callee, its JVP (under the call's rule)."""

    def __init__(self, f, name: str, jaxpr=None):
        self.f, self.__name__, self.jaxpr = f, name, jaxpr

    def call_wrapped(self, *args):
        return self.f(*args)


def _refused(what: str):
    def call(*_):
        raise NotImplementedError(f"calling a custom_vjp_call equation's {what} from "
                                  f"get_bind_params's subfuns (mjax keeps the rule as a handle)")
    return call


def _bind_params(cls, params: dict) -> dict:
    """JAX's `get_bind_params` of a custom call's equation: its parameters with the
    functions (`subfuns`) in place of the jaxprs, e.g. for an interpreter that calls the
    primal function."""
    params = dict(params)
    call_jaxpr, jvp_jaxpr = params.pop("call_jaxpr"), params.pop("jvp_jaxpr", None)
    fun = _Subfun(jaxpr_objects.jaxpr_as_fun(call_jaxpr), "jaxpr_as_fun", call_jaxpr)
    if cls is T.CustomVjpCallOp:
        params["subfuns"] = (fun, _Subfun(_refused("fwd"), "fwd"),
                             _Subfun(_refused("bwd"), "bwd"))
        return params

    def jvp_of_call(*xs):
        n = len(xs) // 2
        out, out_dot = _jvp(lambda *p: _bind_custom_call(cls, *p, call_jaxpr=call_jaxpr,
                                                        jvp_jaxpr=jvp_jaxpr, **params),
                            tuple(xs[:n]), tuple(xs[n:]))
        return [*out, *out_dot]
    params["subfuns"] = (fun, _Subfun(jvp_of_call, "jvp", jvp_jaxpr))
    return params


for _cls in (T.CustomJvpCallOp, T.CustomVjpCallOp):
    REGION_BINDS[_cls] = functools.partial(_bind_custom_call, _cls)
    BIND_PARAMS[_cls] = functools.partial(_bind_params, _cls)
