"""Which values of a fused function are blocked arrays and which only scalar indices
(scalar prefetch): a backward walk with one rule per primitive, forwarding the usages of
an equation's results to its operands where the primitive has no rule.
JAX: block_spec.compute_usage."""
from __future__ import annotations

from mjax.jaxpr.objects import Jaxpr, Literal
from mjax.experimental.pallas.fuser.block_types import (USAGE_RULES, Usage,
                                                        UsageRuleContext)


def compute_usage(jaxpr: Jaxpr, out_usages):
    """A function reading each variable's set of usages (REGULAR where never used)."""
    env: dict = {}

    def read(v):
        return env.get(v, {Usage.REGULAR})

    def write(v, usage):
        if not isinstance(v, Literal):
            env.setdefault(v, set()).update(usage)

    for v, u in zip(jaxpr.outvars, out_usages):
        write(v, u)
    for eqn in reversed(jaxpr.eqns):
        outs = [read(v) for v in eqn.outvars]
        rule = USAGE_RULES.get(eqn.primitive)
        if rule is not None:
            ctx = UsageRuleContext(tuple(v.aval for v in eqn.invars),
                                   tuple(v.aval for v in eqn.outvars))
            ins = rule(ctx, outs if eqn.primitive.multiple_results else outs[0],
                       **eqn.params)
        else:
            ins = [set().union(*outs)] * len(eqn.invars)
        for v, u in zip(eqn.invars, ins):
            write(v, u)
    return read
