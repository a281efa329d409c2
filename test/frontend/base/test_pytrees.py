"""Pytrees in and out of jit, eval_shape and tree_util."""
import dataclasses
from collections import namedtuple

import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax import tree_util

Pair = namedtuple("Pair", "first second")


@mjax.tree_util.register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object
    name: str = dataclasses.field(default="lin", metadata={"static": True})


@dataclasses.dataclass
class Explicit:
    x: object
    scale: float


tree_util.register_dataclass(Explicit, data_fields=["x"], meta_fields=["scale"])


class Box:
    def __init__(self, items, tag):
        self.items, self.tag = items, tag


tree_util.register_pytree_node(Box, lambda b: (b.items, b.tag),
                               lambda tag, items: Box(list(items), tag))


@tree_util.register_pytree_node_class
class Node:
    def __init__(self, a, meta):
        self.a, self.meta = a, meta

    def tree_flatten(self):
        return (self.a,), self.meta

    @classmethod
    def tree_unflatten(cls, meta, children):
        return cls(children[0], meta)


def test_tuples_lists_dicts_namedtuples_none():
    @mjax.jit
    def f(tree):
        a, b = tree["pair"]
        return {"sum": a + b[0], "list": [b[1] * 2, None], "pair": Pair(a, -a)}
    out = f({"pair": (1.0, [np.float32(2), jnp.arange(3)])})
    assert float(out["sum"]) == 3.0
    assert out["list"][1] is None
    np.testing.assert_array_equal(out["list"][0], [0, 2, 4])
    assert isinstance(out["pair"], Pair) and float(out["pair"].second) == -1.0


def test_registered_dataclass_with_static_field():
    traces = []

    @mjax.jit
    def f(p):
        traces.append(p.name)
        return Params(p.w * 2, p.b + 1, p.name)
    out = f(Params(jnp.ones(2), 1.0, "a"))
    assert isinstance(out, Params) and out.name == "a"
    np.testing.assert_allclose(out.w, [2, 2])
    f(Params(jnp.zeros(2), 3.0, "a"))
    f(Params(jnp.zeros(2), 3.0, "b"))   # static field changed: retrace
    assert traces == ["a", "b"]
    leaves = tree_util.tree_leaves(Params(1, 2, "x"))
    assert leaves == [1, 2]


def test_register_dataclass_explicit_fields():
    out = mjax.jit(lambda e: Explicit(e.x * e.scale, e.scale))(Explicit(jnp.ones(2), 3.0))
    assert out.scale == 3.0
    np.testing.assert_allclose(out.x, [3, 3])


def test_custom_pytree_nodes():
    out = mjax.jit(lambda b: Box([i + 1 for i in b.items], b.tag))(Box([1.0, jnp.ones(2)], "t"))
    assert out.tag == "t" and float(out.items[0]) == 2.0
    out = mjax.jit(lambda n: Node(n.a * 3, n.meta))(Node(jnp.ones(2), ("m",)))
    assert out.meta == ("m",)
    np.testing.assert_allclose(out.a, [3, 3])


def test_kwargs_and_eval_shape_trees():
    shapes = mjax.eval_shape(lambda x, *, y: {"o": (x + y, x[None])},
                             jnp.ones((2, 3)), y=np.ones(3, np.float32))
    assert shapes["o"][0].shape == (2, 3) and shapes["o"][1].shape == (1, 2, 3)
    out = mjax.jit(lambda x, *, y: x - y)(jnp.ones(2), y=jnp.ones(2))
    np.testing.assert_allclose(out, [0, 0])


def test_tree_util_functions():
    tree = {"a": [1, 2], "b": (3, None)}
    assert tree_util.tree_leaves(tree) == [1, 2, 3]
    doubled = tree_util.tree_map(lambda x: x * 2, tree)
    assert doubled == {"a": [2, 4], "b": (6, None)}
    leaves, treedef = tree_util.tree_flatten(tree)
    assert tree_util.tree_unflatten(treedef, leaves) == tree
    assert tree_util.tree_map(lambda x, y: x + y, tree, tree) == doubled
    assert tree_util.tree_reduce(lambda a, b: a + b, tree) == 6
    assert tree_util.tree_structure(tree).num_leaves == 3


def test_invalid_leaf_type_is_a_clear_error():
    with pytest.raises(TypeError, match="not a valid mjax type"):
        mjax.jit(lambda x: x)("a string")
    with pytest.raises(TypeError, match="not a valid mjax type"):
        mjax.jit(lambda x: "out")(1.0)


def test_jacobian_rebuilds_custom_nodes_with_none_leaves_as_jax():
    # JAX's jacfwd/jacrev check their inputs with a tree_map: a custom node whose
    # unflatten rejects None (jnp.asarray(None): ValueError) fails there.
    import jax
    import jax.numpy as jjnp

    def error(J, np_):
        class Node:
            def __init__(self, a):
                self.a = np_.asarray(a)
        J.tree_util.register_pytree_node(Node, lambda t: ((t.a,), None),
                                         lambda _, c: Node(*c))
        errors = []
        for jac in (J.jacfwd, J.jacrev):
            with pytest.raises(Exception) as info:
                jac(lambda x: x)(Node(np_.arange(3.0)))
            errors.append((type(info.value), str(info.value)))
        with pytest.raises(Exception) as info:
            np_.asarray(None)
        return errors + [(type(info.value), str(info.value))]
    assert error(mjax, jnp) == error(jax, jjnp)
