"""median/quantile/percentile (all of JAX's methods, NaN-ignoring twins, weights)
against jax.numpy."""
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
