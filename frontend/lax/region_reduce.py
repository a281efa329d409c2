"""Custom-computation reductions: `lax.reduce` / `lax.reduce_window` with any (pytree)
computation, staged as `jaxpr.reduce` / `jaxpr.reduce_window` with the computation traced
into a body region. Used by reduce.py and windowed.py when the computation is not a
recognized monoid (or there are several operands)."""
from __future__ import annotations

from mjax.base import tree_util
from mjax.tracing.core import (at_user_line, aval_of_value, current_trace, emit_region_op,
                               trace_region)
from mjax.dialect.types import ShapedArray
from mjax.lax.elementwise import convert_element_type


def reduce_with_region(cls, leaves, inits, tree, computation, params, rerun):
    """Stages op `cls` (jaxpr.reduce or jaxpr.reduce_window) over flat operands and init
    values; `rerun()` redoes the call under jit when there is no trace to stage into
    (eager mode)."""
    opname = cls.primitive
    if current_trace() is None:
        return rerun()
    n = len(leaves)
    avals = [aval_of_value(x) for x in leaves]
    for a in avals[1:]:
        if a.shape != avals[0].shape:
            raise ValueError(at_user_line(f"{opname} operands must have equal shapes, got "
                                          f"{[x.shape for x in avals]}"))
    inits = [convert_element_type(v, a.dtype) for v, a in zip(inits, avals)]
    for v in inits:
        if aval_of_value(v).shape != ():
            raise TypeError(at_user_line(f"{opname} init values must be scalars, got shape "
                                         f"{aval_of_value(v).shape}"))
    scalars = [ShapedArray((), a.dtype) for a in avals]

    def body_fun(*flat):
        acc = tree_util.tree_unflatten(tree, list(flat[:n]))
        x = tree_util.tree_unflatten(tree, list(flat[n:]))
        return computation(acc, x)
    body, out_avals, out_tree = trace_region(body_fun, scalars + scalars)
    if out_tree != tree:
        body.discard()
        raise ValueError(f"{opname} output must have the same tree structure as the "
                         f"operands {tree} vs. {out_tree}")
    if body.captured:
        body.discard()
        raise NotImplementedError(f"{opname}: a computation that closes over traced values "
                                  f"is not supported yet")
    result = cls.infer_regions([a.strip_weak_type() for a in avals] +
                               [aval_of_value(v).strip_weak_type() for v in inits],
                               cls.check_params(params),
                               [(scalars + scalars, [a.strip_weak_type() for a in out_avals])])
    outs = emit_region_op(cls, list(leaves) + inits, params, [body], [[]], list(result))
    return tree_util.tree_unflatten(tree, outs)
