"""jvp of lax.max/lax.min on complex operands (lexicographic order), against real jax.
optimistix's fixed-point tests reach it through `jnp.maximum` of complex values."""
import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as mjnp

X = np.array([1 + 2j, 3 - 1j, 2 + 0j, 1 + 1j], np.complex64)
Y = np.array([1 + 3j, 2 + 5j, 2 + 0j, 1 - 1j], np.complex64)
TX = np.array([1 + 1j, 2j, 3, -1j], np.complex64)
TY = np.array([0.5j, 1, 1 + 1j, 2], np.complex64)


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("jit", [False, True])
def test_complex_minmax_jvp(name, jit):
    def run(lib, lax):
        f = getattr(lax, name)
        g = (lambda a, b: lib.jvp(f, (a, b), (TX, TY)))
        return (lib.jit(g) if jit else g)(X, Y)
    got = run(mjax, mjax.lax)
    want = run(jax, jax.lax)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def test_complex_maximum_grad_of_abs():
    def f(lib, np_):
        return lambda z: np_.abs(np_.maximum(z, 2 + 0j)).sum()
    g = mjax.grad(f(mjax, mjnp))(X.astype(np.complex64))
    w = jax.grad(f(jax, jax.numpy))(X.astype(np.complex64))
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
