"""named_scope names reach the IR locations, StableHLO and XLA's op metadata."""
from __future__ import annotations

import re

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp


def f(x):
    with mjax.named_scope("layer1"):
        y = jnp.sin(x)
        with mjax.named_scope("inner"):
            y = y @ x
    return y + 1


def f_jax(x):     # (f, written for jax)
    with jax.named_scope("layer1"):
        y = jjnp.sin(x)
        with jax.named_scope("inner"):
            y = y @ x
    return y + 1


f_jax.__name__ = "f"


def test_names_in_locations_and_compiled_metadata():
    x = np.ones((3, 3), np.float32)
    lowered = mjax.jit(f).lower(x)
    text = lowered.as_text(debug_info=True)
    assert 'loc("layer1"' in text and 'loc("layer1/inner"' in text
    # XLA's op_name metadata: each op named under the jit and its scopes, as JAX's.
    names = set(re.findall(r'op_name="([^"]*)"', lowered.compile().as_text()))
    theirs = set(re.findall(r'op_name="([^"]*)"',
                            jax.jit(f_jax).lower(x).compile().as_text()))
    assert names == theirs and "jit(f)/layer1/inner/dot_general" in names
    np.testing.assert_allclose(np.asarray(mjax.jit(f)(x)), np.sin(x) @ x + 1, rtol=1e-6)


def test_scope_does_not_leak_and_needs_a_string():
    with mjax.named_scope("outer"):
        pass
    text = mjax.jit(lambda x: jnp.cos(x)).lower(np.ones(2, np.float32)).as_text(
        debug_info=True)
    assert "outer" not in text
    with pytest.raises(TypeError, match="must be a string"):
        with mjax.named_scope(3):
            pass
