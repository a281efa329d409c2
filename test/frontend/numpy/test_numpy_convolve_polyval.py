"""convolve, correlate and polyval against jax.numpy."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
import mjax
from frontend_util import check
import mjax.numpy as jnp


RNG = np.random.default_rng(2)
A = RNG.uniform(-3, 3, (3, 4)).astype(np.float32)
NANS = np.where(RNG.uniform(size=(3, 4)) < 0.3, np.nan, A).astype(np.float32)
NANS[2] = np.nan                                   # one all-NaN row
INTS = RNG.integers(0, 6, (10,)).astype(np.int32)


def test_convolve_correlate():
    a = RNG.normal(size=7).astype(np.float32)
    v = RNG.normal(size=3).astype(np.float32)
    for mode in ("full", "same", "valid"):
        for x, y in ((a, v), (v, a), (a[:4], a[:4])):
            check(jnp.convolve(x, y, mode=mode), np.convolve(x, y, mode=mode), atol=1e-5)
            check(jnp.correlate(x, y, mode=mode), np.correlate(x, y, mode=mode), atol=1e-5)
    # integers promote to an inexact dtype as in JAX (NumPy's default for convolutions)
    ints, kernel = np.array([1, 2, 3], np.int32), np.array([0, 1, 1], np.int32)
    check(mjax.jit(jnp.convolve)(ints, kernel),
          np.asarray(jax.jit(jjnp.convolve)(ints, kernel)))
    g = mjax.grad(lambda a: (jnp.convolve(a, v, mode="same") ** 2).sum())(a)
    check(g, jax.grad(lambda a: (jjnp.convolve(a, v, mode="same") ** 2).sum())(a),
          rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="mode must be"):
        jnp.convolve(a, v, mode="circular")


def test_polyval():
    p = np.array([2.0, -1.0, 0.5, 3.0], np.float32)
    x = np.linspace(-2, 2, 5).astype(np.float32)
    check(jnp.polyval(p, x), jjnp.polyval(p, x))
    check(mjax.jit(jnp.polyval)(np.array([1, 2, 3], np.int32), np.array([1, 2], np.int32)),
          jjnp.polyval(np.array([1, 2, 3], np.int32), np.array([1, 2], np.int32)))
    check(jnp.polyval(np.array([1, 2, 3], np.int32), 2.5),
          jjnp.polyval(jjnp.array([1, 2, 3]), 2.5))
    check(mjax.grad(lambda x: jnp.polyval(p, x))(np.float32(1.5)),
          jax.grad(lambda x: jjnp.polyval(p, x))(np.float32(1.5)))


def test_polyval_of_coefficient_arrays():
    # (coefficients along p's first axis, the rest broadcasting with x: diffrax's
    # interpolations evaluate several polynomials at once)
    p = np.arange(15.0, dtype=np.float32).reshape(5, 3) / 7
    x = np.linspace(0, 1, 4, dtype=np.float32)[:, None]
    check(jnp.polyval(p, x), jjnp.polyval(p, x))
    check(jnp.polyval(p, 2.0), jjnp.polyval(p, 2.0))
    check(mjax.jit(jnp.polyval)(p, x[:, 0, None]), jjnp.polyval(p, x[:, 0, None]))
