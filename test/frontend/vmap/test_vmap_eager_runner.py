"""Eager vmap with a new wrapper per call (`jax.vmap(f)(x)` in a loop): the wrappers of
one function and axis specification share one runner (mjax.vmap.batching._RUNNERS; a
plain function's is kept for its code object, shared by its closures),
yet every call still runs the function's Python (JAX re-traces an eager vmap each
call), follows the values it closes over, compiles per dtype, shape and weak type, and
raises JAX's errors. Results are compared with real jax (the test-only oracle)."""
from __future__ import annotations

import functools
import gc
import sys
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp
from frontend_util import check

# (mjax.vmap is the function: the module is reached through sys.modules)
batching = sys.modules["mjax.vmap.batching"]

X = np.array([0.5, 1.0, 1.5], np.float32)
M = np.arange(6, dtype=np.float32).reshape(2, 3)


def _weak(x) -> bool:
    return bool(getattr(x, "weak_type", False) or getattr(x.aval, "weak_type", False))


def test_side_effects_run_on_every_call_of_a_new_wrapper():
    counts = {}
    for lib, np_ in ((mjax, mnp), (jax, jnp)):
        seen = []

        def f(x):
            seen.append(1)      # (a Python side effect at every trace)
            return np_.sin(x) * 2.0
        for _ in range(4):
            lib.vmap(f)(X)                  # a new wrapper each call
        kept = lib.vmap(f)
        for _ in range(3):
            kept(X)                         # one wrapper called again
        counts[lib.__name__] = len(seen)
    assert counts["mjax"] == counts["jax"] == 7, counts


def test_changed_closure_values_give_new_results():
    scale = [1.0]
    offset = [mnp.zeros(3, mnp.float32)]

    def f(x):
        return x * scale[0] + offset[0]
    for k in range(4):
        scale[0] = 1.5 + k
        offset[0] = mnp.full((3,), float(k), mnp.float32)
        got = mjax.vmap(f)(M)               # the same function, a new wrapper
        want = M * np.float32(scale[0]) + np.float32(k)
        check(got, want)


def test_one_runner_per_function_and_axes_shared_by_wrappers():
    def f(x):
        return x + 1.0
    mjax.vmap(f)(X)
    mjax.vmap(f)(X)
    mjax.vmap(f, in_axes=1, out_axes=0)(M)
    kept = batching._RUNNERS[id(f.__code__)]   # (a plain function's: its code's)
    assert kept[0]() is f.__code__
    assert set(kept[1]) == {(0, 0, None, None), (1, 0, None, None)}
    # (the wrappers are new functions each time, as JAX's: attributes set on one stay
    # there)
    a, b = mjax.vmap(f), mjax.vmap(f)
    a.note = 1
    assert a is not b and not hasattr(b, "note")


def test_axis_specifications_of_one_function_do_not_mix():
    def f(x):
        return x * 2.0 + 1.0
    for kw in ({}, {"in_axes": 1}, {"out_axes": 1}, {"in_axes": 1, "out_axes": 1},
               {"in_axes": 0, "out_axes": -1}, {"in_axes": (1,)}):
        for _ in range(2):
            check(mjax.vmap(f, **kw)(M), jax.vmap(f, **kw)(M))


@pytest.mark.parametrize("arg", [
    np.ones(3, np.float32), np.ones(3, np.float16), np.arange(3, dtype=np.int32),
    np.ones((2, 3), np.float32), np.array([True, False, True]),
])
def test_dtypes_shapes_and_weak_types_follow_each_call(arg):
    def f(x, s):
        return x * s, x + 1
    for _ in range(2):
        got = mjax.vmap(f, in_axes=(0, None))(arg, 2.0)
        want = jax.vmap(f, in_axes=(0, None))(arg, 2.0)
        for g, w in zip(got, want):
            check(g, w)
            assert _weak(g) == _weak(w), (g.aval, w.aval)


def test_programs_are_compiled_per_dtype_and_shape_and_reused(lowerings):
    def g(x):
        return mnp.cos(x) - x
    def call(x):     # (one call site: the user's line is in the program's locations)
        return mjax.vmap(g)(x)
    args = [np.ones(3, np.float32), np.ones(3, np.float16), np.ones(4, np.float32)]
    for x in args:
        call(x)
    first = lowerings[0]
    assert first == 3, first            # (one program per type)
    for x in args * 2:
        check(call(x), np.cos(x) - x, rtol=1e-3, atol=1e-3)
    assert lowerings[0] == first        # (new wrappers, the same programs)


def test_a_function_made_per_call_is_not_kept_alive():
    def make(k):
        return lambda x: x * k
    refs = []
    for k in range(3):
        fun = make(float(k))
        refs.append(weakref.ref(fun))
        check(mjax.vmap(fun)(X), X * np.float32(k))
        del fun
    gc.collect()
    assert all(r() is None for r in refs)
    assert not any(kept[0]() is None for kept in batching._RUNNERS.values())


def test_the_wrapper_holds_its_function():
    # (the runner holds it weakly; a wrapper whose __wrapped__ is replaced still works)
    def other(x):
        return x

    wrapped = functools.wraps(other)(mjax.vmap(lambda x: x * 3.0))
    gc.collect()
    assert wrapped.__name__ == "other"
    check(wrapped(X), X * 3)


@pytest.mark.parametrize("kw", [{"in_axes": True}, {"out_axes": True},
                                {"in_axes": (True,)}, {"axis_size": True}])
def test_bool_axes_are_not_taken_for_ints(kw):
    # (True == 1 and hashes alike: a kept runner for in_axes=1 must not answer)
    def f(x):
        return x + 1.0
    plain = {k: (1 if v is True else (1,)) if k != "axis_size" else 3
             for k, v in kw.items()}
    if "axis_size" not in kw:
        mjax.vmap(f, **plain)(M.T if kw.get("in_axes") is None else M)
    try:
        jax.vmap(f, **kw)(M)
        jax_error = None
    except Exception as e:      # noqa: BLE001 - (the oracle's error, whatever its type)
        jax_error = e
    if jax_error is None:
        check(mjax.vmap(f, **kw)(M), jax.vmap(f, **kw)(M))
        return
    with pytest.raises(type(jax_error)):
        mjax.vmap(f, **kw)(M)


def test_errors_are_raised_on_every_call():
    def f(x, y):
        return x + y
    for _ in range(2):
        with pytest.raises(ValueError, match="inconsistent sizes"):
            mjax.vmap(f)(np.ones(3, np.float32), np.ones(4, np.float32))
        with pytest.raises(ValueError, match="len\\(in_axes\\)=1"):
            mjax.vmap(f, in_axes=(0,))(X, X)


def test_unmapped_python_outputs_are_this_calls():
    # (outputs vmap returns as the function made them, held per call by the runner)
    k = [0.0]

    def f(x):
        return x * 2.0, k[0] * 3.0, x
    for i in range(3):
        k[0] = float(i)
        got = mjax.vmap(f, out_axes=(0, None, 0))(X)
        want = jax.vmap(f, out_axes=(0, None, 0))(X)
        check(got[0], want[0])
        assert type(got[1]) is type(want[1]) and got[1] == want[1] == i * 3.0
        # (an output that is the argument is the argument itself, here a NumPy array)
        assert type(got[2]) is type(want[2]) is np.ndarray
        np.testing.assert_array_equal(got[2], want[2])


def test_vmap_op_made_again_is_the_op_emit_makes(lowerings):
    # (batching._VMAP_OPS: the op made from a kept entry is the one emit checks and
    # infers; the same program, so the eager call is not lowered again)
    def h(x, y):
        return mnp.tanh(x) * y, x.sum()

    def lowered():
        return mjax.jit(mjax.vmap(h, in_axes=(0, None))).lower(M, X).as_text()

    def call():
        return mjax.vmap(h, in_axes=(0, None))(M, X)
    batching._VMAP_OPS.clear()
    text = lowered()                       # (made by emit)
    assert batching._VMAP_OPS
    assert lowered() == text               # (made from the kept entry)
    batching._VMAP_OPS.clear()
    first = call()                         # (made by emit)
    count = lowerings[0]
    again = call()                         # (made from the kept entry: the same program,
    assert lowerings[0] == count           # bytecode and all, so not lowered again)
    want = jax.vmap(lambda x, y: (jnp.tanh(x) * y, x.sum()), in_axes=(0, None))(M, X)
    for got in (first, again):
        for g, w in zip(got, want):
            check(g, w)
