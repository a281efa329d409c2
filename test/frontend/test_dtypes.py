"""Type promotion and weak types against real JAX (the test-only oracle)."""
import itertools

import numpy as np
import pytest

import mjax
import mjax.numpy as jnp

jax = pytest.importorskip("jax")
jjnp = jax.numpy

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, jnp.bfloat16, np.float16, np.float32, np.float64, np.complex64,
          np.complex128]
SCALARS = [True, 3, 2.5, 1 + 2j]


def _zeros(lib, dt):
    return lib.zeros((2,), dtype=dt)


def test_result_type_grid_of_dtypes(x64_mode):
    for a, b in itertools.product(DTYPES, DTYPES):
        want = jjnp.result_type(a, b)
        got = jnp.result_type(a, b)
        assert np.dtype(got) == np.dtype(want), (a, b, x64_mode)


def test_result_type_arrays_and_python_scalars(x64_mode):
    for a in DTYPES:
        for s in SCALARS:
            want = jjnp.result_type(_zeros(jjnp, a), s)
            got = jnp.result_type(_zeros(jnp, a), s)
            assert np.dtype(got) == np.dtype(want), (a, s, x64_mode)


@pytest.mark.parametrize("a", [np.int8, np.uint8, np.int32, np.float16, jnp.bfloat16,
                               np.float32, np.complex64])
@pytest.mark.parametrize("s", [True, 3, 2.5, 1 + 2j])
def test_binary_op_output_dtype_and_weak_type(a, s, x64_mode):
    jx, mx = _zeros(jjnp, a), _zeros(jnp, a)
    want = jjnp.add(jx, s)
    got = jnp.add(mx, s)
    assert got.dtype == want.dtype
    assert got.weak_type == want.weak_type
    want2 = jjnp.multiply(s, jx)
    got2 = mx.__rmul__(s)
    assert got2.dtype == want2.dtype


@pytest.mark.parametrize("s1,s2", list(itertools.product(SCALARS, SCALARS)))
def test_scalar_scalar_promotion_is_weak(s1, s2, x64_mode):
    want = jjnp.add(s1, s2)
    got = jnp.add(s1, s2)
    assert got.dtype == want.dtype
    assert got.weak_type == want.weak_type


def test_weak_type_propagates_through_jit(x64_mode):
    f = lambda x: x * 2  # noqa: E731
    got = mjax.jit(f)(3.0)
    want = jax.jit(f)(3.0)
    assert got.dtype == want.dtype and got.weak_type == want.weak_type
    got = mjax.jit(f)(np.float32(3.0))
    assert got.dtype == np.float32 and not got.weak_type


@pytest.mark.parametrize("fn", ["sin", "sqrt", "exp", "true_divide", "arctan2", "mean"])
@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.int32, np.uint16, np.float16,
                                np.float32])
def test_inexact_functions_promote_ints_to_float(fn, dt, x64_mode):
    args = (1,) if fn not in ("true_divide", "arctan2") else (2,)
    jx = jjnp.ones((3,), dt)
    mx = jnp.ones((3,), dt)
    want = getattr(jjnp, fn)(*([jx] * args[0]))
    got = getattr(jnp, fn)(*([mx] * args[0]))
    assert got.dtype == want.dtype, (fn, dt)


@pytest.mark.parametrize("fn", ["sum", "prod", "max", "argmax", "cumsum", "mean"])
@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.float16])
def test_reduction_dtypes(fn, dt, x64_mode):
    want = getattr(jjnp, fn)(jjnp.ones((2, 3), dt), axis=0)
    got = getattr(jnp, fn)(jnp.ones((2, 3), dt), axis=0)
    assert got.dtype == want.dtype, (fn, dt)


def test_x64_canonicalizes_creation(x64_mode):
    for make in (lambda m: m.arange(3), lambda m: m.zeros(2), lambda m: m.array([1.5]),
                 lambda m: m.asarray(np.arange(3, dtype=np.int64)),
                 lambda m: m.array(3), lambda m: m.linspace(0, 1, 3),
                 lambda m: m.full((2,), 7), lambda m: m.eye(2, dtype=np.int64)):
        want, got = make(jjnp), make(jnp)
        assert got.dtype == want.dtype, (make, x64_mode)
        assert got.weak_type == want.weak_type, (make, x64_mode)


def test_x64_changes_jit_trace():
    from frontend_util import x64
    traces = []

    @mjax.jit
    def f(x):
        traces.append(1)
        return x + 1

    with x64(False):
        assert f(1).dtype == np.int32
    with x64(True):
        assert f(1).dtype == np.int64
    assert len(traces) == 2


def test_promote_types_and_incompatible_key():
    assert jnp.promote_types(np.int8, np.uint8) == np.int16
    assert jnp.promote_types(np.float16, jnp.bfloat16) == np.float32
