"""The C fast paths (runtime/_fastpath.c: cached jit calls; runtime/_eagerpath.c: eager
ops' cache hits) neither leak nor over-release references: over many calls on every
calling convention they take (positional, pytree, keyword, static, host scalar and NumPy
leaves, eager ops in bind form, one-op jnp functions, array-scalar and mixed-aval
operators, fused functions, bind with params), the reference counts of the arguments,
their avals and the functions stay flat, results die when dropped, and the values equal
NumPy's. A missing or extra Py_DECREF shows up here as a count that moves with N."""
import gc
import sys
import weakref

import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax import core
from mjax.arrays import eager_fast
from mjax.jit import fast as jit_fast
from mjax.arrays.array import Array
from mjax.dialect.ops.elementwise import SinOp

N = 300


def _counts(objs):
    gc.collect()
    return [sys.getrefcount(o) for o in objs]


def _flat(call, watched, n=N):
    """Runs `call` n times to warm every memo and cache, then n times more: the reference
    counts of `watched` must not move (a leak or over-release per call moves them by n),
    and the results must die."""
    for _ in range(n):
        call()
    before = _counts(watched)
    dead = []
    for i in range(n):
        out = call()
        if i % 50 == 0:
            dead += [weakref.ref(a) for a in mjax.tree_util.tree_leaves(out)
                     if type(a) is Array]
        del out
    after = _counts(watched)
    assert after == before
    assert all(r() is None for r in dead)


def _x(dtype=np.float32, shape=(4,)):
    return jnp.asarray(np.arange(np.prod(shape), dtype=dtype).reshape(shape) + 1)


def test_c_paths_are_built():
    assert jit_fast.C_FASTPATH is not None and eager_fast.C_EAGER is not None


def test_jit_positional_pytree_keyword_static_and_host_leaves():
    x, y = _x(), _x()
    f = mjax.jit(lambda a, b: a * b + 1)
    _flat(lambda: f(x, y), [x, y, x.aval, y.aval, f])
    g = mjax.jit(lambda d: (d["a"] + d["b"][0], [d["a"]]))
    tree = {"a": x, "b": (y,)}
    _flat(lambda: g(tree), [x, y, x.aval, tree, g])
    h = mjax.jit(lambda a, *, b: a - b)
    _flat(lambda: h(x, b=y), [x, y, x.aval, h])
    k = mjax.jit(lambda a, n, b=1.0: a * n + b, static_argnums=(1,))
    _flat(lambda: k(x, 3, b=y), [x, y, x.aval, k])
    s, arr = 2.5, np.arange(4, dtype=np.float32)
    _flat(lambda: f(x, s), [x, s, x.aval, f])
    _flat(lambda: f(x, arr), [x, arr, x.aval, f])
    np.testing.assert_array_equal(np.asarray(k(x, 3, b=y)), np.asarray(x) * 3 + np.asarray(y))


def test_jit_failed_execution_and_errors_keep_counts():
    x = _x()
    f = mjax.jit(lambda a: a + 1)
    f(x)
    x2 = _x()
    x2.delete()
    def fail(n):
        for _ in range(n):
            with pytest.raises(Exception):
                f(x2)
        return _counts([x2, x2.aval, f])

    assert fail(20) == fail(200)


def test_eager_bind_ops_scalars_pairs_fused_and_params():
    x, y = _x(), _x()
    i = _x(np.int32)
    _flat(lambda: core.bind(SinOp, x), [x, x.aval, SinOp])
    _flat(lambda: jnp.sin(x), [x, x.aval])
    _flat(lambda: x + y, [x, y, x.aval, y.aval])
    s = 2.0
    _flat(lambda: x * s, [x, s, x.aval])
    _flat(lambda: s - x, [x, s, x.aval])
    ns = np.float32(3.0)
    _flat(lambda: x + ns, [x, ns, x.aval])
    _flat(lambda: x + i, [x, i, x.aval, i.aval])    # (mixed avals: the pair memo)
    m = _x(shape=(3, 4))
    _flat(lambda: m.sum(axis=0), [m, m.aval])      # (a fused function)
    _flat(lambda: jnp.max(m, axis=1), [m, m.aval])
    _flat(lambda: m // 2.0, [m, m.aval])
    np.testing.assert_allclose(np.asarray(x * s), np.asarray(x) * 2.0)
