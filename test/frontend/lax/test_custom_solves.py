"""lax.custom_root and lax.custom_linear_solve against jax: values, jvp, grad, vmap, jit,
has_aux; derivatives by the implicit function theorem (the solver is not traced through)."""
import numpy as np
import pytest

import jax
import jax.numpy as jnp
import mjax
import mjax.numpy as mnp

LIBS = [(jax, jnp), (mjax, mnp)]


def _sqrt_root(lib, np_, has_aux=False):
    def sqrt(a):
        f = lambda x: x * x - a  # noqa: E731

        def newton(f, x0):
            x = x0
            for _ in range(30):  # a Python loop: JAX never differentiates the solver
                x = x - f(x) / (2 * x)
            return (x, np_.abs(f(x))) if has_aux else x
        return lib.lax.custom_root(f, 1.0, newton, lambda g, y: y / g(1.0),
                                   has_aux=has_aux)
    return sqrt


def _linear(lib, np_):
    def solve_in(a, b):
        m = np_.array([[4., 1.], [1., 3.]]) * a
        return lib.lax.custom_linear_solve(lambda x: m @ x, b,
                                           lambda mv, r: np_.linalg.solve(m, r),
                                           symmetric=True)
    return solve_in


def _both(fn):
    return [np.asarray(fn(lib, np_)) for lib, np_ in LIBS]


@pytest.mark.parametrize("what", ["value", "grad", "jit_grad", "vmap_grad", "jvp"])
def test_custom_root_matches_jax(what):
    def run(lib, np_):
        f = _sqrt_root(lib, np_)
        if what == "value":
            return f(2.0)
        if what == "grad":
            return lib.grad(f)(2.0)
        if what == "jit_grad":
            return lib.jit(lib.grad(f))(3.0)
        if what == "vmap_grad":
            return lib.vmap(lib.grad(f))(np_.array([1., 4., 9.]))
        return lib.jvp(f, (2.0,), (0.5,))[1]
    want, got = _both(run)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_custom_root_derivative_is_the_closed_form():
    g = mjax.grad(_sqrt_root(mjax, mnp))(5.0)
    np.testing.assert_allclose(g, 0.5 / np.sqrt(5.0), rtol=1e-6)


def test_custom_root_has_aux():
    root, aux = _sqrt_root(mjax, mnp, has_aux=True)(2.0)
    np.testing.assert_allclose(root, np.sqrt(2.0), rtol=1e-6)
    assert float(aux) < 1e-5
    g = mjax.grad(lambda a: _sqrt_root(mjax, mnp, has_aux=True)(a)[0])(2.0)
    np.testing.assert_allclose(g, 0.5 / np.sqrt(2.0), rtol=1e-6)


@pytest.mark.parametrize("what", ["value", "grad_a", "jacfwd_b", "jacrev_b", "jit"])
def test_custom_linear_solve_matches_jax(what):
    b0 = np.array([1., 2.], np.float32)

    def run(lib, np_):
        f = _linear(lib, np_)
        b = np_.asarray(b0)
        if what == "value":
            return f(2.0, b)
        if what == "grad_a":
            return lib.grad(lambda a: f(a, b).sum())(2.0)
        if what == "jacfwd_b":
            return lib.jacfwd(lambda b: f(2.0, b))(b)
        if what == "jacrev_b":
            return lib.jacrev(lambda b: f(2.0, b))(b)
        return lib.jit(f)(3.0, b)
    want, got = _both(run)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
