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
from mjax.runtime.backend import HostPut
from mjax.runtime.host_call import X64_DTYPES

Pair = collections.namedtuple("Pair", "a b")
C_ON = jit_fast.C_FASTPATH is not None
# (on the IREE backend jit calls take the general path: the fast path's tests of which
# Python runs do not apply)
ON_IREE = os.environ.get("MJAX_BACKEND", "").lower().startswith("iree")
# (mjax's sources wherever its subpackages live: runtime/ beside frontend/ in an editable
# install)
PKG = tuple(os.path.dirname(m.__file__) + os.sep for m in (mjax, mjax.dialect, mjax.runtime))
# The Python __call__ (the C one hands it every call it does not take).
# (Without the C module __call__ is api_boundary's wrapper, whose __wrapped__ is the bare
# function.)
PY_CALL = Jitted.__call__.__wrapped__ if C_ON else Jitted.__call__


def test_c_module_is_built_and_used():
    if os.environ.get("MJAX_NO_C_FASTPATH", "") not in ("", "0"):
        assert not C_ON and Jitted.__call__ is PY_CALL
        return
    built = list(pathlib.Path(mjax.runtime.__file__).parent.glob("_fastpath*"))
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


# ---- NumPy array arguments: the C path's own avals and puts (set_numpy) ----------------
class _Sub(np.ndarray):
    pass


# (fun, args): each call runs with the C path's NumPy leaves on and off, and on the Python
# path alone (MJAX_NO_C_FASTPATH=1), against jax
NUMPY_CASES = [
    ("float32", lambda x, y: x * y + 1, (np.arange(4, dtype=np.float32), X)),
    ("float64 becomes float32", lambda x, y: x * y, (np.arange(4.0) / 3, X)),
    ("int8 and float64", lambda x, y: x * y, (np.arange(4, dtype=np.int8), np.arange(4.0))),
    ("non-contiguous", lambda x: x * 2, (np.arange(8, dtype=np.float32)[::2],)),
    ("Fortran order", lambda x: x.T @ x,
     (np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)),)),
    ("reversed", lambda x: x - 1, (np.arange(5, dtype=np.int32)[::-1],)),
    ("0-d", lambda x: x + 1, (np.array(2.5, np.float32),)),
    ("bool", lambda x: ~x, (np.array([True, False]),)),
    ("ndarray subclass", lambda x: x * 2, (np.arange(3, dtype=np.float32).view(_Sub),)),
    ("in a pytree", lambda d: d["a"] + d["b"][0],
     ({"a": np.ones(3, np.float32), "b": [np.arange(3.0)]},)),
]


def _numpy_leaves_in_c(on):
    """The C path takes exact ndarray leaves itself (on) or asks host_key and host_buf
    about every one (off: as before set_numpy existed)."""
    if on:
        jit_fast.C_FASTPATH.set_numpy(np.ndarray, jit_fast._HOST_AVALS, jit_fast._PUTTERS,
                                      HostPut, X64_DTYPES)
    else:
        jit_fast.C_FASTPATH.set_numpy(None)


def test_numpy_arguments_match_jax_either_way():
    for name, fun, args in NUMPY_CASES:   # (one test: the fast tier keeps every case)
        want = jax.jit(fun)(*_j(args))
        hosts = [a for a in jax.tree_util.tree_leaves(args) if isinstance(a, np.ndarray)]
        before = [np.array(a, copy=True) for a in hosts]
        for on in (True, False) if C_ON else (None,):
            if on is not None:
                _numpy_leaves_in_c(on)
            try:
                f = mjax.jit(fun)
                for _ in range(3):
                    _same(f(*args), want)
            finally:
                if on is not None:
                    _numpy_leaves_in_c(True)
        for a, b in zip(hosts, before):
            np.testing.assert_array_equal(a, b)     # (the host arrays are left as they were)


def test_cached_numpy_calls_run_python_only_to_convert():
    """An exact ndarray of the memo's dtype runs no Python of mjax's (its aval and put read
    in C); one converted (float64 without x64) is put by host_buf, its aval still read in
    C; under a config context manager too (only the epoch is Python's), where a float64
    array is float64 under x64 and converted outside it, each call in its own memo."""
    if not C_ON or ON_IREE:
        pytest.skip("no C module" if not C_ON else "IREE: jit calls take the general path")
    ours = lambda fn: fn.startswith(PKG)      # noqa: E731
    f = mjax.jit(lambda x, y: x * y)
    X = jnp.arange(4, dtype=jnp.float32)   # (one whose `.sharding` no test has read)
    h32, h64 = np.arange(4, dtype=np.float32), np.arange(4.0)
    strided = np.arange(8, dtype=np.float32)[::2]
    for x in (h32, strided):
        f(x, X), f(x, X)
        assert python_calls(lambda: f(x, X), ours) == []
    f(h64, X), f(h64, X)
    calls = python_calls(lambda: f(h64, X), ours)
    assert "host_buf" in calls and "host_key" not in calls and "_call" not in calls
    with mjax.config.override(jax_numpy_rank_promotion="allow"):
        f(h32, X), f(h32, X)
        calls = python_calls(lambda: f(h32, X), ours)
    assert calls == ["override_epoch"]
    X64 = np.arange(4.0) + 0.1       # (not a float32 value)
    for _ in range(2):
        with mjax.enable_x64(True):
            wide = [f(X64, X64) for _ in range(3)]
            assert python_calls(lambda: f(X64, X64), ours) == ["override_epoch"]
        narrow = [f(X64, X64) for _ in range(3)]
        for w, n in zip(wide, narrow):
            assert w.dtype == np.float64 and n.dtype == np.float32
            np.testing.assert_allclose(np.asarray(w), X64 * X64, rtol=1e-12)  # (a TPU
            # emulates float64)
            np.testing.assert_array_equal(np.asarray(n), (X64.astype(np.float32)) ** 2)


def test_numpy_arguments_of_other_shapes_dtypes_and_x64_miss_the_memo():
    fun = lambda x: x * 2        # noqa: E731
    f, g = mjax.jit(fun), jax.jit(fun)
    calls = [np.ones(4, np.float32), np.ones(4, np.float32), np.ones(5, np.float32),
             np.ones(4, np.int32), np.ones(4, np.float32), np.ones((4, 1), np.float32),
             np.arange(4.0), np.ones(4, np.float16), np.arange(4.0)]
    for x in calls * 2:
        _same(f(x), g(x))
    try:
        mjax.config.update("jax_enable_x64", True)
        jax.config.update("jax_enable_x64", True)
        for x in calls:
            _same(f(x), g(x))
        assert f(np.arange(4.0)).dtype == np.float64
        if C_ON and not ON_IREE:     # (its float64 aval read in C under x64 too)
            assert python_calls(lambda: f(np.arange(4.0)), lambda fn: fn.startswith(PKG)) == []
    finally:
        mjax.config.update("jax_enable_x64", False)
        jax.config.update("jax_enable_x64", False)
    for x in calls:
        _same(f(x), g(x))
    assert f(np.arange(4.0)).dtype == np.float32
    with mjax.enable_x64(True):      # (a context manager: host_key reads its value)
        for _ in range(3):
            assert f(np.arange(4.0)).dtype == np.float64
    assert f(np.arange(4.0)).dtype == np.float32


def test_transfer_guard_refuses_numpy_arguments_of_cached_calls():
    if ON_IREE:
        pytest.skip("IREE: its puts are not jaxlib's, which apply the transfer guard")
    f = mjax.jit(lambda x: x + 1)
    h, h64 = np.arange(4, dtype=np.float32), np.arange(4.0)
    for x in (h, h64):
        f(x), f(x)
        try:
            mjax.config.update("jax_transfer_guard_host_to_device", "disallow")
            for _ in range(2):
                with pytest.raises(Exception, match="Disallowed host-to-device transfer"):
                    f(x)
        finally:
            mjax.config.update("jax_transfer_guard_host_to_device", None)
        f(x), f(x)
        with mjax.transfer_guard_host_to_device("disallow"):
            for _ in range(2):
                with pytest.raises(Exception, match="Disallowed host-to-device transfer"):
                    f(x)
        with mjax.transfer_guard("disallow"):
            with mjax.transfer_guard_host_to_device("allow"):
                outs = [f(x), f(x)]    # (read back outside: a TPU guards device-to-host)
        for out in outs + [f(x)]:
            np.testing.assert_array_equal(out, np.arange(4.0) + 1)
    if C_ON:     # (and the C path takes the call again afterwards)
        f(h)
        assert python_calls(lambda: f(h), lambda fn: fn.startswith(PKG)) == []


def test_donating_program_gets_a_fresh_buffer_per_call():
    f = mjax.jit(lambda x: x * 2 + 1, donate_argnums=0)
    g = jax.jit(lambda x: x * 2 + 1, donate_argnums=0)
    for n in (4, 4096):         # (a large array is aligned: a put could alias its memory)
        h = np.arange(n, dtype=np.float32)
        outs = [f(h) for _ in range(4)]
        np.testing.assert_array_equal(h, np.arange(n, dtype=np.float32))
        for out in outs:
            _same(out, g(h))
        assert len({id(o._buf) for o in outs}) == 4


def test_c_path_calls_the_put_kept_for_the_backend_shape_and_dtype():
    """The C path calls what _PUTTERS keeps (a HostPut's batched_device_put itself, any
    other callable as it is), and asks host_buf where nothing is kept yet. (A program
    that donates: others get their NumPy arrays put by jaxlib's C++ jit, host_run.)"""
    if not C_ON or ON_IREE:
        pytest.skip("no C module" if not C_ON else "IREE: jit calls take the general path")
    f = mjax.jit(lambda x: x - 1, donate_argnums=0)
    h = np.arange(3, dtype=np.float32)
    f(h), f(h)
    keys = [k for k in jit_fast._PUTTERS if k[1:] == ((3,), np.dtype(np.float32))]
    assert len(keys) == 1 and type(jit_fast._PUTTERS[keys[0]]) is HostPut
    kept = jit_fast._PUTTERS[keys[0]]
    seen = []
    jit_fast._PUTTERS[keys[0]] = lambda a: seen.append(a) or kept(a)
    try:
        np.testing.assert_array_equal(f(h), h - 1)
        assert len(seen) == 1 and seen[0] is h
    finally:
        jit_fast._PUTTERS[keys[0]] = kept
    del jit_fast._PUTTERS[keys[0]]
    assert "host_buf" in python_calls(lambda: f(h), lambda fn: fn.startswith(PKG))
    assert python_calls(lambda: f(h), lambda fn: fn.startswith(PKG)) == []
    np.testing.assert_array_equal(f(h), h - 1)
