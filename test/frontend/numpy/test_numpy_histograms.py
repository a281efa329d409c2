"""jnp.histogram against jax.numpy and NumPy."""
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


def check_tree(got, want, **kw):
    got_l, want_l = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_l) == len(want_l), (len(got_l), len(want_l))
    for i, (g, w) in enumerate(zip(got_l, want_l)):
        try:
            check(g, w, **kw)
        except AssertionError as e:
            raise AssertionError(f"leaf {i}: {e}") from None


def _histograms(np_, data, w):
    edges = np.array([-2.0, -0.5, 0.0, 3.0], np.float32)
    return [np_.histogram(data, bins=5), np_.histogram(data, bins=4, range=(-1, 1)),
            np_.histogram(data, bins=edges), np_.histogram(data, bins=6, weights=w),
            np_.histogram(data, bins=3, density=True), np_.histogram(data[:4] * 0 + 1)]


def test_histogram():
    data = RNG.normal(size=50).astype(np.float32)
    w = np.abs(data)
    want = _histograms(jjnp, data, w)
    check_tree(mjax.jit(lambda d, w: _histograms(jnp, d, w))(data, w), want, rtol=1e-5)
    check_tree(jnp.histogram(data, bins=5), want[0])          # eagerly
    np.testing.assert_allclose(np.asarray(want[3][0]), np.histogram(data, 6, weights=w)[0],
                               rtol=1e-5)
    check_tree(jnp.histogram(np.array([1, 2, 3], np.int32), bins=2),
               jjnp.histogram(np.array([1, 2, 3], np.int32), bins=2))
