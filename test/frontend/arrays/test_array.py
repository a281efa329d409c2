"""mjax.Array: host conversion, DLPack, devices, repr like JAX's, Python protocols."""
import os
import pickle

import numpy as np
import pytest

import mjax
import mjax.numpy as jnp

import jax  # noqa: E402  (the test-only oracle: missing, these tests fail)
import jax.dlpack  # noqa: E402
import ml_dtypes  # noqa: E402
from frontend_util import ON_TPU  # noqa: E402


def test_array_protocols():
    x = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(x), np.arange(6.0).reshape(2, 3))
    assert np.asarray(x, dtype=np.int64).dtype == np.int64
    if not ON_TPU:
        np.testing.assert_array_equal(np.from_dlpack(x), np.asarray(x))
    else:   # (a TPU's buffer is no DLPack device: NumPy's import fails as jax's does)
        jx = jax.numpy.arange(6.0).reshape(2, 3)
        assert _failure(lambda: np.from_dlpack(x)) == _failure(lambda: np.from_dlpack(jx))
        assert _failure(x.__dlpack_device__) == _failure(jx.__dlpack_device__)
    assert x.block_until_ready() is x
    assert mjax.block_until_ready({"a": x})["a"] is x
    assert x.devices() == {mjax.devices()[0]}
    assert x.sharding is not None and mjax.devices()[0] in x.sharding.device_set
    assert x[1, 2].item() == 5.0 and isinstance(x[1, 2].item(), float)
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert len(x) == 2 and [r.shape for r in x] == [(3,), (3,)]
    np.testing.assert_array_equal(list(x)[1], [3, 4, 5])
    assert x.ndim == 2 and x.size == 6 and x.shape == (2, 3) and x.dtype == np.float32


def _failure(run):
    """The exception class and message `run()` raises (None: it raised nothing)."""
    try:
        run()
    except Exception as e:      # noqa: BLE001 - what is compared
        return type(e).__name__, str(e)
    return None


def test_scalar_conversions():
    assert bool(jnp.asarray(1.0)) is True and bool(jnp.zeros(())) is False
    assert int(jnp.asarray(3.7)) == 3 and float(jnp.asarray(2)) == 2.0
    assert complex(jnp.asarray(1 + 2j)) == 1 + 2j
    assert [10, 20, 30][jnp.asarray(1)] == 20
    with pytest.raises(ValueError, match="ambiguous"):
        bool(jnp.ones(2))
    with pytest.raises(TypeError):
        hash(jnp.ones(2))
    with pytest.raises(TypeError):
        len(jnp.asarray(1.0))
    with pytest.raises(TypeError):
        iter(jnp.asarray(1.0))


@pytest.mark.parametrize("make", [
    lambda m: m.numpy.arange(4.0), lambda m: m.numpy.array([1, 2, 3]),
    lambda m: m.numpy.asarray(2.5), lambda m: m.numpy.zeros((2, 2), np.int8),
    lambda m: m.numpy.array([True, False]), lambda m: m.numpy.asarray(3),
    lambda m: m.numpy.arange(12.0).reshape(3, 4) * 0.37,
    lambda m: m.numpy.array([1 + 2j]), lambda m: m.numpy.ones(3, m.numpy.bfloat16),
])
def test_repr_like_jax(make):
    assert repr(make(mjax)) == repr(make(jax))
    assert str(make(mjax)) == str(make(jax))


def test_device_put_and_devices():
    devs = mjax.devices()
    assert len(devs) >= 1 and mjax.device_count() == len(devs)
    on_iree = os.environ.get("MJAX_BACKEND", "").startswith("iree")
    # (the CPU's, or the chip's where the suite runs on a TPU: jax's there too)
    assert mjax.default_backend() == ("iree" if on_iree else jax.default_backend())
    x = mjax.device_put(np.arange(3))
    assert isinstance(x, mjax.Array) and x.dtype == np.int32
    y = mjax.device_put({"a": 1.0, "b": [np.ones(2)]}, devs[-1])
    assert y["a"].weak_type and devs[-1] in y["b"][0].devices()
    assert mjax.device_put(x) is x


def test_pickle_and_copy():
    x = jnp.arange(3.0)
    y = pickle.loads(pickle.dumps(x))
    np.testing.assert_array_equal(y, x)
    z = x.copy()
    np.testing.assert_array_equal(z, x)
    assert f"{jnp.asarray(1.5):.2f}" == "1.50"


def test_numpy_and_python_operands_mix():
    x = jnp.arange(3)
    np.testing.assert_array_equal(x + np.array([1, 1, 1], np.int32), [1, 2, 3])
    np.testing.assert_array_equal(np.int32(2) * x, [0, 2, 4])
    np.testing.assert_array_equal(2 ** x, [1, 2, 4])
    np.testing.assert_array_equal(10 - x, [10, 9, 8])
    assert (x == 1).dtype == np.bool_
    assert isinstance(np.array([1, 2, 3], np.int32) + x, mjax.Array)


def test_astype_and_properties():
    x = jnp.array([[1.5, -2.5], [3.0, 4.0]])
    assert x.astype(np.int32).dtype == np.int32
    np.testing.assert_array_equal(x.T, np.asarray(x).T)
    np.testing.assert_array_equal(x.real, np.asarray(x))
    np.testing.assert_array_equal(x.imag, np.zeros((2, 2)))
    np.testing.assert_array_equal(x.flatten(), np.asarray(x).ravel())
    assert x.mean() == pytest.approx(1.5)
    assert x.at[0, 0].get() == 1.5
    with pytest.raises(TypeError):
        x + [1, 2]  # like JAX: lists are not implicitly converted by operators
    with pytest.raises(TypeError, match=r"immutable.*\.at\[idx\]\.set"):
        x[0, 0] = 1.0


def test_dlpack_supported_dtypes_are_jaxs():
    for t in (np.float32, np.float16, np.bool_, np.complex128, np.int8, np.uint64,
              ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, "int4", np.float64):
        assert mjax.dlpack.is_supported_dtype(t) == jax.dlpack.is_supported_dtype(t), t
    with pytest.raises(TypeError, match="dtype-like"):
        mjax.dlpack.is_supported_dtype(None)
