"""`make_jaxpr`: a function traced (as jit traces it) and shown as JAX's compact jaxpr
text (`ClosedJaxpr`, stages.py); `.mlir` is the jaxpr-dialect text."""
from __future__ import annotations

import functools

from mjax import tree_util
from mjax.jitted import Jitted
from mjax.shape_dtype_struct import ShapeDtypeStruct
from mjax.stages import ClosedJaxpr


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False):
    """make_jaxpr(f)(*args) -> ClosedJaxpr (JAX's compact text; `.mlir` dialect text)."""
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(
        static_argnums)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        j = Jitted(fun, static_argnums=static_argnums)
        dyn_args, dyn_kwargs, static_key = j._split(args, kwargs)
        traced = j._trace(dyn_args, dyn_kwargs, static_key, len(args))
        closed = ClosedJaxpr(traced)
        if return_shape:
            shapes = tree_util.tree_unflatten(traced.out_tree, [
                ShapeDtypeStruct(a.shape, a.dtype) for a in traced.out_avals])
            return closed, shapes
        return closed
    return wrapped
