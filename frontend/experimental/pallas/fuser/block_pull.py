"""Pulling BlockSpecs backwards through a jaxpr: from its outputs' BlockSpecs to the
BlockSpecs of its inputs (and of every value between). JAX: block_spec._pull_block_spec.
"""
from __future__ import annotations

import functools

from mjax.jaxpr.objects import Jaxpr, Literal
from mjax.jaxpr.objects import eval_jaxpr
from mjax.experimental.pallas.core import BlockSpec, no_block_spec
from mjax.experimental.pallas.fuser import jaxpr_util
from mjax.experimental.pallas.fuser.block_types import (ILLEGAL, PULL_RULES,
                                                        SCALAR_OPERAND_RULES,
                                                        BlockIndexTransform,
                                                        NoBlockIndexTransform,
                                                        PullRuleContext, Usage,
                                                        current_scalar_prefetch,
                                                        no_block_index_transform)
from mjax.experimental.pallas.fuser.index_compare import same_index_maps


def _select(i):
    return lambda *block_indices: block_indices[i]


def _initial_transforms(specs):
    """The identity transform of each output's BlockSpec (outputs whose BlockSpecs are
    the same share one, so values both read compare equal)."""
    out, firsts = [], []
    for i, spec in enumerate(specs):
        if spec is no_block_spec:
            out.append(no_block_index_transform)
            firsts.append(i)
            continue
        first = next((j for j in firsts if specs[j] is not no_block_spec
                      and specs[j].index_map is spec.index_map
                      and _shapes_equal(specs[j].block_shape, spec.block_shape)), i)
        firsts.append(first)
        out.append(BlockIndexTransform(spec.block_shape, _select(first),
                                       pipeline_mode=spec.pipeline_mode))
    return tuple(out)


def _dim_size(d):
    return getattr(d, "block_size", d)


def _shapes_equal(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(
        (x is None) == (y is None) and _dim_size(x) == _dim_size(y) and
        (type(x) is type(y) or {type(x).__name__, type(y).__name__} <= {"int", "Blocked"})
        for x, y in zip(a, b))


def _to_block_spec(out_specs, transform):
    """The BlockSpec of a value with `transform`, in terms of the output BlockSpecs."""
    if isinstance(transform, NoBlockIndexTransform):
        return no_block_spec
    index_map = None
    if transform.block_shape is not None:
        def index_map(*grid):
            idx = tuple(None if s is no_block_spec else s.index_map(*grid)
                        for s in out_specs)
            return transform.block_index_transform(*idx)
    return BlockSpec(transform.block_shape, index_map,
                     memory_space=transform.memory_space,
                     pipeline_mode=transform.pipeline_mode)


def _transforms_equal(a, b, n_indices, strict_mode) -> bool:
    if a is b:
        return True
    if not (isinstance(a, BlockIndexTransform) and isinstance(b, BlockIndexTransform)):
        return False
    if not _shapes_equal(a.block_shape, b.block_shape):
        return False
    return (not strict_mode or a.block_index_transform is b.block_index_transform
            or same_index_maps(a.block_index_transform, b.block_index_transform,
                               n_indices))


def _scalar_prefetch_fn(jaxpr: Jaxpr, eqn_index: int, needed, handler, grid_len,
                       read_usage):
    """A function computing `needed` (operands of equation `eqn_index`) from the
    scalar-prefetch values (the jaxpr's constvars used as such), read from the
    context's refs."""
    sp_vars = [v for v in jaxpr.constvars if Usage.SCALAR_PREFETCH in read_usage(v)]
    sub = jaxpr.replace(invars=[], eqns=jaxpr.eqns[:eqn_index], outvars=list(needed))
    sub = jaxpr_util.dce(sub)
    if jaxpr_util.used_vars(sub) - set(sp_vars) - {
            v for e in sub.eqns for v in e.outvars}:
        raise NotImplementedError(
            "pull_block_spec: a block index computed from blocked values (only "
            "scalar-prefetch values and constants can give indices)")
    sub = sub.replace(constvars=[], invars=sp_vars)

    if not jaxpr_util.used_vars(sub) & set(sp_vars):
        return lambda: eval_jaxpr(sub, [], *[None] * len(sp_vars))   # (constants)

    def fn():
        if grid_len is None:
            raise ValueError("Grid must be provided to pull_block_spec.")
        if handler is None:
            raise ValueError("pull_block_spec: a scalar_prefetch_handler is needed for "
                             "the fusion's scalar-prefetch values")
        refs = handler(*current_scalar_prefetch())
        return eval_jaxpr(sub, [], *[r[0] for r in refs])
    return fn


def pull_transforms(jaxpr, out_transforms, *, read_usage, scalar_prefetch_handler,
                    grid_len, strict_mode):
    """(transforms of the jaxpr's invars, (transform of each variable, the
    scalar-prefetch function of each equation that takes one))."""
    env = dict(zip(jaxpr.outvars, out_transforms))
    sp_fns = {}
    n_indices = [None if isinstance(t, NoBlockIndexTransform) else len(t.block_shape)
                 for t in out_transforms]

    def read(v):
        return no_block_index_transform if isinstance(v, Literal) else env.get(
            v, no_block_index_transform)

    for i in reversed(range(len(jaxpr.eqns))):
        eqn = jaxpr.eqns[i]
        outs = tuple(read(v) for v in eqn.outvars)
        if all(t is no_block_index_transform for t in outs):
            continue
        rule = PULL_RULES.get(eqn.primitive)
        if rule is None:
            raise NotImplementedError(
                f"pull_block_spec: no rule for the primitive {eqn.primitive.name!r}")
        ctx = PullRuleContext(tuple(v.aval for v in eqn.invars),
                              tuple(v.aval for v in eqn.outvars),
                              tuple(read_usage(v) for v in jaxpr.outvars),
                              scalar_prefetch_handler, grid_len, strict_mode,
                              literal_operands=tuple(isinstance(v, Literal)
                                                     for v in eqn.invars))
        usages = [set() if isinstance(v, Literal) else read_usage(v) for v in eqn.invars]
        # (the scalar operands a rule computes indices from: scalar-prefetch values
        # and literals, in operand order; kernel_fn substitutes the same ones)
        needed = [v for v, u in zip(eqn.invars, usages)
                  if isinstance(v, Literal) or Usage.SCALAR_PREFETCH in u]
        if any(Usage.SCALAR_PREFETCH in u for u in usages) or (
                needed and eqn.primitive in SCALAR_OPERAND_RULES):
            ctx.scalar_prefetch_fn = sp_fns[i] = _scalar_prefetch_fn(
                jaxpr, i, needed, scalar_prefetch_handler, grid_len, read_usage)
        ins = rule(ctx, outs if eqn.primitive.multiple_results else outs[0],
                   **eqn.params)
        for v, t in zip(eqn.invars, ins):
            if isinstance(v, Literal):
                continue
            if v in env and not _transforms_equal(env[v], t, n_indices, strict_mode):
                t = BlockIndexTransform(ILLEGAL, ILLEGAL)
            env[v] = t

    def result(v):
        if read_usage(v) == {Usage.SCALAR_PREFETCH}:
            return None
        t = env.get(v, no_block_index_transform)
        if isinstance(t, BlockIndexTransform) and t.block_shape is ILLEGAL:
            raise ValueError(
                f"Fusion contains a DAG, cannot uniquely pull block specs:\n{jaxpr}")
        return t
    return tuple(result(v) for v in jaxpr.invars), (env, sp_fns)


def pull_jaxpr(jaxpr, out_specs, *, read_usage, scalar_prefetch_handler, grid_len,
               strict_mode=True):
    """(BlockSpecs of the jaxpr's invars, (BlockSpec of each variable, scalar-prefetch
    functions)); a value only used as a scalar index gets None."""
    transforms, (env, sp_fns) = pull_transforms(
        jaxpr, _initial_transforms(out_specs), read_usage=read_usage,
        scalar_prefetch_handler=scalar_prefetch_handler, grid_len=grid_len,
        strict_mode=strict_mode)
    to_spec = functools.partial(_to_block_spec, out_specs)
    specs = {v: to_spec(t) for v, t in env.items()
             if not (isinstance(t, BlockIndexTransform) and t.block_shape is ILLEGAL)}
    return tuple(None if t is None else to_spec(t) for t in transforms), (specs, sp_fns)
