"""JAX: jax.experimental.layout: array layouts (`Layout`), layout + sharding pairs
(`Format`) and `with_layout_constraint`. The classes live in mjax/specs/layout.py; jit takes
Formats as in_shardings/out_shardings, `device_put` takes a Format, `Array.format` and
`Compiled.input_formats`/`output_formats` report them."""
from __future__ import annotations

from mjax.base import trace_trees, tree_util
from mjax.tracing.core import bind
from mjax.dialect.ops.structural import LayoutConstraintOp
from mjax.specs.layout import Format, Layout
from mjax.arrays.placement import device_put
from mjax.tracing.tracer import Tracer

__all__ = ["Format", "Layout", "with_layout_constraint"]


def with_layout_constraint(x, layouts):
    """`x` (a pytree of arrays) laid out as `layouts` (a Layout, or a pytree prefix of
    them). Inside a traced function, a `jaxpr.layout_constraint` op; on arrays, each one
    copied into its layout on its device."""
    leaves, tree = trace_trees.tree_flatten(x)
    flat = tree_util.prefix_entries("with_layout_constraint layouts", layouts, x,
                                    lambda t: not isinstance(t, (tuple, list, dict)))
    if any(not isinstance(lay, Layout) for lay in flat):
        raise ValueError(f"layouts passed to `with_layout_constraint` must be of type "
                         f"`Layout`. Got {[type(lay) for lay in flat]}")
    outs = []
    for leaf, layout in zip(leaves, flat):
        layout.check_compatible_aval(getattr(leaf, "shape", ()))
        if isinstance(leaf, Tracer):   # (lowered to XLA's LayoutConstraint custom call)
            outs.append(bind(LayoutConstraintOp, leaf, major_to_minor=layout.major_to_minor))
            continue
        if not hasattr(leaf, "_buf"):
            raise ValueError(f"with_layout_constraint in eager mode can only be applied "
                             f"to jax.Arrays. Got {type(leaf)}")
        outs.append(leaf if leaf.format.layout == layout else
                    device_put(leaf, Format(layout, leaf.sharding)))
    return tree_util.tree_unflatten(tree, outs)
