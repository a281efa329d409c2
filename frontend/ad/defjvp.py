"""JAX's `ad.defjvp` for functions lax composes where JAX has a primitive
(registration.DEFJVP): a custom_jvp whose rule sums, in argument order, the terms
`jvps[i](t_i, *primals)` of the arguments whose tangent is not a symbolic zero, as JAX's
standard JVP of a primitive does; with no rules, differentiating raises JAX's error."""
from __future__ import annotations

import functools

from mjax.tracing import registration
from mjax.ad.custom import custom_jvp
from mjax.ad.symbolic_zeros import SymbolicZero


@registration.DEFJVP.fill
def defjvp(fun, name, jvps):
    """`fun` (positional array arguments) with the JVP rules `jvps` (one per argument,
    None for an argument without one; jvps None for a function without any)."""
    wrapped = custom_jvp(fun)

    def rule(primals, tangents):
        if jvps is None:
            raise NotImplementedError(f"Differentiation rule for '{name}' not implemented")
        out = wrapped(*primals)
        terms = [jvp(t, *primals) for jvp, t in zip(jvps, tangents)
                 if jvp is not None and not isinstance(t, SymbolicZero)]
        if not terms:
            return out, SymbolicZero.from_primal_value(out)
        return out, functools.reduce(lambda s, term: s + term, terms)

    wrapped.defjvp(rule, symbolic_zeros=True)
    return wrapped
