"""Pushing BlockSpecs forward through a jaxpr: from its inputs' BlockSpecs to its
outputs', one rule per primitive (`PUSH_RULES`). JAX: block_spec._push_block_spec_jaxpr."""
from __future__ import annotations

from mjax.jaxpr.objects import Jaxpr, Literal
from mjax.experimental.pallas.core import no_block_spec
from mjax.experimental.pallas.fuser.block_types import PUSH_RULES, PushRuleContext


def push_jaxpr(jaxpr: Jaxpr, *flat_specs) -> tuple:
    if len(flat_specs) != len(jaxpr.invars):
        raise ValueError(f"Expected {len(jaxpr.invars)} block specs, got "
                         f"{len(flat_specs)}")
    env: dict = dict(zip(jaxpr.invars, flat_specs))
    env.update((v, no_block_spec) for v in jaxpr.constvars)

    def read(v):
        return no_block_spec if isinstance(v, Literal) else env[v]

    for eqn in jaxpr.eqns:
        ins = tuple(read(v) for v in eqn.invars)
        if all(s is no_block_spec for s in ins):
            env.update((v, no_block_spec) for v in eqn.outvars)
            continue
        rule = PUSH_RULES.get(eqn.primitive)
        if rule is None:
            raise NotImplementedError(
                f"push_block_spec: no rule for the primitive {eqn.primitive.name!r}")
        ctx = PushRuleContext(tuple(v.aval for v in eqn.invars),
                              tuple(v.aval for v in eqn.outvars))
        outs = rule(ctx, *ins, **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        env.update(zip(eqn.outvars, outs))
    outs = tuple(read(v) for v in jaxpr.outvars)
    given = [s for s in flat_specs if s is not no_block_spec]
    if not given:
        raise ValueError("push_block_spec: every input's block spec is no_block_spec")
    outs = tuple(given[0] if s is no_block_spec else s for s in outs)
    return outs

