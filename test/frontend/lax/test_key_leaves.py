"""Typed key arrays are leaves of jax.tree_util / jax.tree, as in JAX (issue 21.5), while
every transformation still sees through them: checked against jax.
(mjax/base/trace_trees.py: the transformations flatten with a registry where a key is a node
over its data.)"""
from __future__ import annotations

import pickle

import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp


def _tree(lib):
    keys = lib.random.split(lib.random.key(1), 3)
    return {"k": lib.random.key(0), "ks": keys, "w": lib.numpy.ones(2), "n": None}


def _describe(x):
    if hasattr(x, "dtype") and "key" in str(x.dtype):
        return ("key", tuple(x.shape), np.asarray(
            (mjax if isinstance(x, mjax.Array) else jax).random.key_data(x)).tolist())
    return ("array", np.asarray(x).tolist())


@pytest.mark.parametrize("how", ["tree_util", "tree"])
def test_keys_are_leaves_of_the_public_tree_functions(how):
    def run(lib):
        t = _tree(lib)
        tu = lib.tree_util
        if how == "tree_util":
            leaves, treedef = tu.tree_flatten(t)
            paths = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(t)[0]]
            mapped = tu.tree_map(lambda x: x, t)
            n = tu.tree_structure(t).num_leaves
            node = tu.all_leaves([t["k"]])
        else:
            leaves, treedef = lib.tree.flatten(t)
            paths = [tu.keystr(p) for p, _ in lib.tree.flatten_with_path(t)[0]]
            mapped = lib.tree.map(lambda x: x, t)
            n = lib.tree.structure(t).num_leaves
            node = lib.tree.all(lib.tree.map(lambda x: x is not None, t))
        same = mapped["k"] is t["k"] and mapped["ks"] is t["ks"]
        shapes = [lib.tree.map(lambda x: getattr(x, "shape", None), t)[k]
                  for k in ("k", "ks", "w")]
        return [_describe(x) for x in leaves], paths, same, n, node, shapes, str(treedef)
    mine, theirs = run(mjax), run(jax)
    assert mine == theirs
    assert mine[2] is True and mine[3] == 3


def test_flattened_keys_cross_transformations_as_leaves():
    # The pattern equinox's filter_jit uses: flatten with tree_util, pass the leaves
    # through jit/vmap/grad/scan, unflatten inside.
    def run(lib):
        t = _tree(lib)
        leaves, treedef = lib.tree_util.tree_flatten(t)

        def f(*leaves):
            u = lib.tree_util.tree_unflatten(treedef, leaves)
            k1, k2 = lib.random.split(u["k"])
            return lib.random.normal(k1, (2,)) * u["w"], k2

        out, k2 = lib.jit(f)(*leaves)
        per_key = lib.vmap(lambda k: lib.random.uniform(k))(t["ks"])
        g = lib.grad(lambda w, k: (lib.random.normal(k, (2,)) * w).sum())(t["w"], t["k"])

        def body(carry, _):
            k, s = carry
            k, sub = lib.random.split(k)
            return (k, s + lib.random.normal(sub)), None
        (k_end, s), _ = lib.lax.scan(body, (t["k"], 0.0), None, length=3)
        mapped = lib.tree.map(lambda k: lib.random.fold_in(k, 7), {"a": t["k"]})
        return [np.asarray(out), _describe(k2), np.asarray(per_key), np.asarray(g),
                _describe(k_end), float(s), _describe(mapped["a"])]
    mine, theirs = run(mjax), run(jax)
    for a, b in zip(mine, theirs):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-6)
        else:
            assert a == b


def test_treedefs_with_keys_pickle_and_compare():
    t = _tree(mjax)
    treedef = mjax.tree_util.tree_structure(t)
    again = pickle.loads(pickle.dumps(treedef))
    assert again == treedef
    assert mjax.tree_util.tree_structure(mjax.tree_util.tree_map(lambda x: x, t)) == treedef
    assert mjax.tree_util.treedef_is_leaf(mjax.tree_util.tree_structure(t["k"]))
    assert not mjax.tree_util.is_tree_node(type(t["k"]))
    assert mjax.tree_util.tree_leaves(mjax.random.key_data(t["k"]))[0].dtype == mnp.uint32


def test_keys_compare_with_isclose_and_report_their_size():
    def run(lib):
        k0, k1 = lib.random.key(0), lib.random.key(1)
        ks = lib.random.split(k0, 3)
        out = [bool(lib.numpy.allclose(k0, k1)), bool(lib.numpy.allclose(ks, ks)),
               np.asarray(lib.numpy.isclose(ks, ks[::-1])).tolist(),
               bool(lib.jit(lib.numpy.allclose)(k0, k0)),
               [lib.random.key(0, impl=i).dtype.itemsize
                for i in ("threefry2x32", "rbg", "unsafe_rbg")]]
        try:
            lib.numpy.isclose(k0, 1.0)
        except TypeError as e:
            out.append(str(e))
        return out
    assert run(mjax) == run(jax)
