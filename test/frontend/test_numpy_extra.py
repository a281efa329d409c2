"""median/quantile/percentile (all of JAX's methods, NaN-ignoring twins), average(returned=),
logspace/geomspace, indices, rot90, dstack, splits, lexsort, digitize, ediff1d,
repeat(total_repeat_length=), unique(axis=), .at[].power/divide, roll by a traced shift,
nonzero(size=), floor_divide/divmod/heaviside edge cases: against jax.numpy and NumPy."""
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


# ---- quantiles --------------------------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
def test_quantile_methods_match_jax(method):
    q = np.array([0.0, 0.1, 0.5, 0.77, 1.0], np.float32)
    # (Each call compiles once; a few axis/keepdims combinations cover the code paths.)
    check(jnp.quantile(A, q, axis=(1, 0), method=method, keepdims=True),
          jjnp.quantile(A, q, axis=(1, 0), method=method, keepdims=True))
    check(jnp.quantile(NANS, 0.3, axis=1, method=method),
          jjnp.quantile(NANS, 0.3, axis=1, method=method))
    check(jnp.nanquantile(NANS, q, axis=1, method=method, keepdims=True),
          jjnp.nanquantile(NANS, q, axis=1, method=method, keepdims=True))
    check(jnp.nanpercentile(NANS, 42.0, method=method), jjnp.nanpercentile(NANS, 42.0,
                                                                            method=method))
    got = mjax.jit(lambda a, q: jnp.percentile(a, q, axis=0, method=method))(A, q * 100)
    check(got, jjnp.percentile(A, q * 100, axis=0, method=method))


def test_median_and_weighted_quantiles():
    ints = RNG.integers(0, 9, (3, 6)).astype(np.int32)
    for a, axis in [(A, None), (NANS, 0), (ints, 1)]:
        check(jnp.median(a, axis=axis), jjnp.median(a, axis=axis))
        check(jnp.nanmedian(a, axis=axis, keepdims=True),
              jjnp.nanmedian(a, axis=axis, keepdims=True))
    w = RNG.uniform(0, 2, (4, 5)).astype(np.float32)
    for fn, jfn, a in [(jnp.quantile, jjnp.quantile, A), (jnp.nanquantile, jjnp.nanquantile,
                                                           NANS)]:
        check(fn(a, 0.4, axis=1, weights=w, method="inverted_cdf"),
              jfn(a, 0.4, axis=1, weights=w, method="inverted_cdf"))
        check(fn(a, np.array([0.2, 0.9]), axis=0, weights=w[:, 0], method="inverted_cdf"),
              jfn(a, np.array([0.2, 0.9]), axis=0, weights=w[:, 0], method="inverted_cdf"))
    with pytest.raises(NotImplementedError, match="inverted_cdf"):
        jnp.quantile(A, 0.5, weights=w)
    with pytest.raises(ValueError, match="method can only be"):
        jnp.quantile(A, 0.5, method="hazen")
    with pytest.raises(ValueError, match="complex"):
        jnp.median(A.astype(np.complex64))
    g = mjax.grad(lambda a: jnp.quantile(a, 0.3))(A)
    import jax
    check(g, jax.grad(lambda a: jjnp.quantile(a, 0.3))(A))


# ---- creation and manipulation ------------------------------------------------------------
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
    with pytest.raises(ValueError, match="cannot include zero"):
        jnp.geomspace(0, 10)
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
    check_all(jnp.array_split(np.arange(7, dtype=np.int32), [-1, 10]),
              np.array_split(np.arange(7, dtype=np.int32), [-1, 10]))
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


# ---- ufunc methods -------------------------------------------------------------------------
UFUNCS = ["add", "multiply", "subtract", "maximum", "minimum", "bitwise_and", "bitwise_or",
          "bitwise_xor", "logical_and", "logical_or", "logical_xor", "logaddexp",
          "logaddexp2"]


@pytest.mark.parametrize("name", UFUNCS)
def test_ufunc_methods_match_jax(name):
    u, ju = getattr(jnp, name), getattr(jjnp, name)
    assert isinstance(u, jnp.ufunc) and (u.nin, u.nout, u.identity) == (ju.nin, ju.nout,
                                                                         ju.identity)
    x = np.arange(1, 13).reshape(3, 4).astype(np.float32 if "log" in name else np.int32)
    if name.startswith("logical"):
        x = x % 3 == 0
    check(u.reduce(x), ju.reduce(x), rtol=1e-5)
    check(u.reduce(x, axis=1, keepdims=True), ju.reduce(x, axis=1, keepdims=True), rtol=1e-5)
    check(u.reduce(x, axis=None), ju.reduce(x, axis=None), rtol=1e-5)
    check(u.accumulate(x, axis=1), ju.accumulate(x, axis=1), rtol=1e-5)
    check(u.outer(x[0], x[1:]), ju.outer(x[0], x[1:]), rtol=1e-5)
    idx = np.array([0, 2, 1, 3])
    check(u.reduceat(x, idx, axis=1), ju.reduceat(x, idx, axis=1), rtol=1e-5)
    check(u.at(x, np.array([0, 0, 2]), x[0, 0], inplace=False),
          ju.at(x, np.array([0, 0, 2]), x[0, 0], inplace=False), rtol=1e-5)
    with pytest.raises(NotImplementedError, match="inplace"):
        u.at(x, 0, x[0, 0])


def test_ufunc_reduce_where_and_unary_at():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    where = x % 2 == 0
    check(jnp.add.reduce(x, axis=1, where=where), jjnp.add.reduce(x, axis=1, where=where))
    check(jnp.subtract.reduce(x, axis=0, initial=1.0, where=where),
          jjnp.subtract.reduce(x, axis=0, initial=1.0, where=where))
    with pytest.raises(ValueError, match="does not have an identity"):
        jnp.maximum.reduce(x, where=where)
    check(jnp.negative.at(x, (0, np.array([1, 1, 2])), inplace=False),
          jjnp.negative.at(x, (0, np.array([1, 1, 2])), inplace=False))
    check(mjax.jit(lambda x: jnp.subtract.accumulate(x))(x), jjnp.subtract.accumulate(x))
    check(jnp.add(x, 1), jjnp.add(x, 1))
    check(mjax.grad(lambda x: jnp.multiply.reduce(x, axis=None))(x[0] + 1),
          np.array([24.0, 12.0, 8.0, 6.0], np.float32))


# ---- more jax.numpy names (extras.py) --------------------------------------------------------
X = np.arange(12).reshape(3, 4)
R = np.random.default_rng(3).standard_normal((3, 6)).astype(np.float32)
EXTRAS = {
    "append": lambda m: m.append(X, np.arange(4)[None], axis=0),
    "append_flat": lambda m: m.append(X, 5),
    "delete": lambda m: m.delete(X, np.array([0, 2]), axis=1),
    "delete_slice": lambda m: m.delete(X, slice(1, None, 2), axis=0),
    "insert_scalar": lambda m: m.insert(X, 1, 99, axis=1),
    "insert_many": lambda m: m.insert(X, np.array([0, 2, 2]), np.array([7, 8, 9]), axis=1),
    "insert_flat": lambda m: m.insert(np.arange(5), np.array([1, 3]), np.array([10, 20])),
    "resize": lambda m: m.resize(np.arange(5), (3, 4)),
    "rollaxis": lambda m: m.rollaxis(np.zeros((2, 3, 4)), 2, 0),
    "tril_indices": lambda m: m.tril_indices(4, 1, 5),
    "triu_indices_from": lambda m: m.triu_indices_from(np.zeros((3, 5)), -1),
    "diag_indices": lambda m: m.diag_indices(3, 3),
    "diagflat": lambda m: m.diagflat(np.array([[1, 2], [3, 4]]), 1),
    "fill_diagonal": lambda m: m.fill_diagonal(np.zeros((3, 4)), np.array([1.0, 2.0]),
                                               inplace=False),
    "vander": lambda m: m.vander(np.array([1.0, 2.0, 3.0]), 4),
    "unravel_index": lambda m: m.unravel_index(np.array([3, 11, -1]), (3, 4)),
    "ravel_multi_index": lambda m: m.ravel_multi_index((np.array([1, 2]), np.array([3, 0])),
                                                       (3, 4)),
    "compress": lambda m: m.compress(np.array([True, False, True]), X, axis=0),
    "extract": lambda m: m.extract(X % 3 == 0, X),
    "choose": lambda m: m.choose(np.array([0, 1, 2, 1]), [np.arange(4), np.arange(4) * 10,
                                                          np.arange(4) * 100]),
    "piecewise": lambda m: m.piecewise(np.linspace(-2, 2, 5), [np.linspace(-2, 2, 5) < 0,
                                                               np.linspace(-2, 2, 5) > 0],
                                       [lambda v: -v, lambda v: v * 2, 7.0]),
    "partition": lambda m: m.partition(np.array([[3, 1, 4, 1, 5, 9, 2, 6]]), 3),
    "argpartition": lambda m: m.argpartition(np.array([[3, 1, 4, 1, 5, 9, 2, 6]]).T, 3, axis=0),
    "cov": lambda m: m.cov(R),
    "cov_weighted": lambda m: m.cov(R.T, rowvar=False, aweights=np.arange(1, 7.0), ddof=0),
    "corrcoef": lambda m: m.corrcoef(R),
    "trapezoid": lambda m: m.trapezoid(np.arange(6.0).reshape(2, 3) ** 2, dx=0.5),
    "trapezoid_x": lambda m: m.trapezoid(np.array([1.0, 2, 4]), x=np.array([0.0, 1, 3])),
    "gradient": lambda m: m.gradient(np.arange(12.0).reshape(3, 4) ** 2),
    "gradient_coords": lambda m: m.gradient(np.array([1.0, 4, 9, 16]), np.array([0.0, 1, 3, 4])),
    "windows": lambda m: (m.bartlett(5), m.blackman(6), m.hamming(4), m.hanning(1)),
    "spacing": lambda m: m.spacing(np.array([1.0, -2.0, 0.5], np.float32)),
    "cumulative_prod": lambda m: m.cumulative_prod(np.arange(1, 5), include_initial=True),
    "block": lambda m: m.block([[np.eye(2), np.zeros((2, 1))], [np.ones((1, 2)), np.ones((1, 1))]]),
    "sets": lambda m: (m.union1d(np.array([3, 1, 2]), np.array([2, 5])),
                       m.setdiff1d(np.array([3, 1, 2, 7]), np.array([2, 5])),
                       m.setdiff1d(np.array([3, 1, 2, 7]), np.array([2, 5]), size=4,
                                   fill_value=0),
                       *m.intersect1d(np.array([3, 1, 2, 7]), np.array([2, 7, 5]),
                                      return_indices=True),
                       m.setxor1d(np.array([3, 1, 2, 7]), np.array([2, 7, 5]))),
    "unique_all": lambda m: tuple(m.unique_all(np.array([3, 1, 3, 2]))),
    "polys": lambda m: (m.polyadd(np.array([1.0, 2]), np.array([3.0, 4, 5])),
                        m.polysub(np.array([1.0, 2]), np.array([3.0, 4, 5])),
                        m.polymul(np.array([1.0, 2]), np.array([3.0, 4, 5])),
                        m.polyder(np.array([1.0, 2, 3, 4]), 2),
                        m.polyint(np.array([1.0, 2, 3]), 2, k=np.array([1.0, 2.0])),
                        m.poly(np.array([1.0, 2, 3]))),
    "histogram_bin_edges": lambda m: m.histogram_bin_edges(np.array([1.0, 2, 5]), 4),
    "grids": lambda m: (m.mgrid[0:3, 0:4:2], *m.ogrid[0:3, 0:1:5j]),
    "concatenators": lambda m: (m.r_[np.array([1, 2]), 0, np.array([3])],
                                m.c_[np.array([1, 2]), np.array([3, 4])], m.r_[0:4, 7]),
    "unstack": lambda m: m.unstack(X, axis=1),
    "apply_along_axis": lambda m: m.apply_along_axis(lambda v: v.sum() * 2, 1,
                                                     np.arange(24.0).reshape(2, 3, 4)),
    "apply_over_axes": lambda m: m.apply_over_axes(m.sum, np.arange(24.0).reshape(2, 3, 4),
                                                   [0, 2]),
    "sort_complex": lambda m: m.sort_complex(np.array([3, 1, 2])),
    "trim_zeros": lambda m: m.trim_zeros(np.array([0, 0, 1, 2, 0])),
    "fromfunction": lambda m: m.fromfunction(lambda i, k: i * 10 + k, (2, 3), dtype=np.float32),
}


@pytest.mark.parametrize("name", sorted(EXTRAS))
def test_more_numpy_names_match_jax(name):
    got, want = EXTRAS[name](jnp), EXTRAS[name](jjnp)
    check_all(got, want, rtol=1e-5, atol=1e-6)


def test_more_numpy_names_errors():
    with pytest.raises(NotImplementedError, match="inplace=False"):
        jnp.fill_diagonal(np.zeros((2, 2)), 1.0)
    with pytest.raises(ValueError, match="kth"):
        jnp.partition(np.arange(3), 5)
    assert jnp.array_equiv(np.ones((2, 3)), np.ones(3))
    assert not jnp.array_equiv(np.ones((2, 3)), np.ones(2))
    assert jnp.isrealobj(np.ones(2)) and not jnp.isrealobj(np.ones(2, np.complex64))
    assert jnp.s_[1:2] == slice(1, 2) and jnp.index_exp[1] == (1,)
    assert jnp.euler_gamma == np.euler_gamma


UPDATES = {
    "put": lambda m: m.put(X, np.array([0, 5, 30]), np.array([-1, -2]), inplace=False),
    "put_wrap": lambda m: m.put(X, np.array([0, 13]), 9, mode="wrap", inplace=False),
    "put_along_axis": lambda m: m.put_along_axis(X, np.array([[1], [0], [3]]), 99, axis=1,
                                                 inplace=False),
    "put_along_axis0": lambda m: m.put_along_axis(X, np.array([[2, 0, 1, 1]]),
                                                  np.array([[7, 8, 9, 10]]), axis=0,
                                                  inplace=False),
    "place": lambda m: m.place(X, X % 2 == 0, np.array([100, 200]), inplace=False),
    "kron": lambda m: (m.kron(np.array([[1, 2], [3, 4]]), np.array([[0, 1], [1, 0], [2, 2]])),
                       m.kron(np.array([1, 2]), np.ones((2, 2, 3)))),
    "ix_": lambda m: m.ix_(np.array([0, 2]), np.array([1, 3, 0])),
    "unwrap": lambda m: (m.unwrap(np.array([0.0, 3.0, 6.5, 0.2, -3.5, 10.0])),
                         m.unwrap(np.array([[0, 7, 1, 9]]), period=8, axis=1),
                         m.unwrap(np.array([0.0, 1.0, 5.0]), discont=2.0)),
    "mask_indices": lambda m: m.mask_indices(3, m.triu, 1),
}


@pytest.mark.parametrize("name", sorted(UPDATES))
def test_put_place_kron_unwrap_match_jax(name):
    check_all(UPDATES[name](jnp), UPDATES[name](jjnp))


def test_unwrap_odd_integer_period_matches_numpy():
    x = np.array([0, 5, 1, 12, -3], np.int32)  # (jax 0.10.2 departs from NumPy here)
    check(jnp.unwrap(x, period=7), np.unwrap(x, period=7))
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.put(X, 0, 1)


def test_frexp_i0_kaiser():
    x = np.array([0.0, -0.0, 1.0, -3.5, 1e-40, 2.0 ** -130, np.inf, -np.inf, np.nan, 6e20,
                  0.75], np.float32)
    check_all(jnp.frexp(x), np.frexp(x))             # subnormals too (integer bit ops)
    check_all(jnp.frexp(x[:4].astype(np.float16)), jjnp.frexp(x[:4].astype(np.float16)))
    check_all(jnp.frexp(np.arange(5)), jjnp.frexp(np.arange(5)))
    v = np.array([0.0, 0.1, -1.0, 2.5, 10.0, 29.9, 30.1, 50.0, 85.0], np.float32)
    check(jnp.i0(v), jjnp.i0(v), rtol=2e-5)
    check(jnp.kaiser(12, 8.6), jjnp.kaiser(12, 8.6), rtol=2e-5)
    check(mjax.grad(jnp.i0)(np.float32(2.0)), np.float32(1.5906369), rtol=1e-5)  # I1(2)
