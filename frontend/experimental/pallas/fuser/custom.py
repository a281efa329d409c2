"""custom_fusion: a function with its own fuser rules (pull/push block spec, the kernel
side's evaluation, and an optional implementation for inside Pallas kernels); and
evaluate, which runs a function equation by equation under the fuser's restrictions.
JAX: pallas/fuser/custom_fusion_lib.py, custom_evaluate.py.

A custom_fusion called under a trace stages one `custom_fusion` equation (a user
primitive, docs/extending.md) carrying the rules, which the fuser's drivers look up
(block_types' tables); outside any trace it runs `fun`, and inside a Pallas kernel being
traced it runs `pallas_impl` (else `fun`) in place.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any, Callable

from mjax import lax
from mjax.base import tree_util
from mjax.base.traceback_util import api_boundary
from mjax.dialect.types import ShapedArray
from mjax.jaxpr.objects import eval_equations
from mjax.tracing.core import current_trace
from mjax.tracing.primitive import LOWERINGS, LowerFun, Primitive
from mjax.tracing.staging import eval_shape
from mjax.experimental.pallas import primitives as pallas_primitives
from mjax.experimental.pallas.fuser import jaxpr_util
from mjax.experimental.pallas.fuser.block_types import (EVAL_RULES, PULL_RULES,
                                                        PUSH_RULES, USAGE_RULES,
                                                        no_block_index_transform)
from mjax.experimental.pallas.fuser.block_usage import compute_usage

custom_fusion_p = Primitive("custom_fusion")
custom_fusion_p.multiple_results = True


@dataclasses.dataclass(frozen=True)
class CustomEvalContext:
    """What a custom_fusion's eval rule gets: the BlockSpecs of its results and their
    block indices in the kernel instance."""
    out_block_specs: tuple
    out_block_indices: tuple


def _in_kernel() -> bool:
    return bool(pallas_primitives._kernels.stack)


def _call(fun, in_tree, flat_args):
    out = fun(*tree_util.tree_unflatten(in_tree, list(flat_args)))
    return tree_util.tree_leaves(out)


def _impl(*flat_args, fun, in_tree, **_):
    return _call(fun, in_tree, flat_args)


custom_fusion_p.def_impl(_impl)
custom_fusion_p.def_abstract_eval(lambda *avals, out_avals, **_: list(out_avals))
LOWERINGS.setdefault(custom_fusion_p, {})[None] = LowerFun(_impl)


class custom_fusion:
    """Decorates `fun`; `def_pull_block_spec`, `def_eval_rule` (both required),
    `def_push_block_spec` (for output fusions) and `def_pallas_impl` give its rules."""

    eval_rule: Callable | None = None
    pull_block_spec_rule: Callable | None = None
    push_block_spec_rule: Callable | None = None
    pallas_impl: Callable | None = None

    def __init__(self, fun: Callable[..., Any]):
        functools.update_wrapper(self, fun)
        self.fun = fun

    def def_pallas_impl(self, pallas_impl):
        self.pallas_impl = pallas_impl
        return pallas_impl

    def def_pull_block_spec(self, pull_block_spec_rule):
        self.pull_block_spec_rule = pull_block_spec_rule
        return pull_block_spec_rule

    def def_push_block_spec(self, push_block_spec_rule):
        self.push_block_spec_rule = push_block_spec_rule
        return push_block_spec_rule

    def def_eval_rule(self, eval_rule):
        self.eval_rule = eval_rule
        return eval_rule

    @api_boundary
    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", "fun")
        if self.eval_rule is None or self.pull_block_spec_rule is None:
            raise AssertionError(f"custom_fusion {name}: define its eval rule "
                                 "(def_eval_rule) and pull rule (def_pull_block_spec)")
        try:
            bound = inspect.signature(self.fun).bind(*args, **kwargs)
            bound.apply_defaults()
            args = bound.args
        except TypeError as e:
            raise TypeError(
                "The input arguments to the custom_fusion-decorated function "
                f"{name} could not be resolved to positional-only arguments. Binding "
                f"failed with the error:\n{e}") from e
        if _in_kernel():
            return (self.pallas_impl or self.fun)(*args)
        if current_trace() is None:
            return self.fun(*args)
        flat, in_tree = tree_util.tree_flatten(args)
        out_shape = eval_shape(lambda *xs: self.fun(*tree_util.tree_unflatten(in_tree, xs)),
                               *flat)
        flat_out, out_tree = tree_util.tree_flatten(out_shape)
        outs = custom_fusion_p.bind(
            *flat, fun=self.fun, in_tree=in_tree, out_tree=out_tree,
            out_avals=tuple(ShapedArray(o.shape, o.dtype) for o in flat_out),
            eval_rule=self.eval_rule, pull_block_spec_rule=self.pull_block_spec_rule,
            push_block_spec_rule=self.push_block_spec_rule)
        return tree_util.tree_unflatten(out_tree, list(outs))


# ---- its fuser rules -------------------------------------------------------------------
def _eval(ctx, *args, eval_rule, **_):
    return eval_rule(CustomEvalContext(ctx.out_block_specs, ctx.get_out_block_indices()),
                     *args)


def _pull(ctx, out_transforms, *, pull_block_spec_rule, **_):
    ins = pull_block_spec_rule(tuple(out_transforms))
    return [no_block_index_transform if t is None else t for t in ins]


def _push(ctx, *specs, push_block_spec_rule, **_):
    if push_block_spec_rule is None:
        raise NotImplementedError("push_block_spec: this custom_fusion has no push rule "
                                  "(def_push_block_spec)")
    return push_block_spec_rule(tuple(specs))


def _usage(ctx, used_outs, *, fun, in_tree, **_):
    avals = tree_util.tree_unflatten(in_tree, list(ctx.avals_in))
    jaxpr, _, _, _ = jaxpr_util.trace(fun, *avals)
    read = compute_usage(jaxpr, used_outs)
    return [read(v) for v in jaxpr.invars]


EVAL_RULES[custom_fusion_p] = _eval
PULL_RULES[custom_fusion_p] = _pull
PUSH_RULES[custom_fusion_p] = _push
USAGE_RULES[custom_fusion_p] = _usage


# ---- evaluate --------------------------------------------------------------------------
_DISALLOWED = {lax.scan_p, lax.while_p, lax.cond_p}


def evaluate(f, *, allow_transpose: bool = True):
    """`f` run equation by equation (scan, while and cond refused; transposes too unless
    `allow_transpose`)."""
    def wrapped(*args, **kwargs):
        jaxpr, consts, _, out_tree = jaxpr_util.trace(f, *args, **kwargs)

        def apply(eqn, vals):
            if eqn.primitive in _DISALLOWED:
                raise NotImplementedError(f"Primitive {eqn.primitive} not supported.")
            if not allow_transpose and eqn.primitive is lax.transpose_p:
                raise ValueError("Transpose not allowed.")
            return eqn.primitive.bind(*vals, **eqn.params)
        outs = eval_equations(jaxpr, consts, tree_util.tree_leaves((args, kwargs)),
                              apply)
        return tree_util.tree_unflatten(out_tree, outs)
    return wrapped
