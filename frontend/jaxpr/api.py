"""`make_jaxpr`: a function traced (as jit traces it) and shown as JAX's compact jaxpr
text (`ClosedJaxpr`, stages.py); `.mlir` is the jaxpr-dialect text. `closure_convert`
(jax.closure_convert) is built on it."""
from __future__ import annotations

import functools

import numpy as np

from mjax.base import trace_trees, tree_util
from mjax.tracing.core import Tracer, eval_jaxpr, literal_here
from mjax.specs.dtypes import hitype_rules
from mjax.tracing.hijax_lowering import HiResultError, has_hi
from mjax.jit.jitted import Jitted
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct
from mjax.arrays.sharding_types import typeof
from mjax.jit.stages import ClosedJaxpr
from mjax.base.traceback_util import api_boundary


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False):
    """make_jaxpr(f)(*args) -> ClosedJaxpr (JAX's compact text; `.mlir` dialect text)."""
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(
        static_argnums)

    @functools.wraps(fun)
    @api_boundary
    def wrapped(*args, **kwargs):
        j = Jitted(fun, static_argnums=static_argnums)
        if hitype_rules and not return_shape and has_hi((args, kwargs)):
            return j.trace(*args, **kwargs).jaxpr     # (hijax values: mjax/hijax_lowering)
        dyn_args, dyn_kwargs, static_key = j._split(args, kwargs)
        try:
            traced = j._trace(dyn_args, dyn_kwargs, static_key, len(args))
        except HiResultError:                         # (hijax results)
            if return_shape:
                raise
            return j.trace(*args, **kwargs).jaxpr
        closed = ClosedJaxpr(traced)
        if return_shape:
            shapes = tree_util.tree_unflatten(traced.out_tree, [
                ShapeDtypeStruct(a.shape, a.dtype) for a in traced.out_avals])
            return closed, shapes
        return closed
    return wrapped


def closure_convert(fun, *example_args):
    """(converted, consts): `converted(*args, *consts)` computes `fun(*args)` with the
    inexact traced values `fun` closes over (an outer trace's tracers) taken as the
    explicit trailing arguments `consts`, as custom_vjp's bwd rules need when they close
    over values being differentiated. The other closed-over values stay closed over.
    JAX: jax.closure_convert."""
    closed, shapes = make_jaxpr(fun, return_shape=True)(*example_args)
    out_tree = trace_trees.tree_structure(shapes)
    in_tree = trace_trees.tree_structure(example_args)
    consts = list(closed.consts)
    # (as JAX: only values a differentiation may perturb, traced inexact ones; concrete
    # arrays stay closed over)
    # (a jnp constant an enclosing live trace made is a traced value there, as in JAX)
    hoisted = [i for i, c in enumerate(consts)
               if (isinstance(c, Tracer) or not literal_here(c, None))
               and np.issubdtype(np.dtype(typeof(c).dtype), np.inexact)]
    kept = {i: c for i, c in enumerate(consts) if i not in hoisted}
    # (`converted` must not close over the hoisted values, nor over `closed` that holds
    # them: custom_vjp/custom_jvp treat a closed-over tracer as a value to differentiate)
    jaxpr, n_consts = closed.jaxpr, len(consts)

    def converted(*args_and_consts):
        n = len(args_and_consts) - len(hoisted)
        args, given = args_and_consts[:n], args_and_consts[n:]
        flat, tree = trace_trees.tree_flatten(tuple(args))
        if tree != in_tree:
            raise TypeError(f"closure_convert: the converted function takes arguments of "
                            f"structure {in_tree}, got {tree}")
        full = dict(kept)
        full.update(zip(hoisted, given))
        outs = eval_jaxpr(jaxpr, [full[i] for i in range(n_consts)], *flat)
        return tree_util.tree_unflatten(out_tree, outs)
    return converted, [consts[i] for i in hoisted]
