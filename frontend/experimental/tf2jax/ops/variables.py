"""Variables: reads, writes and gathers through a captured resource handle.

A handle is a `Resource` naming an entry of the params pytree; the converted function
reads `ctx.state` and writes assignments back there (returned as the updated params).
"""
from __future__ import annotations

import numpy as np

from mjax.experimental.tf2jax.graph import Resource
from mjax.experimental.tf2jax.ops.registry import (UnsupportedOperationError, cast,
                                                   register, shape_of, xp)


def _var(ctx, node, handle) -> str:
    if not isinstance(handle, Resource):
        raise TypeError(f"tf2jax: {node.op} (node '{node.name}' {ctx.where}) expects a "
                        f"variable's resource handle, got {type(handle).__name__}")
    if handle.name not in ctx.state:
        raise KeyError(f"tf2jax: the variable '{handle.name}' read by node '{node.name}' "
                       f"{ctx.where} is missing from the params")
    return handle.name


@register("ReadVariableOp")
def _read(ctx, node, handle):
    return ctx.state[_var(ctx, node, handle)]


@register("VariableShape")
def _variable_shape(ctx, node, handle):
    return np.asarray(shape_of(ctx.state[_var(ctx, node, handle)]),
                      node.attrs.get("out_type", np.int32))


@register("ResourceGather")
def _resource_gather(ctx, node, handle, indices):
    params = ctx.state[_var(ctx, node, handle)]
    if int(node.attrs.get("batch_dims", 0)) != 0:
        raise UnsupportedOperationError(f"tf2jax: ResourceGather with batch_dims != 0 "
                                        f"(node '{node.name}' {ctx.where})")
    return xp(params, indices).take(params, indices, axis=0)


def _assign(combine):
    def rule(ctx, node, handle, value):
        name = _var(ctx, node, handle)
        old = ctx.state[name]
        new = combine(xp(old, value), old, value)
        ctx.state[name] = cast(new, np.dtype(old.dtype))
        return []
    return rule


register("AssignVariableOp")(_assign(lambda m, old, v: v))
register("AssignAddVariableOp")(_assign(lambda m, old, v: m.add(old, v)))
register("AssignSubVariableOp")(_assign(lambda m, old, v: m.subtract(old, v)))
