"""Autodiff and batching of cond / switch / while_loop / fori_loop / scan, against jax.

Values, grad, jvp, vmap and jit of programs using each construct (issue #8, phase B).
"""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax import lax
from mjax.test_util import check_grads

RTOL, ATOL = 2e-5, 2e-5


def both(make):
    """(mjax version, jax version) of a program written against (lax, jnp)."""
    return make(lax, jnp), make(jax.lax, jjnp)


def close(a, b, rtol=RTOL, atol=ATOL):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


def rnd(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


# ---- programs -------------------------------------------------------------------------
def scan_prog(lax, jnp):
    def f(x, w):
        def body(c, xi):
            c2 = jnp.tanh(c * w + xi)
            return c2, jnp.sin(c2) * w
        c, ys = lax.scan(body, x[0], x)
        return c.sum() + (ys ** 2).sum()
    return f


def reverse_scan_prog(lax, jnp):
    def f(x, w):
        def body(c, xi):
            return c * w + jnp.cos(xi), c * xi
        c, ys = lax.scan(body, jnp.ones(x.shape[1:]), x, reverse=True, unroll=2)
        return c.sum() + ys.sum()
    return f


def cond_prog(lax, jnp):
    def f(x, w):
        y = lax.cond(x.sum() > 0, lambda a: a * w, lambda a: jnp.sin(a) * w * w, x)
        return (y * x).sum()
    return f


def switch_prog(lax, jnp):
    def f(x, w):
        i = (jnp.abs(x).sum() * 3).astype(jnp.int32) % 4 - 1   # -1 .. 2: clamped
        y = lax.switch(i, [lambda a: a * w, lambda a: jnp.sin(a), lambda a: a * a + w], x)
        return y.sum()
    return f


def fori_prog(lax, jnp):
    def f(x, w):
        return lax.fori_loop(0, 5, lambda i, s: jnp.sin(s) * w + i, x).sum()
    return f


def while_prog(lax, jnp):
    def f(x, w):
        def body(s):
            k, v = s
            return k + 1, v * w + jnp.cos(v)
        return lax.while_loop(lambda s: s[0] < 4, body, (0, x))[1].sum()
    return f


def cond_in_scan_prog(lax, jnp):
    def f(x, w):
        def body(c, xi):
            c = lax.cond(xi.sum() > 0, lambda a: jnp.tanh(a * w + xi), lambda a: a - xi * w, c)
            return c, c.sum()
        c, ys = lax.scan(body, jnp.zeros(x.shape[1:]), x)
        return c.sum() + ys.sum()
    return f


PROGRAMS = [scan_prog, reverse_scan_prog, cond_prog, switch_prog, fori_prog,
            cond_in_scan_prog]


@pytest.mark.parametrize("make", PROGRAMS + [while_prog])
def test_values_and_jvp_match_jax(make):
    f, jf = both(make)
    x, w = rnd(4, 3), np.float32(0.8)
    tx, tw = rnd(4, 3, seed=1), np.float32(0.5)
    close(f(x, w), jf(x, w))
    close(mjax.jit(f)(x, w), jf(x, w))
    close(mjax.jvp(f, (x, w), (tx, tw)), jax.jvp(jf, (x, w), (tx, tw)))


@pytest.mark.parametrize("make", PROGRAMS)
def test_grad_matches_jax(make):
    f, jf = both(make)
    x, w = rnd(4, 3), np.float32(0.8)
    close(mjax.grad(f, argnums=(0, 1))(x, w), jax.grad(jf, argnums=(0, 1))(x, w))
    close(mjax.jit(mjax.grad(f, argnums=(0, 1)))(x, w), jax.grad(jf, argnums=(0, 1))(x, w))


@pytest.mark.parametrize("make", PROGRAMS + [while_prog])
@pytest.mark.parametrize("in_axes", [(0, None), (0, 0), (1, 0)])
def test_vmap_matches_jax_and_loop(make, in_axes):
    f, jf = both(make)
    xs = rnd(4, 5, 3) if in_axes[0] == 1 else rnd(5, 4, 3)
    ws = np.float32(0.8) if in_axes[1] is None else np.linspace(0.5, 1.0, 5).astype(np.float32)
    got = mjax.vmap(f, in_axes=in_axes)(xs, ws)
    close(got, jax.vmap(jf, in_axes=in_axes)(xs, ws))
    loop = [f(np.take(xs, i, axis=in_axes[0]), ws if in_axes[1] is None else ws[i])
            for i in range(5)]
    close(got, np.stack(loop))


@pytest.mark.parametrize("make", PROGRAMS)
def test_vmap_of_grad_and_grad_of_vmap(make):
    f, jf = both(make)
    xs, w = rnd(3, 4, 3), np.float32(0.9)
    close(mjax.vmap(mjax.grad(f), in_axes=(0, None))(xs, w),
          jax.vmap(jax.grad(jf), in_axes=(0, None))(xs, w))
    close(mjax.grad(lambda w: mjax.vmap(f, in_axes=(0, None))(xs, w).sum())(w),
          jax.grad(lambda w: jax.vmap(jf, in_axes=(0, None))(xs, w).sum())(w))


# ---- the cases the issue names -------------------------------------------------------
def rnn_loss(lax, jnp):
    def loss(params, xs):
        wh, wx = params

        def step(h, x):
            h = jnp.tanh(h @ wh + x @ wx)
            return h, h.sum()
        h, ys = lax.scan(step, jnp.zeros(wh.shape[0]), xs)
        return (h ** 2).sum() + 1e-3 * ys.sum()
    return loss


def test_grad_through_1000_step_scan_rnn():
    loss, jloss = both(rnn_loss)
    params = (0.3 * rnd(4, 4), 0.3 * rnd(2, 4, seed=1))
    xs = rnd(1000, 2, seed=2)
    close(mjax.grad(loss)(params, xs), jax.grad(jloss)(params, xs), rtol=1e-4, atol=1e-5)
    close(mjax.jit(mjax.value_and_grad(loss))(params, xs),
          jax.value_and_grad(jloss)(params, xs), rtol=1e-4, atol=1e-5)


def test_vmap_while_with_data_dependent_trip_count():
    def make(lax, jnp):
        def f(x):
            def body(s):
                k, v = s
                return k + 1, v * 1.5
            return lax.while_loop(lambda s: s[1] < 10.0, body, (0, x))
        return f
    f, jf = both(make)
    xs = np.array([0.1, 1.0, 5.0, 20.0, 9.99], np.float32)
    got = mjax.vmap(f)(xs)
    close(got, jax.vmap(jf)(xs))
    close(got[0], np.array([f(x)[0] for x in xs]))
    assert list(np.asarray(got[0])) == [int(np.ceil(np.log(10.0 / x) / np.log(1.5)))
                                        if x < 10 else 0 for x in xs]
    close(mjax.jit(mjax.vmap(f))(xs), jax.vmap(jf)(xs))
    # forward mode through the batched loop
    close(mjax.jvp(mjax.vmap(f), (xs,), (np.ones_like(xs),))[1][1],
          jax.jvp(jax.vmap(jf), (xs,), (np.ones_like(xs),))[1][1])


def test_cond_in_scan_in_vmap_in_grad():
    def make(lax, jnp, api):
        def loss(w, xs):
            def per_example(x):
                def body(c, xi):
                    c = lax.cond(xi > 0, lambda a: jnp.sin(a * w) + xi, lambda a: a * w - xi, c)
                    return c, c * c
                c, ys = lax.scan(body, 0.5, x)
                return c + ys.sum()
            return api.vmap(per_example)(xs).sum()
        return loss
    loss, jloss = make(lax, jnp, mjax), make(jax.lax, jjnp, jax)
    xs, w = rnd(6, 7), np.float32(0.7)
    close(mjax.grad(loss)(w, xs), jax.grad(jloss)(w, xs), rtol=1e-4)
    close(mjax.jit(mjax.grad(loss, argnums=(0, 1)))(w, xs),
          jax.grad(jloss, argnums=(0, 1))(w, xs), rtol=1e-4)


def test_switch_out_of_range_indices_under_vmap():
    def make(lax, jnp):
        def f(i, x):
            return lax.switch(i, [lambda a: a + 1.0, lambda a: a * 2.0, lambda a: -a], x)
        return f
    f, jf = both(make)
    idx = np.array([-5, -1, 0, 1, 2, 3, 100], np.int32)
    xs = rnd(7, 3)
    close(mjax.vmap(f)(idx, xs), jax.vmap(jf)(idx, xs))
    close(mjax.vmap(f, in_axes=(0, None))(idx, xs[0]), jax.vmap(jf, in_axes=(0, None))(idx, xs[0]))
    close(mjax.grad(lambda x: mjax.vmap(f)(idx, x).sum())(xs),
          jax.grad(lambda x: jax.vmap(jf)(idx, x).sum())(xs))


def test_zero_iteration_loops():
    def make(lax, jnp):
        def f(x):
            a = lax.fori_loop(3, 3, lambda i, s: s * 2.0, x)
            _, ys = lax.scan(lambda c, xi: (c, xi * c), 1.0, x[:0])
            b = lax.while_loop(lambda s: s[0] > 100.0, lambda s: (s[0] * 2, s[1]), (x[0], x))[1]
            return a.sum() + ys.sum() + (b * x).sum()
        return f
    f, jf = both(make)
    x = rnd(4)
    close(f(x), jf(x))
    close(mjax.jvp(f, (x,), (x,)), jax.jvp(jf, (x,), (x,)))
    close(mjax.vmap(f)(rnd(3, 4)), jax.vmap(jf)(rnd(3, 4)))
    g = lambda lax, jnp: lambda x: (lax.fori_loop(2, 2, lambda i, s: s * s, x)
                                    + lax.scan(lambda c, xi: (c * xi, c), x, x[:0])[0]).sum()
    f2, jf2 = both(g)
    close(mjax.grad(f2)(x), jax.grad(jf2)(x))


def test_fori_loop_static_bounds_grad_and_check_grads():
    f, jf = both(fori_prog)
    x, w = rnd(3), np.float32(0.9)
    close(mjax.grad(f, argnums=(0, 1))(x, w), jax.grad(jf, argnums=(0, 1))(x, w))
    check_grads(lambda x: f(x, w), (x.astype(np.float64),), order=2, modes=("fwd", "rev"),
                atol=1e-2, rtol=1e-2)


def test_while_reverse_mode_raises_jax_error():
    f, _ = both(while_prog)
    dynamic = lambda x, n: lax.fori_loop(0, n, lambda i, s: s * 2.0, x).sum()
    dynamic_j = lambda x, n: jax.lax.fori_loop(0, n, lambda i, s: s * 2.0, x).sum()  # noqa: E731
    msg = "Reverse-mode differentiation does not work for lax.while_loop"
    with pytest.raises(ValueError, match=msg):
        mjax.grad(f)(rnd(3), np.float32(0.5))
    with pytest.raises(ValueError, match=msg):
        mjax.jit(mjax.grad(dynamic))(rnd(3), 3)      # a traced bound: a while loop
    # As in JAX, a Python int outside argnums stays a Python int: a static trip count,
    # so fori_loop is a scan and reverse mode works.
    close(mjax.grad(dynamic)(rnd(3), 3), jax.grad(dynamic_j)(rnd(3), 3))
    # forward mode works, and a while loop whose result has no tangent does not matter
    close(mjax.jacfwd(f)(rnd(3), np.float32(0.5)),
          jax.jacfwd(while_prog(jax.lax, jjnp))(rnd(3), np.float32(0.5)))
    g = lambda x: lax.while_loop(lambda k: k < 3, lambda k: k + 1, 0) * x.sum()
    close(mjax.grad(g)(rnd(3)), 3 * np.ones(3))


def test_checkpoint_in_scan():
    def make(lax, jnp, api):
        def loss(w, xs):
            @api.checkpoint
            def step(h, x):
                h = jnp.tanh(h * w + x)
                return jnp.sin(h) * w, h
            h, ys = lax.scan(step, jnp.ones(3), xs)
            return h.sum() + (ys ** 2).sum()
        return loss
    loss, jloss = make(lax, jnp, mjax), make(jax.lax, jjnp, jax)
    xs, w = rnd(20, 3), np.float32(0.6)
    close(mjax.grad(loss, argnums=(0, 1))(w, xs), jax.grad(jloss, argnums=(0, 1))(w, xs))
    text = mjax.jit(mjax.grad(loss)).lower(w, xs).as_text()
    assert text.count("stablehlo.while") >= 2


@pytest.mark.parametrize("make", [scan_prog, cond_prog, fori_prog, cond_in_scan_prog])
def test_jacobians_and_hessian_of_loops(make):
    f, jf = both(make)
    x, w = rnd(3, 2), np.float32(0.7)
    close(mjax.jacfwd(f)(x, w), jax.jacfwd(jf)(x, w), rtol=1e-4)
    close(mjax.jacrev(f)(x, w), jax.jacrev(jf)(x, w), rtol=1e-4)
    close(mjax.hessian(f)(x, w), jax.hessian(jf)(x, w), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("make,order", [(scan_prog, 2), (cond_prog, 2), (switch_prog, 2),
                                        (cond_in_scan_prog, 1)])
def test_check_grads(make, order):
    # Finite differences run in float32 here: order 2 only where they are smooth enough.
    f, _ = both(make)
    x = rnd(3, 2).astype(np.float64)
    check_grads(lambda x: f(x, 0.7), (x,), order=order, modes=("fwd", "rev"), atol=1e-2,
                rtol=1e-2)


def test_grad_of_grad_through_scan():
    f, jf = both(scan_prog)
    w = np.float32(0.7)
    x = rnd(3, 2)
    close(mjax.grad(mjax.grad(f, argnums=1), argnums=1)(x, w),
          jax.grad(jax.grad(jf, argnums=1), argnums=1)(x, w), rtol=1e-4)


def test_scan_pytree_carry_and_unbatched_carry_stays_unbatched():
    def make(lax, jnp):
        def f(x):
            def body(c, xi):
                k, acc = c
                return (k + 1.0, acc + xi * k), k
            (k, acc), ks = lax.scan(body, (0.0, jnp.zeros(3)), x)
            return k, acc, ks
        return f
    f, jf = both(make)
    xs = rnd(5, 4, 3)
    close(mjax.vmap(f)(xs), jax.vmap(jf)(xs))
    text = str(mjax.jit(mjax.vmap(f)).lower(xs).as_text())
    # the counter carry stays a scalar: the loop state has an unbatched f32 carry
    assert "tensor<f32>" in text
    close(mjax.grad(lambda x: f(x)[1].sum())(xs[0]), jax.grad(lambda x: jf(x)[1].sum())(xs[0]))


def test_lax_map_with_batch_size_matches_jax():
    f = lambda x: jnp.sin(x) * x.sum()
    jf = lambda x: jjnp.sin(x) * x.sum()
    xs = rnd(10, 3)
    for bs in (None, 1, 3, 5, 10, 20):
        close(lax.map(f, xs, batch_size=bs), jax.lax.map(jf, xs, batch_size=bs))
    close(mjax.grad(lambda x: lax.map(f, x, batch_size=4).sum())(xs),
          jax.grad(lambda x: jax.lax.map(jf, x, batch_size=4).sum())(xs))
    close(mjax.vmap(lambda x: lax.map(f, x, batch_size=2))(rnd(2, 5, 3)),
          jax.vmap(lambda x: jax.lax.map(jf, x, batch_size=2))(rnd(2, 5, 3)))


def test_vmap_fori_loop_with_batched_trip_count():
    # Only the loop bound is batched: the predicate is batched, so the carry becomes
    # batched and finished elements are masked.
    def make(lax, jnp):
        return lambda n, x: lax.fori_loop(0, n, lambda i, s: s * 1.5 + i, x)
    f, jf = both(make)
    ns, xs = np.array([0, 1, 3, 5], np.int32), np.linspace(0, 1, 4).astype(np.float32)
    close(mjax.vmap(f)(ns, xs), jax.vmap(jf)(ns, xs))
    close(mjax.vmap(f, in_axes=(0, None))(ns, np.float32(2)),
          jax.vmap(jf, in_axes=(0, None))(ns, np.float32(2)))


def test_named_axis_collectives_inside_scan_under_vmap():
    def make(lax, jnp):
        def g(x):
            return lax.scan(lambda c, xi: (c + lax.psum(xi, "i") + lax.axis_index("i"), c),
                            0.0, x)
        return g
    f, jf = both(make)
    xb = np.arange(12.0).reshape(3, 4).astype(np.float32)
    close(mjax.vmap(f, axis_name="i")(xb), jax.vmap(jf, axis_name="i")(xb))
    close(mjax.vmap(f, in_axes=None, axis_size=3, axis_name="i")(xb[0]),
          jax.vmap(jf, in_axes=None, axis_size=3, axis_name="i")(xb[0]))


def test_linearize_through_scan():
    f = lambda x: lax.scan(lambda c, xi: (jnp.sin(c) * xi, c), 1.0, x)
    jf = lambda x: jax.lax.scan(lambda c, xi: (jjnp.sin(c) * xi, c), 1.0, x)
    x, t = rnd(5), rnd(5, seed=1)
    y, lin = mjax.linearize(f, x)
    jy, jlin = jax.linearize(jf, x)
    close(y, jy)
    close(lin(t), jlin(t))


def test_custom_derivatives_inside_scan_under_grad_and_vmap():
    def make(api, lax, jnp):
        @api.custom_vjp
        def sq(x):
            return x * x
        sq.defvjp(lambda x: (x * x, x), lambda r, g: (2 * r * g,))

        def f(x):
            def body(c, xi):
                c = api.nn.relu(c * xi) + sq(c) * 0.1 + api.nn.softplus(xi)
                return c, c
            return lax.scan(body, 0.5, x)[1].sum()
        return f
    f, jf = make(mjax, lax, jnp), make(jax, jax.lax, jjnp)
    x = np.linspace(-1, 1, 6).astype(np.float32)
    close(mjax.grad(f)(x), jax.grad(jf)(x))
    xb = np.stack([x, -x])
    close(mjax.vmap(mjax.grad(f))(xb), jax.vmap(jax.grad(jf))(xb))


def test_checkpoint_in_scan_saves_only_its_inputs():
    # Without checkpoint the forward loop stacks every residual of the step; with it, only
    # the step's carry input (x slices are read from xs): the memory-saving RNN pattern.
    def loss(w, xs, ck):
        def step(h, x):
            a = jnp.tanh(h * w + x)
            return jnp.sin(a) * jnp.cos(a) + jnp.exp(a), None
        h, _ = lax.scan(mjax.checkpoint(step) if ck else step, jnp.ones(3), xs)
        return h.sum()
    xs = rnd(20, 3)

    def stacked_residuals(ck):
        grad = mjax.grad(lambda w, xs: loss(w, xs, ck))
        text = mjax.jit(grad).lower(np.float32(0.5), xs).as_text()
        loop = text[text.index("stablehlo.while"):]
        return loop[:loop.index("\n")].count("tensor<20x3xf32>")
    assert stacked_residuals(True) == 1
    assert stacked_residuals(False) > 2
    jloss = lambda w, xs: jax.lax.scan(
        jax.checkpoint(lambda h, x: (jjnp.sin(jjnp.tanh(h * w + x)) * jjnp.cos(jjnp.tanh(
            h * w + x)) + jjnp.exp(jjnp.tanh(h * w + x)), None)), jjnp.ones(3), xs)[0].sum()
    close(mjax.grad(lambda w, xs: loss(w, xs, True))(np.float32(0.5), xs),
          jax.grad(jloss)(np.float32(0.5), xs))
