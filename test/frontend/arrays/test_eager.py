"""Eager mode: each op compiles once per (op, params, avals) and runs on mjax Arrays."""
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax.arrays import eager

import jax  # noqa: E402  (the test-only oracle: missing, these tests fail)
from frontend_util import ON_TPU  # noqa: E402


def test_eager_op_compiles_once_per_avals():
    x = jnp.full((7, 3), 2.0)           # a shape no other test uses
    before = len(eager._CACHE)
    y = jnp.sin(x)
    after_first = len(eager._CACHE)
    assert after_first > before
    jnp.sin(jnp.ones((7, 3)))
    jnp.sin(x + 0)                       # `+ 0` compiles an add, sin is cached
    n = len(eager._CACHE)
    jnp.sin(jnp.ones((7, 3)))
    assert len(eager._CACHE) == n
    z = jnp.ones((7, 4))
    n = len(eager._CACHE)
    jnp.sin(z)                           # new aval: one more executable
    assert len(eager._CACHE) == n + 1
    jnp.sin(z)
    assert len(eager._CACHE) == n + 1
    np.testing.assert_allclose(y, np.sin(np.full((7, 3), 2.0, np.float32)), rtol=1e-6)


def test_eager_results_are_arrays_with_weak_types_like_jax():
    cases = [lambda m: m.numpy.asarray(1.0) * 2, lambda m: m.numpy.asarray(2) + 1.5,
             lambda m: m.numpy.ones(2, np.int8) * 3, lambda m: m.numpy.float32(3) + 1,
             lambda m: m.numpy.int16(3) * m.numpy.uint8(2), lambda m: 2 ** m.numpy.arange(3),
             lambda m: m.numpy.sqrt(4), lambda m: m.numpy.arange(3) / 2,
             lambda m: m.numpy.zeros(2, m.numpy.bfloat16) + 1.0]
    for make in cases:
        got, want = make(mjax), make(jax)
        assert isinstance(got, mjax.Array)
        assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type), make
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64))


def test_scalar_types_are_callable_dtypes():
    x = jnp.float32(3)
    assert isinstance(x, mjax.Array) and x.dtype == np.float32 and not x.weak_type
    assert np.dtype(jnp.int8) == np.int8 and jnp.zeros(2, jnp.uint16).dtype == np.uint16
    assert jnp.ones(2).dtype == jnp.float32
    np.testing.assert_array_equal(jnp.int32(np.array([1.7, -2.2])), [1, -2])
    assert repr(jnp.float32) == "<class 'mjax.numpy.float32'>"


def test_eager_matches_jit_and_disable_jit():
    def f(x):
        return jnp.cumsum(jnp.exp(x) - x ** 2, axis=0)[::-1] @ jnp.ones(x.shape[1])
    x = np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32)
    want = (np.cumsum(np.exp(x) - x ** 2, axis=0)[::-1]) @ np.ones(3)
    np.testing.assert_allclose(f(jnp.asarray(x)), want, rtol=1e-5)
    np.testing.assert_allclose(mjax.jit(f)(x), want, rtol=1e-5)
    with mjax.disable_jit():
        np.testing.assert_allclose(mjax.jit(f)(x), want, rtol=1e-5)


def test_eager_x64():
    from frontend_util import x64
    with x64(True):
        x = jnp.arange(3) * 2 ** 40
        assert x.dtype == np.int64
        np.testing.assert_array_equal(x, np.arange(3) * 2 ** 40)
        y = jnp.asarray(1.0) / 3
        # (a TPU has no float64 unit: XLA emulates it there, and JAX's quotient is the one
        # to have; on the CPU it is IEEE's)
        want = float(jax.numpy.asarray(1.0) / 3) if ON_TPU else 1 / 3
        assert y.dtype == np.float64 and float(y) == want
    assert (jnp.arange(3) * 2).dtype == np.int32


def test_python_int_overflow_is_an_error():
    with pytest.raises(OverflowError):
        jnp.asarray(2 ** 40) + 1


ALIASES = [("acos", "arccos", 0.3), ("atan2", "arctan2", (0.3, -0.7)),
           ("pow", "power", (2.0, 3.0)), ("bitwise_left_shift", "left_shift", (3, 2)),
           ("concat", "concatenate", ([np.ones(2, np.float32)], ))]


@pytest.mark.parametrize("alias,name,args", ALIASES, ids=[a[0] for a in ALIASES])
def test_array_api_aliases(alias, name, args):
    args = args if isinstance(args, tuple) else (args,)
    np.testing.assert_allclose(getattr(jnp, alias)(*args), getattr(jnp, name)(*args))


def test_small_composites_match_numpy():
    a = np.array([[1.0, -np.inf, np.nan], [3.0, 0.5, np.inf]], np.float32)
    np.testing.assert_array_equal(jnp.nan_to_num(a), np.nan_to_num(a))
    np.testing.assert_array_equal(jnp.isposinf(a), np.isposinf(a))
    i = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(jnp.roll(i, -1, 1), np.roll(i, -1, 1))
    np.testing.assert_array_equal(jnp.roll(i, 5), np.roll(i, 5))
    np.testing.assert_array_equal(jnp.diff(i ** 2, 2, axis=1), np.diff(i ** 2, 2, axis=1))
    for g, w in zip(jnp.meshgrid(np.arange(2), np.arange(3), indexing="xy"),
                    np.meshgrid(np.arange(2), np.arange(3), indexing="xy")):
        np.testing.assert_array_equal(g, w)
    for g, w in zip(jnp.meshgrid(np.arange(2), np.arange(3), np.arange(4), indexing="ij"),
                    np.meshgrid(np.arange(2), np.arange(3), np.arange(4), indexing="ij")):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(jnp.count_nonzero(i % 3, axis=0), np.count_nonzero(i % 3, 0))
    np.testing.assert_array_equal(jnp.ptp(i, axis=1), np.ptp(i, axis=1))
    np.testing.assert_array_equal(jnp.bitwise_count(np.array([7, -3, 0], np.int32)),
                                  np.bitwise_count(np.array([7, -3, 0], np.int32)))
    f, w = jnp.modf(np.array([1.5, -2.25], np.float32))
    np.testing.assert_array_equal(f, [0.5, -0.25])
    np.testing.assert_array_equal(w, [1.0, -2.0])
    # (a TPU's log2 and exp2 are not the host's: there JAX's value on the chip is the one)
    want = jax.numpy.logaddexp2(1.0, 2.0) if ON_TPU else np.logaddexp2(1.0, 2.0)
    np.testing.assert_allclose(jnp.logaddexp2(1.0, 2.0), want, rtol=1e-6)
    assert jnp.atleast_3d(np.ones(2)).shape == np.atleast_3d(np.ones(2)).shape
    np.testing.assert_array_equal(jnp.cumulative_sum(np.arange(4), include_initial=True),
                                  [0, 0, 1, 3, 6])
