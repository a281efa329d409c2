"""`checkpoint` (remat): reverse mode recomputes a function's forward pass in the
backward pass instead of saving its residuals (`jaxpr.checkpoint @f`, expanded by the
passes: passes/rules/transforms.py, passes/rules/remat.py)."""
from __future__ import annotations

import inspect

from mjax.jit import nested_traces
from mjax.base import trace_trees, tree_util
from mjax.ad import levels
from mjax.ad.checkpoint_policies import encode as encode_policy
from mjax.ad.checkpoint_policies import for_remat3
from mjax.ad.arguments import split_static
from mjax.ad.staging import _wraps, stage_function, staged
from mjax.config import config
from mjax.tracing.core import current_trace
from mjax.dialect.ops import transforms as T
from mjax.passes.rules.op_names import note_callee
from mjax.tracing.region_cache import CHECKPOINTS
from mjax.tracing.staging import emit_call, kept_for


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=(),
               static_argnames=(), concrete=None):
    """Marks fun for rematerialization: reverse mode recomputes its forward pass in the
    backward pass instead of saving residuals (visible as `jaxpr.checkpoint` in the IR).
    JAX: jax.checkpoint (`concrete` was removed there: passing it raises, as in JAX).
    Under jax_remat3 (read here, as JAX does) the policy is mapped by for_remat3."""
    if concrete is not None:
        raise NotImplementedError("The `concrete` option to `jax.checkpoint` was removed "
                                  "in JAX v0.10.0; use `static_argnums` instead.")
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(
        static_argnums)
    static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(
        static_argnames)
    if static_argnames:   # (a static name passed positionally is a static position)
        try:
            params = list(inspect.signature(fun).parameters)
        except (TypeError, ValueError):
            params = []
        named_pos = tuple(params.index(n) for n in static_argnames
                          if n in params and params.index(n) not in static_argnums)
    else:
        named_pos = ()
    remat3 = config.read("jax_remat3")
    extra = encode_policy(for_remat3(policy) if remat3 else policy)

    @_wraps(fun)
    def remat_f(*args, **kwargs):
        static, dyn, full = split_static(
            args, static_argnums + tuple(i for i in named_pos if i < len(args)))
        static_kw = {k: kwargs.pop(k) for k in static_argnames if k in kwargs}

        def checkpoint_impl(*a, **kw):
            leaves, in_tree = trace_trees.tree_flatten((a, kw))
            kept = kept_for(CHECKPOINTS, fun)   # (reused as JAX reuses its jaxpr)
            key = None if kept is None else nested_traces.key(
                in_tree, leaves, (tuple(static), tuple(sorted(static_kw.items()))))

            def stage():
                # (JAX traces the body to a jaxpr first: custom rules in it are traced
                # only when differentiating it, by the passes)
                with levels.at(0):
                    return stage_function(lambda *d, **k: fun(*full(d), **k, **static_kw),
                                          a, kw, name=getattr(fun, "__name__", "checkpoint"))
            callee, operands, out_tree, out_avals = nested_traces.kept_or_staged(
                kept, key, leaves, current_trace().module, stage)
            # (its ops: checkpoint/sin, as JAX's)
            note_callee(current_trace().module, callee, "checkpoint")
            outs = emit_call(callee, operands, out_avals, cls=T.CheckpointOp,
                             prevent_cse=bool(prevent_cse), **extra)
            return tree_util.tree_unflatten(out_tree, outs)
        return staged(checkpoint_impl)(*dyn, **kwargs)
    if remat3:
        # (JAX's remat3 returns a partial: no signature, so arguments are args[i])
        def remat3_f(*args, **kwargs):
            return remat_f(*args, **kwargs)
        return remat3_f
    return remat_f


remat = checkpoint
