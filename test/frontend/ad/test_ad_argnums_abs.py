"""argnums in any order, abs at zero, and jacfwd of a function of several arguments,
against `jax` (test-only oracle), eagerly and under jit."""
from __future__ import annotations

import numpy as np
import pytest

import mjax
import mjax.numpy as mnp

import jax
import jax.numpy as jnp


def _f3(np_):
    return lambda x, y, z: np_.sum(x * y * z ** 2 + np_.sin(x))


ARGS = (np.float32(0.5), np.array([1.0, 2.0], np.float32), np.float32(3.0))


def _same(got, want):
    got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    for g, w in zip(got_leaves, want_leaves):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        assert np.asarray(g).shape == np.asarray(w).shape


@pytest.mark.parametrize("argnums", [(2, 0), (1, 2, 0), (-1, 0), (0, -2)])
@pytest.mark.parametrize("api", ["grad", "value_and_grad", "jacfwd", "jacrev", "hessian"])
@pytest.mark.parametrize("jit", [False, True])
def test_argnums_in_any_order(api, argnums, jit):
    ours = getattr(mjax, api)(_f3(mnp), argnums=argnums)
    if jit:
        ours = mjax.jit(ours)
    want = getattr(jax, api)(_f3(jnp), argnums=argnums)(*ARGS)
    _same(ours(*ARGS), want)


@pytest.mark.parametrize("api", ["grad", "value_and_grad", "jacfwd", "jacrev"])
def test_repeated_argnums_is_a_type_error(api):
    # JAX passes None for the repeated argument, which fails inside the function with a
    # TypeError; mjax says why.
    with pytest.raises(TypeError):
        jax_fn = getattr(jax, api)(lambda x, y: x * y, argnums=(0, 0))
        jax_fn(1.0, 2.0)
    with pytest.raises(TypeError, match="more than once"):
        getattr(mjax, api)(lambda x, y: x * y, argnums=(0, 0))(1.0, 2.0)


@pytest.mark.parametrize("x", [0.0, -0.0, 1.5, -2.0])
def test_grad_of_abs_matches_jax_at_zero(x):
    for jit in (False, True):
        g = mjax.grad(mnp.abs)
        g = mjax.jit(g) if jit else g
        np.testing.assert_array_equal(np.asarray(g(x)), np.asarray(jax.grad(jnp.abs)(x)))
    np.testing.assert_array_equal(np.asarray(mjax.grad(mjax.grad(mnp.abs))(x)),
                                  np.asarray(jax.grad(jax.grad(jnp.abs))(x)))


@pytest.mark.parametrize("z", [0j, 1 + 1j, -2 + 0.5j])
def test_abs_of_complex_matches_jax(z):
    z = np.complex64(z)
    t = np.complex64(0.3 - 0.7j)
    _same(mjax.jvp(mnp.abs, (z,), (t,)), jax.jvp(jnp.abs, (z,), (t,)))
    if z != 0:
        _same(mjax.grad(mnp.abs)(z), jax.grad(jnp.abs)(z))


def test_jvp_of_abs_on_arrays_with_zeros():
    x = np.array([-1.0, -0.0, 0.0, 2.0], np.float32)
    t = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    _same(mjax.jvp(mnp.abs, (x,), (t,)), jax.jvp(jnp.abs, (x,), (t,)))
    _same(mjax.vjp(mnp.abs, x)[1](t), jax.vjp(jnp.abs, x)[1](t))
