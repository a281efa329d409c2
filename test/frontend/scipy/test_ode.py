"""mjax.experimental.ode.odeint against JAX 0.10.2's, closed forms and finite
differences: values (pytree states, args, closures, hmax/mxstep), jit and vmap, the
adjoint-method gradients, and the errors JAX raises."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import ode as jode

import mjax
import mjax.numpy as mnp
from mjax.experimental import ode as mode

TS = np.linspace(0.0, 2.0, 5).astype(np.float32)


def decay(np_):
    def f(y, t, a):
        return -a * y + np_.sin(t)
    return f


def close(got, want, rtol=1e-5, atol=1e-6):
    jax.tree_util.tree_map(lambda g, w: np.testing.assert_allclose(
        np.asarray(g), np.asarray(w), rtol=rtol, atol=atol), got, want)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)


def test_harmonic_oscillator_closed_form():
    def f(state, t, w):
        return {"x": state["v"], "v": -(w ** 2) * state["x"]}
    ts = np.linspace(0.0, 3.0, 7).astype(np.float32)
    got = mode.odeint(f, {"x": np.float32(1.0), "v": np.float32(0.0)}, ts, 2.0,
                      rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got["x"], np.cos(2.0 * ts), atol=5e-5)
    np.testing.assert_allclose(got["v"], -2.0 * np.sin(2.0 * ts), atol=1e-4)


def test_pytree_state_and_args_match_jax():
    def build(np_):
        def f(y, t, p):
            a, (b,) = y
            return (-p["k"] * a + b.sum(), np_.cos(t) * b - p["m"] * a)
        return f
    y0 = (np.float32(0.5), (np.array([1.0, -1.0, 2.0], np.float32),))
    p = {"k": np.float32(0.3), "m": np.array([0.1, 0.2, 0.3], np.float32)}
    close(mode.odeint(build(mnp), y0, TS, p), jode.odeint(build(jnp), y0, TS, p))


def test_tolerances_hmax_and_mxstep_match_jax():
    # (with few steps allowed, an output time past the last step is extrapolated from
    # the step's polynomial, which magnifies rounding: tolerances that keep it close)
    for kw in [dict(rtol=1e-3, atol=1e-3, hmax=0.2), dict(mxstep=2, rtol=1e-5, atol=1e-5)]:
        close(mode.odeint(decay(mnp), 1.0, TS, 0.7, **kw),
              jode.odeint(decay(jnp), 1.0, TS, 0.7, **kw), rtol=1e-4)


def test_jit_and_vmap_of_value_and_grad():
    def build(lib, np_, odeint):
        def one(y0, a):
            return odeint(decay(np_), y0, TS, a)
        ys = lib.jit(lib.vmap(one, (0, None)))
        grads = lib.jit(lib.vmap(lib.grad(lambda y0, a: one(y0, a)[-1], (0, 1)), (0, None)))
        return lambda y0s, a: (ys(y0s, a), grads(y0s, a))
    y0s = np.array([1.0, 2.0, -1.0], np.float32)
    got = build(mjax, mnp, mode.odeint)(y0s, np.float32(0.7))
    want = build(jax, jnp, jode.odeint)(y0s, np.float32(0.7))
    assert got[0].shape == want[0].shape == (3, 5) and got[0].dtype == want[0].dtype
    close(got, want, rtol=1e-4)
    close(mode.odeint(decay(mnp), 1.0, TS, 0.7), want[0][0])


def test_complex_state_and_its_gradient_match_jax():
    def loss(odeint, lib):
        def fun(y0):
            ys = odeint(lambda y, t: -1j * y * (1.0 + t), y0, TS)
            return ys, lib.grad(lambda y0: odeint(lambda y, t: -1j * y, y0, TS).real.sum())(y0)
        return fun
    y0 = np.complex64(1.0 + 0.5j)
    close(loss(mode.odeint, mjax)(y0), loss(jode.odeint, jax)(y0), rtol=1e-4)


def test_grads_match_jax():
    def loss(odeint, np_):
        def fun(y0, ts, a):
            ys = odeint(decay(np_), y0, ts, a)
            return (ys ** 2 * np_.arange(1.0, 6.0)).sum()
        return fun
    args = (np.float32(1.0), TS, np.float32(0.7))
    got = mjax.grad(loss(mode.odeint, mnp), (0, 1, 2))(*args)
    want = jax.grad(loss(jode.odeint, jnp), (0, 1, 2))(*args)
    close(got, want, rtol=1e-4, atol=1e-5)


def test_grad_of_closed_over_value_and_pytree_state_matches_jax():
    def loss(odeint, np_):
        def fun(w, y0):
            def f(y, t):
                return {"a": -w * y["a"] * y["b"], "b": np_.tanh(w * t) - y["b"]}
            ys = odeint(f, y0, TS)
            return ys["a"][-1] + 2.0 * ys["b"].sum()
        return fun
    y0 = {"a": np.float32(1.0), "b": np.float32(0.5)}
    got = mjax.grad(loss(mode.odeint, mnp), (0, 1))(np.float32(0.8), y0)
    want = jax.grad(loss(jode.odeint, jnp), (0, 1))(np.float32(0.8), y0)
    close(got, want, rtol=1e-4, atol=1e-5)


def test_grad_matches_finite_differences():
    ts = np.array([0.0, 0.5, 1.5], np.float32)

    @mjax.jit
    def loss(a, y0):
        return mode.odeint(decay(mnp), y0, ts, a, rtol=1e-6, atol=1e-6)[-1]
    a, y0, eps = 0.7, 1.3, 1e-2
    ga, gy = mjax.grad(loss, (0, 1))(a, y0)
    fa = (loss(a + eps, y0) - loss(a - eps, y0)) / (2 * eps)
    fy = (loss(a, y0 + eps) - loss(a, y0 - eps)) / (2 * eps)
    np.testing.assert_allclose(ga, fa, rtol=2e-3)
    np.testing.assert_allclose(gy, fy, rtol=2e-3)
    # closed form: y' = -a y  =>  y(t) = y0 exp(-a t); dy/dy0 = exp(-a t)
    g = mjax.grad(lambda y0: mode.odeint(lambda y, t: -a * y, y0, ts)[-1])(1.0)
    np.testing.assert_allclose(g, np.exp(-a * 1.5), rtol=1e-5)


def test_jvp_is_the_custom_vjp_error_as_in_jax():
    for odeint, np_, lib in [(mode.odeint, mnp, mjax), (jode.odeint, jnp, jax)]:
        with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
            lib.jvp(lambda a: odeint(decay(np_), 1.0, TS, a), (0.7,), (1.0,))


def test_bad_arguments_raise_typeerror_as_jax():
    for odeint, np_ in [(mode.odeint, mnp), (jode.odeint, jnp)]:
        with pytest.raises(TypeError, match="must be arrays or scalars, but got hi"):
            odeint(lambda y, t, s: -y, 1.0, TS, "hi")
        with pytest.raises(TypeError, match="t must be an array of floats"):
            odeint(decay(np_), 1.0, np.arange(3), 0.7)


def test_helpers_match_jax():
    y0 = np.array([1.0, -2.0], np.float32)
    f0 = np.array([0.5, 0.25], np.float32)
    dt = np.float32(0.1)

    def f_for(np_):
        return lambda y, t: -y * np_.cos(t)
    k = np.linspace(-1, 1, 14).reshape(7, 2).astype(np.float32)

    def helpers(m, np_):
        return (m.runge_kutta_step(f_for(np_), y0, f0, np.float32(0.0), dt),
                m.initial_step_size(f_for(np_), 0.0, y0, 4, 1e-6, 1e-6, f0),
                m.optimal_step_size(dt, np.float32(0.3)),
                m.optimal_step_size(dt, np.float32(3.0)),
                m.mean_error_ratio(f0, 1e-3, 1e-3, y0, y0 + 1),
                m.interp_fit_dopri(y0, y0 + 1, k, dt))
    close(mjax.jit(lambda: helpers(mode, mnp))(), helpers(jode, jnp))


def test_odeint_fit_and_gradients_are_jaxs_bit_for_bit():
    """JAX's order of operations (the dense-output quartic term by term) and precisions
    (helpers at the default matmul precision, odeint at "highest"): the same bits as
    JAX's on the CPU (the chip's fusions may round differently: close there)."""
    from frontend_util import ON_TPU

    def same(got, want):
        for g, w in zip(mjax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            g, w = np.asarray(g), np.asarray(w)
            assert g.dtype == w.dtype, (g.dtype, w.dtype)
            if ON_TPU:
                np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
            else:
                assert g.tobytes() == w.tobytes(), (g, w)
    y0 = np.array([1.0, -2.0], np.float32)
    k = np.linspace(-1, 1, 14).reshape(7, 2).astype(np.float32)
    dt = np.float32(0.1)
    same(mode.fit_4th_order_polynomial(y0, y0 + 1, 0.3 * y0, k[0], k[-1], dt),
         jode.fit_4th_order_polynomial(y0, y0 + 1, 0.3 * y0, k[0], k[-1], dt))
    same(mode.interp_fit_dopri(y0, y0 + 1, k, dt), jode.interp_fit_dopri(y0, y0 + 1, k, dt))
    for kw in [{}, dict(rtol=1e-3, atol=1e-3, hmax=0.2)]:
        same(mode.odeint(decay(mnp), np.float32(1.3), TS, 0.7, **kw),
             jode.odeint(decay(jnp), np.float32(1.3), TS, 0.7, **kw))

    def loss(odeint, np_):
        def fun(w, y0):
            def f(y, t):
                return {"a": -w * y["a"] * y["b"], "b": np_.tanh(w * t) - y["b"]}
            ys = odeint(f, y0, TS)
            return ys["a"][-1] + 2.0 * ys["b"].sum()
        return fun
    y0 = {"a": np.float32(1.0), "b": np.float32(0.5)}
    same(mjax.grad(loss(mode.odeint, mnp), (0, 1))(np.float32(0.8), y0),
         jax.grad(loss(jode.odeint, jnp), (0, 1))(np.float32(0.8), y0))
