"""Higher-order derivatives of custom_jvp functions whose rules call the function itself
(the rule is differentiated again, applying the rule, as in JAX), against jax."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp


def _rules(np_):
    """(name, rule body) pairs: (f, x, tx) -> (primal out, tangent out)."""
    return {
        "plain": lambda f, x, tx: (f(x), np_.cos(x) * tx),
        "self_tangent": lambda f, x, tx: (f(x), f(x) * tx),
        "self_shifted": lambda f, x, tx: (f(x), f(x + 1.0) * tx),
        "self_product": lambda f, x, tx: (np_.sin(x), f(x) * tx * x),
        "self_twice": lambda f, x, tx: (f(x), (f(x) * f(2.0 * x) + 1.0) * tx),
    }


def _make(J, np_, rule_name):
    rule = _rules(np_)[rule_name]

    @J.custom_jvp
    def f(x):
        return np_.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (tx,) = primals, tangents
        return rule(f, x, tx)
    return f


_TRANSFORMS = {
    "hessian": lambda J, f: J.hessian(f),
    "jacfwd_grad": lambda J, f: J.jacfwd(J.grad(f)),
    "grad_grad": lambda J, f: J.grad(J.grad(f)),
    "jacrev_grad": lambda J, f: J.jacrev(J.grad(f)),
    "grad_grad_grad": lambda J, f: J.grad(J.grad(J.grad(f))),
}


@pytest.mark.parametrize("rule_name", sorted(_rules(np)))
@pytest.mark.parametrize("transform", sorted(_TRANSFORMS))
def test_higher_order_matches_jax(rule_name, transform):
    x = np.float32(0.7)
    got = _TRANSFORMS[transform](mjax, _make(mjax, jnp, rule_name))(x)
    want = _TRANSFORMS[transform](jax, _make(jax, jjnp, rule_name))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("rule_name", ["self_tangent", "self_shifted"])
def test_vector_hessian_under_jit(rule_name):
    x = np.linspace(0.1, 1.3, 4).astype(np.float32)

    def total(J, np_):
        f = _make(J, np_, rule_name)
        return J.jit(J.hessian(lambda v: np_.sum(f(v) * v)))
    np.testing.assert_allclose(total(mjax, jnp)(x), total(jax, jjnp)(x), rtol=1e-5,
                               atol=1e-6)


def test_self_call_with_closed_over_traced_value():
    # The rule closes over a value of an enclosing jit: its own calls pass it along.
    def run(J, np_, x, c):
        @J.jit
        def outer(x, c):
            @J.custom_jvp
            def f(x):
                return np_.sin(x) * c

            @f.defjvp
            def f_jvp(primals, tangents):
                (x,), (tx,) = primals, tangents
                return f(x), f(x) * c * tx
            return J.grad(J.grad(f))(x)
        return outer(x, c)
    x, c = np.float32(0.4), np.float32(1.7)
    np.testing.assert_allclose(run(mjax, jnp, x, c), run(jax, jjnp, x, c), rtol=1e-5)


def _make_vjp_inside_jvp(J, np_):
    @J.custom_vjp
    def g(x):
        return np_.exp(x)

    def g_fwd(x):
        return g(x), np_.exp(x)

    def g_bwd(r, ct):
        return (2.0 * r * ct,)         # deliberately not exp's derivative
    g.defvjp(g_fwd, g_bwd)

    @J.custom_jvp
    def f(x):
        return np_.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (tx,) = primals, tangents
        return f(x), g(x) * f(x) * tx
    return f


@pytest.mark.parametrize("transform", ["grad_grad", "jacrev_grad", "grad_grad_grad"])
def test_custom_vjp_inside_custom_jvp_rule(transform):
    # (forward mode over the custom_vjp, as in hessian, is an error in jax too)
    x = np.float32(0.3)
    got = _TRANSFORMS[transform](mjax, _make_vjp_inside_jvp(mjax, jnp))(x)
    want = _TRANSFORMS[transform](jax, _make_vjp_inside_jvp(jax, jjnp))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)


def test_nondiff_argnums_self_call():
    def make(J, np_):
        @J.custom_jvp
        def f(n, x):
            return np_.sin(x) ** n
        f = J.custom_jvp(f.fun if hasattr(f, "fun") else f, nondiff_argnums=(0,))

        @f.defjvp
        def f_jvp(n, primals, tangents):
            (x,), (tx,) = primals, tangents
            return f(n, x), n * f(n, x) * np_.cos(x) / np_.sin(x) * tx
        return f
    x = np.float32(0.9)
    got = mjax.grad(mjax.grad(lambda x: make(mjax, jnp)(3, x)))(x)
    want = jax.grad(jax.grad(lambda x: make(jax, jjnp)(3, x)))(x)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_custom_vjp_fwd_calling_itself_higher_order():
    # fwd's own call stays a custom_vjp call: differentiating the forward pass again
    # uses the custom bwd, as in JAX.
    def make(J, np_):
        @J.custom_vjp
        def g(x):
            return np_.exp(x)
        g.defvjp(lambda x: (g(x), np_.exp(x)), lambda r, ct: (2.0 * r * ct,))
        return lambda x: g(x) * np_.sin(x)
    x = np.float32(0.3)
    for order in (1, 2, 3):
        fm, fj = make(mjax, jnp), make(jax, jjnp)
        for _ in range(order):
            fm, fj = mjax.grad(fm), jax.grad(fj)
        np.testing.assert_allclose(fm(x), fj(x), rtol=1e-5)


def test_rule_calling_function_on_other_shapes():
    # f(sum(x)) inside the rule is a separate custom call, itself differentiated by the
    # rule (whose own calls refer back to the call being staged).
    def make(J, np_):
        @J.custom_jvp
        def f(x):
            return np_.sin(x)

        @f.defjvp
        def f_jvp(primals, tangents):
            (x,), (tx,) = primals, tangents
            return f(x), f(np_.sum(x)) * tx + f(x) * tx
        return lambda v: np_.sum(f(v))
    x = np.linspace(0.1, 0.5, 3).astype(np.float32)
    np.testing.assert_allclose(mjax.hessian(make(mjax, jnp))(x),
                               jax.hessian(make(jax, jjnp))(x), rtol=1e-5, atol=1e-6)
