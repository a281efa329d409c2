"""mjax.tree_util against jax.tree_util: printed treedefs, equality, pickling, key paths,
registration, treedef methods and error messages (both run jaxlib's pytree code, each
with its own registry)."""
import collections
import dataclasses
import functools
import operator
import pickle

import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax import tree_util as mtu

jtu = jax.tree_util

Point = collections.namedtuple("Point", "x y")


class Box:
    """A node registered without keys (children at flat indices)."""

    def __init__(self, items, tag):
        self.items, self.tag = items, tag

    def __eq__(self, other):
        return type(other) is Box and (self.items, self.tag) == (other.items, other.tag)


class Keyed:
    """A node registered with GetAttrKey keys."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return type(other) is Keyed and (self.a, self.b) == (other.a, other.b)


@dataclasses.dataclass
class Layer:
    w: object
    b: object
    name: str = dataclasses.field(default="dense", metadata={"static": True})


@dataclasses.dataclass(frozen=True)
class Tag:
    label: str


def _register_everywhere():
    for tu in (mtu, jtu):
        tu.register_pytree_node(Box, lambda b: (b.items, b.tag),
                                lambda tag, items: Box(list(items), tag))
        tu.register_pytree_with_keys(
            Keyed, lambda k: (((tu.GetAttrKey("a"), k.a), (tu.GetAttrKey("b"), k.b)), None),
            lambda _, c: Keyed(*c))
        tu.register_dataclass(Layer)
        tu.register_static(Tag)


_register_everywhere()


def trees():
    return [
        1, None, (), [], {}, (1, 2), [1, (2, 3)], {"b": 1, "a": 2, "c": None},
        Point(1, [2, 3]), {"p": Point(x=None, y=4)},
        collections.OrderedDict([("z", 1), ("a", 2)]),
        collections.defaultdict(list, {"b": 1, "a": (2, 3)}),
        Box([1, 2], "t"), Keyed(1, {"k": 2}), Layer(np.float32(1), [2, 3]),
        [Tag("static"), 5], {"nest": [Box([Keyed(1, 2)], ("m", 1)), (None, Point(1, 2))]},
    ]


@pytest.mark.parametrize("tree", trees(), ids=lambda t: type(t).__name__)
def test_printed_treedefs_and_methods_match_jax(tree):
    mine, want = mtu.tree_structure(tree), jtu.tree_structure(tree)
    assert repr(mine) == repr(want) and str(mine) == str(want)
    assert isinstance(mine, mtu.PyTreeDef)
    assert (mine.num_leaves, mine.num_nodes) == (want.num_leaves, want.num_nodes)
    assert [repr(c) for c in mine.children()] == [repr(c) for c in want.children()]
    assert mine.node_data() == want.node_data()
    assert mtu.tree_leaves(tree) == jtu.tree_leaves(tree)
    leaves = [f"leaf{i}" for i in range(mine.num_leaves)]
    rebuilt = mine.unflatten(leaves)
    assert rebuilt == want.unflatten(leaves)
    if not jtu.treedef_is_leaf(want):
        assert type(rebuilt) is type(tree)
    assert mine.flatten_up_to(tree) == want.flatten_up_to(tree)
    assert repr(mine.compose(mtu.tree_structure((0, 0)))) == \
        repr(want.compose(jtu.tree_structure((0, 0))))
    assert mtu.treedef_is_leaf(mine) == jtu.treedef_is_leaf(want)
    assert [repr(c) for c in mtu.treedef_children(mine)] == \
        [repr(c) for c in jtu.treedef_children(want)]


@pytest.mark.parametrize("tree", trees(), ids=lambda t: type(t).__name__)
def test_key_paths_match_jax(tree):
    mine, mine_def = mtu.tree_flatten_with_path(tree)
    want, want_def = jtu.tree_flatten_with_path(tree)
    assert mine == want            # the key classes are the same (jaxlib's) in both
    assert repr(mine_def) == repr(want_def)
    for simple, sep in ((False, ""), (True, "/")):
        assert [mtu.keystr(p, simple=simple, separator=sep) for p, _ in mine] == \
            [jtu.keystr(p, simple=simple, separator=sep) for p, _ in want]
    # flatten_one_level(_with_keys) of the root
    if not jtu.treedef_is_leaf(want_def) or tree is None:
        assert mtu.flatten_one_level(tree) == jtu.flatten_one_level(tree)
        assert mtu.flatten_one_level_with_keys(tree) == jtu.flatten_one_level_with_keys(tree)


def test_key_classes_are_jaxs():
    assert mtu.DictKey is jtu.DictKey and mtu.SequenceKey is jtu.SequenceKey
    assert mtu.GetAttrKey is jtu.GetAttrKey and mtu.FlattenedIndexKey is jtu.FlattenedIndexKey
    assert mtu.PyTreeDef is jtu.PyTreeDef
    path = (mtu.DictKey("a"), mtu.SequenceKey(0), mtu.GetAttrKey("w"), mtu.FlattenedIndexKey(2))
    assert mtu.keystr(path) == jtu.keystr(path) == "['a'][0].w[<flat index 2>]"
    assert mtu.keystr(path, simple=True, separator=".") == "a.0.w.2"


def test_is_leaf_and_is_leaf_takes_path():
    tree = {"a": [1, None], "b": (2, Point(3, 4))}
    for is_leaf in (lambda x: x is None, lambda x: isinstance(x, Point)):
        assert mtu.tree_flatten(tree, is_leaf)[0] == jtu.tree_flatten(tree, is_leaf)[0]
        assert repr(mtu.tree_structure(tree, is_leaf)) == repr(jtu.tree_structure(tree, is_leaf))
        assert mtu.tree_leaves_with_path(tree, is_leaf) == jtu.tree_leaves_with_path(tree, is_leaf)
    by_path = lambda p, x: len(p) == 1 and p[0] == mtu.DictKey("b")  # noqa: E731
    assert mtu.tree_leaves_with_path(tree, by_path, is_leaf_takes_path=True) == \
        jtu.tree_leaves_with_path(tree, by_path, is_leaf_takes_path=True)
    mapped = lambda tu: tu.tree_map_with_path(  # noqa: E731
        lambda p, x: (tu.keystr(p), x), tree, is_leaf=by_path, is_leaf_takes_path=True)
    assert mapped(mtu) == mapped(jtu)


def test_equality_hash_and_pickle():
    a = mtu.tree_structure({"b": (1, 2), "a": [Point(1, 2)]})
    b = mtu.tree_structure({"a": [Point(5, 6)], "b": (7, 8)})
    assert a == b and hash(a) == hash(b)
    assert a != mtu.tree_structure({"a": [Point(5, 6)], "b": [7, 8]})
    assert mtu.tree_structure(Box([1], "t")) != mtu.tree_structure(Box([1], "u"))  # aux data
    for tree in ({"b": (1, 2), "a": [Point(1, 2), None]}, Box([1, Keyed(2, 3)], "t"),
                 collections.OrderedDict(z=1, a=2), Layer(1, 2), [Tag("s")]):
        treedef = mtu.tree_structure(tree)
        again = pickle.loads(pickle.dumps(treedef))
        assert again == treedef and repr(again) == repr(treedef)
        assert again.unflatten(mtu.tree_leaves(tree)) == tree
    # an mjax treedef names mjax's registry, a JAX one JAX's: they are not mixed up
    assert b"mjax.base.tree_util" in pickle.dumps(a)


def test_dict_keys_sorted_and_containers_rebuilt():
    tree = {"z": 1, "a": 2, "m": {"y": 3, "b": 4}}
    out = mtu.tree_map(lambda x: x, tree)
    assert list(out) == list(jtu.tree_map(lambda x: x, tree)) == ["a", "m", "z"]
    od = collections.OrderedDict([("z", 1), ("a", 2)])
    assert list(mtu.tree_map(lambda x: x, od)) == ["z", "a"]
    dd = collections.defaultdict(int, {"z": 1, "a": 2})
    out = mtu.tree_map(lambda x: 10 * x, dd)
    assert type(out) is collections.defaultdict and out.default_factory is int
    assert list(out.items()) == list(jtu.tree_map(lambda x: 10 * x, dd).items())
    with pytest.raises(ValueError) as want:
        jtu.tree_flatten({1: 1, "a": 2})
    with pytest.raises(ValueError) as got:
        mtu.tree_flatten({1: 1, "a": 2})
    assert str(got.value) == str(want.value)


def _error(fn):
    """(exception type, message) of fn(); ("ok", repr(result)) when it raises nothing."""
    try:
        return "ok", repr(fn())
    except Exception as e:  # noqa: BLE001 - compared with JAX's
        return type(e), str(e)


@pytest.mark.parametrize("first,second", [
    ([1, 2], [1, 2, 3]), ({"a": 1}, {"b": 1}), ((1, 2), [1, 2]), ([1, [2]], [1, 3]),
    ({"a": {"b": 1, "c": 2}}, {"a": {"b": 1}}), (Box([1], "t"), Box([1], "u")),
    (Point(1, 2), (1, 2)),
])
def test_structure_errors_match_jax(first, second):
    f = lambda *xs: xs  # noqa: E731
    assert _error(lambda: mtu.tree_map(f, first, second)) == \
        _error(lambda: jtu.tree_map(f, first, second))
    assert _error(lambda: mtu.tree_map_with_path(f, first, second)) == \
        _error(lambda: jtu.tree_map_with_path(f, first, second))
    assert _error(lambda: mtu.tree_structure(first).unflatten([0] * 9)) == \
        _error(lambda: jtu.tree_structure(first).unflatten([0] * 9))
    assert _error(lambda: mtu.tree_broadcast(second, first)) == \
        _error(lambda: jtu.tree_broadcast(second, first))


def test_registration_behaviour_matches_jax():
    class Twice:
        pass
    for tu in (mtu, jtu):
        tu.register_pytree_node(Twice, lambda t: ((), None), lambda *_: Twice())
    assert _error(lambda: mtu.register_pytree_node(Twice, lambda t: ((), None), None)) == \
        _error(lambda: jtu.register_pytree_node(Twice, lambda t: ((), None), None))

    @dataclasses.dataclass
    class D:
        x: object
        y: object

    for args in ((D, ["x"], None), (int, None, None), (D, ["x"], []), (D, ["x"], ["x", "y"]),
                 (D, ["x", "y", "z"], [])):
        assert _error(lambda: mtu.register_dataclass(*args)) == \
            _error(lambda: jtu.register_dataclass(*args))
    # register_dataclass with drop_fields, and on a plain class with explicit fields
    @dataclasses.dataclass
    class E:
        x: object
        cache: object = None

    class Plain:
        def __init__(self, x, s):
            self.x, self.s = x, s
    assert _error(lambda: mtu.register_dataclass(E, drop_fields=["cache"])) == \
        _error(lambda: jtu.register_dataclass(E, drop_fields=["cache"]))
    for tu in (mtu, jtu):
        assert tu.register_dataclass(E, ["x"], [], drop_fields=["cache"]) is E
    mtu.register_dataclass(Plain, ["x"], ["s"])
    jtu.register_dataclass(Plain, ["x"], ["s"])
    assert mtu.tree_leaves_with_path(E(1)) == jtu.tree_leaves_with_path(E(1))
    assert repr(mtu.tree_structure(Plain(1, "s"))).replace(
        "test_registration_behaviour_matches_jax.<locals>.", "") == \
        repr(jtu.tree_structure(Plain(1, "s"))).replace(
            "test_registration_behaviour_matches_jax.<locals>.", "")

    @mtu.register_pytree_with_keys_class
    class K:
        def __init__(self, a):
            self.a = a

        def tree_flatten_with_keys(self):
            return ((mtu.GetAttrKey("a"), self.a),), "aux"

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)
    assert mtu.tree_leaves_with_path([K(5)]) == [((mtu.SequenceKey(0), mtu.GetAttrKey("a")), 5)]
    assert mtu.tree_map(lambda x: x + 1, K(5)).a == 6


def test_registries_are_separate_from_jaxs():
    class OnlyMjax:
        def __init__(self, v):
            self.v = v
    mtu.register_pytree_node(OnlyMjax, lambda o: ((o.v,), None), lambda _, c: OnlyMjax(*c))
    assert mtu.tree_leaves(OnlyMjax(3)) == [3]
    assert len(jtu.tree_leaves(OnlyMjax(3))) == 1 and jtu.tree_leaves(OnlyMjax(3))[0] != 3
    assert mtu.is_tree_node(OnlyMjax) and not jtu.is_tree_node(OnlyMjax)
    for typ in (type(None), list, dict, Point, collections.OrderedDict, int, Box, Layer):
        assert mtu.is_tree_node(typ) == jtu.is_tree_node(typ)


def test_none_and_small_helpers():
    assert mtu.tree_leaves([None, 1, (None,)]) == jtu.tree_leaves([None, 1, (None,)]) == [1]
    assert repr(mtu.tree_structure([None, 1])) == "PyTreeDef([None, *])"
    assert mtu.all_leaves([1, 2.0]) and not mtu.all_leaves([1, (2,)])
    assert mtu.all_leaves([None], is_leaf=lambda x: x is None) == \
        jtu.all_leaves([None], is_leaf=lambda x: x is None)
    t = mtu.treedef_tuple([mtu.tree_structure([1]), mtu.tree_structure({"a": 1})])
    assert repr(t) == repr(jtu.treedef_tuple([jtu.tree_structure([1]),
                                               jtu.tree_structure({"a": 1})]))
    assert _error(lambda: mtu.flatten_one_level(1)) == _error(lambda: jtu.flatten_one_level(1))
    # the balanced reduction order: (a+b)+(c+d) for four leaves, 1 leaf, empty
    concat = lambda a, b: f"({a}{b})"  # noqa: E731
    for leaves in (list("abcde"), ["a"]):
        assert mtu.tree_reduce_associative(concat, leaves) == \
            jtu.tree_reduce_associative(concat, leaves)
        assert mjax.tree.reduce_associative(concat, leaves) == \
            jax.tree.reduce_associative(concat, leaves)
    assert _error(lambda: mjax.tree.reduce_associative(concat, [])) == \
        _error(lambda: jax.tree.reduce_associative(concat, []))
    assert mjax.tree.reduce_associative(concat, [], identity=None) is None
    outer, inner = [0, 0], (0, 0, 0)
    value = [(1, 2, 3), (4, 5, 6)]
    for tu in (mtu, jtu):
        assert tu.tree_transpose(tu.tree_structure(outer), None, value) == \
            ([1, 4], [2, 5], [3, 6])
    assert repr(mtu.tree_structure(inner)) == repr(jtu.tree_structure(inner))


def test_partial_matches_jax():
    def f(a, b, *, c=0):
        return a + b + c
    for tu in (mtu, jtu):
        p = tu.Partial(f, 1, c=2)
        assert p(3) == 6
        leaves, treedef = tu.tree_flatten(p)
        assert leaves == [1, 2]
        assert tu.tree_unflatten(treedef, [10, 20])(1) == 31
        nested = tu.Partial(tu.Partial(f, 1), 2)
        assert tu.tree_leaves(nested) == [2] and nested(c=3) == 6
        boxed = tu.Partial(functools.partial(f, 1), 2)
        assert tu.tree_leaves(boxed) == [2] and boxed() == 3
    fp = functools.partial(f, 1)
    assert repr(mtu.tree_structure(mtu.Partial(fp, 2))) == \
        repr(jtu.tree_structure(jtu.Partial(fp, 2)))
    out = mjax.jit(lambda p, x: p(x))(mtu.Partial(operator.mul, jnp.float32(3)), 2.0)
    assert float(out) == 6.0


def test_jit_with_registered_and_ordered_containers():
    traces = []

    @mjax.jit
    def f(tree):
        traces.append(1)
        return mtu.tree_map(lambda x: x * 2, tree)
    tree = {"od": collections.OrderedDict(z=jnp.ones(2), a=jnp.zeros(2)),
            "box": Box([jnp.arange(2.0)], "t"), "layer": Layer(jnp.ones(1), jnp.ones(1))}
    for _ in range(3):
        out = f(tree)
        assert list(out["od"]) == ["z", "a"] and out["box"].tag == "t"
        np.testing.assert_array_equal(out["box"].items[0], [0, 2])
        np.testing.assert_array_equal(out["layer"].w, [2])
    assert len(traces) == 1
    f({**tree, "box": Box([jnp.arange(2.0)], "u")})   # other aux data: a new trace
    assert len(traces) == 2
    out = f({**tree, "box": Box([jnp.arange(2.0)], "t")})
    assert len(traces) == 2 and out["box"].tag == "t"
