"""`mjax.tree`: the short names for pytree utilities, as in `jax.tree`."""
from __future__ import annotations

from mjax.base import tree_util as _tu

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]


def all(tree, *, is_leaf=None) -> bool:  # noqa: A001
    """Whether every leaf is truthy. JAX: jax.tree.all."""
    return _tu.tree_all(tree, is_leaf=is_leaf)


def broadcast(prefix_tree, full_tree, is_leaf=None):
    """prefix_tree's leaves replicated over full_tree's matching subtrees. JAX: jax.tree.broadcast."""
    return _tu.tree_broadcast(prefix_tree, full_tree, is_leaf=is_leaf)


def flatten(tree, is_leaf=None):
    """(leaves, treedef). JAX: jax.tree.flatten."""
    return _tu.tree_flatten(tree, is_leaf)


def flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """([(key path, leaf)], treedef). JAX: jax.tree.flatten_with_path."""
    return _tu.tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)


def leaves(tree, is_leaf=None):
    """The leaves, in flattening order. JAX: jax.tree.leaves."""
    return _tu.tree_leaves(tree, is_leaf)


def leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """[(key path, leaf)]. JAX: jax.tree.leaves_with_path."""
    return _tu.tree_leaves_with_path(tree, is_leaf, is_leaf_takes_path)


def map(f, tree, *rest, is_leaf=None):  # noqa: A001
    """f over the leaves of tree (and of the trees in rest). JAX: jax.tree.map."""
    return _tu.tree_map(f, tree, *rest, is_leaf=is_leaf)


def map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """f(key path, leaf, ...) over the leaves. JAX: jax.tree.map_with_path."""
    return _tu.tree_map_with_path(f, tree, *rest, is_leaf=is_leaf,
                                  is_leaf_takes_path=is_leaf_takes_path)


def reduce(function, tree, initializer=_tu._NO_INITIALIZER, is_leaf=None):  # noqa: A001
    """functools.reduce over the leaves. JAX: jax.tree.reduce."""
    return _tu.tree_reduce(function, tree, initializer, is_leaf=is_leaf)


def reduce_associative(operation, tree, *, identity=_tu._NO_INITIALIZER, is_leaf=None):
    """A balanced pairwise reduction of the leaves. JAX: jax.tree.reduce_associative."""
    return _tu.tree_reduce_associative(operation, tree, identity=identity, is_leaf=is_leaf)


def static(**kwargs):
    """A dataclass field (dataclasses.field's arguments) marked static, so that
    register_dataclass keeps it as aux data rather than a child. JAX: jax.tree.static."""
    import dataclasses
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)


def structure(tree, is_leaf=None):
    """The treedef. JAX: jax.tree.structure."""
    return _tu.tree_structure(tree, is_leaf)


def transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Outer-of-inner to inner-of-outer. JAX: jax.tree.transpose."""
    return _tu.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def unflatten(treedef, leaves):
    """The tree of structure treedef with the given leaves. JAX: jax.tree.unflatten."""
    return _tu.tree_unflatten(treedef, leaves)
