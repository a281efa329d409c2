"""Creation and manipulation against jax.numpy: average(returned=), logspace/geomspace,
indices, rot90, dstack, splits, lexsort, digitize, ediff1d, repeat(total_repeat_length=),
unique(axis=), .at[].power/divide, roll by a traced shift, nonzero(size=), and
floor_divide/divmod/heaviside edge cases."""
import jax.numpy as jjnp
import numpy as np
import pytest
import mjax
import mjax.numpy as jnp
from frontend_util import check


RNG = np.random.default_rng(11)
A = RNG.standard_normal((4, 5)).astype(np.float32)
NANS = A.copy()
NANS[1, 2] = np.nan
NANS[3] = np.nan
METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]


def check_all(got, want, **kw):
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want), (len(got), len(want))
    for g, w in zip(got, want):
        check(g, w, **kw)


def test_average_returned_and_weights():
    w = RNG.uniform(0.5, 2, (4, 5)).astype(np.float32)
    for kw in [dict(), dict(axis=1), dict(axis=0, weights=w[:, 0]), dict(axis=(1, 0), weights=w.T),
               dict(weights=w, returned=True), dict(axis=1, returned=True, keepdims=True),
               dict(axis=1, weights=w, returned=True, keepdims=True)]:
        check_all(jnp.average(A, **kw), jjnp.average(A, **kw))
    check_all(jnp.average(np.arange(6), returned=True), jjnp.average(np.arange(6), returned=True))
    with pytest.raises(ValueError, match="Axis must be specified"):
        jnp.average(A, weights=w[0])


def test_logspace_geomspace_indices():
    check(jnp.logspace(0, 3, 7), jjnp.logspace(0, 3, 7), rtol=1e-5)
    check(jnp.logspace(1, 2, 4, endpoint=False, base=2.0), jjnp.logspace(1, 2, 4, endpoint=False,
                                                                         base=2.0), rtol=1e-5)
    check(jnp.logspace(np.array([0, 1]), 2, 3, axis=1), jjnp.logspace(np.array([0, 1]), 2, 3,
                                                                       axis=1), rtol=1e-5)
    for args, kw in [((1, 1000, 4), {}), ((-1, -16, 5), {}), ((2, 64, 6), dict(endpoint=False)),
                     ((np.array([1.0, 2.0]), np.array([100.0, 50.0]), 3), dict(axis=-1))]:
        check(jnp.geomspace(*args, **kw), jjnp.geomspace(*args, **kw), rtol=1e-5)
    # (JAX's formula: a zero endpoint or a change of sign gives NaN, not NumPy's error)
    for args in [(0, 10, 3), (1, 0, 3), (-1, 2, 3), (np.int8(-1), 2 + 0j, 5)]:
        check(jnp.geomspace(*args), jjnp.geomspace(*args), rtol=1e-5)
    check(jnp.indices((2, 3)), jjnp.indices((2, 3)))
    check_all(jnp.indices((2, 3, 1), sparse=True), jjnp.indices((2, 3, 1), sparse=True))
    check(jnp.indices((3,), dtype=np.int8), jjnp.indices((3,), dtype=np.int8))


def test_rot90_dstack_splits():
    x = np.arange(24).reshape(2, 3, 4)
    for k in range(-2, 6):
        for axes in [(0, 1), (1, 2), (2, 0)]:
            check(jnp.rot90(x, k, axes), jjnp.rot90(x, k, axes))
    with pytest.raises(ValueError, match="ndim at least two"):
        jnp.rot90(np.arange(3))
    check(jnp.dstack([np.arange(3), np.arange(3)]), jjnp.dstack([np.arange(3), np.arange(3)]))
    check(jnp.dstack([x, x]), jjnp.dstack([x, x]))
    for sections in [3, [1, 3], [2, 5], 5]:
        check_all(jnp.array_split(np.arange(7), sections), jjnp.array_split(np.arange(7), sections))
    for indices in ([-1, 10], [4, 2]):      # (JAX's ValueError, not NumPy's pieces)
        with pytest.raises(ValueError, match="must be nonnegative"):
            jjnp.array_split(np.arange(7, dtype=np.int32), indices)
        with pytest.raises(ValueError, match="must be nonnegative"):
            jnp.array_split(np.arange(7, dtype=np.int32), indices)
    check_all(jnp.array_split(x, 3, axis=2), jjnp.array_split(x, 3, axis=2))
    check_all(jnp.hsplit(x, 3), jjnp.hsplit(x, 3))
    check_all(jnp.hsplit(np.arange(6), [2]), jjnp.hsplit(np.arange(6), [2]))
    check_all(jnp.vsplit(x, 2), jjnp.vsplit(x, 2))
    check_all(jnp.dsplit(x, [1, 3]), jjnp.dsplit(x, [1, 3]))
    with pytest.raises(ValueError, match="3 or more dimensions"):
        jnp.dsplit(np.ones((2, 2)), 2)


def test_lexsort_digitize_ediff1d():
    a = RNG.integers(0, 3, (10,))
    b = RNG.integers(0, 3, (10,))
    c = RNG.standard_normal(10).astype(np.float32)
    check(jnp.lexsort((c, a)), jjnp.lexsort((c, a)))
    check(jnp.lexsort((a, b, a)), jjnp.lexsort((a, b, a)))
    k2 = RNG.integers(0, 2, (3, 4))
    check(jnp.lexsort((k2, k2[::-1]), axis=0), jjnp.lexsort((k2, k2[::-1]), axis=0))
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.5, 3.0, np.nan], np.float32)
    for bins in [np.array([0.0, 1.0, 2.5]), np.array([2.5, 1.0, 0.0]), np.array([1.0])]:
        for right in (False, True):
            check(jnp.digitize(x, bins, right), jjnp.digitize(x, bins, right))
    check(jnp.ediff1d(A), jjnp.ediff1d(A))
    check(jnp.ediff1d(np.arange(5), to_begin=-9, to_end=np.array([7, 8])),
          jjnp.ediff1d(np.arange(5), to_begin=-9, to_end=np.array([7, 8])))


def test_repeat_total_length_and_arrays():
    x = np.arange(6).reshape(2, 3)
    cases = [(np.array([1, 0, 2]), dict(axis=1)), (2, dict(total_repeat_length=9)),
             (np.array([3, 1]), dict(axis=0, total_repeat_length=3))]
    for repeats, kw in cases:
        check(jnp.repeat(x, repeats, **kw), jjnp.repeat(x, repeats, **kw))
    got = mjax.jit(lambda x, r: jnp.repeat(x, r, axis=1, total_repeat_length=5))(
        x, np.array([2, 0, 1]))
    check(got, jjnp.repeat(x, np.array([2, 0, 1]), axis=1, total_repeat_length=5))


def test_unique_axis_and_returns():
    x = np.array([[1, 2], [3, 4], [1, 2], [0, 5], [3, 4]])
    for kw in [dict(axis=0, return_index=True, return_inverse=True, return_counts=True),
               dict(axis=-1, return_counts=True, size=3, fill_value=-1)]:
        check_all(jnp.unique(x, **kw), jjnp.unique(x, **kw))
    y = np.array([[np.nan, 1.0], [np.nan, 1.0], [0.0, 1.0]], np.float32)
    check(jnp.unique(y, axis=0), jjnp.unique(y, axis=0))
    check(jnp.unique(y, axis=0, equal_nan=False), jjnp.unique(y, axis=0, equal_nan=False))
    z = np.arange(24).reshape(2, 3, 4) % 3
    check_all(jnp.unique(z, axis=2, return_inverse=True), jjnp.unique(z, axis=2,
                                                                      return_inverse=True))
    got = mjax.jit(lambda x: jnp.unique(x, axis=0, size=4, return_counts=True))(x)
    check_all(got, jjnp.unique(x, axis=0, size=4, return_counts=True))


def test_at_divide_power_and_roll_traced():
    x = np.arange(1, 7).reshape(2, 3).astype(np.float32)
    xi = np.arange(1, 7)
    check(jnp.asarray(x).at[0, 1:].divide(3.0), jjnp.asarray(x).at[0, 1:].divide(3.0))
    check(jnp.asarray(xi).at[1].divide(2), jjnp.asarray(xi).at[1].divide(2))
    check(jnp.asarray(x).at[:, 0].power(2.0), jjnp.asarray(x).at[:, 0].power(2.0))
    check(jnp.asarray(xi).at[np.array([0, 0, 2])].power(2),
          jjnp.asarray(xi).at[np.array([0, 0, 2])].power(2))
    for shift, axis in [(-1, 1), (4, None), (np.array([1, 2]), (0, 1)), (7, 0)]:
        got = mjax.jit(lambda x, s: jnp.roll(x, s, axis=axis))(x, shift)
        check(got, np.roll(x, shift, axis=axis))
    check(jnp.roll(x, jnp.asarray(2)), np.roll(x, 2))


def test_nonzero_size_and_fill():
    a = np.array([0, 3, 1, 0, 2])
    for size, fill in [(2, None), (4, None), (7, -1)]:
        check_all(jnp.nonzero(a, size=size, fill_value=fill),
                  jjnp.nonzero(a, size=size, fill_value=fill))
    b = np.array([[0, 1, 1], [1, 0, 0]])
    check_all(jnp.nonzero(b, size=5, fill_value=(7, 8)), jjnp.nonzero(b, size=5,
                                                                       fill_value=(7, 8)))
    check_all(mjax.jit(lambda b: jnp.nonzero(b, size=2))(b), jjnp.nonzero(b, size=2))
    check_all(jnp.nonzero(b), jjnp.nonzero(b))
    with pytest.raises(ValueError, match="0d"):
        jnp.nonzero(np.float32(1))


def test_floor_divide_divmod_heaviside_edges():
    specials = np.array([-0.0, 0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5.0, -5.0, 0.5, 7.5],
                        np.float32)
    x1, x2 = np.meshgrid(specials, specials)
    check(jnp.floor_divide(x1, x2), jjnp.floor_divide(x1, x2))
    check_all(jnp.divmod(x1, x2), jjnp.divmod(x1, x2))
    check(mjax.jit(jnp.floor_divide)(x1, x2), jjnp.floor_divide(x1, x2))
    ints = np.array([-7, -3, 0, 3, 7, 2**31 - 1, -2**31], np.int32)
    i1, i2 = np.meshgrid(ints, np.array([-3, -1, 2, 5], np.int32))
    check(jnp.floor_divide(i1, i2), jjnp.floor_divide(i1, i2))
    u = np.array([0, 7, 255], np.uint8)
    check(jnp.floor_divide(u, np.uint8(2)), jjnp.floor_divide(u, np.uint8(2)))
    bools = np.array([True, False])
    check(jnp.floor_divide(bools, np.array([True, True])),
          jjnp.floor_divide(bools, np.array([True, True])))
    check(jnp.heaviside(x1, x2), jjnp.heaviside(x1, x2))
    check(jnp.heaviside(np.array([-1, 0, 3]), 0.5), jjnp.heaviside(np.array([-1, 0, 3]), 0.5))


@pytest.mark.parametrize("fill,dtype", [(np.array([[1], [2]]), None),
                                        (np.array([1, 2, 3]), "int32"), (2.5, None)])
def test_full_like_broadcasts_an_array_fill_value_as_jax(fill, dtype):
    x = np.zeros((2, 3), np.float32)
    check(jnp.full_like(x, fill, dtype=dtype), jjnp.full_like(x, fill, dtype=dtype))
