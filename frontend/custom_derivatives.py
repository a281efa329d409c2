"""JAX: jax.custom_derivatives: custom JVP and VJP rules (mjax.custom_jvp/custom_vjp)
and the symbolic-zero helpers their rules use."""
from __future__ import annotations

import functools

from mjax import trace_trees
from mjax.ad import custom_jvp, custom_vjp
from mjax.ad.custom import CustomVJPPrimal
from mjax.ad.symbolic_zeros import SymbolicZero, tangent_aval, zeros_like_aval
from mjax.api import typeof
from mjax.jaxpr_api import closure_convert
from mjax.extend.core.primitives import custom_jvp_call_p, custom_vjp_call_p  # noqa: F401

__all__ = ["custom_jvp", "custom_vjp", "custom_gradient", "SymbolicZero", "CustomVJPPrimal",
           "custom_vjp_primal_tree_values", "zero_from_primal", "closure_convert"]


def custom_vjp_primal_tree_values(tree):
    """`tree` with each CustomVJPPrimal leaf replaced by its value."""
    def value(leaf):
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value
    return trace_trees.tree_map(value, tree)


def zero_from_primal(val, symbolic_zeros=False):
    """The zero tangent of each leaf of `val` (a SymbolicZero with symbolic_zeros=True;
    float0 zeros for integer leaves)."""
    def zero(x):
        aval = tangent_aval(typeof(x))
        return SymbolicZero(aval) if symbolic_zeros else zeros_like_aval(aval)
    return trace_trees.tree_map(zero, val)


def custom_gradient(fun):
    """`fun(*args) -> (value, vjp)` as a function of args whose reverse-mode derivative
    is `vjp(cotangent)` (TensorFlow's tf.custom_gradient style). The backward pass calls
    `fun` again to get `vjp` (mjax's residuals are arrays, not closures), so `fun` must be
    pure; the result is the same as JAX's. JAX: jax.custom_gradient."""
    @custom_vjp
    def value(*args):
        return fun(*args)[0]

    def forward(*args):
        return fun(*args)[0], args

    def backward(args, cotangent):
        cts = fun(*args)[1](cotangent)
        # (a rule returning one cotangent answers for a function of one argument)
        return cts if isinstance(cts, tuple) else (cts,)

    value.defvjp(forward, backward)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        if kwargs:
            return custom_gradient(functools.partial(fun, **kwargs))(*args)
        return value(*args)
    return wrapped
