"""vmap, jvp and grad of pallas_call: a batched call gains a leading grid dimension, JVP
runs a JVP kernel, reverse mode raises JAX's error unless custom_vjp supplies it."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import pallas as jpl

import mjax
import mjax.numpy as jnp
from mjax import lax
from mjax.experimental import pallas as pl

import pallas_kernels as K


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def sin_mul(pl_, jnp_, jax_, with_program_id=True):
    def kernel(x_ref, y_ref, o_ref):
        x = x_ref[...]
        o_ref[...] = jnp_.sin(x) * y_ref[...]
        if with_program_id:
            o_ref[...] += pl_.program_id(0).astype(jnp_.float32)
    spec = pl_.BlockSpec((4,), lambda i: (i,))
    return pl_.pallas_call(kernel, out_shape=jax_.ShapeDtypeStruct((8,), np.float32),
                           grid=(2,), in_specs=[spec, spec], out_specs=spec, interpret=True)


def test_vmap_unbatched_operand_and_other_axes():
    f = sin_mul(pl, jnp, mjax)
    xs, y = rnd(8, 3), rnd(8, seed=1)
    want = np.stack([np.sin(xs[:, b]) * y + np.arange(8) // 4 for b in range(3)])
    close(mjax.vmap(f, in_axes=(1, None))(xs, y), want)
    close(mjax.jit(mjax.vmap(f, in_axes=(1, None), out_axes=1))(xs, y), want.T)
    # and JAX agrees
    close(jax.vmap(sin_mul(jpl, jjnp, jax), in_axes=(1, None))(xs, y), want)


def test_nested_vmap_program_ids_count_the_kernels_grid():
    f = sin_mul(pl, jnp, mjax)
    xs, ys = rnd(2, 3, 8), rnd(3, 8, seed=1)
    want = np.sin(xs) * ys[None] + (np.arange(8) // 4)
    close(mjax.vmap(mjax.vmap(f), in_axes=(0, None))(xs, ys), want)


def test_jvp_matches_jax():
    # (JAX's own jvp of a kernel that calls program_id fails, so the oracle's has none)
    f, jf = sin_mul(pl, jnp, mjax, False), sin_mul(jpl, jjnp, jax, False)
    x, y, tx, ty = rnd(8), rnd(8, seed=1), rnd(8, seed=2), rnd(8, seed=3)
    out, tout = mjax.jvp(f, (x, y), (tx, ty))
    jout, jtout = jax.jvp(jf, (x, y), (tx, ty))
    close(out, jout)
    close(tout, jtout)
    _, t_pid = mjax.jvp(sin_mul(pl, jnp, mjax), (x, y), (tx, ty))
    close(t_pid, jtout)
    close(tout, np.cos(x) * tx * y + np.sin(x) * ty)
    # one operand's tangent only, under jit
    t2 = mjax.jit(lambda x, y, t: mjax.jvp(lambda x: f(x, y), (x,), (t,))[1])(x, y, tx)
    close(t2, np.cos(x) * tx * y)


def test_jvp_of_a_kernel_with_a_loop_and_padding():
    x, y = rnd(64, 48), rnd(48, 32, seed=1)
    tx, ty = rnd(64, 48, seed=2), rnd(48, 32, seed=3)
    f = lambda a, b: K.matmul(pl, jnp, lax, mjax, a, b)   # noqa: E731
    _, t = mjax.jvp(f, (x, y), (tx, ty))
    close(t, tx @ y + x @ ty, 1e-4)
    g = lambda a: K.softmax(pl, jnp, lax, mjax, a, rows=3)   # noqa: E731
    a, ta = rnd(10, 16), rnd(10, 16, seed=4)
    _, t = mjax.jvp(g, (a,), (ta,))
    _, jt = jax.jvp(lambda a: jax.nn.softmax(a, axis=-1), (a,), (ta,))
    close(t, jt, 1e-5)
    # jacfwd batches the JVP call, whose primal outputs come out batched too: JAX
    # raises the same ValueError for its pallas_call.
    with pytest.raises(ValueError, match="got axis spec None but output was batched"):
        mjax.jacfwd(g)(a)


def test_vmap_of_jvp():
    f = sin_mul(pl, jnp, mjax)
    xs, y, ts = rnd(3, 8), rnd(8, seed=1), rnd(3, 8, seed=2)
    t = mjax.vmap(lambda x, t: mjax.jvp(lambda x: f(x, y), (x,), (t,))[1])(xs, ts)
    close(t, np.cos(xs) * ts * y)


def test_reverse_mode_raises_jax_error():
    f = sin_mul(pl, jnp, mjax)
    x, y = rnd(8), rnd(8, seed=1)
    msg = "Linearization failed to produce known values for all output primals"
    with pytest.raises(ValueError, match=msg) as e:
        mjax.grad(lambda x: f(x, y).sum())(x)
    assert "custom_vjp" in str(e.value)
    with pytest.raises(ValueError, match=msg):
        mjax.jit(mjax.grad(lambda x: f(x, y).sum()))(x)
    with pytest.raises(ValueError, match=msg):     # what JAX says
        jax.grad(lambda x: sin_mul(jpl, jjnp, jax, False)(x, y).sum())(x)


def test_custom_vjp_makes_a_differentiable_fused_op():
    # Forward and backward kernels of x * sin(x), combined with custom_vjp.
    def fwd_kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * jnp.sin(x_ref[...])

    def bwd_kernel(x_ref, g_ref, o_ref):
        x = x_ref[...]
        o_ref[...] = g_ref[...] * (jnp.sin(x) + x * jnp.cos(x))

    spec = pl.BlockSpec((4,), lambda i: (i,))
    out = mjax.ShapeDtypeStruct((8,), jnp.float32)
    fwd = pl.pallas_call(fwd_kernel, out_shape=out, grid=(2,), in_specs=[spec],
                         out_specs=spec, interpret=True)
    bwd = pl.pallas_call(bwd_kernel, out_shape=out, grid=(2,), in_specs=[spec, spec],
                         out_specs=spec, interpret=True)

    @mjax.custom_vjp
    def f(x):
        return fwd(x)
    f.defvjp(lambda x: (fwd(x), x), lambda x, g: (bwd(x, g),))
    x = rnd(8)
    want = np.sin(x) + x * np.cos(x)
    close(mjax.grad(lambda x: f(x).sum())(x), want)
    close(mjax.jit(mjax.grad(lambda x: f(x).sum()))(x), want)
    xs = rnd(3, 8, seed=1)
    close(mjax.vmap(mjax.grad(lambda x: f(x).sum()))(xs), np.sin(xs) + xs * np.cos(xs))


def test_jvp_with_scratch_accumulator_and_masks():
    from mjax.experimental.pallas import tpu as pltpu
    x, y, tx, ty = rnd(32, 64), rnd(64, 48, seed=1), rnd(32, 64, seed=2), rnd(64, 48, seed=3)
    _, t = mjax.jvp(lambda a, b: K.matmul_k_grid(pl, jnp, lax, mjax, a, b, pltpu.VMEM),
                    (x, y), (tx, ty))
    close(t, tx @ y + x @ ty, 1e-4)

    n, b = 10, 4

    def kernel(x_ref, o_ref):
        i = pl.program_id(0)
        mask = i * b + jnp.arange(b) < n
        v = pl.load(x_ref, (pl.ds(i * b, b),), mask=mask, other=-1.0)
        pl.store(o_ref, (pl.ds(i * b, b),), jnp.sin(v), mask=mask)
    f = pl.pallas_call(kernel, out_shape=mjax.ShapeDtypeStruct((n,), jnp.float32), grid=(3,),
                       interpret=True)
    a, ta = rnd(n, seed=4), rnd(n, seed=5)
    out, t = mjax.jvp(f, (a,), (ta,))
    close(out, np.sin(a))
    close(t, np.cos(a) * ta)
    close(mjax.vmap(f)(np.stack([a, -a])), np.sin(np.stack([a, -a])))
