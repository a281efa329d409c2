"""Fuser rules for equations with a body: a nested jit, custom_jvp_call and
custom_vjp_call (jax.nn.relu is one): block specs are pulled through the body, and the
kernel side evaluates the body's equations on blocks; a hijax VJPHiPrimitive's call
uses the primitive's own rules. JAX: block_spec.py's jit, custom_jvp/custom_vjp and
call_hi_primitive rules."""
from __future__ import annotations

from mjax.base import tree_util
from mjax.dialect.ops import transforms as T
from mjax.passes import custom_rules
from mjax.tracing.primitive import primitive_of
from mjax.experimental.pallas.fuser.block_pull import pull_jaxpr, pull_transforms
from mjax.experimental.pallas.fuser.block_push import push_jaxpr
from mjax.experimental.pallas.fuser.block_types import (EVAL_RULES, PULL_RULES,
                                                        PUSH_RULES, USAGE_RULES, Usage)
from mjax.experimental.pallas.fuser.block_usage import compute_usage
from mjax.experimental.pallas.fuser.kernel_fn import make_kernel_function


def _regular(v):
    return {Usage.REGULAR}


def _body(params, key):
    closed = params[key]
    if closed is None:
        raise NotImplementedError("fuser: an equation whose body is not known here")
    if closed.consts:
        raise NotImplementedError(f"fuser: a {key} with constants is not supported yet")
    return closed.jaxpr


def _hi_primitive(params):
    """The VJPHiPrimitive a custom call stages (mjax.experimental.hijax_vjp), or None."""
    source = custom_rules.source_of(str(params.get("rule") or ""))
    return getattr(getattr(source, "custom", None), "hi_primitive", None)


def _rules(prim, key):
    # (a hijax VJPHiPrimitive's call is JAX's call_hi_primitive: its own
    # pull_block_spec_rule, block_eval_rule and push_block_spec_rule methods are the
    # rules, an AttributeError where it lacks one, as JAX's; its usages are forwarded)
    def usage(ctx, used_outs, **params):
        if _hi_primitive(params) is not None:
            return [set().union(*used_outs)] * len(ctx.avals_in)
        body = _body(params, key)
        read = compute_usage(body, used_outs)
        return [read(v) for v in body.invars]

    def pull(ctx, out_transforms, **params):
        hi = _hi_primitive(params)
        if hi is not None:
            return hi.pull_block_spec_rule(ctx, tuple(out_transforms))
        body = _body(params, key)
        ins, _ = pull_transforms(body, tuple(out_transforms), read_usage=_regular,
                                 scalar_prefetch_handler=ctx.scalar_prefetch_handler,
                                 grid_len=ctx.grid_len, strict_mode=ctx.strict_mode)
        return ins

    def evaluate(ctx, *args, **params):
        hi = _hi_primitive(params)
        if hi is not None:
            return tree_util.tree_leaves(hi.block_eval_rule(ctx, *args))
        body = _body(params, key)
        _, env = pull_jaxpr(body, ctx.out_block_specs, read_usage=_regular,
                            scalar_prefetch_handler=ctx.scalar_prefetch_handler,
                            grid_len=ctx.grid_len)
        in_tree = tree_util.tree_structure((tuple(body.invars), {}))
        out_tree = tree_util.tree_structure(tuple(body.outvars))
        fn = make_kernel_function(body, (), in_tree, out_tree, _regular,
                                  ctx.in_block_specs, env, ctx.scalar_prefetch_handler,
                                  ctx.grid_len)
        return fn(ctx.get_program_ids(), ctx.scalar_prefetch, *args)

    def push(ctx, *specs, **params):
        hi = _hi_primitive(params)
        if hi is not None:
            return hi.push_block_spec_rule(ctx, specs)
        return push_jaxpr(_body(params, key), *specs)

    USAGE_RULES[prim] = usage
    PULL_RULES[prim] = pull
    EVAL_RULES[prim] = evaluate
    PUSH_RULES[prim] = push


_rules(primitive_of(T.CallOp), "jaxpr")
_rules(primitive_of(T.CustomJvpCallOp), "call_jaxpr")
_rules(primitive_of(T.CustomVjpCallOp), "call_jaxpr")
