"""jit(donate_argnums=, donate_argnames=): donated inputs alias outputs, are deleted after
the call, and using them raises JAX's error; unusable donations warn as JAX does."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import mjax
import mjax.numpy as jnp


def test_donated_buffer_is_reused_and_deleted():
    f = mjax.jit(lambda x, y: x * 2 + y, donate_argnums=0)
    x, y = jnp.arange(1000.0), jnp.ones(1000)
    np.asarray(x)                          # a cached host copy must not survive donation
    ptr = x.unsafe_buffer_pointer()
    z = f(x, y)
    assert x.is_deleted() and not y.is_deleted()
    assert z.unsafe_buffer_pointer() == ptr
    np.testing.assert_array_equal(np.asarray(z), np.arange(1000.0) * 2 + 1)
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[1000\]"):
        np.asarray(x)
    with pytest.raises(RuntimeError, match="deleted"):
        f(x, y)


def test_lowered_module_marks_aliasing():
    f = mjax.jit(lambda x, y: (x + y, y.sum()), donate_argnums=(0,))
    x = jnp.ones(4)
    f(x, jnp.ones(4))
    assert x.is_deleted()


def test_donate_argnames_and_pytrees():
    f = mjax.jit(lambda params, *, state: (params["w"] * 2, state + 1),
                 donate_argnames="state")
    params, state = {"w": jnp.ones(3)}, jnp.zeros(3)
    w2, s2 = f(params, state=state)
    assert state.is_deleted() and not params["w"].is_deleted()
    np.testing.assert_array_equal(np.asarray(s2), np.ones(3))
    g = mjax.jit(lambda tree: mjax.tree_util.tree_map(lambda a: a + 1, tree),
                 donate_argnums=0)
    tree = {"a": jnp.ones(2), "b": jnp.zeros(5)}
    out = g(tree)
    assert all(leaf.is_deleted() for leaf in mjax.tree_util.tree_leaves(tree))
    np.testing.assert_array_equal(np.asarray(out["b"]), np.ones(5))


def test_unusable_donation_warns_like_jax():
    f = mjax.jit(lambda x: x.sum(), donate_argnums=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f(jnp.ones(3))
    messages = [str(w.message) for w in caught]
    assert any("Some donated buffers were not usable: ShapedArray(float32[3])" in m
               for m in messages), messages


def test_static_and_donated_is_an_error():
    with pytest.raises(ValueError, match="static arguments cannot be donated"):
        mjax.jit(lambda a: a, static_argnums=0, donate_argnums=0)
    with pytest.raises(ValueError, match="no argument named"):
        mjax.jit(lambda a: a, donate_argnames="b")


def test_without_donation_inputs_survive():
    f = mjax.jit(lambda x: x + 1)
    x = jnp.ones(3)
    f(x)
    assert not x.is_deleted()
