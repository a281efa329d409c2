"""`linear_transpose`: the transpose of a linear function. JAX: jax.linear_transpose.

The traced function is transposed op by op with each op's transpose rule, as JAX's
backward pass does (`jaxpr.linear_transpose`, passes/linear_transpose.py): a custom_jvp
function is transposed through its primal, not its JVP rule, and a user primitive
through its registered transpose rule. When the transpose is first called (as JAX's
backward pass runs then), mjax walks the traced function and refuses what is not linear
in its inputs with JAX's error:

    f(x) = 2 * x + sin(c)      linear in x: sin reads only the constant c
    f(x) = sin(x)              NotImplementedError: Transpose rule ... for 'sin'
    f(x) = g(x), g custom_vjp  NotImplementedError: ... for 'custom_vjp_call'
"""
from __future__ import annotations

import numpy as np

from mjax.specs import dtypes as _dt
from mjax.base import trace_trees, tree_util
from mjax.tracing.core import aval_of_value
from mjax.dialect.attributes import Symbol
from mjax.dialect.ops import transforms as T
from mjax.dialect.types import ShapedArray
from mjax.jit.jitted import Jitted
from mjax.lax import convert_element_type, full
from mjax.passes.linearity import check_linear
from mjax.ad.staging import staged
from mjax.tracing.staging import emit, stage_function
from mjax.tracing.source_info import wraps


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function `fun` at values shaped like `primals`
    (arrays or ShapeDtypeStructs): `f_t(out_cotangent)` returns a tuple of cotangents,
    one per primal. JAX: jax.linear_transpose."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    return transpose_of(fun, primals, check=True)


def transpose_of(fun, primals: tuple, check: bool):
    """linear_transpose(fun, *primals); with check=False, what is not linear in the
    inputs is found only when the transposition is expanded (a solver's transposed
    system, staged in a rule that may never run: scipy.sparse.linalg)."""
    if not callable(fun):
        raise TypeError("the first argument must be callable")
    leaves, in_tree = trace_trees.tree_flatten(primals)
    in_avals = [ShapedArray(tuple(x.shape), np.dtype(x.dtype)) if _is_struct(x)
                else aval_of_value(x) for x in leaves]
    # (traced once per transpose, as JAX: a jit of this transpose's own wrapper of fun
    # keeps the trace, which its call in the VJP below reuses: mjax.jit.traces)
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
    # (checked at the first call, as JAX's backward pass finds a nonlinear op then)
    unchecked = [check]

    def transpose_staged(ct):
        # (fun staged again in this trace, at zeros of its argument types: the values
        # it closes over become the transpose's non-linear operands)
        zeros = [convert_element_type(full(a.shape, 0, a.dtype), a.dtype,
                                      weak_type=a.weak_type) for a in in_avals]
        staged = stage_function(jitted, tuple(tree_util.tree_unflatten(in_tree, zeros)), {})
        cts = emit(T.LinearTransposeOp,
                   list(staged.captured) + trace_trees.tree_leaves(ct),
                   callee=Symbol(staged.name), num_linear=len(in_avals))
        for t, a in zip(cts, in_avals):
            t.aval = a          # (the primals' weak types; see `transposed`)
        return tree_util.tree_unflatten(in_tree, cts)
    # (inline under a trace, as JAX's backward pass runs in its caller's; a jit eagerly)
    transpose_at = staged(transpose_staged)

    def transposed(out_cotangent):
        ct_leaves, ct_tree = trace_trees.tree_flatten(out_cotangent)
        if ct_tree != out_tree:
            raise TypeError("cotangent tree does not match function output, expected "
                            f"{out_tree} but got {ct_tree}")
        got = [aval_of_value(c) for c in ct_leaves]
        if any(g.shape != a.shape or g.dtype != a.dtype for g, a in zip(got, out_avals)):
            raise TypeError("cotangent type does not match function output, expected "
                            f"{tuple(out_avals)} but got {ct_leaves}")
        if unchecked[0]:
            _check_linear(traced, bool(in_dtypes) and _dt.issubdtype(in_dtypes[0],
                                                                      np.integer))
            unchecked[0] = False
        cts = transpose_at(out_cotangent)
        if all(g.weak_type for g in got):
            return cts
        # (the cotangents flow from strongly typed output cotangents: strong, as in JAX)
        return trace_trees.tree_map(
            lambda c: convert_element_type(c, c.dtype, weak_type=False), cts)

    return tree_util.Partial(transposed)


def _is_struct(x) -> bool:
    return not hasattr(x, "aval") and hasattr(x, "shape") and hasattr(x, "dtype") and \
        not isinstance(x, (np.ndarray, np.generic))


def _check_linear(traced, integers: bool) -> None:
    """Raises JAX's error for an op that is not linear in the inputs. `integers`: an
    integer -> integer function, whose integer values can be linear."""
    kinds = (np.inexact, np.integer) if integers else (np.inexact,)
    check_linear(traced.module, traced.name, len(traced.in_avals),
                 lambda dtype: any(_dt.issubdtype(dtype, k) for k in kinds))
