"""JAX: jax.custom_derivatives: custom JVP and VJP rules (mjax.custom_jvp/custom_vjp)
and the symbolic-zero helpers their rules use."""
from __future__ import annotations

import functools

import numpy as np

from mjax import trace_trees, tree_util
from mjax.ad import custom_jvp, custom_vjp
from mjax.ad.custom import CustomVJPPrimal
from mjax.ad.symbolic_zeros import SymbolicZero, tangent_aval, zeros_like_aval
from mjax.api import typeof
from mjax.core import eval_jaxpr
from mjax.jaxpr_api import make_jaxpr
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



def closure_convert(fun, *example_args):
    """(converted, consts): `converted(*args, *consts)` computes `fun(*args)` with the
    inexact values `fun` closes over (arrays, an outer trace's tracers) taken as the
    explicit trailing arguments `consts`, as custom_vjp's bwd rules need when they close
    over values being differentiated. The other closed-over values stay closed over.
    JAX: jax.closure_convert."""
    closed, shapes = make_jaxpr(fun, return_shape=True)(*example_args)
    out_tree = trace_trees.tree_structure(shapes)
    in_tree = trace_trees.tree_structure(example_args)
    consts = list(closed.consts)
    hoisted = [i for i, c in enumerate(consts)
               if np.issubdtype(np.dtype(typeof(c).dtype), np.inexact)]
    kept = {i: c for i, c in enumerate(consts) if i not in hoisted}

    def converted(*args_and_consts):
        n = len(args_and_consts) - len(hoisted)
        args, given = args_and_consts[:n], args_and_consts[n:]
        flat, tree = trace_trees.tree_flatten(tuple(args))
        if tree != in_tree:
            raise TypeError(f"closure_convert: the converted function takes arguments of "
                            f"structure {in_tree}, got {tree}")
        full = dict(kept)
        full.update(zip(hoisted, given))
        outs = eval_jaxpr(closed.jaxpr, [full[i] for i in range(len(consts))], *flat)
        return tree_util.tree_unflatten(out_tree, outs)
    return converted, [consts[i] for i in hoisted]
