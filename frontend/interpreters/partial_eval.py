"""JAX: jax.interpreters.partial_eval: partial evaluation and DCE rule tables of
user-defined primitives, and `trace_to_jaxpr_nounits` over JAX's jaxpr objects.

mjax's own partial evaluation and DCE are passes over its jaxpr dialect (--jaxpr-vjp,
--jaxpr-dce); these tables exist so that libraries registering rules into them import
and run, and mjax's passes do not read them.
"""
from __future__ import annotations

from mjax.jaxpr.api import make_jaxpr
from mjax.jaxpr.objects import Jaxpr, Literal, eval_jaxpr
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct

__all__ = ["custom_partial_eval_rules", "partial_eval_jaxpr_custom_rules", "dce_rules",
           "PartialVal", "trace_to_jaxpr_nounits"]

custom_partial_eval_rules: dict = {}
partial_eval_jaxpr_custom_rules: dict = {}
dce_rules: dict = {}


class PartialVal(tuple):
    """A value for partial evaluation: (aval, None) when unknown, (None, const) when
    known (JAX: pe.PartialVal). mjax's partial evaluation does not take them."""

    def __new__(cls, xs):
        pv, const = xs
        return tuple.__new__(cls, (pv, const))

    @classmethod
    def known(cls, const) -> "PartialVal":
        return PartialVal((None, const))

    @classmethod
    def unknown(cls, aval) -> "PartialVal":
        return PartialVal((aval, None))

    def is_known(self) -> bool:
        return self[0] is None

    def get_known(self):
        return self[1] if self[0] is None else None

    def get_aval(self):
        return self[0]


def trace_to_jaxpr_nounits(fun, pvals, instantiate=False):
    """Partial evaluation of `fun` (a linear_util WrappedFun or a function) on PartialVals:
    what depends only on the known inputs is computed now, the rest is a jaxpr. Returns
    (the jaxpr of the unknown outputs: over the constants and the unknown inputs, with
    the equations they need; an output PartialVal each, known ones with their value;
    the jaxpr's constants). `instantiate` (a bool, or one per output) makes outputs
    unknown even when known. JAX: pe.trace_to_jaxpr_nounits (flax's linen scan finds its
    broadcast variables with it)."""
    pvals = [PartialVal(p) for p in pvals]
    unknown = [i for i, p in enumerate(pvals) if not p.is_known()]
    call = getattr(fun, "call_wrapped", fun)

    def with_known_inputs(*xs):
        args = [p.get_known() for p in pvals]
        for i, x in zip(unknown, xs):
            args[i] = x
        return call(*args)

    closed = make_jaxpr(with_known_inputs)(
        *[ShapeDtypeStruct(pvals[i][0].shape, pvals[i][0].dtype) for i in unknown])
    jaxpr = closed.jaxpr
    # Known: what the constants alone determine (effects aside: they happen when run).
    unknown_vars = set(jaxpr.invars)
    for eqn in jaxpr.eqns:
        if eqn.effects or any(v in unknown_vars for v in eqn.invars
                              if not isinstance(v, Literal)):
            unknown_vars.update(eqn.outvars)
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(jaxpr.outvars)
    known_outs = [v for v, inst in zip(jaxpr.outvars, instantiate)
                  if not inst and (isinstance(v, Literal) or v not in unknown_vars)]
    unknown_outs = [v for v in jaxpr.outvars if v not in known_outs]
    values = dict(zip(known_outs, eval_jaxpr(_needed(jaxpr, known_outs, invars=[]),
                                             closed.consts)))
    out_pvals = [PartialVal.known(values[v]) if v in values else PartialVal.unknown(v.aval)
                 for v in jaxpr.outvars]
    return _needed(jaxpr, unknown_outs, jaxpr.invars), out_pvals, list(closed.consts)


def _needed(jaxpr: Jaxpr, outvars, invars) -> Jaxpr:
    """`jaxpr` computing only `outvars` from its constants and `invars`: the equations
    they need."""
    needed = {v for v in outvars if not isinstance(v, Literal)}
    eqns = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in needed for v in eqn.outvars):
            eqns.append(eqn)
            needed.update(v for v in eqn.invars if not isinstance(v, Literal))
    return Jaxpr(jaxpr.constvars, invars, outvars, eqns[::-1])
