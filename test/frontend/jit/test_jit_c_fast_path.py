"""The cached `jit` call's fast path in C (runtime/_fastpath.c, installed by
frontend/jit/fast.py) gives what the Python fast path and jax give: values, dtypes, weak
types, output containers, keyword and static arguments, errors. The same checks run in a
subprocess with MJAX_NO_C_FASTPATH=1 (the Python path only)."""
import collections
import os
import pathlib
import subprocess
import sys

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

from frontend_util import python_calls
import mjax
import mjax.numpy as jnp
from mjax.jit import fast as jit_fast
from mjax.arrays.array import Array
from mjax.jit.jitted import Jitted

Pair = collections.namedtuple("Pair", "a b")
C_ON = jit_fast.C_FASTPATH is not None
# The Python __call__ (the C one hands it every call it does not take).
PY_CALL = getattr(Jitted.__call__, "__wrapped__", Jitted.__call__)


def test_c_module_is_built_and_used():
    if os.environ.get("MJAX_NO_C_FASTPATH", "") not in ("", "0"):
        assert not C_ON and Jitted.__call__ is PY_CALL
        return
    built = list(pathlib.Path(jit_fast.__file__).parent.parent.glob("runtime/_fastpath*"))
    if not any(p.suffix in (".so", ".pyd") for p in built):
        pytest.skip("the C extension was not built (no compiler at install time)")
    assert C_ON and Jitted.__call__ is not PY_CALL


def _same(got, want):
    g_leaves, g_tree = jax.tree_util.tree_flatten(got, is_leaf=lambda x: isinstance(x, Array))
    w_leaves, w_tree = jax.tree_util.tree_flatten(want)
    assert str(g_tree) == str(w_tree)
    if not isinstance(got, Array):
        assert type(got) is type(want)
    for g, w in zip(g_leaves, w_leaves):
        assert type(g) is Array
        assert (g.dtype, g.shape, g.weak_type) == (w.dtype, w.shape, w.weak_type)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def _j(tree):
    return jax.tree_util.tree_map(
        lambda x: jjnp.asarray(np.asarray(x)) if isinstance(x, Array) else x, tree,
        is_leaf=lambda x: isinstance(x, Array))


X = jnp.arange(4, dtype=jnp.float32)
I = jnp.arange(3, dtype=jnp.int32)

CASES = [
    ("one output", lambda x: x + 1.0, (X,), {}),
    ("weak output", lambda x: 2.0, (X,), {}),
    ("weak scalar from shape", lambda x: x.shape[0] * 1.5, (X,), {}),
    ("tuple", lambda x, i: (x * 2, i + 1), (X, I), {}),
    ("dict", lambda d: {k: v * 2 for k, v in d.items()}, ({"a": X, "b": I},), {}),
    ("nested", lambda x: [Pair(x, (x, {"z": x.sum()})), None], (X,), {}),
    ("captured constant", lambda x: x + np.arange(4, dtype=np.float32), (X,), {}),
    ("keyword", lambda x, y: x * y, (X,), {"y": X}),
    ("keywords in any order", lambda x, y, z: x * y - z, (), {"z": X, "x": X, "y": X}),
]


def test_same_results_as_python_path_and_jax():
    for name, fun, args, kwargs in CASES:
        f = mjax.jit(fun)
        want = jax.jit(fun)(*_j(args), **_j(kwargs))
        for _ in range(3):             # (the second and later calls take the fast path)
            _same(f(*args, **kwargs), want)
            _same(PY_CALL(f, *args, **kwargs), want)
        _same(f.__call__(*args, **kwargs), want)     # (the bound form)


def test_static_arguments():
    f = mjax.jit(lambda x, n, *, mode: x * n if mode == "mul" else x + n,
                 static_argnums=1, static_argnames="mode")
    g = jax.jit(lambda x, n, *, mode: x * n if mode == "mul" else x + n,
                static_argnums=1, static_argnames="mode")
    xj = jjnp.asarray(np.asarray(X))
    for n, mode in [(3, "mul"), (3, "mul"), (2, "mul"), (3, "add"), (3, "mul"),
                    (3.0, "mul"), (3.0, "mul"), (True, "add"), (True, "add")]:
        want = g(xj, n, mode=mode)
        _same(f(X, n, mode=mode), want)
        _same(PY_CALL(f, X, n, mode=mode), want)


def test_new_avals_and_weak_types_leave_the_memo():
    f = mjax.jit(lambda x, y: x * y)
    g = jax.jit(lambda x, y: x * y)
    for x, y in [(X, X), (X, X), (X, jnp.asarray(2.0)), (X, jnp.asarray(2.0)),
                 (X, jnp.asarray(2.0, jnp.float32)), (I, I), (X, X)]:
        want = g(*_j((x, y)))
        _same(f(x, y), want)
        _same(f(x, y=y), want)


def test_errors_match_jax():
    f = mjax.jit(lambda x, y: x + y)
    f(X, X), f(X, X)
    with pytest.raises(TypeError):
        f(X)
    with pytest.raises(TypeError):
        f(X, X, X)
    with pytest.raises(TypeError):
        f(X, y=X, z=X)
    s = mjax.jit(lambda x, n: x * n, static_argnums=1)
    s(X, 2), s(X, 2)
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        s(X, [2])
    d = jnp.arange(4, dtype=jnp.float32)
    f(d, d)
    d.delete()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        f(d, X)
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        f(X, y=d)


def test_array_built_in_c_equals_array():
    if not C_ON:
        pytest.skip("no C module")
    a = jit_fast.C_FASTPATH.make_array(X._buf, X.aval)
    assert type(a) is Array and a.aval is X.aval and a._buf is X._buf
    assert a._npy is None and a._sharding is None
    np.testing.assert_array_equal(np.asarray(a), np.asarray(X))
    assert a.device == X.device and not a.is_deleted()


def test_python_path_only_in_a_subprocess():
    env = dict(os.environ, MJAX_NO_C_FASTPATH="1")
    code = ("import mjax, mjax.numpy as jnp; from mjax.jit import fast as jit_fast; "
            "assert jit_fast.C_FASTPATH is None; f = mjax.jit(lambda x, y: x * y); "
            "x = jnp.arange(3.0); [f(x, y=x) for _ in range(3)]; "
            "print(f(x, x).tolist(), f(x, y=x).tolist())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[0.0,", "1.0,", "4.0]", "[0.0,", "1.0,", "4.0]"]


def test_cached_calls_run_no_python_in_jitted():
    if not C_ON:
        pytest.skip("no C module")
    f = mjax.jit(lambda x, y: x * y)
    t = mjax.jit(lambda d: {k: v + 1 for k, v in d.items()})
    s = mjax.jit(lambda x, n: x * n, static_argnums=1)
    X = jnp.ones(3)    # (an array whose `.sharding` was read leaves the fast path)
    calls = [lambda: f(X, X), lambda: f(X, y=X), lambda: t({"a": X, "b": X}),
             lambda: s(X, 3)]
    for call in calls:
        call(), call()
        assert python_calls(call, lambda f: f.endswith("jitted.py")) == []


def test_structure_changes_leave_the_memo():
    """The C path takes the arguments' leaves by the memo's treedef (flatten_up_to): a
    call of another structure (another namedtuple class, other dict keys, a list for a
    tuple, a dataclass with other static fields, a subtree where the memo had a leaf)
    gets its own program, as under jax."""
    import dataclasses

    Other = collections.namedtuple("Other", "a b")

    @dataclasses.dataclass
    class Meta:
        a: object
        scale: int

    for lib in (mjax, jax):
        lib.tree_util.register_dataclass(Meta, data_fields=["a"], meta_fields=["scale"])

    def fun(p):
        leaves = jax.tree_util.tree_leaves(p) if not isinstance(p, Meta) else [p.a * p.scale]
        return sum(leaves[1:], leaves[0] * 2)
    f, g = mjax.jit(fun), jax.jit(fun)
    y = jnp.arange(4)     # (another dtype at a leaf)
    calls = [Pair(X, X), Pair(X, X), Other(X, X), Pair(X, X), {"a": X, "b": X},
             {"a": X, "c": X}, {"a": X, "b": X}, [X, X], (X, X), [X, X],
             Meta(X, 2), Meta(X, 2), Meta(X, 3), Meta(X, 2), Pair(X, (X, X)), Pair(X, X),
             Pair(X, (X, X)), Pair(X, y), Pair(X, X)]
    for p in calls:
        jp = jax.tree_util.tree_map(lambda a: jjnp.asarray(np.asarray(a)), p) \
            if not isinstance(p, Meta) else Meta(jjnp.asarray(np.asarray(p.a)), p.scale)
        _same(f(p), g(jp))
