"""Argument shapes: static only. A TF shape with unknown dimensions (a tf.function traced
with `None` in its input_signature) or a `polymorphic_shapes` entry with a symbolic
dimension raises NotImplementedError naming the argument; static specs are checked
against the arguments. JAX: jax2tf's polymorphic_shapes, export.symbolic_args_specs.
"""
from __future__ import annotations

import re

import tensorflow as tf

from mjax import trace_trees


class PolyShape(tuple):
    """A shape specification: dimension sizes (int), "_" (the argument's own size) or
    "..." (the rest of them). Symbolic names are not supported. JAX: jax2tf.PolyShape."""

    def __new__(cls, *dim_specs):
        return tuple.__new__(cls, dim_specs)


def static_shape(t: tf.Tensor, where: str) -> tuple[int, ...]:
    """The static shape of a tensor, or NotImplementedError when part of it is unknown."""
    shape = t.shape
    if shape.rank is None or any(d is None for d in shape.as_list()):
        raise NotImplementedError(
            f"jax2tf.convert: {where} has the shape {shape} with unknown dimensions (a "
            f"tf.function input_signature with None?): shape polymorphism is not "
            f"supported by mjax; give the arguments static shapes")
    return tuple(int(d) for d in shape.as_list())


def _is_spec_leaf(s) -> bool:
    return s is None or isinstance(s, (str, PolyShape))


def _dims_of(spec) -> list:
    """The dimension specs of one PolyShape or string (parentheses optional)."""
    if isinstance(spec, PolyShape):
        items = list(spec)
    else:
        text = spec.strip()
        if text.startswith("(") and text.endswith(")"):
            text = text[1:-1]
        items = [d.strip() for d in text.split(",")]
        if items and items[-1] == "":
            items.pop()     # "(3,)"
    return items


def check_polymorphic_shapes(polymorphic_shapes, args, leaf_shapes) -> None:
    """Accepts `polymorphic_shapes` (None, one spec for all arguments, or one per
    positional argument, each a pytree prefix of it) when every dimension is static and
    matches the argument; otherwise raises naming the argument."""
    if polymorphic_shapes is None:
        return
    if _is_spec_leaf(polymorphic_shapes):
        per_arg = [polymorphic_shapes] * len(args)
    elif isinstance(polymorphic_shapes, (list, tuple)):
        per_arg = list(polymorphic_shapes)
        if len(per_arg) != len(args):
            raise ValueError(f"jax2tf.convert: polymorphic_shapes must be a sequence with "
                             f"one entry per positional argument ({len(args)}), got "
                             f"{len(per_arg)}: {polymorphic_shapes!r}")
    else:
        raise ValueError(f"jax2tf.convert: polymorphic_shapes must be None, a string, a "
                         f"PolyShape or a sequence of them, got {polymorphic_shapes!r}")
    pos = 0
    for i, (spec, arg) in enumerate(zip(per_arg, args)):
        n = len(trace_trees.tree_leaves(arg))
        shapes, pos = leaf_shapes[pos:pos + n], pos + n
        specs = trace_trees.tree_leaves(spec, is_leaf=_is_spec_leaf) if spec is not None \
            else [None]
        if spec is not None and not _is_spec_leaf(spec):
            if len(specs) != n:
                raise ValueError(f"jax2tf.convert: polymorphic_shapes[{i}] = {spec!r} does "
                                 f"not match the structure of args[{i}] ({n} arrays)")
        else:
            specs = specs * n
        for j, (s, shape) in enumerate(zip(specs, shapes)):
            if s is not None:
                where = f"args[{i}]" + (f" (array {j})" if n > 1 else "")
                _check_static(s, shape, where)


def _check_static(spec, shape, where: str) -> None:
    dims = _dims_of(spec)
    if "..." in dims:
        k = dims.index("...")
        dims = dims[:k] + ["_"] * max(0, len(shape) - len(dims) + 1) + dims[k + 1:]
    for d in dims:
        if not (isinstance(d, int) or d == "_" or re.fullmatch(r"\d+", str(d))):
            raise NotImplementedError(
                f"jax2tf.convert: polymorphic_shapes for {where} is {spec!r}, with the "
                f"symbolic dimension {d!r}: shape polymorphism is not supported by mjax "
                f"(static shapes only; use None, integers or '_')")
    if len(dims) != len(shape):
        raise ValueError(f"jax2tf.convert: polymorphic shape {spec!r} of {where} must have "
                         f"rank {len(shape)} (its shape is {shape})")
    for d, size in zip(dims, shape):
        if d != "_" and int(d) != size:
            raise ValueError(f"jax2tf.convert: polymorphic shape {spec!r} of {where} does "
                             f"not match its shape {shape}: dimension {d} != {size}")
