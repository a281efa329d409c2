"""Pytrees over `optree` (tuples, lists, dicts, namedtuples, None, registered nodes)."""
from __future__ import annotations

import dataclasses
import functools

import optree

NAMESPACE = "mjax"
_NONE_IS_LEAF = False


def tree_flatten(tree, is_leaf=None):
    leaves, treedef = optree.tree_flatten(tree, is_leaf, none_is_leaf=_NONE_IS_LEAF,
                                          namespace=NAMESPACE)
    return leaves, treedef


def tree_unflatten(treedef, leaves):
    return optree.tree_unflatten(treedef, leaves)


def tree_leaves(tree, is_leaf=None):
    return optree.tree_leaves(tree, is_leaf, none_is_leaf=_NONE_IS_LEAF, namespace=NAMESPACE)


def tree_structure(tree, is_leaf=None):
    return optree.tree_structure(tree, is_leaf, none_is_leaf=_NONE_IS_LEAF,
                                 namespace=NAMESPACE)


def tree_map(f, tree, *rest, is_leaf=None):
    return optree.tree_map(f, tree, *rest, is_leaf=is_leaf, none_is_leaf=_NONE_IS_LEAF,
                           namespace=NAMESPACE)


def tree_reduce(function, tree, initializer=None, is_leaf=None):
    leaves = tree_leaves(tree, is_leaf)
    return functools.reduce(function, leaves) if initializer is None else functools.reduce(
        function, leaves, initializer)


def treedef_is_leaf(treedef) -> bool:
    return treedef.num_nodes == 1


def register_pytree_node(nodetype, flatten_func, unflatten_func):
    """JAX signature: flatten(x) -> (children, aux); unflatten(aux, children) -> x."""
    optree.register_pytree_node(nodetype, flatten_func,
                                lambda aux, children: unflatten_func(aux, children),
                                namespace=NAMESPACE)
    return nodetype


def register_pytree_node_class(cls):
    """Class decorator: uses cls.tree_flatten and cls.tree_unflatten(aux, children)."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype=None, *, data_fields=None, meta_fields=None, drop_fields=()):
    """Registers a dataclass: data fields are children, meta fields are static aux data."""
    if nodetype is None:
        return functools.partial(register_dataclass, data_fields=data_fields,
                                 meta_fields=meta_fields, drop_fields=drop_fields)
    if data_fields is None:
        fields = [f for f in dataclasses.fields(nodetype) if f.init]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)
                       and f.name not in drop_fields]
    data_fields, meta_fields = list(data_fields), list(meta_fields or [])

    def flatten(x):
        return ([getattr(x, n) for n in data_fields],
                tuple(getattr(x, n) for n in meta_fields))

    def unflatten(aux, children):
        kwargs = dict(zip(data_fields, children))
        kwargs.update(zip(meta_fields, aux))
        return nodetype(**kwargs)
    register_pytree_node(nodetype, flatten, unflatten)
    return nodetype


def Partial(func, *args, **kwargs):  # noqa: N802
    return functools.partial(func, *args, **kwargs)


def all_leaves(iterable) -> bool:
    return all(treedef_is_leaf(tree_structure(x)) for x in iterable)
