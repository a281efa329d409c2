"""Eager vmap of a jnp function that is a pure function of its avals (jnp.sin, jnp.add:
mjax.tracing.registration.PURE_OF_AVALS) keeps its traced program per avals, static
values, axes and config, as JAX keeps its jitted jnp functions' jaxprs; every other
function is traced again at each call, as JAX traces an eager vmap. The results, dtypes
and weak types follow each call's arguments; real jax is the oracle."""
from __future__ import annotations

import functools
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp
from mjax.tracing.registration import PURE_OF_AVALS
from frontend_util import check

batching = sys.modules["mjax.vmap.batching"]

X = np.array([0.5, 1.0, 1.5], np.float32)
M = np.arange(6, dtype=np.float32).reshape(2, 3)


def _weak(x) -> bool:
    return bool(getattr(x, "weak_type", False) or getattr(x.aval, "weak_type", False))


@pytest.fixture
def traces(monkeypatch):
    """How many times vmap traced its function (batching.stage_function's calls)."""
    count = [0]
    original = batching.stage_function

    def counted(*args, **kwargs):
        count[0] += 1
        return original(*args, **kwargs)
    monkeypatch.setattr(batching, "stage_function", counted)
    return count


def _both(name):
    return getattr(mnp, name), getattr(jnp, name)


def test_registered_functions():
    for f in (mnp.sin, mnp.cos, mnp.exp, mnp.add, mnp.multiply, mnp.maximum,
              mnp.subtract, mnp.equal):
        assert PURE_OF_AVALS.get(id(f)) is f, f
    # (not functions that read values, return their argument or take callables)
    for f in (mnp.asarray, mnp.real, mnp.nonzero, mnp.where, mnp.vectorize, mnp.sum):
        assert PURE_OF_AVALS.get(id(f)) is not f, f


def test_a_pure_function_is_traced_once_per_avals(traces):
    x = np.linspace(0, 1, 3 * 29, dtype=np.float32).reshape(3, 29)   # (a shape of its own)
    mjax.vmap(mnp.sin)(x)
    traces[0] = 0
    for k in range(3):
        check(mjax.vmap(mnp.sin)(x + k), np.sin(x + k), rtol=1e-6, atol=1e-6)
    assert traces[0] == 0
    mjax.vmap(mnp.sin, in_axes=1)(x)                # (other axes: another program)
    assert traces[0] == 1


def test_a_wrapper_of_a_pure_function_is_traced_every_call(traces):
    # functools.wraps copies jnp.sin's attributes onto the user's function: it is not
    # jnp.sin, and its Python (a side effect) runs at each call, as under JAX.
    for lib, np_ in ((mjax, mnp), (jax, jnp)):
        seen = []

        @functools.wraps(np_.sin)
        def f(x):
            seen.append(1)
            return np_.sin(x)
        for _ in range(3):
            np.testing.assert_allclose(np.asarray(lib.vmap(f)(X)), np.sin(X), rtol=1e-6)
        assert len(seen) == 3, lib.__name__
    assert traces[0] == 3


def test_closures_and_functions_of_one_code_follow_each_call(traces):
    def make(c):
        return lambda v: mnp.sin(v) * c, lambda v: jnp.sin(v) * c
    pairs = [make(1.0), make(2.0), make(np.float32(3.0))]
    for _ in range(2):
        for mine, theirs in pairs:
            check(mjax.vmap(mine)(X), jax.vmap(theirs)(X))
    scale = [1.0]

    def f(v):
        return mnp.sin(v) * scale[0]
    for k in range(3):
        scale[0] = 1.0 + k
        check(mjax.vmap(f)(X), np.sin(X) * np.float32(1.0 + k))
    assert traces[0] == 9


@pytest.mark.parametrize("arg", [
    np.ones(3, np.float32), np.ones(3, np.float16), np.arange(3, dtype=np.int32),
    np.ones((2, 3), np.float32), np.array([True, False, True]), np.ones(3, np.complex64),
])
def test_dtypes_shapes_and_weak_types_follow_each_call(arg):
    for name in ("sin", "exp", "negative", "square"):
        mine, theirs = _both(name)
        for _ in range(2):
            try:
                want = jax.vmap(theirs)(arg)
            except TypeError as e:
                with pytest.raises(TypeError):
                    mjax.vmap(mine)(arg)
                continue
            got = mjax.vmap(mine)(arg)
            check(got, want, rtol=1e-3, atol=1e-3)
            assert got.dtype == want.dtype and _weak(got) == _weak(want), (name, got.aval)


@pytest.mark.parametrize("s", [2.0, 3.0, 2, 3, np.float32(2.5), True])
def test_unmapped_scalars_follow_each_call(s):
    for name in ("add", "multiply", "maximum", "subtract"):
        mine, theirs = _both(name)
        for a in (X, M, np.arange(3, dtype=np.int32)):
            for _ in range(2):
                got = mjax.vmap(mine, in_axes=(0, None))(a, s)
                want = jax.vmap(theirs, in_axes=(0, None))(a, s)
                check(got, want)
                assert got.dtype == want.dtype and _weak(got) == _weak(want), (name, s)


def test_axes_of_one_function_do_not_mix():
    mine, theirs = _both("add")
    y = np.arange(6, dtype=np.float32).reshape(3, 2)
    for kw, args in (({}, (M, M)), ({"in_axes": (0, 1)}, (M, y)),
                     ({"in_axes": (1, 0)}, (M, y)), ({"in_axes": (0, None)}, (M, X)),
                     ({"in_axes": (None, 0)}, (X, M)), ({"out_axes": 1}, (M, M)),
                     ({"in_axes": 1, "out_axes": 1}, (M, M)),
                     ({"in_axes": (0, 0), "out_axes": -1}, (M, M))):
        for _ in range(2):
            check(mjax.vmap(mine, **kw)(*args), jax.vmap(theirs, **kw)(*args))


def test_host_arrays_are_read_at_each_call():
    host = np.array([0.1, 0.2, 0.3], np.float32)
    for k in range(3):
        host[:] = np.float32(k) + np.array([0.1, 0.2, 0.3], np.float32)
        check(mjax.vmap(mnp.sin)(host), np.sin(host), rtol=1e-6, atol=1e-6)
        check(mjax.vmap(mnp.add, in_axes=(0, None))(M, host),
              jax.vmap(jnp.add, in_axes=(0, None))(M, host))


def test_x64_changes_the_program():
    ints = np.arange(3, dtype=np.int32)
    try:
        for on in (False, True, False):
            mjax.config.update("jax_enable_x64", on)
            jax.config.update("jax_enable_x64", on)
            got, want = mjax.vmap(mnp.sin)(ints), jax.vmap(jnp.sin)(ints)
            check(got, want, rtol=1e-6, atol=1e-6)
            assert got.dtype == want.dtype, (on, got.dtype)
            got = mjax.vmap(mnp.add, in_axes=(0, None))(X, 1.5)
            want = jax.vmap(jnp.add, in_axes=(0, None))(X, 1.5)
            assert got.dtype == want.dtype, (on, got.dtype)
    finally:
        mjax.config.update("jax_enable_x64", False)
        jax.config.update("jax_enable_x64", False)


def test_errors_are_raised_on_every_call():
    for _ in range(2):
        with pytest.raises(ValueError) as theirs:
            jax.vmap(jnp.sin, in_axes=1)(X)
        with pytest.raises(ValueError) as mine:
            mjax.vmap(mnp.sin, in_axes=1)(X)
        assert str(mine.value) == str(theirs.value)
        with pytest.raises(ValueError):
            mjax.vmap(mnp.add)(X, M)


def test_inside_jit_grad_and_disable_jit():
    check(mjax.jit(lambda v: mjax.vmap(mnp.sin)(v))(M),
          jax.jit(lambda v: jax.vmap(jnp.sin)(v))(M))
    check(mjax.grad(lambda v: mjax.vmap(mnp.sin)(v).sum())(X),
          jax.grad(lambda v: jax.vmap(jnp.sin)(v).sum())(X))
    with mjax.disable_jit(), jax.disable_jit():
        check(mjax.vmap(mnp.sin)(M), jax.vmap(jnp.sin)(M))
    check(mjax.vmap(mjax.vmap(mnp.multiply))(M, M), jax.vmap(jax.vmap(jnp.multiply))(M, M))


def test_unmapped_numbers_and_host_arrays_are_traced_not_static(traces):
    x = np.linspace(0, 1, 31, dtype=np.float32)     # (a shape of its own)
    for k in range(4):
        for s in (k, float(k), np.full((31,), k, np.float32), np.float32(k)):
            check(mjax.vmap(mnp.add, in_axes=(0, None))(x, s),
                  jax.vmap(jnp.add, in_axes=(0, None))(x, s))
    assert traces[0] == 4       # (one program per kind of unmapped argument)


@pytest.mark.parametrize("s", [300, -129, 2**31 - 1, 2**40])
def test_unmapped_ints_convert_as_in_jax(s):
    a = np.arange(4, dtype=np.int8)
    try:
        want = jax.vmap(jnp.add, in_axes=(0, None))(a, s)
    except OverflowError:
        with pytest.raises(OverflowError):
            mjax.vmap(mnp.add, in_axes=(0, None))(a, s)
        return
    check(mjax.vmap(mnp.add, in_axes=(0, None))(a, s), want)
