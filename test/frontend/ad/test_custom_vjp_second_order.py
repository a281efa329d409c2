"""Second-order differentiation through custom_vjp functions: a jvp of a vjp's forward
part differentiates the fwd rule (JAX's vjp runs fwd there), so hessian / jacfwd(jacrev)
work, while a jvp of the custom_vjp function itself still raises JAX's TypeError."""
import functools

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp


def _define(lib, np_):
    @functools.partial(lib.custom_vjp, nondiff_argnums=(1,))
    def f(x, k):
        return np_.sin(x) * x * k

    def fwd(x, k):
        return np_.sin(x) * x * k, (np_.cos(x), x)

    def bwd(k, res, g):
        c, x = res
        return ((c * x + np_.sin(x)) * k * g,)

    f.defvjp(fwd, bwd)

    @lib.custom_vjp
    def pair(a, b):
        return a * b, np_.exp(a)

    pair.defvjp(lambda a, b: ((a * b, np_.exp(a)), (a, b)),
                lambda r, g: (g[0] * r[1] + g[1] * np_.exp(r[0]), g[0] * r[0]))
    return f, pair


F_MJ, PAIR_MJ = _define(mjax, jnp)
F_JX, PAIR_JX = _define(jax, jjnp)
X = np.array([0.3, 1.2, -0.7], np.float32)


def _programs(lib, f, pair):
    loss = lambda x: lib.numpy.sum(f(x, 2.0))                       # noqa: E731
    two = lambda x: lib.numpy.sum(pair(x, x[::-1])[0] + pair(x, x)[1])  # noqa: E731
    return {
        "hessian": lambda x: lib.hessian(loss)(x),
        "jacfwd_jacrev": lambda x: lib.jacfwd(lib.jacrev(loss))(x),
        "jit_hessian": lambda x: lib.jit(lib.hessian(loss))(x),
        "hessian_of_jit": lambda x: lib.hessian(lib.jit(loss))(x),
        "hessian_vmap": lambda x: lib.hessian(
            lambda y: lib.numpy.sum(lib.vmap(lambda v: f(v, 2.0))(y)))(x),
        "hessian_scan": lambda x: lib.hessian(lambda y: lib.lax.scan(
            lambda c, a: (c + f(a, 2.0), None), 0.0, y)[0])(x),
        "hessian_two_outputs": lambda x: lib.hessian(two)(x),
        "jvp_of_grad": lambda x: lib.jvp(lib.grad(loss), (x,), (x,)),
    }


@pytest.mark.parametrize("name", list(_programs(mjax, F_MJ, PAIR_MJ)))
def test_second_order_matches_jax(name):
    got = _programs(mjax, F_MJ, PAIR_MJ)[name](X)
    want = _programs(jax, F_JX, PAIR_JX)[name](X)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


def test_the_hessian_is_the_closed_form():
    h = np.asarray(mjax.hessian(lambda x: jnp.sum(F_MJ(x, 1.0)))(X))
    # d2/dx2 of the bwd's derivative c*x + sin x: 2 cos x - x sin x, on the diagonal
    np.testing.assert_allclose(h, np.diag(2 * np.cos(X) - X * np.sin(X)), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("case", ["jvp", "jacrev_of_jvp"])
def test_a_jvp_of_the_custom_vjp_function_still_raises(case):
    # (under jacrev, which perturbs the jvp's primals, JAX's custom_lin reaches the
    # reverse mode, which has no rule for it: NotImplementedError; alone, TypeError)
    jjvp = lambda y: jax.jvp(lambda v: F_JX(v, 2.0), (y,), (y,))[1]   # noqa: E731
    with pytest.raises((TypeError, NotImplementedError)) as want:
        (jjvp if case == "jvp" else jax.jacrev(jjvp))(X)
    jvp = lambda y: mjax.jvp(lambda v: F_MJ(v, 2.0), (y,), (y,))[1]    # noqa: E731
    fn = jvp if case == "jvp" else mjax.jacrev(jvp)
    with pytest.raises(type(want.value), match="custom_vjp" if case == "jvp" else
                       "Differentiation rule for 'custom_lin' not implemented"):
        fn(X)
