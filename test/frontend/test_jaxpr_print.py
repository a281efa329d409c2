"""make_jaxpr prints JAX 0.10.2's text: parameters JAX shows (defaults included), hidden
ones, over-wide parameter lists one per line, and nested jits as jit[name= jaxpr=]."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp


def _params(J, np_):
    def f(x, y):
        return (np_.broadcast_to(x, (3, 2)), np_.sum(y, axis=0), y.astype(np_.int32),
                np_.reshape(y, (6,)), np_.transpose(y), y @ y.T, y[::2], y[:1],
                J.lax.iota(np_.int32, 3))
    return f


def _nested(J, np_):
    inner = J.jit(lambda x, y: np_.sin(x) * y + 2.0)

    def f(x):
        return inner(x, x - 1.0) + J.jit(lambda a: a)(x) * 2.0
    return f


@pytest.mark.parametrize("program, args", [
    (_params, (1.0, np.ones((3, 2), np.float32))),
    (_nested, (np.ones(3, np.float32),)),
])
def test_make_jaxpr_text_matches_jax(program, args):
    want = str(jax.make_jaxpr(program(jax, jjnp))(*args))
    got = str(mjax.make_jaxpr(program(mjax, jnp))(*args))
    assert got == want
