"""Forward mode: `jvp`, emitted as `jaxpr.jvp @f`."""
from __future__ import annotations

import numpy as np

from mjax.specs import dtypes as _dt
from mjax.tracing import registration
from mjax.base import trace_trees, tree_util
from mjax.ad import eager_jvp, levels, symbolic_zeros
from mjax.ad.staging import (_check_aux_pair, _check_callable, _is_inexact, _jax_type,
                             _leaf_aval, _zeros, stage_function, staged)
from mjax.tracing.core import aval_of_value, current_trace
from mjax.dialect.attributes import Symbol
from mjax.dialect.ops import transforms as T
from mjax.dialect.types import RefAval
from mjax.passes.ir_util import mark_outer_perturbed
from mjax.specs.dtypes import hitype_rules
from mjax.tracing.hijax_lowering import has_hi
from mjax.tracing.staging import call_args, emit
from mjax.base.traceback_util import api_boundary


# ---- jvp --------------------------------------------------------------------------------
def _check_tangents(p_leaves, t_leaves, what="jvp"):
    """JAX's checks that each tangent matches its primal (float0 for integer primals)."""
    for p, t in zip(p_leaves, t_leaves):
        pa, ta = aval_of_value(p), _leaf_aval(t)
        if ta is None:
            if what == "jvp" and _is_inexact(pa):   # (a float0 tangent of a float primal)
                raise TypeError(_dtype_mismatch(pa, pa.dtype.name, str(np.dtype(_dt.float0))))
            continue
        if type(pa) is RefAval and what == "jvp":   # (JAX's class: a ref has no tangent)
            raise ValueError(f"jvp of a Ref primal: a Ref ({_jax_type(pa.inner_aval)}) holds "
                             f"no tangent; pass its value (ref[...]) or close over the ref")
        if what == "linearize":
            if pa.shape != ta.shape or (_is_inexact(pa) and pa.dtype != ta.dtype):
                raise ValueError(f"linearized function called on tangent values inconsistent "
                                 f"with the original primal values:\nGot tangent aval "
                                 f"{_jax_type(ta)} for primal aval {_jax_type(pa)} but "
                                 f"expected {_jax_type(pa)}.")
            continue
        if pa.shape != ta.shape:
            raise ValueError(f"jvp called with different primal and tangent shapes;Got primal "
                             f"shape {pa.shape} and tangent shape as {ta.shape}")
        want = pa.dtype if _is_inexact(pa) else np.dtype(_dt.float0)
        if np.dtype(ta.dtype) != want:
            shown = want.name if _is_inexact(pa) else str(want)
            raise TypeError(_dtype_mismatch(pa, shown, ta.dtype.name))


def _dtype_mismatch(pa, expected: str, got: str) -> str:
    return (f"primal and tangent arguments to jax.jvp do not match; dtypes must be equal, "
            f"or in case of int/bool primal dtype the tangent dtype must be float0.Got primal "
            f"dtype {pa.dtype.name} and so expected tangent dtype {expected}, but got tangent "
            f"dtype {got} instead.")


@api_boundary
def jvp(fun, primals, tangents, has_aux=False):
    """(fun(*primals), directional derivative along tangents). JAX: jax.jvp."""
    _check_callable(fun)
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; "
                        f"found {type(primals).__name__} and {type(tangents).__name__}.")
    if hitype_rules and has_hi(tuple(primals)):
        raise NotImplementedError("jvp with hijax primal values: mjax differentiates hi "
                                  "values in reverse mode only (mjax/tracing/hijax_lowering.py)")
    p_leaves, p_tree = trace_trees.tree_flatten(tuple(primals))
    t_leaves, t_tree = trace_trees.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(f"primal and tangent arguments to jax.jvp must have the same tree "
                        f"structure; primals have tree structure {p_tree} whereas tangents "
                        f"have tree structure {t_tree}.")
    _check_tangents(p_leaves, t_leaves)
    t_diff = [t for p, t in zip(p_leaves, t_leaves) if _is_inexact(aval_of_value(p))]

    def jvp_impl(p_leaves, t_diff):
        primals = tree_util.tree_unflatten(p_tree, p_leaves)
        in_avals = [aval_of_value(x) for x in p_leaves]
        diff_args = tuple(i for i, a in enumerate(in_avals) if _is_inexact(a))
        f = fun if eager is None else eager_jvp.seen(fun, eager)
        traced = stage_function(f, tuple(primals), {}, diff_leaves=diff_args, forward=True,
                                tangents=t_diff)
        out_avals = traced.out_avals
        if has_aux:
            _check_aux_pair(traced.out_tree, out_avals)
        diff_results = tuple(j for j, a in enumerate(out_avals) if _is_inexact(a))
        res = emit(T.JvpOp, call_args(traced, p_leaves) + list(t_diff),
                   callee=Symbol(traced.name), diff_args=diff_args,
                   diff_results=diff_results)
        _note_outer_perturbation(res, list(p_leaves) + list(t_diff))
        outs, touts = res[:len(out_avals)], res[len(out_avals):]
        for t, a in zip(outs, out_avals):
            t.aval = a
        for t, j in zip(touts, diff_results):
            t.aval = out_avals[j]
        tan_by = dict(zip(diff_results, touts))
        tangents_out = [tan_by[j] if j in tan_by else _zeros(a) for j, a in enumerate(out_avals)]
        out = tree_util.tree_unflatten(traced.out_tree, outs)
        tout = tree_util.tree_unflatten(traced.out_tree, tangents_out)
        if has_aux:
            return out[0], tout[0], out[1]
        return out, tout
    if current_trace() is not None:
        eager = None
        return staged(jvp_impl, concrete_root=True)(list(p_leaves), list(t_diff))
    # (eagerly, a custom_jvp rule's Python values come back as they are: mjax.ad.eager_jvp)
    with eager_jvp.running(p_leaves, t_leaves) as eager:
        got = staged(jvp_impl, concrete_root=True)(list(p_leaves), list(t_diff))
    return eager_jvp.raw_outputs(eager, got[0], got[1], got[2:])


def _note_outer_perturbation(res, leaves) -> None:
    """Marks the jaxpr.jvp op (OUTER_PERTURBED) when a differentiation enclosing this jvp
    surely perturbs its primals or tangents: there JAX's JVP of a custom_vjp function
    hands its linear part (custom_lin) to that differentiation, which has no rule for it
    (NotImplementedError, passes/forward_mode.py), rather than raising its TypeError."""
    level = levels.depth()
    if not level or not res or not any(
            symbolic_zeros.perturbation(x, level) is True for x in leaves):
        return
    mark_outer_perturbed(res[0].value.owner.operation)


registration.JVP.fill(jvp)
