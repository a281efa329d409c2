"""jnp.unique on concrete arrays and with size= under jit."""
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


def check_tree(got, want, **kw):
    got_l, want_l = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_l) == len(want_l), (len(got_l), len(want_l))
    for i, (g, w) in enumerate(zip(got_l, want_l)):
        try:
            check(g, w, **kw)
        except AssertionError as e:
            raise AssertionError(f"leaf {i}: {e}") from None


def test_unique_concrete_matches_numpy():
    x = np.array([[3.0, 1.0, 2.0], [3.0, np.nan, 1.0], [5.0, np.nan, 2.0]], np.float32)
    vals, idx, inv, cnt = jnp.unique(x, return_index=True, return_inverse=True,
                                     return_counts=True)
    w_vals, w_idx, w_inv, w_cnt = jjnp.unique(x, return_index=True, return_inverse=True,
                                              return_counts=True)
    check(vals, w_vals)
    for g, w in ((idx, w_idx), (inv, w_inv), (cnt, w_cnt)):
        check(g, w)
    check(jnp.unique(INTS), np.unique(INTS))
    check(jnp.unique(np.zeros(0, np.float32)), np.zeros(0, np.float32))


def test_unique_with_size_under_jit():
    x = np.array([3.0, 1.0, 2.0, 3.0, 1.0, 5.0], np.float32)
    for size, fill in ((6, None), (3, None), (7, -1.0)):
        def f(x):
            return jnp.unique(x, size=size, fill_value=fill, return_index=True,
                              return_inverse=True, return_counts=True)
        want = jjnp.unique(x, size=size, fill_value=fill, return_index=True,
                           return_inverse=True, return_counts=True)
        check_tree(mjax.jit(f)(x), tuple(want))
    with pytest.raises(mjax.errors.ConcretizationTypeError, match="size="):
        mjax.jit(jnp.unique)(x)
