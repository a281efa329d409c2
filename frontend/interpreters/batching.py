"""JAX: jax.interpreters.batching: vmap rules of user-defined primitives.

The tables are filled as in JAX; `primitive_batchers` is read by vmap for user-defined
primitives (mjax/tracing/primitive.py, passes/user_primitives.py); mjax's own primitives keep
their batching rules in mjax.passes.rules.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mjax import lax
from mjax import numpy as jnp
from mjax.tracing.primitive import BATCHERS

__all__ = ["primitive_batchers", "axis_primitive_batchers", "fancy_primitive_batchers", "AxisData",
           "defvectorized", "defbroadcasting", "defreducer", "bdim_at_front", "broadcast",
           "not_mapped", "register_vmappable", "unregister_vmappable"]

primitive_batchers: dict = BATCHERS


class AxisData(NamedTuple):
    """What a batching rule that takes the mapped axis is told of it (JAX: AxisData)."""
    name: object
    size: int
    spmd_name: object = None
    explicit_mesh_axis: object = None


def _axis_size(args, dims) -> int:
    return next(np.shape(x)[d] for x, d in zip(args, dims) if d is not None)


class _RulesTakingTheAxis:
    """A table whose rules JAX calls with the mapped axis besides (vals, dims): stored in
    `primitive_batchers` with that signature, the axis size read off a batched operand.
    (mjax's vmap passes run on the IR, where a vmap's axis name is not kept: rules are
    told None.) JAX: batching.axis_primitive_batchers / fancy_primitive_batchers."""

    def __init__(self, call):
        self._call = call

    def __setitem__(self, prim, rule):
        call = self._call

        def wrapped(args, dims, **params):
            return call(rule, AxisData(None, _axis_size(args, dims)), args, dims, params)
        wrapped.axis_rule = rule
        BATCHERS[prim] = wrapped

    def __getitem__(self, prim):
        return getattr(BATCHERS[prim], "axis_rule")

    def __contains__(self, prim):
        return hasattr(BATCHERS.get(prim), "axis_rule")

    def __delitem__(self, prim):
        del BATCHERS[prim]

    def get(self, prim, default=None):
        return self[prim] if prim in self else default


# rule(axis_size, axis_name, trace_type, vals, dims, **params)
axis_primitive_batchers = _RulesTakingTheAxis(
    lambda rule, axis, args, dims, params: rule(axis.size, axis.name, None, args, dims,
                                                **params))
# rule(axis_data, vals, dims, **params)
fancy_primitive_batchers = _RulesTakingTheAxis(
    lambda rule, axis, args, dims, params: rule(axis, args, dims, **params))

not_mapped = None  # the batch dimension of an unbatched operand


def defvectorized(prim):
    """An elementwise unary primitive: the batch axis passes straight through."""
    def rule(args, dims, **params):
        (x,), (d,) = args, dims
        return prim.bind(x, **params), d
    primitive_batchers[prim] = rule


def defbroadcasting(prim):
    """An elementwise n-ary primitive whose operands have one shape (scalars broadcast):
    when the non-scalar operands agree in shape and batch axis the primitive applies as
    it is; otherwise every non-scalar operand gets the batch axis first (the unbatched
    ones broadcast to it) and batched scalars trailing unit axes, as JAX's rule does."""
    def rule(args, dims, **params):
        shape, dim = next((np.shape(x), d) for x, d in zip(args, dims) if d is not None)
        if not all(np.shape(x) == shape and d == dim for x, d in zip(args, dims)
                   if np.ndim(x)):
            size, dim = shape[dim], 0
            args = [bdim_at_front(x, d, size) if np.ndim(x) else x
                    for x, d in zip(args, dims)]
            ndim = max(np.ndim(x) for x in args)
            args = [x if d is None or np.ndim(x) == ndim else
                    lax.expand_dims(x, tuple(range(np.ndim(x), ndim)))
                    for x, d in zip(args, dims)]
        out = prim.bind(*args, **params)
        return out, ([dim] * len(out) if prim.multiple_results else dim)
    primitive_batchers[prim] = rule


def defreducer(prim):
    """A reduction over `axes`: the axes shift past the batch axis."""
    def rule(args, dims, *, axes, **params):
        (x,), (d,) = args, dims
        x = jnp.moveaxis(x, d, 0) if d is not None else x
        shifted = tuple(a + (d is not None) for a in axes)
        return prim.bind(x, axes=shifted, **params), 0 if d is not None else None
    primitive_batchers[prim] = rule


def bdim_at_front(x, bdim, size, mesh_axis=None):
    """`x` with its batch axis first (broadcast to `size` when it has none)."""
    if bdim is None:
        return broadcast(x, size, 0, mesh_axis)
    return jnp.moveaxis(x, bdim, 0)


def broadcast(x, sz, axis, mesh_axis):
    """`x` with a new axis of size `sz` at `axis`."""
    x = jnp.asarray(x)
    shape = list(x.shape)
    shape.insert(axis, sz)
    dims = tuple(d for d in range(len(shape)) if d != axis)   # (one op, as JAX's)
    return lax.broadcast_in_dim(x, tuple(shape), dims)


def register_vmappable(data_type, spec_type, axis_size_type, to_elt, from_elt,
                       make_iota):
    raise NotImplementedError(
        "jax.interpreters.batching.register_vmappable: vmap over custom container types "
        "is not supported by mjax (its vmap maps arrays of pytrees)")


def unregister_vmappable(data_type):
    raise NotImplementedError("jax.interpreters.batching.unregister_vmappable: see "
                              "register_vmappable")
