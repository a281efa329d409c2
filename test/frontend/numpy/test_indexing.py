"""x[idx] and x.at[idx] against NumPy for many index expressions, eager and under jit."""
import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp

X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
I = np.array  # noqa: E741

INDEXES = [
    1, -1, (0, 2), (1, -2, 3), (-1, -1, -1, -1),
    slice(None), slice(1, None), (slice(None), slice(0, 3, 2)), (Ellipsis, slice(None, None, -1)),
    (slice(None), slice(None, None, -2), slice(3, 0, -1)), (slice(-3, None), 1),
    (slice(5, 1, -1),), (Ellipsis, 2), (0, Ellipsis, 1), (None,), (None, 1, None, Ellipsis),
    (Ellipsis, None), (1, None, slice(1, 3)),
    I([0, 1, 0]), I([-1, 0]), (slice(None), I([2, 0, 1])), (I([[0, 1], [1, 0]]),),
    (I([0, 1]), I([2, 0])),                          # adjacent arrays
    (slice(None), I([0, 2]), I([1, 3])),             # adjacent, after a slice
    (I([0, 1]), slice(None), I([3, 1])),             # non-adjacent: batch dims go first
    (I([1, 0]), 1, I([0, 3])),                       # int between arrays: non-adjacent
    (slice(None), 1, I([0, 3]), slice(None)),        # int next to an array: adjacent
    (Ellipsis, I([4, 0, 1])), (I([0, 1])[:, None], I([0, 1, 2])),   # broadcasting arrays
    (None, I([1, 0]), slice(None, None, -1)), (I(1), I([2, 1])),
    (1, slice(None), I([[0], [3]]), I([1, 2])),
    X[..., 0, 0] > 30, (X[:, :, 0, 0] > 20), (slice(None), X[0, :, 0, 0] > 20),
    (slice(None), X[0, :, :, 0] > 50),
]


def _ids(idx):
    return repr(idx).replace("\n", "")[:60]


@pytest.mark.parametrize("idx", INDEXES, ids=_ids)
def test_getitem_matches_numpy(idx):
    want = X[idx]
    got = jnp.asarray(X)[idx]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("idx", [[0, 1], [[1, 0], [0, 1]]])
def test_list_index_is_a_type_error_as_in_jax(idx):
    # JAX 0.10.2 refuses a non-tuple sequence index (NumPy would read it as an array).
    with pytest.raises(TypeError, match="non-tuple sequence"):
        jnp.asarray(X)[idx]
    with pytest.raises(TypeError, match="non-tuple sequence"):
        jax.numpy.asarray(X)[idx]


@pytest.mark.parametrize("idx", [i for i in INDEXES if not (
    isinstance(i, np.ndarray) and i.dtype == np.bool_) and not (
    isinstance(i, tuple) and any(isinstance(j, np.ndarray) and j.dtype == np.bool_ for j in i))
    and not isinstance(i, list)][::2], ids=_ids)
def test_getitem_under_jit(idx):
    want = X[idx]
    got = mjax.jit(lambda x: x[idx])(X)
    np.testing.assert_array_equal(got, want)


def test_traced_integer_indices():
    x = jnp.asarray(X)
    f = mjax.jit(lambda x, i, j: x[i, :, j])
    np.testing.assert_array_equal(f(x, 1, -2), X[1, :, -2])
    g = mjax.jit(lambda x, i: x[i])
    np.testing.assert_array_equal(g(x, jnp.array([1, 0, -1])), X[[1, 0, -1]])
    # out-of-bounds traced indices clamp, as in JAX
    np.testing.assert_array_equal(f(x, 5, 0), X[1, :, 0])


UPDATES = [
    (1, 7.0), ((0, slice(1, 3)), np.ones((2, 4, 5), np.float32)), (I([1, 1, 0]), 2.0),
    ((slice(None), I([0, 2]), I([1, 3])), np.arange(20, dtype=np.float32).reshape(2, 2, 5)),
    ((Ellipsis, slice(None, None, -2)), -1.0), ((I([0, 1]), slice(None), I([3, 1])), 5.0),
    (X > 100, 0.0), ((None, 0, 1), 3.0),
]


@pytest.mark.parametrize("idx,val", UPDATES, ids=[_ids(u[0]) for u in UPDATES])
def test_at_set_add_mul_min_max(idx, val):
    x = jnp.asarray(X)
    want = X.copy()
    want[idx] = val
    np.testing.assert_array_equal(x.at[idx].set(val), want)
    want = X.copy()
    np.add.at(want, idx, val)
    np.testing.assert_array_equal(x.at[idx].add(val), want)
    want = X.copy()
    np.multiply.at(want, idx, val)
    np.testing.assert_array_equal(x.at[idx].multiply(val), want)
    want = X.copy()
    np.minimum.at(want, idx, val)
    np.testing.assert_array_equal(x.at[idx].min(val), want)
    want = X.copy()
    np.maximum.at(want, idx, val)
    np.testing.assert_array_equal(x.at[idx].max(val), want)
    np.testing.assert_array_equal(x.at[idx].get(), X[idx])


def test_at_updates_under_jit_and_repeated_indices():
    f = mjax.jit(lambda x, i, v: x.at[i].add(v))
    out = f(jnp.zeros(5), jnp.array([0, 0, 3, -1]), jnp.ones(4))
    np.testing.assert_array_equal(out, [2, 0, 0, 1, 1])
    # out-of-bounds updates are dropped
    out = jnp.zeros(3).at[jnp.array([0, 7])].set(1.0)
    np.testing.assert_array_equal(out, [1, 0, 0])
    out = jnp.arange(4).at[2].mul(5)
    np.testing.assert_array_equal(out, [0, 1, 10, 3])
    assert out.dtype == np.int32


def test_take_and_take_along_axis():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(jnp.take(x, np.array([2, 0]), axis=1), np.take(x, [2, 0], 1))
    idx = np.argsort(-x, axis=1)
    np.testing.assert_array_equal(jnp.take_along_axis(x, idx, axis=1),
                                  np.take_along_axis(x, idx, 1))


@pytest.mark.parametrize("idx", [100, -100, (1, 9), (-7, slice(None), 20), (5, 0, 0, -9),
                                 (I([0, 1]), 9), (9, I([0, 5]))], ids=_ids)
def test_out_of_bounds_static_ints_are_clamped(idx):
    """JAX clamps an out-of-bounds static integer index (through dynamic_slice) instead of
    raising, as it clamps array indices; NumPy's answer with every index clipped into range
    is the oracle."""
    clipped = tuple(np.clip(i, -n, n - 1) if not isinstance(i, slice) else i
                    for i, n in zip(idx if isinstance(idx, tuple) else (idx,), X.shape))
    want = X[clipped]
    np.testing.assert_array_equal(jnp.asarray(X)[idx], want)
    np.testing.assert_array_equal(mjax.jit(lambda x: x[idx])(X), want)


def test_static_index_into_empty_axis_raises():
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0"):
        jnp.zeros((0, 3))[0]


@pytest.mark.parametrize("mode", ["clip", "drop", "fill", "promise_in_bounds", None])
@pytest.mark.parametrize("method", ["set", "add", "multiply", "min", "max"])
@pytest.mark.parametrize("index", [9, -9, 2, (slice(1, 9),), ([9, -9, 2],), (1, 7),
                                   ([0, 4, 9], [1, -5, 0])])
def test_at_update_modes_as_jax(mode, method, index):
    # mode="clip" clamps out-of-bounds indices to the edge (mode="drop" drops them).
    import jax
    import jax.numpy as jjnp
    x = np.arange(10.0, dtype=np.float32).reshape(5, 2) + 1
    if mode == "promise_in_bounds" and index not in (2, (slice(1, 9),)):
        pytest.skip("out-of-bounds indices are undefined under promise_in_bounds")
    idx = tuple(np.array(i) if isinstance(i, list) else i for i in
                (index if isinstance(index, tuple) else (index,)))

    def run(np_):
        return np.asarray(getattr(np_.asarray(x).at[idx], method)(3.0, mode=mode))
    np.testing.assert_array_equal(run(jnp), run(jjnp))


@pytest.mark.parametrize("index", [np.array([1, 1, 3]), slice(1, None), 7, (0, np.array([2, 0]))])
def test_at_apply_and_get_hints_as_jax(index):
    import jax.numpy as jjnp
    x = np.arange(8.0, dtype=np.float32).reshape(2, 4) if isinstance(index, tuple) else \
        np.arange(5.0, dtype=np.float32)
    got = mjax.numpy.asarray(x).at[index].apply(lambda v: v * 2 + 1)
    want = jjnp.asarray(x).at[index].apply(lambda v: v * 2 + 1)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    if not (isinstance(index, int) and index >= x.shape[0]):
        got = mjax.numpy.asarray(x).at[index].get(unique_indices=True, indices_are_sorted=True)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(jjnp.asarray(x)[index]))


@pytest.mark.parametrize("index", [lambda n: (slice(None, n),), lambda n: (1, slice(n, None, 2)),
                                   lambda n: (slice(None, None, n),)])
def test_traced_slice_entries_are_jax_index_error(index):
    def run(lib):
        with pytest.raises(IndexError) as e:
            lib.jit(lambda x, n: x[index(n)])(lib.numpy.ones((3, 3)), 2)
        return str(e.value)
    assert run(mjax) == run(jax)
    # (inside an eager grad the value is known, as in JAX)
    np.testing.assert_allclose(
        mjax.grad(lambda x, n: x[index(n)].sum())(jnp.ones((3, 3)), 2),
        jax.grad(lambda x, n: x[index(n)].sum())(np.ones((3, 3), np.float32), 2))
