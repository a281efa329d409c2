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


def _gathers_scatters(J, np_):
    """Gathers and the scatters of x.at[...]: JAX's dimension-number and mode reprs, a
    scatter's update_consts and combiner jaxpr (one line or three, by width)."""
    def f(x, m, i, b):
        return (x[i], x.at[i].add(1.0), m.at[1].set(2.0), m.at[:, 1].mul(2.0),
                x.at[np_.array([1, 2])].max(0.5), b.at[0].max(True), b.at[1].min(False),
                m.at[i, 1].min(3.0), x.at[i].get(mode="fill", fill_value=-1.0),
                m.astype(np_.bfloat16).at[2].add(1.5))
    return f


def _weak_indices(J, np_):
    """A Python int index is weakly typed: made int32 where JAX's staging makes it so."""
    def f(x, k):
        return (x[k], x.at[k].set(1.0), J.lax.dynamic_slice(x, (k,), (2,)),
                J.lax.dynamic_update_slice(x, x[:2], (k,)), x[2:5])
    return f


@pytest.mark.parametrize("program, args", [
    (_params, (1.0, np.ones((3, 2), np.float32))),
    (_weak_indices, (np.arange(10.0, dtype=np.float32), 3)),
    (_nested, (np.ones(3, np.float32),)),
    (_gathers_scatters, (np.arange(10.0, dtype=np.float32), np.ones((4, 5), np.float32),
                         np.array([1, 2]), np.array([True, False]))),
])
def test_make_jaxpr_text_matches_jax(program, args):
    want = str(jax.make_jaxpr(program(jax, jjnp))(*args))
    got = str(mjax.make_jaxpr(program(mjax, jnp))(*args))
    assert got == want


# Constants, literals and broadcasts as JAX 0.10.2 stages them: scalar operands of
# elementwise ops stay unbroadcast, `jnp.ones` under a trace is `broadcast_in_dim 1.0:f32[]`,
# non-scalar NumPy constants are constvars whose casts are equations, a nested jit lists its
# closure's values first.
def _bias(J, np_):
    return lambda a, b: np_.tanh(a + b)


def _outer(J, np_):
    return lambda a, b: a * b


def _scalars(J, np_):
    return lambda a, b: (a + b + 1.0, J.lax.add(a, b), np_.broadcast_to(b, (3, 4)) + a)


def _consts(J, np_):
    return lambda a: (np_.array([1.0, 2.0]) * a, np_.array(1.0) * a, np_.array([1]) + a,
                      np_.asarray(np.arange(3)) * a)


def _creation(J, np_):
    return lambda a: (np_.expand_dims(a, 0) + np_.ones((2, 3)),
                      np_.zeros_like(a) + np_.full((3,), 2.0) * a, a * 3 + np_.arange(3))


def _loops(J, np_):
    def f(arr, extra, n):
        ones = np_.ones(arr.shape)
        y = J.lax.fori_loop(0, n, lambda i, c: c + ones * 3.0 + arr, arr + ones)
        s = J.lax.scan(lambda c, a: (c + a[0] * a[1] + extra, c), 0.0, (arr, ones))
        return y, s, J.lax.cond(extra >= 0.0, lambda x: x[0],
                                lambda x: np_.array([1]) + x[1], (arr[:1], extra))
    return f


def _closures(J, np_):
    def f(x, w):
        g = J.jit(lambda z, k: z * w + x + k)

        @J.jit
        def inner(v):
            return v + w * np_.ones(1)
        return g(x + 1, 2.0), inner(x - 2.0)
    return f


def _literals(J, np_):
    # JAX prints a Python scalar cast to a strong float type as the Python float of the
    # rounded value (0.10000000149011612), a weak one as written (0.1).
    return lambda x, w: (x * 0.1, w * 0.1, np_.sin(w) * 0.1, x.sum() * 0.1,
                         x.astype(np_.float16) * 0.1, x.astype(np_.bfloat16) * 0.1,
                         J.lax.mul(x, 0.1), x > 0.3, x.astype(np_.int32) * 3 + 1.5)


def _closed_over_arrays(J, np_):
    # Device arrays made outside the function are constvars, scalars too (a NumPy scalar
    # or Python number is a literal).
    c, i, v, n = np_.float32(2.0), np_.array(3), np_.arange(3.0), np.float32(4.0)
    return lambda a: (a * c + i, a * v * n, J.grad(lambda x: (np_.sin(x) * c).sum())(a))


@pytest.mark.parametrize("program, args", [
    (_literals, (np.ones(3, np.float32), 1.0)),
    (_closed_over_arrays, (np.ones(3, np.float32),)),
    (_bias, (np.ones((3, 4), np.float32), np.ones(4, np.float32))),
    (_outer, (np.ones((3, 1), np.float32), np.ones((1, 4), np.float32))),
    (_scalars, (np.ones((3, 4), np.float32), 2.0)),
    (_consts, (2.0,)),
    (_creation, (np.ones(3, np.float32),)),
    (_loops, (np.ones(16, np.float32), 5.0, 3)),
    (_closures, (np.ones(4, np.float32), np.ones(4, np.float32))),
])
def test_constants_and_broadcasts_print_as_jax(program, args):
    want = str(jax.make_jaxpr(program(jax, jjnp))(*args))
    got = str(mjax.make_jaxpr(program(mjax, jnp))(*args))
    assert got == want


def test_traced_creation_results_are_arrays():
    # jnp.zeros under jit is a traced array: `.at`, jnp semantics (not NumPy's).
    def f(J, np_):
        return lambda a: (np_.zeros(3).at[0].set(a), np_.ones(3, np_.int32) * 2.5,
                          np_.ones(2, np_.uint8) * 300)
    for got, want in zip(mjax.jit(f(mjax, jnp))(2.0), jax.jit(f(jax, jjnp))(2.0)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


# grad through a custom_vjp function: JAX's linearization runs the fwd rule once in place
# of the primal call (its equations inline, residuals after the call) and inlines bwd's
# equations, which keep the rule's own types.
def _grad_of_custom_vjp(J, np_):
    @J.custom_vjp
    def f(x):
        return np_.sin(x) * 2.0
    f.defvjp(lambda x: (f(x), np_.cos(x)), lambda c, g: (c * g * 2.0,))
    return f


@pytest.mark.parametrize("outer", ["alone", "scaled"])
def test_grad_of_custom_vjp_prints_as_jax(outer):
    def program(J, np_):
        f = _grad_of_custom_vjp(J, np_)
        fun = f if outer == "alone" else (lambda x: f(x) * 3.0)
        return J.jit(J.grad(fun)).trace(1.0).jaxpr
    got, want = str(program(mjax, jnp)), str(program(jax, jjnp))
    assert got == want
    assert "convert_element_type" not in got and "jit[" not in got


def _custom_calls(J, np_):
    def outer(x, y):
        @J.custom_jvp
        def f(x):
            return np_.sin(x) * y            # (y: a closed-over value, listed first)
        f.defjvp(lambda p, t: (f(p[0]), np_.cos(p[0]) * t[0] * y))

        @J.custom_vjp
        def g(x):
            return np_.sin(x) * 2.0
        g.defvjp(lambda x: (g(x), np_.cos(x)), lambda c, t: (c * t * 2.0,))

        @J.custom_jvp
        def ident(x):
            return x
        ident.defjvp(lambda p, t: (p[0], t[0]))

        @J.custom_jvp
        def square(x):
            return x * x
        square.defjvps(lambda t, ans, x: 2.0 * x * t)     # (its rule is named jvp)
        return f(x) + g(x) + ident(x) + square(x)
    return outer


def test_custom_calls_print_as_jax():
    # (name, call_jaxpr, the rules' Python names, num_consts, symbolic_zeros)
    want = str(jax.make_jaxpr(_custom_calls(jax, jjnp))(1.0, 2.0))
    got = str(mjax.make_jaxpr(_custom_calls(mjax, jnp))(1.0, 2.0))
    assert got == want
