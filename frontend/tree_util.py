"""Pytrees over `optree`, with JAX's semantics (JAX: jax.tree_util).

Containers: tuples, lists, dicts, OrderedDicts, defaultdicts, namedtuples, None (a node
without children) and registered nodes. As in JAX, dict keys are flattened in sorted
order and dicts are rebuilt with sorted keys (optree alone keeps the original insertion
order when unflattening; `_canonical` fixes that once per tree structure).

Key paths use JAX's key classes: `DictKey` (dict entries), `SequenceKey` (tuple/list
items), `GetAttrKey` (namedtuple and dataclass fields), `FlattenedIndexKey` (children of
nodes registered without keys).
"""
from __future__ import annotations

import builtins
import collections
import dataclasses
import functools
from typing import Any, Callable

import optree

NAMESPACE = "mjax"
_NONE_IS_LEAF = False

PyTreeDef = optree.PyTreeSpec


# ---- key classes -------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DictKey:
    """The key of a dict entry in a key path. JAX: tree_util.DictKey."""
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The index of a tuple or list item in a key path. JAX: tree_util.SequenceKey."""
    idx: int

    def __str__(self):
        return f"[{self.idx}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """A namedtuple or dataclass field in a key path. JAX: tree_util.GetAttrKey."""
    name: str

    def __str__(self):
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """The position of a child of a node registered without keys. JAX:
    tree_util.FlattenedIndexKey."""
    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


KeyEntry = Any
KeyPath = tuple


def _simple(k) -> str:
    if isinstance(k, DictKey):
        return str(k.key)
    if isinstance(k, SequenceKey):
        return str(k.idx)
    if isinstance(k, GetAttrKey):
        return k.name
    if isinstance(k, FlattenedIndexKey):
        return str(k.key)
    return str(k)


def keystr(keys, *, simple: bool = False, separator: str = "") -> str:
    """A key path as a string: "['a'][0].b", or with simple=True "a0b" (keys joined by
    `separator`). JAX: keystr."""
    return separator.join(_simple(k) if simple else str(k) for k in keys)


class _KeyEntry(optree.PyTreeEntry):
    """optree path entry of nodes registered with JAX key objects (register_pytree_with_keys)."""


def _jax_key(entry) -> Any:
    """The JAX key class for one optree accessor entry."""
    if isinstance(entry, _KeyEntry):
        return entry.entry
    # (NamedTupleEntry is a SequenceEntry, DataclassEntry a GetAttrEntry: test them first.)
    if isinstance(entry, optree.NamedTupleEntry):
        return GetAttrKey(entry.field)
    if isinstance(entry, (optree.DataclassEntry, optree.GetAttrEntry)):
        return GetAttrKey(entry.name)
    if isinstance(entry, optree.MappingEntry):
        return DictKey(entry.key)
    if isinstance(entry, optree.SequenceEntry):
        return SequenceKey(entry.index)
    return FlattenedIndexKey(entry.entry)


# ---- dict key order as JAX ---------------------------------------------------------------
class _Slot:
    __slots__ = ()


_SLOT = _Slot()
_CANONICAL: dict = {}


def _sorted_keys(keys):
    try:
        return sorted(keys)
    except TypeError:
        raise ValueError("Comparator raised exception while sorting pytree dictionary "
                         "keys.") from None


def _rebuild_sorted(x):
    if x is _SLOT:
        return x
    children, metadata, _, unflatten = optree.tree_flatten_one_level(
        x, none_is_leaf=_NONE_IS_LEAF, namespace=NAMESPACE)
    children = [_rebuild_sorted(c) for c in children]
    if type(x) in (dict, collections.defaultdict):
        # `metadata` lists the keys in the (sorted) order of `children`.
        keys = metadata if type(x) is dict else metadata[1]
        items = dict(zip(keys, children))
        out = {k: items[k] for k in _sorted_keys(items)}
        return out if type(x) is dict else collections.defaultdict(x.default_factory, out)
    return unflatten(metadata, children)


def _canonical(treedef: PyTreeDef) -> PyTreeDef:
    """treedef with every dict (and defaultdict) rebuilt in sorted key order."""
    hit = _CANONICAL.get(treedef)
    if hit is None and not _has_dict(treedef):
        # Nothing to reorder: never call user unflatten functions on placeholders
        # (they may convert their children, e.g. with jnp.asarray).
        hit = _CANONICAL[treedef] = treedef
    if hit is None:
        skeleton = optree.tree_unflatten(treedef, [_SLOT] * treedef.num_leaves)
        hit = optree.tree_structure(_rebuild_sorted(skeleton), lambda x: x is _SLOT,
                                    none_is_leaf=_NONE_IS_LEAF, namespace=NAMESPACE)
        if len(_CANONICAL) > 4096:
            _CANONICAL.clear()
        _CANONICAL[treedef] = hit
    return hit


def _has_dict(treedef: PyTreeDef) -> bool:
    """Whether some dict in treedef has two or more keys (so an order to fix)."""
    return (treedef.type in (dict, collections.defaultdict) and treedef.num_children > 1) \
        or any(_has_dict(c) for c in treedef.children())


# ---- flatten / unflatten / map -------------------------------------------------------------
def tree_flatten(tree, is_leaf=None):
    """(leaves, treedef); dict keys in sorted order. JAX: tree_util.tree_flatten."""
    leaves, treedef = optree.tree_flatten(tree, is_leaf, none_is_leaf=_NONE_IS_LEAF,
                                          namespace=NAMESPACE)
    return leaves, treedef


def tree_unflatten(treedef, leaves):
    """The pytree of structure treedef holding leaves (dicts with sorted keys)."""
    return optree.tree_unflatten(_canonical(treedef), leaves)


def tree_leaves(tree, is_leaf=None):
    return optree.tree_leaves(tree, is_leaf, none_is_leaf=_NONE_IS_LEAF, namespace=NAMESPACE)


def tree_structure(tree, is_leaf=None):
    return optree.tree_structure(tree, is_leaf, none_is_leaf=_NONE_IS_LEAF,
                                 namespace=NAMESPACE)


def tree_map(f, tree, *rest, is_leaf=None):
    """f applied to the leaves of tree (and the matching subtrees of `rest`)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


_NO_INITIALIZER = object()


def tree_reduce(function, tree, initializer=_NO_INITIALIZER, is_leaf=None):
    """functools.reduce over the leaves (from initializer when given). JAX: tree_reduce."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation, tree, *, identity=None, is_leaf=None):
    """Reduces the leaves pairwise in a balanced tree. JAX: tree_reduce_associative."""
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is None:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    while len(leaves) > 1:
        pairs = [operation(a, b) for a, b in zip(leaves[::2], leaves[1::2])]
        leaves = pairs + ([leaves[-1]] if len(leaves) % 2 else [])
    return leaves[0]


def tree_all(tree, *, is_leaf=None) -> bool:
    """Whether every leaf is truthy. JAX: tree_util.tree_all."""
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Turns an outer-of-inner pytree into an inner-of-outer one. JAX: tree_transpose."""
    if inner_treedef is None:
        first = outer_treedef.flatten_up_to(pytree_to_transpose)[0] if (
            outer_treedef.num_leaves) else None
        inner_treedef = tree_structure(first)
    flat = tree_leaves(pytree_to_transpose)
    n_out, n_in = outer_treedef.num_leaves, inner_treedef.num_leaves
    expected = optree.tree_structure(
        optree.tree_unflatten(outer_treedef, [optree.tree_unflatten(inner_treedef,
                                                                    [0] * n_in)] * n_out),
        none_is_leaf=_NONE_IS_LEAF, namespace=NAMESPACE)
    if tree_structure(pytree_to_transpose) != expected:
        raise TypeError(f"Tree structure mismatch; expected: {expected}, got: "
                        f"{tree_structure(pytree_to_transpose)}")
    groups = [flat[i * n_in:(i + 1) * n_in] for i in range(n_out)]
    inner = [tree_unflatten(outer_treedef, [g[j] for g in groups]) for j in range(n_in)]
    return tree_unflatten(inner_treedef, inner)


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """prefix_tree with each leaf replicated over the matching subtree of full_tree.
    JAX: tree_util.tree_broadcast."""
    return optree.tree_broadcast_prefix(prefix_tree, full_tree, is_leaf,
                                        none_is_leaf=_NONE_IS_LEAF, namespace=NAMESPACE)


# ---- key paths -----------------------------------------------------------------------------
def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """([(key path, leaf)], treedef); with is_leaf_takes_path, is_leaf(path, node).
    JAX: tree_util.tree_flatten_with_path."""
    if is_leaf is not None and is_leaf_takes_path:
        is_leaf = _leaf_predicate_on_paths(tree, is_leaf)
    accessors, leaves, treedef = optree.tree_flatten_with_accessor(
        tree, is_leaf, none_is_leaf=_NONE_IS_LEAF, namespace=NAMESPACE)
    paths = [tuple(_jax_key(e) for e in acc) for acc in accessors]
    return list(zip(paths, leaves)), treedef


def _leaf_predicate_on_paths(tree, is_leaf):
    """A one-argument is_leaf equivalent to the path-taking one: walk the tree a level at
    a time, asking is_leaf(path, node), and mark the nodes it accepts (by identity)."""
    chosen = set()

    def walk(node, path):
        if is_leaf(path, node):
            chosen.add(id(node))
            return
        accessors, children, _ = optree.tree_flatten_with_accessor(
            node, lambda x: x is not node, none_is_leaf=_NONE_IS_LEAF, namespace=NAMESPACE)
        if len(children) == 1 and children[0] is node:
            return  # a leaf
        for acc, child in zip(accessors, children):
            walk(child, path + tuple(_jax_key(e) for e in acc))
    walk(tree, ())
    return lambda x: id(x) in chosen


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """[(key path, leaf)]. JAX: tree_util.tree_leaves_with_path."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """f(key path, leaf, *matching leaves of rest) over the leaves. JAX: tree_map_with_path."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [treedef.flatten_up_to(r) for r in rest]
    return tree_unflatten(treedef, [f(p, x, *xs) for (p, x), *xs in
                                    zip(pairs, *others)] if others else
                          [f(p, x) for p, x in pairs])


# ---- tree definitions ----------------------------------------------------------------------
def treedef_is_leaf(treedef) -> bool:
    return treedef.num_nodes == 1


def treedef_children(treedef):
    """The treedefs of the root's children. JAX: tree_util.treedef_children."""
    return treedef.children()


def treedef_tuple(treedefs):
    """The treedef of a tuple of the given treedefs. JAX: tree_util.treedef_tuple."""
    return optree.treespec_tuple(list(treedefs), none_is_leaf=_NONE_IS_LEAF,
                                 namespace=NAMESPACE)


def all_leaves(iterable, is_leaf=None) -> bool:
    return all(treedef_is_leaf(tree_structure(x, is_leaf)) for x in iterable)


def is_tree_node(typ) -> bool:
    """Whether a type is a registered pytree node type (builtin, namedtuple or
    registered). JAX: is_tree_node. (Given an instance, whether it is a node.)"""
    if isinstance(typ, type):
        return default_registry.is_node(typ)
    return not treedef_is_leaf(tree_structure(typ)) or typ is None


def flatten_one_level(tree):
    """(children, aux data) of the root node; ValueError for a leaf."""
    if treedef_is_leaf(tree_structure(tree)) and tree is not None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    out = optree.tree_flatten_one_level(tree, none_is_leaf=_NONE_IS_LEAF, namespace=NAMESPACE)
    return list(out.children), out.metadata


def flatten_one_level_with_keys(tree):
    """([(key, child)], aux data) of the root node."""
    children, aux = flatten_one_level(tree)
    pairs, _ = tree_flatten_with_path(tree, is_leaf=lambda x: x is not tree)
    return [(p[0], c) for (p, _), c in zip(pairs, children)], aux


# ---- registration --------------------------------------------------------------------------
def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    """JAX signature: flatten(x) -> (children, aux); unflatten(aux, children) -> x."""
    if flatten_with_keys_func is not None:
        return register_pytree_with_keys(nodetype, flatten_with_keys_func, unflatten_func,
                                         flatten_func)
    optree.register_pytree_node(nodetype, flatten_func,
                                lambda aux, children: unflatten_func(aux, children),
                                namespace=NAMESPACE)


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """flatten_with_keys(x) -> ([(key, child)], aux); the keys appear in key paths."""
    def flatten(x):
        pairs, aux = flatten_with_keys(x)
        pairs = list(pairs)
        return [c for _, c in pairs], aux, tuple(k for k, _ in pairs)
    optree.register_pytree_node(nodetype, flatten,
                                lambda aux, children: unflatten_func(aux, children),
                                path_entry_type=_KeyEntry, namespace=NAMESPACE)


def register_pytree_node_class(cls):
    """Class decorator: uses cls.tree_flatten and cls.tree_unflatten(aux, children)."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls):
    """Class decorator: uses cls.tree_flatten_with_keys and cls.tree_unflatten."""
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten)
    return cls


def register_static(cls):
    """Registers cls as a node with no children (its instances are static aux data)."""
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Registers a dataclass: data fields are children (keyed by GetAttrKey), meta fields
    static aux data. JAX: register_dataclass."""
    if data_fields is None:
        fields = [f for f in dataclasses.fields(nodetype) if f.init]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)
                       and f.name not in drop_fields]
    data_fields, meta_fields = list(data_fields), list(meta_fields or [])

    def flatten_with_keys(x):
        return ([(GetAttrKey(n), getattr(x, n)) for n in data_fields],
                tuple(getattr(x, n) for n in meta_fields))

    def unflatten(aux, children):
        kwargs = dict(zip(data_fields, children))
        kwargs.update(zip(meta_fields, aux))
        return nodetype(**kwargs)
    register_pytree_with_keys(nodetype, flatten_with_keys, unflatten)
    return nodetype


# ---- the registry object -------------------------------------------------------------------
class PyTreeRegistry:
    """The registry of pytree node types, as an object (JAX: tree_util.default_registry,
    a jaxlib PyTreeRegistry). mjax's one registry is optree's "mjax" namespace."""

    def flatten(self, tree, leaf_predicate=None):
        return tree_flatten(tree, leaf_predicate)

    def flatten_one_level(self, tree):
        """(children, aux data) of the root node, None for a leaf."""
        try:
            children, aux = flatten_one_level(tree)
        except ValueError:
            return None
        return tuple(children), aux

    def flatten_one_level_with_keys(self, tree):
        try:
            pairs, aux = flatten_one_level_with_keys(tree)
        except ValueError:
            return None
        return tuple(pairs), aux

    def flatten_with_path(self, tree, leaf_predicate=None):
        return tree_flatten_with_path(tree, leaf_predicate)

    def is_node(self, type):  # noqa: A002 (JAX's name)
        """Whether `type` is a pytree node type (builtin, namedtuple or registered)."""
        if builtins.type(None) is type or issubclass(type, (tuple, list, dict)):
            return True  # (namedtuples, OrderedDict and defaultdict included)
        return optree.register_pytree_node.get(type, namespace=NAMESPACE) is not None

    def register_node(self, type, to_iterable, from_iterable,  # noqa: A002
                      to_iterable_with_keys=None):
        register_pytree_node(type, to_iterable, from_iterable, to_iterable_with_keys)

    def register_dataclass_node(self, type, data_fields, meta_fields, /):  # noqa: A002
        register_dataclass(type, data_fields, meta_fields)


default_registry = PyTreeRegistry()


# ---- Partial ---------------------------------------------------------------------------------
class Partial(functools.partial):
    """functools.partial as a pytree: the bound arguments are its children and the function
    its static data, so a Partial can cross jit/grad boundaries. JAX: tree_util.Partial."""

    def __new__(cls, func, *args, **kw):
        if isinstance(func, Partial):  # flatten nested Partials into one
            args = func.args + args
            kw = {**func.keywords, **kw}
            func = func.func
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, children: Partial(func, *children[0], **children[1]))


__all__ = ["DictKey", "SequenceKey", "GetAttrKey", "FlattenedIndexKey", "KeyEntry", "KeyPath",
           "Partial", "PyTreeDef", "all_leaves", "is_tree_node", "keystr", "flatten_one_level",
           "flatten_one_level_with_keys", "register_dataclass", "register_pytree_node",
           "register_pytree_node_class", "register_pytree_with_keys",
           "register_pytree_with_keys_class", "register_static", "tree_all", "tree_broadcast",
           "tree_flatten", "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path",
           "tree_map", "tree_map_with_path", "tree_reduce", "tree_reduce_associative",
           "tree_structure", "tree_transpose", "tree_unflatten", "treedef_children",
           "treedef_is_leaf", "treedef_tuple"]
