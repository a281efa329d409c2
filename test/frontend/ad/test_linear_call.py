"""jax.custom_derivatives.linear_call: a linear function with its own transpose
(mjax/custom_derivatives.py), against real jax: values, transposes (custom, and the
transpose of the transpose), reverse mode, jit, pytree arguments; forward mode (jvp,
linearize, jvp of grad, hessian) keeping the custom transpose, and under vmap."""
from functools import partial

import jax
import numpy as np
import pytest
from jax.custom_derivatives import linear_call as jax_linear_call

import mjax
from mjax.custom_derivatives import linear_call as mjax_linear_call

LIBS = [(jax, jax_linear_call), (mjax, mjax_linear_call)]


def _transpose(lib, f, example):
    def transposed(y):
        x, = lib.linear_transpose(f, example)(y)
        return x
    return transposed


def _results(lib, linear_call):
    def div_add(x, denom):
        return x + linear_call(lambda r, x: x / r, lambda r, t: t / r, denom, x)

    def custom_id(x):
        return linear_call(lambda _, x: x, lambda _, t: 7.0 * t, (), x)

    def pytree(x, res):     # linear in the dict, residuals a tuple
        return linear_call(lambda r, d: d["a"] * r[0] + d["b"] * r[1],
                           lambda r, t: {"a": t * r[0], "b": t * r[1]},
                           res, {"a": x, "b": 2.0 * x})

    x = np.float32(1.5)
    return [
        div_add(9.0, 3.0),
        _transpose(lib, partial(div_add, denom=3.0), 1.0)(18.0),
        custom_id(x),
        _transpose(lib, custom_id, 1.0)(1.0),
        _transpose(lib, _transpose(lib, custom_id, 1.0), 1.0)(1.0),
        lib.grad(custom_id)(x),
        lib.jit(lib.grad(custom_id))(x),
        lib.grad(lambda x, r: linear_call(lambda r, x: x / r, lambda r, t: t / r, r, x))(
            x, np.float32(4.0)),
        lib.jit(div_add)(np.arange(3.0, dtype=np.float32), np.float32(2.0)),
        lib.grad(pytree)(x, (np.float32(2.0), np.float32(3.0))),
        lib.vjp(lambda v: div_add(v, 4.0), np.ones(3, np.float32))[1](
            np.arange(3.0, dtype=np.float32))[0],
    ]


def test_linear_call_as_jax():
    mine, theirs = (_results(lib, lc) for lib, lc in (LIBS[1], LIBS[0]))
    assert len(mine) == len(theirs)
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(np.asarray(m), np.asarray(t), rtol=1e-6)
    assert float(mine[3]) == 7.0 and float(mine[4]) == 1.0   # (the custom transpose)


def _forward_results(lib, linear_call):
    """Forward mode through a linear_call, alone and combined with reverse mode, jit,
    linearize and linear_transpose (JAX: the jvp applies the callee to the tangents)."""
    def f(x, r):
        return linear_call(lambda r, x: x / r, lambda r, t: 7.0 * t / r, r, x)

    def g(x):
        return lib.numpy.sin(x) + f(x, 2.0) * 3.0

    def pytree(x):
        return linear_call(lambda r, d: d["a"] * r[0] + d["b"] * r[1],
                           lambda r, t: {"a": t * r[0], "b": t * r[1]},
                           (np.float32(4.0), 3.0), {"a": x, "b": 2.0 * x})

    x, r, t = np.float32(1.5), np.float32(4.0), np.float32(1.0)
    scan = lambda x: lib.lax.scan(  # noqa: E731
        lambda c, _: (f(c, r), None), x, None, length=3)[0]
    y, f_jvp = lib.linearize(g, x)
    return [
        lib.jvp(lambda x: f(x, 2.0), (x,), (t,)),
        lib.jvp(g, (x,), (t,)),
        lib.jit(lambda x, r, t: lib.jvp(lambda x: f(x, r), (x,), (t,)))(x, r, t),
        lib.jvp(lib.jit(lambda x: f(x, r) * x), (x,), (t,)),
        lib.jvp(lambda x: lib.jit(f)(x, r) * x, (x,), (t,)),
        (y, f_jvp(t)),
        lib.jit(lambda x: (lambda y, fl: (y, fl(t)))(*lib.linearize(g, x)))(x),
        lib.linearize(lib.jit(lambda x: f(x, r) * x), x)[1](t),
        # the linearized function keeps the custom transpose (7 t / r)
        lib.linear_transpose(lib.linearize(lambda x: f(x, 2.0), x)[1], x)(t),
        lib.linear_transpose(lib.linearize(lib.jit(lambda x: f(x, r)), x)[1], x)(t),
        lib.jvp(lib.grad(g), (x,), (t,)),
        lib.grad(lambda x: lib.jvp(g, (x,), (t,))[1])(x),
        lib.grad(lambda x: lib.jvp(lambda x: lib.jit(f)(x, r) * x, (x,), (t,))[1])(x),
        lib.jvp(lib.checkpoint(lambda x: f(x, r) * x), (x,), (t,)),
        lib.jvp(scan, (x,), (t,)),
        lib.grad(scan)(x),
        lib.jvp(pytree, (x,), (t,)),
        lib.jvp(lambda x: linear_call(lambda r, x: x * r, lambda r, t: t * r, 3, x),
                (x,), (t,)),
        lib.jvp(lambda x: f(x, 2.0), (1.5,), (1.0,)),    # (weak types as JAX's)
    ]


def _typed(v):
    return (np.asarray(v).dtype, getattr(v, "weak_type", None), np.asarray(v).tolist())


def test_forward_mode_as_jax():
    mine, theirs = (_forward_results(lib, lc) for lib, lc in (LIBS[1], LIBS[0]))
    assert len(mine) == len(theirs)
    for k, (m, t) in enumerate(zip(mine, theirs)):
        m, t = jax.tree_util.tree_leaves(m), jax.tree_util.tree_leaves(t)
        assert len(m) == len(t), k
        for a, b in zip(m, t):
            assert _typed(a)[:2] == _typed(b)[:2], k
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, err_msg=k)


def test_forward_mode_under_vmap():
    # (JAX has no batching rule for linear_call; mjax batches it as a function: the
    # results are JAX's unbatched ones, per example)
    def f(lib, linear_call):
        return lambda x, t: lib.jvp(lambda x: linear_call(
            lambda r, x: x / r, lambda r, t: t / r, 4.0, x), (x,), (t,))
    xs, ts = np.arange(3.0, dtype=np.float32), np.float32([1.0, -2.0, 0.5])
    got = mjax.vmap(f(mjax, mjax_linear_call))(xs, ts)
    want = [f(jax, jax_linear_call)(x, t) for x, t in zip(xs, ts)]
    for k in range(2):
        np.testing.assert_allclose(np.asarray(got[k]), [w[k] for w in want], rtol=1e-6)
    got = mjax.jacfwd(lambda x: mjax_linear_call(lambda r, x: x * r, lambda r, t: t * r,
                                                 np.float32(3.0), x))(xs)
    np.testing.assert_allclose(np.asarray(got), 3.0 * np.eye(3), rtol=1e-6)


def test_perturbed_residuals_are_refused():
    # (JAX asserts the residuals' tangents are zero)
    def f(lib, linear_call):
        return lambda r: linear_call(lambda r, x: x / r, lambda r, t: t / r, r,
                                     np.float32(1.5))
    with pytest.raises(AssertionError):
        jax.jvp(f(jax, jax_linear_call), (np.float32(2.0),), (np.float32(1.0),))
    with pytest.raises(AssertionError, match="residual arguments"):
        mjax.jvp(f(mjax, mjax_linear_call), (np.float32(2.0),), (np.float32(1.0),))
