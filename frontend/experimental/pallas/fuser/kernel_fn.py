"""The kernel-side function pull_block_spec returns: evaluates a fused function's
equations on blocks, with one rule per primitive (`EVAL_RULES`) that knows the blocks'
shapes, and scalar-prefetch operands computed from the kernel's scalar-prefetch refs.
JAX: block_spec.make_kernel_function."""
from __future__ import annotations

from mjax.base import tree_util
from mjax.jaxpr.objects import Literal
from mjax.experimental.pallas.core import no_block_spec
from mjax.experimental.pallas.fuser.block_types import (EVAL_RULES, KernelEvalContext,
                                                        Usage, scalar_prefetch_context)


def make_kernel_function(jaxpr, consts, in_tree, out_tree, read_usage, in_specs,
                         block_env, scalar_prefetch_handler, grid_len):
    spec_env, sp_fns = block_env
    in_usages = [read_usage(v) for v in jaxpr.invars]

    def spec_of(v):
        return no_block_spec if isinstance(v, Literal) else spec_env.get(v, no_block_spec)

    def kernel_fn(program_ids, scalar_prefetch, *args, **kwargs):
        flat, tree = tree_util.tree_flatten((args, kwargs))
        if tree != in_tree:
            raise ValueError(f"Expected {in_tree} PyTree, got {tree}")
        env = dict(zip(jaxpr.constvars, consts))
        env.update((v, x) for v, x, u in zip(jaxpr.invars, flat, in_usages)
                   if Usage.REGULAR in u)

        def read(v):
            return v.val if isinstance(v, Literal) else env.get(v)

        for i, eqn in enumerate(jaxpr.eqns):
            if not any(Usage.REGULAR in read_usage(v) for v in eqn.outvars):
                continue
            rule = EVAL_RULES.get(eqn.primitive)
            if rule is None:
                raise NotImplementedError(
                    f"pull_block_spec: no kernel evaluation rule for the primitive "
                    f"{eqn.primitive.name!r}")
            vals = [read(v) for v in eqn.invars]
            sp_fn = sp_fns.get(i)
            if sp_fn is not None:
                with scalar_prefetch_context(*scalar_prefetch):
                    sp_vals = iter(sp_fn())
                for k, v in enumerate(eqn.invars):
                    if isinstance(v, Literal) or Usage.SCALAR_PREFETCH in read_usage(v):
                        vals[k] = next(sp_vals)
            ctx = KernelEvalContext(
                scalar_prefetch=scalar_prefetch, program_ids=tuple(program_ids),
                avals_in=tuple(v.aval for v in eqn.invars),
                avals_out=tuple(v.aval for v in eqn.outvars),
                in_block_specs=tuple(spec_of(v) for v in eqn.invars),
                out_block_specs=tuple(spec_of(v) for v in eqn.outvars),
                grid_len=grid_len, scalar_prefetch_handler=scalar_prefetch_handler,
                out_usages=tuple(read_usage(v) for v in eqn.outvars))
            outs = rule(ctx, *vals, **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = [outs]
            env.update(zip(eqn.outvars, outs))
        return tree_util.tree_unflatten(out_tree, [read(v) for v in jaxpr.outvars])
    return kernel_fn
