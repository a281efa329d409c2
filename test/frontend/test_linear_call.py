"""jax.custom_derivatives.linear_call: a linear function with its own transpose
(mjax/custom_derivatives.py), against real jax: values, transposes (custom, and the
transpose of the transpose), reverse mode, jit, pytree arguments."""
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


def test_forward_mode_is_refused_clearly():
    # (JAX supports jvp of a linear_call; mjax's is a custom_vjp call, which refuses it)
    f = lambda x: mjax_linear_call(lambda _, x: x, lambda _, t: t, (), x)  # noqa: E731
    with pytest.raises(Exception, match="forward-mode autodiff"):
        mjax.jvp(f, (1.0,), (1.0,))
