"""jnp.ufunc methods (reduce, accumulate, reduceat, outer, at) against jax.numpy."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
import mjax
import mjax.numpy as jnp
from frontend_util import check


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


def test_sinc_has_every_derivative_at_zero():
    # d^k/dx^k sinc(0) = pi^k (-1)^(k/2) / (k + 1) for even k, 0 for odd k (as JAX's)
    f_m, f_j = mjax.numpy.sinc, jax.numpy.sinc
    for k in range(1, 6):
        f_m, f_j = mjax.grad(f_m), jax.grad(f_j)
        expected = 0.0 if k % 2 else np.pi ** k * (-1) ** (k // 2) / (k + 1)
        np.testing.assert_allclose(f_m(0.0), expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(f_m(0.3), f_j(0.3), rtol=2e-4)


def test_docstring_fixes_match_jax():
    # (found by running JAX's docstring examples: bartlett, isscalar of a 0-d NumPy
    # array, polyder's inexact result, take_along_axis filling out-of-range indices)
    x = np.array([[1., 2., 3.], [4., 5., 6.]], np.float32)
    cases = [lambda n: n.bartlett(4), lambda n: n.polyder(n.array([2, -5, 3, -1]), m=2),
             lambda n: n.take_along_axis(x, n.array([[1, 0, 2]]), axis=0),
             lambda n: n.take_along_axis(n.arange(3), n.array([5, -1]), axis=0)]
    for case in cases:
        mine, theirs = case(jnp), case(jjnp)
        assert mine.dtype == theirs.dtype
        np.testing.assert_allclose(mine, theirs, rtol=1e-6)
    assert jnp.isscalar(np.array(1.0)) and not jnp.isscalar(np.array([1.0]))
