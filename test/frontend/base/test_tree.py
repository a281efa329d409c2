"""mjax.tree and mjax.tree_util (key paths, key classes, keystr, Partial, transpose, dict
key order) against jax.tree / jax.tree_util."""
import collections
import dataclasses
import functools
import operator

import jax
import numpy as np
import pytest

import mjax
from mjax import tree_util as tu

P = collections.namedtuple("P", "a b")


def sample():
    return {"b": [1, (2, 3)], "a": P(4, None), "c": collections.OrderedDict([("z", 5),
                                                                              ("y", 6)]),
            "d": collections.defaultdict(int, {"q": 7, "p": 8}), "e": ()}


def same_tree(got, want):
    """Equal values, container types and (for dicts) key order."""
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(got, dict):
        assert list(got) == list(want), (list(got), list(want))
        for k in got:
            same_tree(got[k], want[k])
    elif isinstance(got, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same_tree(g, w)
    else:
        assert got == want, (got, want)


def test_flatten_unflatten_and_dict_key_order():
    t = sample()
    leaves, treedef = mjax.tree.flatten(t)
    j_leaves, j_treedef = jax.tree.flatten(t)
    assert leaves == j_leaves
    assert treedef.num_leaves == j_treedef.num_leaves
    # Dicts come back with sorted keys, as JAX rebuilds them (OrderedDict keeps its order).
    same_tree(mjax.tree.unflatten(treedef, leaves), jax.tree.unflatten(j_treedef, leaves))
    same_tree(mjax.tree.map(lambda x: x * 2, t), jax.tree.map(lambda x: x * 2, t))
    same_tree(mjax.tree_util.tree_map(lambda x, y: x + y, t, t),
              jax.tree_util.tree_map(lambda x, y: x + y, t, t))
    assert list(mjax.jit(lambda t: t)({"b": 1.0, "a": 2.0})) == ["a", "b"]
    assert mjax.tree.leaves(t) == jax.tree.leaves(t)
    assert mjax.tree.leaves([None, 1]) == jax.tree.leaves([None, 1])
    assert mjax.tree.structure(t).num_nodes == jax.tree.structure(t).num_nodes
    assert mjax.tree.leaves(t, is_leaf=lambda x: isinstance(x, tuple)) == \
        jax.tree.leaves(t, is_leaf=lambda x: isinstance(x, tuple))


def test_reduce_all_transpose_broadcast():
    t = sample()
    assert mjax.tree.reduce(operator.add, t) == jax.tree.reduce(operator.add, t)
    assert mjax.tree.reduce(operator.add, t, 100) == jax.tree.reduce(operator.add, t, 100)
    assert mjax.tree.reduce(operator.add, [], None) is None
    assert mjax.tree.reduce_associative(operator.add, t) == \
        jax.tree.reduce_associative(operator.add, t)
    assert mjax.tree.all([1, (True, 3)]) and not mjax.tree.all([1, (0, 3)])
    outer, inner = mjax.tree.structure([0, 0, 0]), mjax.tree.structure({"x": 0, "y": (0, 0)})
    j_outer, j_inner = jax.tree.structure([0, 0, 0]), jax.tree.structure({"x": 0, "y": (0, 0)})
    value = [{"y": (i, -i), "x": 10 * i} for i in range(3)]
    same_tree(mjax.tree.transpose(outer, inner, value),
              jax.tree.transpose(j_outer, j_inner, value))
    with pytest.raises(TypeError) as want:
        jax.tree.transpose(j_outer, j_inner, value[:2])
    with pytest.raises(TypeError) as got:
        mjax.tree.transpose(outer, inner, value[:2])
    assert str(got.value) == str(want.value)
    same_tree(mjax.tree.broadcast([1, 2], [(0, 0), {"a": 0}]),
              jax.tree.broadcast([1, 2], [(0, 0), {"a": 0}]))


def test_key_paths_and_keystr():
    t = sample()
    got, treedef = mjax.tree.flatten_with_path(t)
    want, _ = jax.tree.flatten_with_path(t)
    assert [(tu.keystr(p), v) for p, v in got] == [(jax.tree_util.keystr(p), v)
                                                     for p, v in want]
    assert [tu.keystr(p, simple=True, separator=".") for p, _ in got] == \
        [jax.tree_util.keystr(p, simple=True, separator=".") for p, _ in want]
    assert [[repr(k) for k in p] for p, _ in mjax.tree.leaves_with_path(t)] == \
        [[repr(k) for k in p] for p, _ in jax.tree.leaves_with_path(t)]
    f = lambda p, x, y: (len(p), x + y)  # noqa: E731
    same_tree(mjax.tree.map_with_path(f, t, t), jax.tree.map_with_path(f, t, t))
    same_tree(tu.tree_map_with_path(lambda p, x: tu.keystr(p), t),
              jax.tree_util.tree_map_with_path(lambda p, x: jax.tree_util.keystr(p), t))
    assert tu.DictKey("a") == tu.DictKey("a") and hash(tu.SequenceKey(1)) == hash(
        tu.SequenceKey(1))
    assert str(tu.GetAttrKey("w")) == str(jax.tree_util.GetAttrKey("w"))
    assert str(tu.FlattenedIndexKey(2)) == str(jax.tree_util.FlattenedIndexKey(2))


def test_custom_nodes_paths():
    class Box:
        def __init__(self, a, b):
            self.a, self.b = a, b

    class KeyedBox(Box):
        pass

    @dataclasses.dataclass
    class DC:
        x: int
        y: int

    for reg in (tu, jax.tree_util):
        reg.register_pytree_node(Box, lambda b: ((b.a, b.b), None), lambda _, c: Box(*c))
        reg.register_pytree_with_keys(
            KeyedBox, lambda b: (((reg.GetAttrKey("a"), b.a), (reg.GetAttrKey("b"), b.b)), None),
            lambda _, c: KeyedBox(*c))
        reg.register_dataclass(DC, data_fields=["x", "y"], meta_fields=[])
    t = [Box(1, 2), KeyedBox(3, 4), DC(5, 6)]
    assert [tu.keystr(p) for p, _ in mjax.tree.leaves_with_path(t)] == \
        [jax.tree_util.keystr(p) for p, _ in jax.tree.leaves_with_path(t)]
    out = mjax.tree.map(lambda x: x + 1, t)
    assert (out[0].a, out[1].b, out[2].y) == (2, 5, 7)


def test_partial_is_a_pytree():
    f = tu.Partial(lambda a, b, c=0: a * b + c, 2.0, c=1.0)
    assert f(3.0) == 7.0
    leaves = mjax.tree.leaves(f)
    assert leaves == jax.tree.leaves(jax.tree_util.Partial(lambda a, b, c=0: 0, 2.0, c=1.0))
    g = tu.Partial(f, 5.0)
    assert g() == 11.0 and isinstance(g, functools.partial)
    out = mjax.jit(lambda f, x: f(x))(f, np.float32(3))
    np.testing.assert_allclose(np.asarray(out), 7.0)
    grad = mjax.grad(lambda f: f(3.0))(f)
    np.testing.assert_allclose([float(v) for v in mjax.tree.leaves(grad)], [3.0, 1.0])
