"""Public JAX behaviour optax's test suite relies on (no optax needed here): vmap over an
empty batch of gathers (its Hungarian algorithm under `vmap` of 0 cost matrices), and the
copy methods of traced arrays (schedule_free's `tree.map(lambda t: t.copy(), z)` in jit)."""
from __future__ import annotations

import copy

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp


def _take_rows(x, i):
    return x[i]


def _set_rows(x, i):
    return x.at[i].add(1.0)


@pytest.mark.parametrize("batch,n,m", [(0, 3, 4), (0, 1, 0), (3, 2, 0)])
@pytest.mark.parametrize("fn", [_take_rows, _set_rows])
@pytest.mark.parametrize("jit", [False, True])
def test_vmap_gather_over_empty_as_jax(batch, n, m, fn, jit):
    x = np.arange(batch * n * m, dtype=np.float32).reshape(batch, n, m)
    i = np.zeros((batch, 2), np.int32)
    ours = mjax.vmap(fn)
    theirs = jax.vmap(fn)
    if jit:
        ours, theirs = mjax.jit(ours), jax.jit(theirs)
    want = theirs(x, i)
    got = ours(x, i)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_gather_of_empty_result_under_jit_as_jax():
    x = np.zeros((0, 5), np.float32)
    idx = np.zeros((0, 1), np.int32)
    want = jax.jit(lambda x, i: jjnp.take_along_axis(x, i, axis=1))(x, idx)
    got = mjax.jit(lambda x, i: jnp.take_along_axis(x, i, axis=1))(x, idx)
    assert got.shape == want.shape and got.dtype == want.dtype


def _copies(x):
    return x.copy(), copy.copy(x), copy.deepcopy(x), divmod(7, x)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, jjnp.bfloat16])
def test_traced_copy_methods_as_jax(dtype):
    x = np.arange(1, 5).astype(dtype)
    want = jax.jit(_copies)(x)
    got = mjax.jit(_copies)(x)
    assert len(got) == len(want)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(np.asarray(g, np.float64), np.asarray(w, np.float64))


def test_copy_inside_grad_and_vmap_as_jax():
    f = lambda x: (x.copy() * copy.deepcopy(x)).sum()
    x = np.arange(3.0, dtype=np.float32)
    np.testing.assert_array_equal(mjax.grad(f)(x), jax.grad(f)(x))
    g = lambda x: copy.copy(x) + 1
    np.testing.assert_array_equal(mjax.vmap(g)(x), jax.vmap(g)(x))


def test_tree_map_copy_keeps_dtype_in_jit():
    tree = {"a": np.ones(2, np.float32), "b": np.ones(3, jjnp.bfloat16)}
    got = mjax.jit(lambda t: mjax.tree.map(lambda v: v.copy(), t))(tree)
    want = jax.jit(lambda t: jax.tree.map(lambda v: v.copy(), t))(tree)
    assert {k: v.dtype for k, v in got.items()} == {k: v.dtype for k, v in want.items()}
