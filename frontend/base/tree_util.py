"""Pytrees on jaxlib's C++ pytree registry, with JAX's semantics (JAX: jax.tree_util).

mjax keeps its own `jaxlib._jax.pytree.PyTreeRegistry` (`default_registry`), separate from
the one JAX itself fills, so registering a class with mjax and with JAX in one process
does not collide. jaxlib gives the treedef type (`PyTreeDef`: printing, equality, hashing,
pickling, unflatten, flatten_up_to, compose, ...), the key classes (`DictKey`,
`SequenceKey`, `GetAttrKey`, `FlattenedIndexKey`), sorted dict keys, namedtuples and None
as a node without children. OrderedDict and defaultdict are registered here, as JAX does.
"""
from __future__ import annotations

import collections
import dataclasses
import difflib
import functools
import textwrap
from typing import Any, Callable, NamedTuple

from jaxlib._jax import pytree as _pytree

PyTreeDef = _pytree.PyTreeDef
DictKey = _pytree.DictKey
SequenceKey = _pytree.SequenceKey
GetAttrKey = _pytree.GetAttrKey
FlattenedIndexKey = _pytree.FlattenedIndexKey
KeyEntry = Any
KeyPath = tuple

default_registry = _pytree.PyTreeRegistry()
# The registry mjax's transformations flatten with (mjax/base/trace_trees.py): the same nodes,
# plus key arrays, which they see as their uint32 data (prng.py registers them there). In
# default_registry, as in JAX's, a key array is a leaf.
trace_registry = _pytree.PyTreeRegistry()
# A treedef pickles its registry by reference: the module attribute that holds it.
for _name, _reg in (("default_registry", default_registry),
                    ("trace_registry", trace_registry)):
    _reg.__module__ = __name__
    _reg.__name__ = _name
REGISTRIES = (default_registry, trace_registry)


class NodeEntry(NamedTuple):
    """How a registered node type flattens: to_iter(x) -> (children, aux);
    from_iter(aux, children) -> x."""
    to_iter: Callable
    from_iter: Callable


# Node type -> NodeEntry: the registry as a Python dict a library can query (`type(x) in
# ...`), which jaxlib's PyTreeRegistry is not. JAX: jax._src.tree_util._registry (flax.nnx
# reads it). The built-in containers first; every register_* call below adds its type.
NODE_TYPES: dict[type, NodeEntry] = {
    tuple: NodeEntry(lambda xs: (xs, None), lambda _, xs: tuple(xs)),
    list: NodeEntry(lambda xs: (xs, None), lambda _, xs: list(xs)),
    dict: NodeEntry(lambda d: (tuple(d[k] for k in sorted(d)), tuple(sorted(d))),
                    lambda keys, xs: dict(zip(keys, xs))),
    type(None): NodeEntry(lambda _: ((), None), lambda _, xs: None),
}


# ---- flatten / unflatten / map -------------------------------------------------------------
def tree_flatten(tree, is_leaf: Callable[[Any], bool] | None = None):
    """(leaves, treedef); dict keys in sorted order. JAX: tree_util.tree_flatten."""
    return default_registry.flatten(tree, is_leaf)


def tree_unflatten(treedef, leaves):
    """The pytree of structure treedef holding leaves. JAX: tree_util.tree_unflatten."""
    return treedef.unflatten(leaves)


def tree_leaves(tree, is_leaf=None) -> list:
    """The leaves, in flattening order. JAX: tree_util.tree_leaves."""
    return default_registry.flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    """The treedef. JAX: tree_util.tree_structure."""
    return default_registry.flatten(tree, is_leaf)[1]


def _leaves_of_rest(treedef, tree, rest, is_leaf, name):
    """The leaves of each tree in rest, cut at treedef's leaves; a mismatch is the
    ValueError that names where the trees differ."""
    out = []
    for other in rest:
        try:
            out.append(treedef.flatten_up_to(other))
        except Exception as e:  # noqa: BLE001 - explained below, or re-raised
            err = next(_prefix_errors((), tree, other, is_leaf), None)
            raise (err(name) if err is not None else e) from None
    return out


def tree_map(f, tree, *rest, is_leaf=None):
    """f applied to the leaves of tree (and the matching subtrees of rest).
    JAX: tree_util.tree_map."""
    return map_in(default_registry, f, tree, rest, is_leaf)


def map_in(registry, f, tree, rest, is_leaf):
    """tree_map with the leaves of `registry`."""
    leaves, treedef = registry.flatten(tree, is_leaf)
    others = _leaves_of_rest(treedef, tree, rest, is_leaf, "tree_map tree")
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


_NO_INITIALIZER = object()


def tree_reduce(function, tree, initializer=_NO_INITIALIZER, is_leaf=None):
    """functools.reduce over the leaves (from initializer when given). JAX: tree_reduce."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def _halves_reduce(items, operation, identity):
    if not items:
        if identity is _NO_INITIALIZER:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    if len(items) == 1:
        return items[0]
    mid = len(items) // 2
    return operation(_halves_reduce(items[:mid], operation, identity),
                     _halves_reduce(items[mid:], operation, identity))


def tree_reduce_associative(operation, tree, *, identity=_NO_INITIALIZER, is_leaf=None):
    """Reduces the leaves as a balanced tree of calls (first half, second half).
    JAX: tree_util.tree_reduce_associative."""
    return _halves_reduce(tree_leaves(tree, is_leaf), operation, identity)


def tree_all(tree, *, is_leaf=None) -> bool:
    """Whether every leaf is truthy. JAX: tree_util.tree_all."""
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Turns an outer-of-inner pytree into an inner-of-outer one. JAX: tree_transpose."""
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    n_in, n_out = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != n_in * n_out:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{outer_treedef.compose(inner_treedef)}")
    groups = [flat[i * n_in:(i + 1) * n_in] for i in range(n_out)]
    return inner_treedef.unflatten(
        [outer_treedef.unflatten([g[j] for g in groups]) for j in range(n_in)])


def broadcast_prefix(prefix_tree, full_tree, is_leaf=None) -> list:
    """One leaf of prefix_tree per leaf of full_tree (each repeated over its subtree)."""
    out: list = []
    try:
        tree_map(lambda x, sub: out.extend([x] * tree_structure(sub).num_leaves),
                 prefix_tree, full_tree, is_leaf=is_leaf)
    except ValueError:
        err = next(_prefix_errors((), prefix_tree, full_tree), None)
        if err is None:
            raise
        raise err("broadcast_prefix prefix_tree") from None
    return out


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """prefix_tree with each leaf replicated over the matching subtree of full_tree.
    JAX: tree_util.tree_broadcast."""
    return tree_structure(full_tree).unflatten(broadcast_prefix(prefix_tree, full_tree,
                                                                is_leaf))


# ---- structure errors ----------------------------------------------------------------------
def _is_strict_leaf(tree, is_leaf=None) -> bool:
    treedef = tree_structure(tree, is_leaf)
    return treedef.num_nodes == 1 and treedef.num_leaves == 1


def _child_keys(tree) -> tuple:
    return tuple(k for k, _ in flatten_one_level_with_keys(tree)[0])


def _prefix_errors(path, prefix, full, is_leaf=None):
    """Yields, per disagreement found (one per subtree), a function of the prefix tree's
    name that builds JAX's ValueError describing it."""
    if _is_strict_leaf(prefix, is_leaf):
        return   # a leaf is a prefix of anything
    where = keystr(path)
    if type(prefix) is not type(full):
        yield lambda name: ValueError(
            f"pytree structure error: different types at key path\n    {name}{where}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix)}\nbut at the same key path the full pytree has a subtree of "
            f"different type\n    {type(full)}.")
        return
    p_children, p_meta = flatten_one_level(prefix)
    f_children, f_meta = flatten_one_level(full)
    p_keys, f_keys = _child_keys(prefix), _child_keys(full)
    if isinstance(prefix, (list, tuple)):
        if len(prefix) != len(full):
            kind = type(prefix).__name__
            yield lambda name: ValueError(
                f"pytree structure error: different lengths of {kind} at key path\n"
                f"    {name}{where}\nAt that key path, the prefix pytree {name} has a "
                f"subtree of type {kind} of length {len(prefix)}, but the full pytree has a "
                f"subtree of the same type but of length {len(full)}.")
            return
    elif len(p_children) != len(f_children):
        try:
            diff = set(p_keys).symmetric_difference(f_keys)
        except Exception:  # noqa: BLE001 - unhashable keys: no difference to show
            diff = None
        yield lambda name: ValueError(
            f"pytree structure error: different numbers of pytree children at key path\n"
            f"    {name}{where}\nAt that key path, the prefix pytree {name} has a subtree "
            f"of type\n    {type(prefix)}\nwith {len(p_children)} child keys\n"
            f"    {' '.join(str(k.key) for k in p_keys)}\nbut at the same key path the full "
            f"pytree has a subtree of the same type but with {len(f_children)} child keys\n"
            f"    {' '.join(str(k.key) for k in f_keys)}\n"
            + ("" if diff is None else "so the symmetric difference on key sets is\n"
               f"    {' '.join(str(k.key) for k in diff)}"))
        return
    if p_meta != f_meta:
        p_text, f_text = str(p_meta), str(f_meta)
        delta = textwrap.indent("\n".join(difflib.ndiff(p_text.splitlines(),
                                                        f_text.splitlines())), "    ")
        yield lambda name: ValueError(
            f"pytree structure error: different pytree metadata at key path\n"
            f"    {name}{where}\nAt that key path, the prefix pytree {name} has a subtree "
            f"of type\n    {type(prefix)}\nwith metadata\n    {p_text}\nbut at the same key "
            f"path the full pytree has a subtree of the same type but with metadata\n"
            f"    {f_text}\nso the diff in the metadata at these pytree nodes is\n{delta}")
        return
    for key, p, f in zip(p_keys, p_children, f_children):
        yield from _prefix_errors((*path, key), p, f)


# ---- key paths -----------------------------------------------------------------------------
def keystr(keys, *, simple: bool = False, separator: str = "") -> str:
    """A key path as a string: "['a'][0].b", or with simple=True "a0b" (keys joined by
    `separator`). JAX: keystr."""
    return separator.join(map(_simple_key if simple else str, keys))


def _simple_key(key) -> str:
    if isinstance(key, SequenceKey):
        return str(key.idx)
    if isinstance(key, (DictKey, FlattenedIndexKey)):
        return str(key.key)
    if isinstance(key, GetAttrKey):
        return str(key.name)
    return str(key)


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """([(key path, leaf)], treedef); with is_leaf_takes_path, is_leaf(path, node).
    JAX: tree_util.tree_flatten_with_path."""
    return flatten_with_path_in(default_registry, tree, is_leaf, is_leaf_takes_path)


def flatten_with_path_in(registry, tree, is_leaf, is_leaf_takes_path):
    """tree_flatten_with_path with the leaves of `registry`."""
    predicate = is_leaf
    if is_leaf is not None and not is_leaf_takes_path:
        predicate = lambda _, x: is_leaf(x)  # noqa: E731
    return registry.flatten_with_path(tree, predicate)


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """[(key path, leaf)]. JAX: tree_util.tree_leaves_with_path."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """f(key path, leaf, *matching leaves of rest) over the leaves. JAX: tree_map_with_path."""
    return map_with_path_in(default_registry, f, tree, rest, is_leaf, is_leaf_takes_path)


def map_with_path_in(registry, f, tree, rest, is_leaf, is_leaf_takes_path):
    """tree_map_with_path with the leaves of `registry`."""
    pairs, treedef = flatten_with_path_in(registry, tree, is_leaf, is_leaf_takes_path)
    others = _leaves_of_rest(treedef, tree, rest, is_leaf, "tree_map_with_path tree")
    return treedef.unflatten([f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


def treedef_key_paths(treedef) -> list:
    """The key path of each leaf of treedef, as tree_flatten_with_path gives them for a tree
    of that structure (found by rebuilding one with placeholder leaves). Custom nodes whose
    unflatten function rejects placeholders get FlattenedIndexKeys."""
    try:
        example = treedef.unflatten([_Placeholder() for _ in range(treedef.num_leaves)])
        for registry in REGISTRIES:      # (the one treedef was made with)
            pairs, again = registry.flatten_with_path(example)
            if again == treedef:
                return [p for p, _ in pairs]
    except Exception:  # noqa: BLE001 - user unflatten functions: fall back to positions
        pass
    return _positional_paths(treedef, ())


def _positional_paths(treedef, path) -> list:
    if treedef.num_nodes == 1 and treedef.num_leaves == 1:
        return [path]
    data = treedef.node_data()
    children = treedef.children()
    if data[0] is dict:
        keys = [DictKey(k) for k in data[1]]
    elif data[0] in (tuple, list):
        keys = [SequenceKey(i) for i in range(len(children))]
    else:
        keys = [FlattenedIndexKey(i) for i in range(len(children))]
    return [p for k, c in zip(keys, children) for p in _positional_paths(c, (*path, k))]


class _Placeholder:
    __slots__ = ()


# ---- tree definitions ----------------------------------------------------------------------
def treedef_is_leaf(treedef) -> bool:
    """Whether treedef is one node (a leaf, or a childless node such as None)."""
    return treedef.num_nodes == 1


def treedef_children(treedef) -> list:
    """The treedefs of the root's children. JAX: tree_util.treedef_children."""
    return treedef.children()


def treedef_tuple(treedefs):
    """The treedef of a tuple of the given treedefs. JAX: tree_util.treedef_tuple."""
    return treedef_tuple_in(default_registry, treedefs)


def treedef_tuple_in(registry, treedefs):
    """treedef_tuple for treedefs of `registry`."""
    return _pytree.treedef_tuple(registry, list(treedefs))


def all_leaves(iterable, is_leaf=None) -> bool:
    """Whether every item of iterable is a leaf. JAX: tree_util.all_leaves."""
    if is_leaf is None:
        return _pytree.all_leaves(default_registry, iterable)
    items = list(iterable)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves))


def is_tree_node(typ) -> bool:
    """Whether a type is a pytree node type (builtin, namedtuple or registered).
    JAX: tree_util.is_tree_node."""
    return default_registry.is_node(typ)


def flatten_one_level(tree):
    """(children, aux data) of the root node; ValueError for a leaf."""
    out = default_registry.flatten_one_level(tree)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return out


def flatten_one_level_with_keys(tree):
    """([(key, child)], aux data) of the root node; ValueError for a leaf."""
    out = default_registry.flatten_one_level_with_keys(tree)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return out


# ---- registration --------------------------------------------------------------------------
def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    """flatten(x) -> (children, aux); unflatten(aux, children) -> x; optionally
    flatten_with_keys(x) -> ([(key, child)], aux). JAX: register_pytree_node."""
    for registry in REGISTRIES:
        registry.register_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func)
    NODE_TYPES[nodetype] = NodeEntry(flatten_func, unflatten_func)


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """flatten_with_keys(x) -> ([(key, child)], aux); the keys appear in key paths.
    JAX: register_pytree_with_keys."""
    if not flatten_func:
        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls):
    """Class decorator: uses x.tree_flatten() and cls.tree_unflatten(aux, children)."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls):
    """Class decorator: uses x.tree_flatten_with_keys() (and x.tree_flatten() if defined)
    and cls.tree_unflatten."""
    flatten = (lambda x: x.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              flatten)
    return cls


def register_static(cls):
    """Registers cls as a node with no children (its instances are static aux data).
    JAX: register_static."""
    register_pytree_with_keys(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Registers a dataclass-like type: data fields are children (keyed by GetAttrKey),
    meta fields static aux data. JAX: register_dataclass."""
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: data_fields and meta_fields must both be "
                            "specified when either is specified. Got "
                            f"data_fields={data_fields!r} meta_fields={meta_fields!r}.")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required "
                            f"when nodetype is not a dataclass. Got nodetype={nodetype!r}.")
        fields = dataclasses.fields(nodetype)
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        given = {*data_fields, *meta_fields}
        if given != init:
            msg = ("data_fields and meta_fields must include all dataclass fields with "
                   "``init=True`` and only them.")
            if init - given:
                msg += (f" Missing fields: {init - given}. Add them to drop_fields to "
                        "suppress this error.")
            if given - init:
                msg += f" Unexpected fields: {given - init}."
            raise ValueError(msg)
    if set(data_fields) & set(meta_fields):
        raise ValueError("data_fields and meta_fields must not overlap. Overlapping fields: "
                         f"{set(data_fields) & set(meta_fields)}.")
    for registry in REGISTRIES:
        registry.register_dataclass_node(nodetype, list(data_fields), list(meta_fields))
    NODE_TYPES[nodetype] = NodeEntry(
        lambda x: (tuple(getattr(x, f) for f in data_fields),
                   tuple(getattr(x, f) for f in meta_fields)),
        lambda aux, xs: nodetype(**dict(zip(data_fields, xs)), **dict(zip(meta_fields, aux))))
    return nodetype


register_pytree_with_keys(
    collections.OrderedDict,
    lambda d: (tuple((DictKey(k), v) for k, v in d.items()), tuple(d)),
    lambda keys, values: collections.OrderedDict(zip(keys, values, strict=True)))


def _defaultdict_with_keys(d):
    keys = tuple(sorted(d))
    return tuple((DictKey(k), d[k]) for k in keys), (d.default_factory, keys)


register_pytree_with_keys(
    collections.defaultdict, _defaultdict_with_keys,
    lambda aux, values: collections.defaultdict(aux[0], zip(aux[1], values, strict=True)))


# ---- Partial ---------------------------------------------------------------------------------
class _HashableCallableShim:
    """A functools.partial given to Partial, boxed so that functools.partial does not merge
    its arguments into the Partial's (they stay static, hashed and compared through it)."""

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args, **kw):
        return self.fun(*args, **kw)

    def __hash__(self):
        return hash(self.fun)

    def __eq__(self, other):
        return self.fun == (other.fun if isinstance(other, _HashableCallableShim) else other)

    def __repr__(self):
        return f"_HashableCallableShim({self.fun!r})"


class Partial(functools.partial):
    """functools.partial as a pytree: the bound arguments are its children and the function
    its static data, so a Partial can cross jit/grad boundaries. JAX: tree_util.Partial."""

    def __new__(cls, func, *args, **kw):
        if not isinstance(func, functools.partial):
            return super().__new__(cls, func, *args, **kw)
        shim = _HashableCallableShim(func)
        out = super().__new__(cls, shim, *args, **kw)
        # (set after construction: functools.partial merges a func that has these)
        shim.func, shim.args, shim.keywords = func.func, func.args, func.keywords
        return out


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, children: Partial(func, *children[0], **children[1]))


# ---- prefixes of API arguments (vmap in_axes, jit in_shardings, ...) ------------------------
def prefix_entries(name: str, prefix, tree, is_leaf) -> list:
    """One entry of `prefix` (a pytree prefix of `tree`, whose leaves are what
    `is_leaf(x)` accepts: axes, shardings, ...) per leaf of `tree`, as JAX's flatten_axes.
    ValueError names the API argument `name` and the first mismatch."""
    out: list = []

    def walk(p, t, path):
        if is_leaf(p):
            out.extend([p] * len(tree_leaves(t)))
            return
        if isinstance(p, (tuple, list)) and isinstance(t, (tuple, list)) and not p and \
                not t:      # (no arguments, no axes: a function of nothing)
            return
        ts = tree_structure(t)
        if ts.num_nodes == 1 and ts.num_leaves == 1:   # (a leaf; not a node without children)
            raise _prefix_entry_error(name, path, f"expected a leaf, got {type(p).__name__}")
        pc = flatten_one_level_with_keys(p)[0]
        tc = flatten_one_level_with_keys(t)[0]
        if type(p) is not type(t) and not (isinstance(p, (tuple, list)) and
                                           isinstance(t, (tuple, list))):
            raise _prefix_entry_error(name, path, f"pytree structure mismatch: "
                                                  f"{type(p).__name__} vs {type(t).__name__}")
        pk, tk = [k for k, _ in pc], [k for k, _ in tc]
        if pk != tk:
            raise _prefix_entry_error(name, path, f"pytree structure mismatch: children "
                                                  f"{_simple_keys(pk)} vs {_simple_keys(tk)}")
        for k, (_, pp), (_, tt) in zip(tk, pc, tc):
            walk(pp, tt, path + [k])
    walk(prefix, tree, [])
    return out


def _simple_keys(keys) -> list:
    return [keystr([k], simple=True) for k in keys]


def _prefix_entry_error(name, path, detail) -> ValueError:
    return ValueError(f"{name} specification must be a tree prefix of the corresponding "
                      f"value; mismatch at {name}{keystr(path)}: {detail}")


__all__ = ["DictKey", "SequenceKey", "GetAttrKey", "FlattenedIndexKey", "KeyEntry", "KeyPath",
           "Partial", "PyTreeDef", "all_leaves", "default_registry", "is_tree_node", "keystr",
           "flatten_one_level", "flatten_one_level_with_keys", "register_dataclass",
           "register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
           "register_pytree_with_keys_class", "register_static", "tree_all", "tree_broadcast",
           "tree_flatten", "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path",
           "tree_map", "tree_map_with_path", "tree_reduce", "tree_reduce_associative",
           "tree_structure", "tree_transpose", "tree_unflatten", "treedef_children",
           "treedef_is_leaf", "treedef_tuple"]
