"""JAX: jax.custom_derivatives: custom JVP and VJP rules (mjax.custom_jvp/custom_vjp)
and the symbolic-zero helpers their rules use."""
from __future__ import annotations

import functools

from mjax.base import trace_trees
from mjax.ad import custom_jvp, custom_vjp
from mjax.ad.custom import CustomVJPPrimal
from mjax.ad.symbolic_zeros import SymbolicZero, tangent_aval, zeros_like_aval
from mjax.jit.api import typeof
from mjax.jaxpr.api import closure_convert
from mjax.extend.core.primitives import custom_jvp_call_p, custom_vjp_call_p  # noqa: F401

__all__ = ["custom_jvp", "custom_vjp", "custom_gradient", "SymbolicZero", "CustomVJPPrimal",
           "linear_call", "custom_vjp_primal_tree_values", "zero_from_primal",
           "closure_convert"]


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


def linear_call(fun, fun_transpose, residual_args, linear_args):
    """fun(residual_args, linear_args), with `fun` linear in `linear_args` and
    `fun_transpose(residual_args, ct)` its transpose: transposition (reverse mode,
    linear_transpose) calls `fun_transpose`, whose own transpose is `fun` again; forward
    mode applies `fun` to the tangents (a linear_call again, so a linearized function
    keeps the custom transpose). The residual arguments get zero cotangents; perturbing
    them under jvp is an error (JAX asserts it). JAX: jax.custom_derivatives.linear_call.

    Built as a custom_jvp call (forward mode) of a custom_vjp call (reverse mode, whose
    bwd is the transposed linear_call). Unlike JAX, which has no batching rule for
    linear_call, vmap batches `fun` (and its transpose) as ordinary functions."""
    @custom_jvp
    def linear_call_jvp(res, lin):
        return _linear_call_vjp(fun, fun_transpose, res, lin)

    def jvp(primals, tangents):
        res, lin = primals
        res_dot, lin_dot = tangents
        if any(not isinstance(t, SymbolicZero) for t in trace_trees.tree_leaves(res_dot)):
            raise AssertionError("linear_call: the residual arguments of a linear_call "
                                 "must not be differentiated (its function is linear in "
                                 "linear_args only; JAX asserts their tangents are zero)")
        lin_dot = trace_trees.tree_map(_instantiate, lin_dot)
        return (linear_call(fun, fun_transpose, res, lin),
                _linear_call_vjp(fun, fun_transpose, res, lin_dot))
    linear_call_jvp.defjvp(jvp, symbolic_zeros=True)
    return linear_call_jvp(residual_args, linear_args)


def _instantiate(t):
    return t.instantiate() if isinstance(t, SymbolicZero) else t


def _linear_call_vjp(fun, fun_transpose, residual_args, linear_args):
    """The reverse-mode half of linear_call: a custom_vjp call whose bwd is
    linear_call(fun_transpose, fun, ...)."""
    @custom_vjp
    def linear_call_body(res, lin):     # (the name errors show)
        return fun(res, lin)
    linear_call_body.is_linear_call = True     # (linear_transpose transposes it)

    def fwd(res, lin):
        return fun(res, lin), res

    def bwd(res, ct):
        zeros = trace_trees.tree_map(lambda r: zeros_like_aval(tangent_aval(typeof(r))), res)
        return zeros, linear_call(fun_transpose, fun, res, ct)
    linear_call_body.defvjp(fwd, bwd)
    return linear_call_body(residual_args, linear_args)
