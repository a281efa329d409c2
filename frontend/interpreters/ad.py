"""JAX: jax.interpreters.ad: forward- and reverse-mode rules of user-defined primitives,
and JAX's symbolic zero tangents.

The tables (`primitive_jvps`, `primitive_transposes`) are filled as in JAX and read by
the passes for user-defined primitives (mjax/tracing/primitive.py, passes/user_primitives.py);
mjax's own primitives keep their rules in mjax.passes.rules.
"""
from __future__ import annotations

from mjax import lax
from mjax import numpy as jnp
from mjax.tracing.core import Tracer
from mjax.ad import levels, symbolic_zeros
from mjax.ad.symbolic_zeros import SymbolicZero, tangent_aval, zeros_like_aval  # noqa: F401
from mjax.tracing.primitive import JVPS, TRANSPOSES, UndefinedPrimal, Zero

__all__ = ["primitive_jvps", "primitive_transposes", "add_jaxvals_p", "defjvp", "defjvp2",
           "deflinear", "deflinear2", "defbilinear", "get_primitive_transpose", "Zero",
           "SymbolicZero", "UndefinedPrimal", "is_undefined_primal", "instantiate_zeros",
           "zeros_like_aval", "add_tangents", "add_jaxvals", "jvp", "linearize", "JVPTracer"]

class _HoldsTangent(type):
    def __instancecheck__(cls, x):
        level = levels.depth()
        return isinstance(x, Tracer) and level > 0 and symbolic_zeros.perturbed(x, level)


class JVPTracer(metaclass=_HoldsTangent):
    """JAX's tracer of forward mode. mjax's tracers are of one class under every
    transformation (grad and jvp are staged, then expanded by passes), so this class only
    answers `isinstance` as JAX's does: a tracer the innermost differentiation perturbs
    (JAX holds only those in JVP tracers; libraries sort outputs by it: equinox's
    filter_jvp)."""

primitive_jvps: dict = JVPS
primitive_transposes: dict = TRANSPOSES
add_jaxvals_p = lax.add_p   # (JAX's sum of tangents; mjax's is an add)


def is_undefined_primal(x) -> bool:
    return type(x) is UndefinedPrimal


def instantiate_zeros(tangent):
    """A dense array for a symbolic zero; other tangents as they are."""
    if isinstance(tangent, (Zero, SymbolicZero)):
        return zeros_like_aval(tangent.aval)
    return tangent


def add_tangents(x, y):
    """x + y where either may be a symbolic zero."""
    if isinstance(x, Zero):
        return y
    if isinstance(y, Zero):
        return x
    return add_jaxvals(x, y)


def add_jaxvals(x, y):
    return jnp.add(x, y)


def _user_rules(what):
    raise NotImplementedError(
        f"jax.interpreters.ad.{what}: JAX's JVP tracing internals; mjax's jvp is the "
        "--jaxpr-jvp pass (use mjax.jvp / mjax.linearize)")


def jvp(*args, **kwargs):
    _user_rules("jvp")


def linearize(*args, **kwargs):
    _user_rules("linearize")


def defjvp(primitive, *jvprules):
    """Registers one JVP rule per operand: rule(tangent, *primals, **params) -> the
    output tangent's part from that operand (None: the operand is not differentiable)."""
    def jvp_rule(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        parts = [rule(t, *primals, **params) for rule, t in zip(jvprules, tangents)
                 if rule is not None and not isinstance(t, Zero)]
        if not parts:
            return out, Zero.from_primal_value(out)
        total = parts[0]
        for p in parts[1:]:
            total = add_tangents(total, p)
        return out, total
    primitive_jvps[primitive] = jvp_rule
    return jvp_rule


def defjvp2(primitive, *jvprules):
    """As defjvp, but each rule also gets the primal output: rule(t, ans, *primals)."""
    def jvp_rule(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        parts = [rule(t, out, *primals, **params) for rule, t in zip(jvprules, tangents)
                 if rule is not None and not isinstance(t, Zero)]
        if not parts:
            return out, Zero.from_primal_value(out)
        total = parts[0]
        for p in parts[1:]:
            total = add_tangents(total, p)
        return out, total
    primitive_jvps[primitive] = jvp_rule
    return jvp_rule


def deflinear(primitive, transpose_rule):
    """A primitive linear in all its operands: its JVP is itself on the tangents;
    transpose_rule(cotangent, **params) -> one cotangent per operand."""
    def jvp_rule(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        return out, primitive.bind(*map(instantiate_zeros, tangents), **params)
    primitive_jvps[primitive] = jvp_rule
    primitive_transposes[primitive] = lambda ct, *args, **params: transpose_rule(ct,
                                                                                **params)
    return jvp_rule


def deflinear2(primitive, transpose_rule):
    """As deflinear; transpose_rule(cotangent, *operands, **params)."""
    def jvp_rule(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        return out, primitive.bind(*map(instantiate_zeros, tangents), **params)
    primitive_jvps[primitive] = jvp_rule
    primitive_transposes[primitive] = transpose_rule
    return jvp_rule


def defbilinear(prim, lhs_rule, rhs_rule):
    """A primitive linear in each of its two operands separately (as a product)."""
    defjvp(prim, lambda t, x, y, **p: prim.bind(t, y, **p),
           lambda t, x, y, **p: prim.bind(x, t, **p))

    def transpose(ct, x, y, **params):
        if is_undefined_primal(x):
            return lhs_rule(ct, x, y, **params), None
        return None, rhs_rule(ct, x, y, **params)
    primitive_transposes[prim] = transpose


def get_primitive_transpose(p):
    try:
        return primitive_transposes[p]
    except KeyError as e:
        raise NotImplementedError(
            f"Transpose rule (for reverse-mode differentiation) for '{p}' not "
            "implemented") from e

