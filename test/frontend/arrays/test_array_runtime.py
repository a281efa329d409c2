"""Array as a runtime object: DLPack without copies, delete semantics, async dispatch,
device_get, host reads that never import jax."""
from __future__ import annotations

import gc
import subprocess
import sys

import numpy as np
import pytest

import jax
import mjax
import mjax.numpy as jnp
from frontend_util import ON_TPU


def aligned(n, dtype=np.float32, align=64):
    """A NumPy array whose data is aligned as XLA's CPU client needs to alias it."""
    itemsize = np.dtype(dtype).itemsize
    raw = np.empty(n * itemsize + align, np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off:off + n * itemsize].view(dtype)


def test_from_dlpack_of_numpy_is_zero_copy():
    a = aligned(6)
    a[:] = np.arange(6)
    x = mjax.dlpack.from_dlpack(a)
    assert isinstance(x, mjax.Array) and x.dtype == np.float32 and x.shape == (6,)
    assert x.unsafe_buffer_pointer() == a.ctypes.data
    np.testing.assert_array_equal(np.asarray(x), np.arange(6))
    np.testing.assert_array_equal(np.asarray(jnp.from_dlpack(a)), a)


def test_numpy_from_dlpack_of_array_is_zero_copy():
    # (in host memory: on a TPU machine an array of the host CPU's device, as a TPU's
    # buffers are no DLPack device, in JAX too: test_array.py compares that failure)
    x = jnp.arange(8.0) * 2 if not ON_TPU else \
        mjax.device_put(jnp.arange(8.0), mjax.devices("cpu")[0]) * 2
    n = np.from_dlpack(x)
    assert n.ctypes.data == x.unsafe_buffer_pointer()
    np.testing.assert_array_equal(n, np.arange(8.0) * 2)
    assert x.__dlpack_device__() == (1, 0)
    # The view outlives the array: deleting it must neither abort nor free the memory.
    x.delete()
    assert x.is_deleted()
    gc.collect()
    np.testing.assert_array_equal(n, np.arange(8.0) * 2)


class _GpuTensor:
    """A DLPack producer that says its memory is on CUDA device 0."""

    def __init__(self, a):
        self.a = a

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()


def test_gpu_dlpack_producers_are_imported_on_their_device(monkeypatch):
    """GPU memory goes to the GPU client's import (no NumPy round trip); 64-bit data
    becomes 32-bit with x64 off, as in JAX. (A CPU client stands in for the GPU's.)"""
    from mjax import dlpack as D
    backend = mjax.runtime.get_backend("cpu")
    seen = []

    def from_device_dlpack(producer, kind, device_id, copy):
        seen.append((kind, device_id))
        return backend.from_dlpack(np.from_dlpack(producer.a), None, copy)
    monkeypatch.setattr(backend, "from_device_dlpack", from_device_dlpack, raising=False)
    monkeypatch.setattr(D, "get_backend", lambda platform: backend)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = jnp.from_dlpack(_GpuTensor(a))
    assert seen == [(2, 0)] and x.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(x), a)
    y = jnp.from_dlpack(_GpuTensor(np.arange(3, dtype=np.float64)))
    assert y.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(y), np.arange(3))


def test_round_trip_through_dlpack():
    a = aligned(12, np.int32).reshape(3, 4)
    a[:] = np.arange(12).reshape(3, 4)
    back = np.from_dlpack(mjax.dlpack.from_dlpack(a))
    assert back.ctypes.data == a.ctypes.data
    np.testing.assert_array_equal(back, a)


def test_use_after_delete_raises_jax_error():
    x = jnp.arange(6.0) + 1
    x.delete()
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[6\]"):
        np.asarray(x)
    with pytest.raises(RuntimeError, match="deleted"):
        x + 1
    with pytest.raises(RuntimeError, match="deleted"):
        mjax.jit(lambda a: a * 2)(x)
    # A call the jit cache holds (fast path and keyed path) raises the same as JAX's.
    f, g = mjax.jit(lambda a: a * 3), mjax.jit(lambda a, k: a * k, static_argnums=1)
    f(jnp.ones(6)), f(jnp.ones(6)), g(jnp.ones(6), 2), g(jnp.ones(6), 2)
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[6\]"):
        f(x)
    with pytest.raises(RuntimeError, match="deleted"):
        g(x, 2)


def test_delete_after_host_read():
    x = jnp.arange(4.0) + 1
    n = np.asarray(x)
    x.delete()
    np.testing.assert_array_equal(n, [1, 2, 3, 4])


def test_array_misc_api():
    x = jnp.arange(6.0, dtype=jnp.float32).reshape(2, 3)
    # (the device's own size: 24 bytes on the CPU, a padded tile on a TPU, as jax's)
    jx = jax.numpy.arange(6.0, dtype=jax.numpy.float32).reshape(2, 3)
    assert x.on_device_size_in_bytes() == jx.on_device_size_in_bytes()
    assert ON_TPU or x.on_device_size_in_bytes() == 24
    assert x.__array_namespace__() is jnp
    assert x.is_fully_replicated
    (shard,) = x.addressable_shards
    np.testing.assert_array_equal(np.asarray(shard.data), np.asarray(x))
    assert shard.device == x.device
    x.copy_to_host_async()
    assert x[1, 2].item() == 5.0 and x.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert f"{x[0, 1]:.2f}" == "1.00"


def test_dispatch_is_asynchronous():
    f = mjax.jit(lambda a: jnp.tanh(a @ a @ a @ a @ a @ a @ a @ a @ a @ a))
    a = jnp.ones((1200, 1200)) / 1200
    f(a).block_until_ready()
    # The call returns while XLA still runs: the result is not ready yet. (Ten
    # 1200^3 matmuls take far longer than returning from a cached call.)
    y = f(a)
    assert not y.is_ready()
    y.block_until_ready()
    assert y.is_ready()


def test_device_get_and_block_until_ready_of_pytrees():
    tree = {"a": jnp.ones(3), "b": [jnp.zeros(2), 5]}
    assert mjax.block_until_ready(tree) is tree
    got = mjax.device_get(tree)
    assert isinstance(got["a"], np.ndarray) and isinstance(got["b"][0], np.ndarray)
    assert got["b"][1] == 5
    np.testing.assert_array_equal(got["a"], np.ones(3))


def test_host_reads_never_import_jax():
    code = ("import sys, numpy as np, mjax, mjax.numpy as jnp\n"
            "x = jnp.arange(6.0) * 2\n"
            "print(x, repr(x), np.asarray(mjax.jit(lambda a: a + 1)(x)), x.tolist())\n"
            "assert 'jax' not in sys.modules, 'mjax imported jax'\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
