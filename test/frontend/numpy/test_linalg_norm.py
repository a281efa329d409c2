"""jnp.linalg.norm (vector and matrix orders) against jax.numpy."""
import jax
import jax.numpy as jjnp
import numpy as np
import mjax
from frontend_util import check
import mjax.numpy as jnp


RNG = np.random.default_rng(2)
A = RNG.uniform(-3, 3, (3, 4)).astype(np.float32)
NANS = np.where(RNG.uniform(size=(3, 4)) < 0.3, np.nan, A).astype(np.float32)
NANS[2] = np.nan                                   # one all-NaN row
INTS = RNG.integers(0, 6, (10,)).astype(np.int32)


def _norms(np_, v, m, t):
    n = np_.linalg.norm
    return [n(v), n(v, 1), n(v, 2), n(v, np.inf), n(v, -np.inf), n(v, 0), n(v, 3),
            n(m), n(m, "fro"), n(m, 1), n(m, -1), n(m, np.inf), n(m, -np.inf),
            n(m, axis=0), n(m, 1, axis=1, keepdims=True), n(t), n(t, axis=(0, 2)),
            n(t, np.inf, axis=(2, 1)), n(t, keepdims=True)]


def test_norm_matches_jax():
    v, m = A[0], A
    t = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    got = mjax.jit(lambda v, m, t: _norms(jnp, v, m, t))(v, m, t)
    for i, (g, w) in enumerate(zip(got, _norms(jjnp, v, m, t))):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, err_msg=str(i))
        assert g.shape == w.shape and g.dtype == w.dtype, (i, g.shape, w.shape)
    check(jnp.linalg.norm(np.array([3, 4], np.int32)), np.float32(5.0))
    for ord_ in (2, -2, "nuc"):   # through the SVD
        np.testing.assert_allclose(np.asarray(jnp.linalg.norm(m, ord_)),
                                   np.asarray(jjnp.linalg.norm(m, ord_)), rtol=1e-5)
    g = mjax.grad(lambda m: jnp.linalg.norm(m))(m)
    check(g, jax.grad(lambda m: jjnp.linalg.norm(m))(m))
