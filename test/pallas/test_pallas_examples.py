"""The Pallas documentation's kernels in interpret mode (the only one on CPU), against NumPy
and against JAX's own Pallas interpreter, eagerly, under jit and under vmap."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import pallas as jpl
from jax.experimental.pallas import tpu as jpltpu

import mjax
import mjax.numpy as jnp
from mjax import lax
from mjax.experimental import pallas as pl
from mjax.experimental.pallas import tpu as pltpu

import pallas_kernels as K

M = (pl, jnp, lax, mjax)          # mjax's modules
J = (jpl, jjnp, jax.lax, jax)     # the oracle's


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("block", [None, 4, 3])   # 3 does not divide 16: padded blocks
def test_add(block):
    x, y = rnd(16), rnd(16, seed=1)
    out = K.add(*M, x, y, block=block)
    close(out, x + y)
    close(out, K.add(*J, x, y, block=block))
    close(mjax.jit(lambda a, b: K.add(*M, a, b, block=block))(x, y), x + y)
    xs, ys = rnd(3, 16), rnd(3, 16, seed=1)
    close(mjax.vmap(lambda a, b: K.add(*M, a, b, block=block))(xs, ys), xs + ys)


@pytest.mark.skipif(mjax.default_backend() != "cpu", reason="the CPU backend's rule")
def test_cpu_needs_interpret_mode_as_jax():
    # CPUs have no Pallas compiler: interpret=False (the default) is a ValueError when the
    # call is compiled (eagerly or under jit), in JAX and in mjax; tracing it is fine.
    x, y = rnd(8), rnd(8, seed=1)
    for lib in (M, J):
        with pytest.raises(ValueError, match="Only interpret mode is supported on CPU"):
            K.add(*lib, x, y, block=4, interpret=False)
        with pytest.raises(ValueError, match="Only interpret mode is supported on CPU"):
            lib[3].jit(lambda a, b: K.add(*lib, a, b, interpret=False))(x, y)
        lib[3].make_jaxpr(lambda a, b: K.add(*lib, a, b, interpret=False))(x, y)
    close(K.add(*M, x, y, block=4, interpret=True), x + y)


def test_matmul_fori_loop_accumulator():
    x, y = rnd(64, 48), rnd(48, 32, seed=1)
    close(K.matmul(*M, x, y), x @ y, 1e-4)
    close(K.matmul(*M, x, y), K.matmul(*J, x, y), 1e-4)
    close(mjax.jit(lambda a, b: K.matmul(*M, a, b))(x, y), x @ y, 1e-4)
    xs = np.stack([x, 2 * x])
    close(mjax.vmap(lambda a: K.matmul(*M, a, y))(xs), xs @ y, 1e-4)


def test_matmul_k_grid_scratch_accumulator():
    x, y = rnd(32, 64), rnd(64, 48, seed=1)
    out = K.matmul_k_grid(*M, x, y, pltpu.VMEM)
    close(out, x @ y, 1e-4)
    close(out, K.matmul_k_grid(*J, x, y, jpltpu.VMEM), 1e-4)
    close(mjax.jit(lambda a, b: K.matmul_k_grid(*M, a, b, pltpu.VMEM))(x, y), x @ y, 1e-4)
    # a plain shape/dtype works as a scratch spec too (as JAX's interpreter allows)
    close(K.matmul_k_grid(*M, x, y, pl.MemoryRef), x @ y, 1e-4)
    xs, ys = np.stack([x, -x]), np.stack([y, 3 * y])
    close(mjax.vmap(lambda a, b: K.matmul_k_grid(*M, a, b, pltpu.VMEM))(xs, ys), xs @ ys, 1e-4)


@pytest.mark.parametrize("rows", [1, 4, 3])
def test_fused_softmax(rows):
    x = rnd(10, 32)
    out = K.softmax(*M, x, rows=rows)
    close(out, K.np_softmax(x))
    close(out, K.softmax(*J, x, rows=rows))
    close(mjax.jit(lambda a: K.softmax(*M, a, rows=rows))(x), K.np_softmax(x))
    xs = rnd(2, 10, 32, seed=3)
    close(mjax.vmap(lambda a: K.softmax(*M, a, rows=rows))(xs), K.np_softmax(xs))


def test_layer_norm_forward_and_backward_custom_vjp():
    x, w, b = rnd(6, 16), rnd(16, seed=1), rnd(16, seed=2)
    ln = K.layer_norm(*M)
    close(ln(x, w, b), K.np_layer_norm(x, w, b), 1e-4)
    close(mjax.jit(ln)(x, w, b), K.np_layer_norm(x, w, b), 1e-4)

    def loss(ln, jnp_):
        return lambda x, w, b: jnp_.sum(ln(x, w, b) * jnp_.arange(16.0))
    grads = mjax.grad(loss(ln, jnp), argnums=(0, 1, 2))(x, w, b)
    # the oracle: JAX's autodiff of the plain formula
    ref = jax.grad(loss(lambda x, w, b: (x - x.mean(-1, keepdims=True)) / jjnp.sqrt(
        x.var(-1, keepdims=True) + 1e-5) * w + b, jjnp), argnums=(0, 1, 2))(x, w, b)
    for g, r in zip(grads, ref):
        close(g, r, 1e-4)
    jgrads = mjax.jit(mjax.grad(loss(ln, jnp), argnums=(0, 1, 2)))(x, w, b)
    for g, r in zip(jgrads, ref):
        close(g, r, 1e-4)
    xs = rnd(3, 6, 16, seed=5)
    close(mjax.vmap(ln, in_axes=(0, None, None))(xs, w, b), K.np_layer_norm(xs, w, b), 1e-4)
    vg = mjax.vmap(mjax.grad(loss(ln, jnp)), in_axes=(0, None, None))(xs, w, b)
    rg = jax.vmap(jax.grad(loss(lambda x, w, b: (x - x.mean(-1, keepdims=True)) / jjnp.sqrt(
        x.var(-1, keepdims=True) + 1e-5) * w + b, jjnp)), in_axes=(0, None, None))(xs, w, b)
    close(vg, rg, 1e-4)


def test_flash_attention_fori_loop():
    q, k, v = rnd(32, 16), rnd(24, 16, seed=1), rnd(24, 16, seed=2)
    out = K.flash_attention(*M, q, k, v)
    close(out, K.np_attention(q, k, v), 1e-4)
    close(out, K.flash_attention(*J, q, k, v), 1e-4)
    close(mjax.jit(lambda *a: K.flash_attention(*M, *a))(q, k, v), K.np_attention(q, k, v),
          1e-4)
    qs, ks, vs = rnd(2, 32, 16, seed=3), rnd(2, 24, 16, seed=4), rnd(2, 24, 16, seed=5)
    ref = np.stack([K.np_attention(*t) for t in zip(qs, ks, vs)])
    close(mjax.vmap(lambda *a: K.flash_attention(*M, *a))(qs, ks, vs), ref, 1e-4)
