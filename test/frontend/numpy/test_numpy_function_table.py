"""A table of jax.numpy functions (insertion/deletion, index helpers, statistics, windows,
set operations, polynomials, index tricks, in-place-style updates, frexp, i0, kaiser),
each checked against jax.numpy."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
import mjax
import mjax.numpy as jnp
from frontend_util import check


def check_all(got, want, **kw):
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want), (len(got), len(want))
    for g, w in zip(got, want):
        check(g, w, **kw)


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
    normal = np.abs(x) >= np.finfo(np.float32).tiny
    check_all(jnp.frexp(x[normal]), np.frexp(x[normal]))
    # (subnormals: JAX's, which XLA's CPU flushes, not NumPy's; test_fuzz_regressions.py)
    check_all(jnp.frexp(x), jjnp.frexp(x))
    check_all(jnp.frexp(x[:4].astype(np.float16)), jjnp.frexp(x[:4].astype(np.float16)))
    check_all(jnp.frexp(np.arange(5)), jjnp.frexp(np.arange(5)))
    # The mantissa's derivative is 2**-exponent (JAX: a custom JVP), 1 at 0, inf and NaN.
    m_grad = mjax.vmap(mjax.grad(lambda a: jnp.frexp(a)[0]))(x)
    check(m_grad[normal], np.where(np.isfinite(x) & (x != 0), 2.0 ** -np.frexp(x)[1], 1.0)
          .astype(np.float32)[normal], rtol=0)
    check(m_grad, np.asarray(jax.vmap(jax.grad(lambda a: jjnp.frexp(a)[0]))(x)), rtol=0)
    v = np.array([0.0, 0.1, -1.0, 2.5, 10.0, 29.9, 30.1, 50.0, 85.0], np.float32)
    check(jnp.i0(v), jjnp.i0(v), rtol=2e-5)
    check(jnp.kaiser(12, 8.6), jjnp.kaiser(12, 8.6), rtol=2e-5)
    check(mjax.grad(jnp.i0)(np.float32(2.0)), np.float32(1.5906369), rtol=1e-5)  # I1(2)


def test_fmax_fmin_gradients_on_ties_and_nans_match_jax():
    # JAX selects x2 on ties (its gradient goes to x2) and the non-NaN operand otherwise.
    x = np.array([1.0, 2.0, np.nan, 3.0, -0.0], np.float32)
    y = np.array([1.0, 3.0, 1.0, np.nan, 0.0], np.float32)
    for name in ("fmax", "fmin"):
        got = mjax.grad(lambda a, b: getattr(jnp, name)(a, b).sum(), (0, 1))(x, y)
        want = jax.grad(lambda a, b: getattr(jjnp, name)(a, b).sum(), (0, 1))(x, y)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        np.testing.assert_array_equal(np.asarray(getattr(jnp, name)(x, y)),
                                      np.asarray(getattr(jjnp, name)(x, y)))
