"""`linear_transpose`: the transpose of a linear function. JAX: jax.linear_transpose.

A linear function's transpose is its VJP at any point; mjax takes it at zeros. JAX
transposes equation by equation and fails on a primitive without a transpose rule
(`sin`), so mjax first walks the traced function and refuses what is not linear in its
inputs with JAX's error:

    f(x) = 2 * x + sin(c)      linear in x: sin reads only the constant c
    f(x) = sin(x)              NotImplementedError: Transpose rule ... for 'sin'
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from mjax import dtypes as _dt
from mjax import trace_trees, tree_util
from mjax.ad.reverse import vjp
from mjax.core import aval_of_value
from mjax.dialect.types import ShapedArray, aval_of
from mjax.jitted import Jitted
from mjax.lax import convert_element_type
from mjax.source_info import wraps

# Primitives with no transpose rule in JAX (not linear in any operand).
_NONLINEAR = frozenset("""
    sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh exp exp2 log log1p expm1
    logistic sqrt rsqrt cbrt pow integer_pow square abs sign max min erf erfc erf_inv
    lgamma digamma igamma igammac random_gamma_grad bessel_i0e bessel_i1e atan2 rem floor
    ceil round nextafter is_finite tan sort argmax argmin reduce_max reduce_min
    reduce_prod reduce_and reduce_or cumprod cummax cummin polygamma zeta
""".split())
# Linear in each operand, so not in two at once.
_BILINEAR = frozenset(("mul", "dot_general", "conv_general_dilated"))


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function `fun` at values shaped like `primals`
    (arrays or ShapeDtypeStructs): `f_t(out_cotangent)` returns a tuple of cotangents,
    one per primal. JAX: jax.linear_transpose."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    if not callable(fun):
        raise TypeError("the first argument must be callable")
    leaves, in_tree = trace_trees.tree_flatten(primals)
    in_avals = [ShapedArray(tuple(x.shape), np.dtype(x.dtype)) if _is_struct(x)
                else aval_of_value(x) for x in leaves]
    # (traced once per transpose, as JAX: a jit of this transpose's own wrapper of fun
    # keeps the trace, which its call in the VJP below reuses: mjax.jit_traces)
    jitted = Jitted(wraps(fun)(lambda *args: fun(*args)))
    traced = jitted._trace(tuple(tree_util.tree_unflatten(in_tree, in_avals)), {}, (),
                           len(primals))
    out_avals, out_tree = traced.out_avals, traced.out_tree
    in_dtypes = [a.dtype for a in in_avals]
    out_dtypes = [a.dtype for a in out_avals]
    if not ((all(_dt.issubdtype(d, np.inexact) for d in in_dtypes + out_dtypes))
            or (all(_dt.issubdtype(d, np.integer) for d in in_dtypes + out_dtypes))):
        raise TypeError("linear_transpose only supports [float or complex] -> [float or "
                        "complex], and integer -> integer functions, but got "
                        f"{in_dtypes} -> {out_dtypes}.")
    if in_dtypes and _dt.issubdtype(in_dtypes[0], np.integer):
        raise NotImplementedError("linear_transpose of integer -> integer functions is not "
                                  "implemented in mjax (its VJPs of integers are float0)")
    _check_linear(traced)

    # (staged as one jit: the eager vjp of a function that is itself a linearize result
    # runs a program with the wrong number of arguments)
    transpose_at = Jitted(lambda zeros, ct: vjp(jitted, *zeros)[1](ct))

    def transposed(out_cotangent):
        ct_leaves, ct_tree = trace_trees.tree_flatten(out_cotangent)
        if ct_tree != out_tree:
            raise TypeError("cotangent tree does not match function output, expected "
                            f"{out_tree} but got {ct_tree}")
        got = [aval_of_value(c) for c in ct_leaves]
        if any(g.shape != a.shape or g.dtype != a.dtype for g, a in zip(got, out_avals)):
            raise TypeError("cotangent type does not match function output, expected "
                            f"{tuple(out_avals)} but got {ct_leaves}")
        zeros = tree_util.tree_unflatten(in_tree, [
            convert_element_type(np.zeros(a.shape, a.dtype), a.dtype, weak_type=a.weak_type)
            for a in in_avals])
        cts = transpose_at(zeros, out_cotangent)
        if all(g.weak_type for g in got):
            return cts
        # (the cotangents flow from strongly typed output cotangents: strong, as in JAX)
        return trace_trees.tree_map(
            lambda c: convert_element_type(c, c.dtype, weak_type=False), cts)

    return tree_util.Partial(transposed)


def _is_struct(x) -> bool:
    return not hasattr(x, "aval") and hasattr(x, "shape") and hasattr(x, "dtype") and \
        not isinstance(x, (np.ndarray, np.generic))


def _check_linear(traced) -> None:
    table = ir.SymbolTable(traced.module.operation)
    block = table[traced.name].regions[0].blocks[0]
    # (the block's arguments past the inputs are captured values: constants here)
    inputs = list(block.arguments)[:len(traced.in_avals)]
    _walk(table, block, {a for a in inputs if _inexact(a)}, set())


def _inexact(v) -> bool:
    """Whether a value can depend linearly on the inputs (integers and booleans cannot)."""
    return _dt.issubdtype(aval_of(v.type).dtype, np.inexact)


def _walk(table, block, linear: set, seen: set) -> set:
    """Marks the values of `block` that depend on `linear` ones; raises JAX's error at
    the first op that is not linear in them. Returns the linear results of the block's
    terminator operands."""
    for op in block.operations:
        op = op.operation
        ins = [i for i, v in enumerate(op.operands) if v in linear]
        if not ins:
            continue
        name = op.name.split(".", 1)[-1]
        if name in _NONLINEAR or (name == "div" and 1 in ins) or (
                name in _BILINEAR and len(ins) > 1):
            raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) "
                                      f"for '{name}' not implemented")
        if "callee" in op.attributes:
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            if callee not in seen:
                body = table[callee].regions[0].blocks[0]
                _walk(table, body, {body.arguments[i] for i in ins
                                    if i < len(body.arguments)
                                    and _inexact(body.arguments[i])}, seen | {callee})
        for region in op.regions:
            for inner in region.blocks:
                # (conservatively: every block argument of a region reading a linear
                # operand is linear)
                _walk(table, inner, linear | {a for a in inner.arguments if _inexact(a)},
                      seen)
        linear.update(r for r in op.results if _inexact(r))
    return linear
