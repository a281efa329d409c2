"""DLPack interop: `mjax.dlpack.from_dlpack` and `Array.__dlpack__` (frontend/arrays/array.py).
On CPU both directions share memory with NumPy (and any other DLPack producer) instead of
copying, when the producer's memory is aligned as XLA requires. JAX: jax.dlpack."""
from __future__ import annotations

import numpy as np

from mjax.specs import dtypes
from mjax.arrays.array import Array
from mjax.specs.dtypes import canonicalize_dtype
from mjax.dialect import ShapedArray
from mjax.runtime import get_backend
from mjax.runtime.backend import device_memory_platform
from mjax.runtime.backend import platform_record


# What DLPack carries (JAX: jax.dlpack.SUPPORTED_DTYPES).
SUPPORTED_DTYPES = frozenset(np.dtype(t) for t in (
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128,
    np.bool_))


def is_supported_dtype(dtype) -> bool:
    """Whether arrays of `dtype` cross DLPack. JAX: jax.dlpack.is_supported_dtype."""
    if dtype is None:
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    return np.dtype(dtype) in SUPPORTED_DTYPES


def from_dlpack(external_array, device=None, copy=None):
    """An `mjax.Array` viewing (or, with copy=True, copying) a DLPack producer's data:
    host memory through NumPy, GPU memory (a CUDA torch tensor, say) in place on its
    device. JAX: jax.dlpack.from_dlpack."""
    if isinstance(external_array, Array):
        return external_array.copy() if copy else external_array
    if not hasattr(external_array, "__dlpack__"):
        raise TypeError(f"from_dlpack expects an object with __dlpack__ (a DLPack "
                        f"producer such as a NumPy array), got {type(external_array)}")
    kind, device_id = (external_array.__dlpack_device__()
                       if hasattr(external_array, "__dlpack_device__") else (1, 0))
    platform = device_memory_platform(kind)    # (the platform whose client imports it)
    if platform is not None:
        return _from_gpu(external_array, platform, kind, device_id, device, copy)
    host = np.from_dlpack(external_array)  # shape and dtype; no copy for CPU producers
    if copy:
        host = host.copy()
    device = getattr(device, "_device", device)
    backend = _host_backend()
    if device is not None and device not in backend.devices():    # (JAX: a device_put)
        return Array(get_backend(device.platform).put(host, device),
                     ShapedArray(host.shape, host.dtype))
    buf = backend.from_dlpack(host, device, copy)
    return Array(buf, ShapedArray(host.shape, host.dtype))


def _host_backend():
    """The backend that shares host memory with a DLPack producer (kDLCPU): the default
    one where its devices are the host's (XLA's CPU, IREE), else the host CPU's, as JAX
    imports such tensors on its CPU backend whatever the default (on a TPU machine
    `from_dlpack(numpy_array)` is a CPU device's array, sharing the memory)."""
    backend = get_backend()
    if platform_record(getattr(backend, "platform", "cpu")).dlpack_kind == 1:
        return backend
    return get_backend("cpu")


def _from_gpu(producer, platform: str, kind: int, device_id: int, device, copy):
    backend = get_backend(platform)
    buf = backend.from_device_dlpack(producer, kind, device_id, copy)
    dtype = np.dtype(buf.dtype)
    arr = Array(buf, ShapedArray(tuple(buf.shape), dtype))
    want = canonicalize_dtype(dtype)
    if want != dtype:       # (a 64-bit tensor with x64 off: converted, as JAX does)
        arr = Array(backend.put(np.asarray(arr).astype(want), buf.devices().pop()),
                    ShapedArray(arr.shape, want))
    device = getattr(device, "_device", device)
    if device is not None and device not in buf.devices():
        return Array(backend.put(np.asarray(arr), device), arr.aval)
    return arr


__all__ = ["SUPPORTED_DTYPES", "from_dlpack", "is_supported_dtype"]
