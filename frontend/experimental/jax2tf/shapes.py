"""Argument shapes for jax2tf: static TF shapes, or `polymorphic_shapes` specs whose
symbolic dimensions (one scope per conversion, with `polymorphic_constraints`) make one
export serve every size. A TF dimension of unknown size (a tf.function traced with `None`
in its input_signature) needs a spec; static specs are checked against the arguments.
JAX: jax2tf's polymorphic_shapes, export.symbolic_args_specs.
"""
from __future__ import annotations

import tensorflow as tf

from mjax.base import trace_trees
from mjax.export import SymbolicScope, is_symbolic_dim, symbolic_shape
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct


class PolyShape(tuple):
    """A shape specification: dimension sizes (int), dimension expressions ("b", "2*b"),
    "_" (the argument's own size) or "..." (the rest of them). JAX: jax2tf.PolyShape."""

    def __new__(cls, *dim_specs):
        return tuple.__new__(cls, dim_specs)


def tf_shape(t: tf.Tensor, where: str) -> tuple:
    """The TF shape as a tuple, None for dimensions of unknown size."""
    if t.shape.rank is None:
        raise NotImplementedError(f"jax2tf.convert: {where} has a shape of unknown rank")
    return tuple(t.shape.as_list())


def _is_spec_leaf(s) -> bool:
    return s is None or isinstance(s, (str, PolyShape))


def _spec_text(spec) -> str:
    """A PolyShape or string spec as symbolic_shape's text (parentheses optional)."""
    if isinstance(spec, PolyShape):
        return ", ".join(str(d) for d in spec)
    text = spec.strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    return text


def arg_specs(polymorphic_shapes, scope: SymbolicScope, args, leaf_shapes,
              leaf_dtypes) -> list[ShapeDtypeStruct]:
    """One ShapeDtypeStruct per flat argument: its spec's dimensions (None, one spec for
    all arguments, or one per positional argument, each a pytree prefix of it), or its own
    static shape where it has no spec. Raises naming the argument when a spec does not
    fit, or a dimension of unknown size has no spec."""
    n_args = len(args)
    if polymorphic_shapes is None or _is_spec_leaf(polymorphic_shapes):
        per_arg = [polymorphic_shapes] * n_args
    elif isinstance(polymorphic_shapes, (list, tuple)):
        per_arg = list(polymorphic_shapes)
        if len(per_arg) != n_args:
            raise ValueError(f"jax2tf.convert: polymorphic_shapes must be a sequence with "
                             f"one entry per positional argument ({n_args}), got "
                             f"{len(per_arg)}: {polymorphic_shapes!r}")
    else:
        raise ValueError(f"jax2tf.convert: polymorphic_shapes must be None, a string, a "
                         f"PolyShape or a sequence of them, got {polymorphic_shapes!r}")
    specs, pos = [], 0
    for i, arg in enumerate(args):
        spec = per_arg[i] if i < len(per_arg) else None
        n = len(trace_trees.tree_leaves(arg))
        leaves = trace_trees.tree_leaves(spec, is_leaf=_is_spec_leaf) \
            if not _is_spec_leaf(spec) else [spec] * n
        if len(leaves) != n:
            raise ValueError(f"jax2tf.convert: polymorphic_shapes[{i}] = {spec!r} does "
                             f"not match the structure of args[{i}] ({n} arrays)")
        for j, leaf in enumerate(leaves):
            where = f"args[{i}]" + (f" (array {j})" if n > 1 else "")
            specs.append(_leaf_spec(leaf, scope, leaf_shapes[pos], leaf_dtypes[pos], where))
            pos += 1
    # (keyword arguments: their own static shapes)
    for k in range(pos, len(leaf_shapes)):
        specs.append(_leaf_spec(None, scope, leaf_shapes[k], leaf_dtypes[k], "kwargs"))
    return specs


def _leaf_spec(spec, scope, shape: tuple, dtype, where: str) -> ShapeDtypeStruct:
    if spec is None:
        if None in shape:
            raise NotImplementedError(
                f"jax2tf.convert: {where} has the shape {shape} with dimensions of unknown "
                f"size (a tf.function input_signature with None?): give polymorphic_shapes "
                f"for them, e.g. '(b, ...)'")
        return ShapeDtypeStruct(shape, dtype)
    text = _spec_text(spec)
    try:
        dims = symbolic_shape(text, scope=scope, like=shape)
    except ValueError as e:
        if "different size" in str(e):
            raise ValueError(f"jax2tf.convert: polymorphic shape {spec!r} of {where} does "
                             f"not match its shape {shape}") from None
        if "rank" in str(e):
            raise ValueError(f"jax2tf.convert: polymorphic shape {spec!r} of {where} must "
                             f"have rank {len(shape)} (its shape is {shape})") from None
        raise ValueError(f"jax2tf.convert: polymorphic shape {spec!r} of {where}: "
                         f"{e}") from None
    if len(dims) != len(shape):
        raise ValueError(f"jax2tf.convert: polymorphic shape {spec!r} of {where} must have "
                         f"rank {len(shape)} (its shape is {shape})")
    for d, size in zip(dims, shape):
        if d is None:
            raise ValueError(f"jax2tf.convert: polymorphic shape {spec!r} of {where} takes "
                             f"a dimension of unknown size as it is ('_'); name it")
        if not is_symbolic_dim(d) and size is not None and d != size:
            raise ValueError(f"jax2tf.convert: polymorphic shape {spec!r} of {where} does "
                             f"not match its shape {shape}: dimension {d} != {size}")
    return ShapeDtypeStruct(dims, dtype)
