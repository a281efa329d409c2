"""Pytrees as mjax's transformations see them: as `mjax.tree_util`'s, except that a key
array is a node over its uint32 data (`tree_util.trace_registry`), where JAX's users see
a leaf (`tree_util.default_registry`). jit, vmap, grad, the loops and every other
transformation flatten their arguments and results with these, so they handle a key's
data as any array; users' own tree_util calls see keys as leaves, as in JAX.
"""
from __future__ import annotations

from mjax.base import tree_util
from mjax.base.tree_util import trace_registry as registry


def tree_flatten(tree, is_leaf=None):
    return registry.flatten(tree, is_leaf)


def tree_leaves(tree, is_leaf=None) -> list:
    return registry.flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return registry.flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    return tree_util.map_in(registry, f, tree, rest, is_leaf)


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    return tree_util.flatten_with_path_in(registry, tree, is_leaf, is_leaf_takes_path)


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    return tree_util.map_with_path_in(registry, f, tree, rest, is_leaf, is_leaf_takes_path)


def tree_all(tree, *, is_leaf=None) -> bool:
    return all(tree_leaves(tree, is_leaf))


def treedef_tuple(treedefs):
    return tree_util.treedef_tuple_in(registry, treedefs)


__all__ = ["registry", "tree_all", "tree_flatten", "tree_flatten_with_path", "tree_leaves",
           "tree_leaves_with_path", "tree_map", "tree_map_with_path", "tree_structure",
           "treedef_tuple"]
