"""searchsorted, interp, bincount, argwhere/flatnonzero (and isin) against jax.numpy."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
import mjax
from frontend_util import check, x64
import mjax.numpy as jnp


RNG = np.random.default_rng(2)
A = RNG.uniform(-3, 3, (3, 4)).astype(np.float32)
NANS = np.where(RNG.uniform(size=(3, 4)) < 0.3, np.nan, A).astype(np.float32)
NANS[2] = np.nan                                   # one all-NaN row
INTS = RNG.integers(0, 6, (10,)).astype(np.int32)


def test_searchsorted():
    a = np.array([1.0, 2.0, 2.0, 3.0, np.nan], np.float32)
    v = np.array([[0.0, 2.0, 2.5], [3.0, 9.0, np.nan]], np.float32)
    for side in ("left", "right"):
        want = np.searchsorted(a, v, side=side).astype(np.int32)
        check(jnp.searchsorted(a, v, side=side), want)
        check(mjax.jit(lambda a, v: jnp.searchsorted(a, v, side=side))(a, v), want)
    check(jnp.searchsorted(np.array([1, 3, 5], np.int32), 4), np.int32(2))
    perm = np.array([1, 2, 0], np.int32)     # (argsort of [5, 1, 3])
    check(jnp.searchsorted(np.array([5.0, 1.0, 3.0], np.float32), [2.0, 4.0], sorter=perm),
          np.array([1, 2], np.int32))
    with pytest.raises(ValueError, match="expected 'left' or 'right'"):
        jnp.searchsorted(a, v, side="middle")
    with pytest.raises(ValueError, match="invalid argument method='bogus'"):
        jnp.searchsorted(a, v, method="bogus")


@pytest.mark.parametrize("method", ["scan", "scan_unrolled", "sort", "compare_all"])
def test_searchsorted_methods_match_jax(method):
    """Each of JAX's methods (the default a binary search, not a compare of every pair),
    on NaNs, ties, ints, complex, empty and 0-d queries, under jit and vmap; int32 indices
    even under x64, as JAX's."""
    cases = [(np.array([1.0, 2.0, 2.0, 3.0, np.nan], np.float32),
              np.array([[0.0, 2.0, 2.5], [3.0, 9.0, np.nan]], np.float32)),
             (np.arange(7), np.array([-1, 0, 3, 6, 7])), (np.zeros(0, np.float32), np.ones(3)),
             (np.array([1 + 1j, 1 + 2j, 2 + 0j]), np.array([1 + 1.5j, 3j])),
             (np.sort(RNG.uniform(size=1000)).astype(np.float32),
              RNG.uniform(size=(7, 9)).astype(np.float32)), (np.arange(5.0), np.float32(2.5))]
    for a, v in cases:
        for side in ("left", "right"):
            got = mjax.jit(lambda a, v: jnp.searchsorted(a, v, side=side, method=method))(a, v)
            want = jax.jit(lambda a, v: jjnp.searchsorted(a, v, side=side, method=method))(a, v)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    f = lambda q: jnp.searchsorted(jnp.arange(10.0), q, method=method)  # noqa: E731
    np.testing.assert_array_equal(mjax.vmap(f)(np.array([1.5, 8.2, -3.0])), [2, 9, 0])
    with x64():
        assert jnp.searchsorted(np.arange(5.0), np.ones(2), method=method).dtype == np.int32


def test_interp():
    xp = np.array([0.0, 1.0, 1.0, 3.0, 6.0], np.float32)
    fp = np.array([1.0, 2.0, 4.0, -1.0, 0.5], np.float32)
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 5.9, 6.0, 7.0], np.float32)
    check(jnp.interp(x, xp, fp), jjnp.interp(x, xp, fp))
    check(mjax.jit(lambda x: jnp.interp(x, xp, fp, left=-9.0, right=9.0))(x),
          np.interp(x, xp, fp, left=-9, right=9).astype(np.float32))
    check(jnp.interp(x, xp[[0, 1, 3, 4]], fp[[0, 1, 3, 4]], period=4.0),
          np.interp(x, xp[[0, 1, 3, 4]], fp[[0, 1, 3, 4]], period=4.0).astype(np.float32))
    check(jnp.interp(np.arange(3, dtype=np.int32), np.array([0, 2]), np.array([0, 1])),
          jjnp.interp(np.arange(3, dtype=np.int32), jjnp.array([0, 2]), jjnp.array([0, 1])))


def test_bincount():
    check(jnp.bincount(INTS), np.bincount(INTS).astype(np.int32))
    check(jnp.bincount(INTS, minlength=9), np.bincount(INTS, minlength=9).astype(np.int32))
    w = RNG.uniform(size=10).astype(np.float32)
    check(jnp.bincount(INTS, w), np.bincount(INTS, w).astype(np.float32))
    odd = np.array([-1, 0, 2, 7], np.int32)
    check(mjax.jit(lambda x: jnp.bincount(x, length=4))(odd), jjnp.bincount(odd, length=4))
    with pytest.raises(mjax.errors.ConcretizationTypeError, match="length"):
        mjax.jit(jnp.bincount)(INTS)


def test_isin_argwhere_flatnonzero():
    el = np.array([[1, 2], [3, 4]], np.int32)
    test = np.array([4, 1, 9], np.int32)
    check(jnp.isin(el, test), np.isin(el, test))
    check(mjax.jit(lambda a, b: jnp.isin(a, b, invert=True))(el, test),
          np.isin(el, test, invert=True))
    m = np.array([[0, 1, 0], [2, 0, 3]], np.int32)
    check(jnp.argwhere(m), jjnp.argwhere(m))
    check(jnp.flatnonzero(m), jjnp.flatnonzero(m))
    check(mjax.jit(lambda m: jnp.argwhere(m, size=4, fill_value=-1))(m),
          jjnp.argwhere(m, size=4, fill_value=-1))
    check(mjax.jit(lambda m: jnp.flatnonzero(m, size=2))(m), jjnp.flatnonzero(m, size=2))
    check(jnp.argwhere(np.float32(3.0)), jjnp.argwhere(np.float32(3.0)))


def test_nonzero_fill_value_may_be_traced_under_jit():
    x = np.array([0, 3, 0, 5, 0])
    mine = mjax.jit(jnp.nonzero, static_argnames="size")
    theirs = jax.jit(jjnp.nonzero, static_argnames="size")
    for size, fill in ((5, len(x)), (4, 7)):
        for got, want in zip(mine(x, size=size, fill_value=fill),
                             theirs(x, size=size, fill_value=fill), strict=True):
            check(got, want)
    for got, want in zip(jnp.nonzero(np.eye(2), size=3, fill_value=(8, 9)),
                         jjnp.nonzero(np.eye(2), size=3, fill_value=(8, 9)), strict=True):
        check(got, want)


@pytest.mark.parametrize("conds,nfun", [
    (np.array([False, True, False]), 3), (np.array([True, True]), 2),
    (np.array([[True] * 9, [False] * 9]), 3)])
def test_piecewise_with_an_array_of_conditions_matches_jax(conds, nfun):
    x = np.arange(-4, 5)
    funcs = [lambda v: v * 2, lambda v: v * 10, 7][:nfun]
    check(jnp.piecewise(x, conds, funcs), jjnp.piecewise(x, conds, funcs))


@pytest.mark.parametrize("indices,axis", [([0, 1, 3], None), ([-1, 2], None), ([1], 1),
                                          ([2, 0], 0)])
def test_delete_of_traced_unique_indices_under_jit_matches_jax(indices, axis):
    a = np.arange(12).reshape(3, 4) if axis is not None else np.array([4, 5, 6, 7, 8, 9])
    mine = mjax.jit(jnp.delete, static_argnames=["assume_unique_indices", "axis"])
    theirs = jax.jit(jjnp.delete, static_argnames=["assume_unique_indices", "axis"])
    idx = np.array(indices)
    check(mine(a, idx, axis=axis, assume_unique_indices=True),
          theirs(a, idx, axis=axis, assume_unique_indices=True))
    with pytest.raises(mjax.errors.ConcretizationTypeError):
        mjax.jit(jnp.delete)(a, idx)
