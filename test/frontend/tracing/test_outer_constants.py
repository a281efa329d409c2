"""A jnp constant made under one trace (`jnp.array(0)` inside a jit is a traced value to
JAX) and closed over by a function traced inside it (make_jaxpr, closure_convert, a nested
jit, a cond branch) is a constant argument of that function, as in JAX, never folded in
as a literal: libraries count and compare those constants (optimistix's L-BFGS carries
closure-converted operators through a cond)."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np

import mjax
import mjax.numpy as jnp


def _consts_inside_jit(lib, np_):
    """(number of consts, printed jaxpr) of make_jaxpr of a function closing over
    constants made inside an enclosing jit."""
    seen = {}

    @lib.jit
    def outer(x):
        c_int = np_.array(0)
        c_f32 = np_.float32(1.0)
        zeros = np_.zeros((3,))
        c_mul = x.shape[0] * np_.ones(())
        closed = lib.make_jaxpr(lambda y: y * zeros + c_int + c_f32 + c_mul)(x)
        seen["n"], seen["text"] = len(closed.consts), str(closed)
        return x
    outer(np_.ones(3))
    return seen["n"], seen["text"]


def test_make_jaxpr_takes_outer_constants_as_consts():
    n, text = _consts_inside_jit(mjax, jnp)
    n_jax, text_jax = _consts_inside_jit(jax, jjnp)
    assert n == n_jax == 4
    assert text == text_jax


def test_a_literal_of_the_same_trace_stays_a_literal():
    f = lambda y: y + jnp.array(0) * 2 + jnp.float32(3)        # noqa: E731
    g = lambda y: y + jjnp.array(0) * 2 + jjnp.float32(3)      # noqa: E731
    assert str(mjax.make_jaxpr(f)(np.ones(3, np.float32))) == \
        str(jax.make_jaxpr(g)(np.ones(3, np.float32)))


def _closure_convert_counts(lib, np_):
    out = {}

    @lib.jit
    def outer(x):
        k = np_.array(0)                 # an int: kept closed over by closure_convert
        s = np_.float32(2.0) * x[0]      # a traced float: hoisted
        t = np_.float32(5.0)             # a float constant of the jit: hoisted too
        conv, hoisted = lib.closure_convert(lambda y: y * s + t + k, x)
        out["n"] = len(hoisted)
        return conv(x, *hoisted)
    out["value"] = np.asarray(outer(np_.arange(3.0)))
    return out


def test_closure_convert_hoists_as_jax():
    got, want = _closure_convert_counts(mjax, jnp), _closure_convert_counts(jax, jjnp)
    assert got["n"] == want["n"] == 2
    np.testing.assert_allclose(got["value"], want["value"])


def test_values_through_nested_jit_cond_and_grad():
    def f(lib, np_, x):
        c = np_.float32(3.0)
        i = np_.array(2)
        inner = lib.jit(lambda y: y * c + i)
        branch = lib.lax.cond(x.sum() > 0, lambda y: y * c - i, lambda y: y + c, x)
        return inner(x) + branch

    x = np.array([0.5, -1.0, 2.0], np.float32)
    got = mjax.jit(lambda x: f(mjax, jnp, x))(x)
    want = jax.jit(lambda x: f(jax, jjnp, x))(x)
    np.testing.assert_allclose(got, want)
    g = mjax.grad(lambda x: mjax.jit(lambda x: f(mjax, jnp, x))(x).sum())(x)
    gj = jax.grad(lambda x: jax.jit(lambda x: f(jax, jjnp, x))(x).sum())(x)
    np.testing.assert_allclose(g, gj)


def test_numpy_constant_of_a_non_canonical_dtype_is_one_const():
    # (a float64 NumPy array with x64 off is converted to float32 once: it was staged
    # twice, once to read its type, leaving an unused constvar)
    def jaxpr(lib):
        return lib.make_jaxpr(lambda y: y * np.arange(2.) + np.ones(2, np.int64))(1.0)
    mine, theirs = jaxpr(mjax), jaxpr(jax)
    assert len(mine.consts) == len(theirs.consts) == 2
    assert str(mine) == str(theirs)
