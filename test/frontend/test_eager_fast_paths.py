"""The eager hot path's shortcuts (same-dtype promotion, cached scalar constants) give
exactly JAX's dtypes, weak types and values, and keep the debug/config behaviour."""
import math
import operator

import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax import eager
from mjax.numpy import promotion as mnp_module  # (the scalar-constant cache)

import jax  # noqa: E402  (the test-only oracle)
import jax.numpy as jjnp

_ARRAYS = [("float32", [1.5, -2.0, 0.0]), ("int32", [1, -2, 7]), ("int8", [1, -2, 7]),
           ("uint8", [1, 2, 7]), ("bool", [True, False, True]), ("float16", [1.5, -2.0, 0.5]),
           ("bfloat16", [1.5, -2.0, 0.5]), ("complex64", [1 + 1j, -2, 0.5j])]
_SCALARS = [1, 2.5, -0.0, 0.0, True, 1 + 2j, -3]


def _same(got, want, signs=True):
    assert isinstance(got, mjax.Array)
    # (JAX marks a comparison of two weak operands weak; mjax's bools are never weak, a
    # difference older than these shortcuts and not on this path.)
    weak_ok = got.weak_type == want.weak_type or (got.dtype == bool and want.weak_type)
    assert (got.dtype, got.shape) == (want.dtype, want.shape) and weak_ok
    g, w = np.asarray(got), np.asarray(want)
    if g.dtype.kind in "fc" or str(g.dtype) == "bfloat16":
        g, w = g.astype(np.complex128), w.astype(np.complex128)
        np.testing.assert_allclose(g, w, rtol=1e-2)
        # signs of zeros too (x + -0.0 keeps -0.0, x + 0.0 does not)
        assert not signs or [math.copysign(1, v) for v in g.real.ravel()] == [
            math.copysign(1, v) for v in w.real.ravel()]
    else:
        np.testing.assert_array_equal(g, w)


def _both(fn, *args):
    try:
        want = fn(jjnp, *args)
    except Exception as e:   # noqa: BLE001 (the oracle's error class must be ours too)
        with pytest.raises(Exception) as ours:
            fn(jnp, *args)
        # (by name: jax.dtypes.TypePromotionError is mjax.dtypes.TypePromotionError here)
        assert type(ours.value).__name__ == type(e).__name__, (ours.value, e)
        return None, None
    return fn(jnp, *args), want


@pytest.mark.parametrize("dtype,values", _ARRAYS)
def test_array_with_python_scalar_matches_jax_both_orders_twice(dtype, values):
    for scalar in _SCALARS:
        # (truediv runs as one jit program with the scalar static: not this path)
        for op in (operator.add, operator.sub, operator.mul, operator.lt, operator.eq,
                   jnp.maximum):
            if op is operator.lt and (isinstance(scalar, complex) or dtype == "complex64"):
                continue  # (complex ordering: another matter than this path)
            for reflected in (False, True):
                def fn(m, s=scalar, op=op, reflected=reflected):
                    x = m.asarray(np.array(values, dtype=jnp.dtype(dtype)))
                    if op is jnp.maximum:
                        op = m.maximum
                    return op(s, x) if reflected else op(x, s)
                for _ in range(2):          # the second call hits the constant cache
                    got, want = _both(fn)
                    if got is not None:
                        # (bool * -0.0: JAX's False * -0.0 is 0.0, an older difference
                        # of the multiply itself)
                        _same(got, want, signs=dtype != "bool")


@pytest.mark.parametrize("x64", [False, True])
def test_scalar_constants_follow_x64(x64):
    with mjax.config.override(jax_enable_x64=x64), jax.enable_x64(x64):
        for dtype in ("int32", "float32", "int64", "float64", "uint8"):
            for scalar in (3, 0.5, True):
                got = jnp.asarray(np.arange(3, dtype=dtype)) * scalar
                want = jjnp.asarray(np.arange(3, dtype=dtype)) * scalar
                _same(got, want)


def test_weak_arrays_and_scalar_constants_like_jax():
    for make in (lambda m: m.asarray(2.0) + 1, lambda m: m.asarray(2) * 1.5,
                 lambda m: 1.0 - m.asarray(3), lambda m: m.ones(3) * 2,
                 lambda m: m.asarray(2) - m.asarray(5), lambda m: m.sin(m.asarray(1.0)),
                 lambda m: m.asarray(1) + m.asarray(2.0)):
        _same(make(jnp), make(jjnp))


def test_same_dtype_fast_path_matches_jax():
    for dtype in ("float32", "int32", "int8", "bool", "float16", "complex64", "uint32"):
        a = np.array([1, 0, 3], dtype=dtype)
        b = np.array([2, 1, 1], dtype=dtype)
        for fn in (lambda m, x, y: x * y, lambda m, x, y: x + y, lambda m, x, y: x != y if np.dtype(dtype).kind == "c" else x < y,
                   lambda m, x, y: m.maximum(x, y), lambda m, x, y: m.sin(x) if
                   np.dtype(dtype).kind in "fc" else x - y,
                   lambda m, x, y: x / y, lambda m, x, y: m.arctan2(x, y) if
                   np.dtype(dtype).kind == "f" else x == y):
            got, want = _both(lambda m: fn(m, m.asarray(a), m.asarray(b)))
            if got is not None:
                _same(got, want)


def test_sixty_four_bit_arrays_after_x64_is_turned_off_are_narrowed():
    with mjax.config.override(jax_enable_x64=True):
        x = jnp.asarray(np.arange(3.0))
        assert x.dtype == np.float64
    # Promotion canonicalizes, as before the fast path: the product computes in float32.
    assert (x * x).dtype == np.float32 and (x + 1.0).dtype == np.float32
    with mjax.config.override(jax_enable_x64=True):
        assert (x * x).dtype == np.float64


def test_python_int_out_of_range_still_raises():
    x = jnp.arange(3)
    with pytest.raises(OverflowError):
        x + 2 ** 40
    with pytest.raises(OverflowError):
        2 ** 40 * x


def test_cached_constant_never_reaches_the_user():
    x = jnp.arange(4.0)
    a = x + 1.0
    b = x + 1.0
    assert a is not b
    # Deleting results (or donating them) cannot break later ops with the same scalar.
    a.delete()
    b.delete()
    np.testing.assert_array_equal(x + 1.0, np.arange(4.0) + 1)
    for const in mnp_module._SCALAR_CONSTS.values():
        assert const is not a and const is not b


def test_scalar_constant_cache_is_bounded():
    x = jnp.arange(3.0)
    for k in range(mnp_module._SCALAR_CONSTS_MAX + 20):
        x + float(k)
    assert len(mnp_module._SCALAR_CONSTS) <= mnp_module._SCALAR_CONSTS_MAX
    big = jnp.zeros(mnp_module._SCALAR_CONST_MAX_SIZE + 1)
    n = len(mnp_module._SCALAR_CONSTS)
    np.testing.assert_array_equal(big + 123.25, np.full(big.shape, 123.25))
    assert not any(k[1] == 123.25 for k in mnp_module._SCALAR_CONSTS) or \
        len(mnp_module._SCALAR_CONSTS) == n


def test_nan_scalars_and_debug_nans_as_before():
    x = jnp.arange(3.0)
    assert np.isnan(np.asarray(x + float("nan"))).all()
    assert np.isnan(np.asarray(x * jnp.nan)).all()
    with mjax.config.override(jax_debug_nans=True):
        x + 1.0                                 # fine: no NaN
        with pytest.raises(FloatingPointError):
            x + float("nan")
        with pytest.raises(FloatingPointError):
            x * jnp.nan
        with pytest.raises(FloatingPointError):
            jnp.log(-x)
    with mjax.config.override(jax_debug_infs=True):
        with pytest.raises(FloatingPointError):
            x + float("inf")
        with pytest.raises(FloatingPointError):
            x / 0.0


def test_disable_jit_and_tracing_still_stage_scalars():
    x = jnp.arange(3.0)
    with mjax.disable_jit():
        np.testing.assert_array_equal(x + 2.0, [2, 3, 4])
    text = str(mjax.make_jaxpr(lambda v: v + 2.0)(x))
    assert "add" in text and "2.0" in text


def test_eager_cache_key_includes_default_device():
    x = jnp.arange(3.0)
    cpu = mjax.devices("cpu")[0]
    with mjax.default_device(cpu):
        y = x * x + 1.0
    assert y.devices() == {cpu}
    np.testing.assert_array_equal(y, np.arange(3.0) ** 2 + 1)
    n = len(eager._CACHE)
    x * x
    assert len(eager._CACHE) >= n


def test_fused_jnp_functions_plain_arguments_path_matches_jax():
    a = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    for fn in (lambda m, x: m.sum(x), lambda m, x: x.sum(), lambda m, x: x.sum(0),
               lambda m, x: m.sum(x, axis=1, keepdims=True), lambda m, x: m.max(x, 1),
               lambda m, x: m.mean(x, axis=None), lambda m, x: m.sum(x, dtype="int32"),
               lambda m, x: m.nonzero(x > 0)[1], lambda m, x: m.cumsum(x, axis=-1)):
        want = fn(jjnp, jjnp.asarray(a))
        for _ in range(2):                   # the second call takes the cached program
            got = fn(jnp, jnp.asarray(a))
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    with mjax.disable_jit():
        np.testing.assert_allclose(jnp.sum(jnp.asarray(a)), a.sum())
        np.testing.assert_allclose(jnp.sum(jnp.asarray(a), axis=0), a.sum(0))


def test_scalar_constants_follow_the_promotion_mode():
    for mode in ("standard", "strict", "standard"):
        with mjax.config.override(jax_numpy_dtype_promotion=mode), \
                jax.numpy_dtype_promotion(mode):
            for dtype, scalar in (("float32", 1.5), ("int32", 2), ("int32", 1.5),
                                  ("uint8", 3), ("bfloat16", 2.0)):
                def fn(m, dtype=dtype, scalar=scalar):
                    return m.asarray(np.arange(3), dtype=dtype) * scalar
                got, want = _both(fn)
                if got is not None:
                    _same(got, want)


def test_fused_functions_tell_apart_equal_static_scalars():
    """jnp functions that run as one jit program when eager pass Python scalars as static
    arguments; 1, 1.0 and True (result dtypes) and 0.0 and -0.0 (signs) compare equal but
    must not share a compiled program."""
    x, i = np.arange(1., 4., dtype=np.float32), np.arange(3, dtype=np.int32)
    calls = [lambda m: m.divide(x, 0.0), lambda m: m.divide(x, -0.0),
             lambda m: m.copysign(x, 0.0), lambda m: m.copysign(x, -0.0),
             lambda m: m.where(i > 0, i, 1.0), lambda m: m.where(i > 0, i, 1),
             lambda m: m.where(i > 0, i, True), lambda m: m.power(i, 2),
             lambda m: m.power(i, 2.0), lambda m: m.clip(i, 1, 2),
             lambda m: m.clip(i, 1.0, 2.0), lambda m: m.clip(i, min=1),
             lambda m: m.clip(i, min=1.0), lambda m: m.heaviside(x - 1, 0.0),
             lambda m: m.heaviside(x - 1, -0.0), lambda m: m.heaviside(x - 1, float("nan"))]
    for call in calls:
        got, want = call(jnp), call(jax.numpy)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        np.testing.assert_array_equal(got, want)
