"""lax.igamma / igammac / igamma_grad_a / random_gamma_grad (and scipy's gammainc,
gammaincc) are JAX's algorithm op for op (issue 57): bit-identical to jax's on a grid of
(a, x) with edge values, float32 and float64, eager, jit, vmap, and JAX's derivative
rules (d/da = igamma_grad_a, d/dx = x^(a-1) e^-x / Gamma(a))."""
import numpy as np
import pytest

import jax
import mjax

VALS = [0, 1e-30, 1e-10, 1e-5, 0.01, 0.1, 0.5, 0.9, 0.99, 1, 1.01, 1.5, 2, 2.5, 3, 5, 7.3,
        10, 20, 30.5, 50, 100, 200, 1e3, 1e4, 1e5, 1e20, np.inf, np.nan, -1, -np.inf]
FUNCS = ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad"]


def _grid(dtype):
    v = np.array(VALS, dtype)
    a, x = (g.ravel() for g in np.meshgrid(v, v, indexing="ij"))
    slow = (a >= 1e6) & (x <= a) & (x >= a * 1e-6)  # JAX's series runs ~forever there
    a, x = a[~slow], x[~slow]
    rng = np.random.default_rng(0)
    a2 = rng.uniform(0, 20, 300).astype(dtype)
    x2 = (a2 * rng.uniform(0.8, 1.2, 300)).astype(dtype)  # a near x: both branches
    return np.concatenate([a, a2]), np.concatenate([x, x2])


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
    np.testing.assert_array_equal(got[~nan].view(u), want[~nan].view(u))


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_igamma_bits_float32(name, mode):
    a, x = _grid(np.float32)
    mf, jf = getattr(mjax.lax, name), getattr(jax.lax, name)
    if mode == "jit":
        mf, jf = mjax.jit(mf), jax.jit(jf)
    _same_bits(mf(a, x), jf(a, x))


@pytest.mark.parametrize("name", FUNCS)
def test_igamma_bits_float64(name, x64_mode):
    dtype = np.float64 if x64_mode else np.float32
    a, x = _grid(dtype)
    _same_bits(mjax.jit(getattr(mjax.lax, name))(a, x), jax.jit(getattr(jax.lax, name))(a, x))


@pytest.mark.parametrize("dtype", [np.float16, jax.numpy.bfloat16])
def test_igamma_bits_half(dtype):
    a = np.array([0.5, 2, 3, 10, 0, 1e-3], dtype)
    x = np.array([0.3, 2.5, 1, 12, 1, 4], dtype)
    for name in FUNCS:
        _same_bits(getattr(mjax.lax, name)(a, x), getattr(jax.lax, name)(a, x))


def test_gammainc_vmap_grad_bits():
    rng = np.random.default_rng(1)
    a = rng.uniform(0.1, 15, (3, 8)).astype(np.float32)
    x = rng.uniform(0.1, 15, (3, 8)).astype(np.float32)
    for name in ("gammainc", "gammaincc"):
        mf, jf = getattr(mjax.scipy.special, name), getattr(jax.scipy.special, name)
        _same_bits(mjax.vmap(mf)(a, x), jax.vmap(jf)(a, x))
        for argnums in (0, 1, (0, 1)):
            # (under jit: jax's eager grad runs its rule op by op)
            got = mjax.jit(mjax.grad(lambda a, x: mjax.numpy.sum(mf(a, x)), argnums))(a, x)
            want = jax.jit(jax.grad(lambda a, x: jax.numpy.sum(jf(a, x)), argnums))(a, x)
            for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
                _same_bits(g, w)
        t = (np.ones_like(a), np.full_like(x, 2))
        for g, w in zip(mjax.jit(lambda a, x: mjax.jvp(mf, (a, x), t))(a, x),
                        jax.jit(lambda a, x: jax.jvp(jf, (a, x), t))(a, x)):
            _same_bits(g, w)


def test_igamma_weak_type_and_no_second_derivative_in_a():
    assert mjax.lax.igamma(2.0, 1.0).weak_type == jax.lax.igamma(2.0, 1.0).weak_type
    with pytest.raises(NotImplementedError):
        jax.grad(lambda a: jax.lax.igamma_grad_a(a, 2.0))(1.5)
    with pytest.raises(NotImplementedError):
        mjax.grad(lambda a: mjax.lax.igamma_grad_a(a, 2.0))(1.5)
