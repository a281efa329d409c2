"""DLPack interop: `mjax.dlpack.from_dlpack` and `Array.__dlpack__` (frontend/array.py).
On CPU both directions share memory with NumPy (and any other DLPack producer) instead of
copying, when the producer's memory is aligned as XLA requires. JAX: jax.dlpack."""
from __future__ import annotations

import numpy as np

from mjax.array import Array
from mjax.dialect import ShapedArray
from mjax.runtime import get_backend


def from_dlpack(external_array, device=None, copy=None):
    """An `mjax.Array` viewing (or, with copy=True, copying) a DLPack producer's data.
    JAX: jax.dlpack.from_dlpack."""
    if isinstance(external_array, Array):
        return external_array.copy() if copy else external_array
    if not hasattr(external_array, "__dlpack__"):
        raise TypeError(f"from_dlpack expects an object with __dlpack__ (a DLPack "
                        f"producer such as a NumPy array), got {type(external_array)}")
    host = np.from_dlpack(external_array)  # shape and dtype; no copy for CPU producers
    if copy:
        host = host.copy()
    device = getattr(device, "_device", device)
    buf = get_backend().from_dlpack(host, device, copy)
    return Array(buf, ShapedArray(host.shape, host.dtype))


__all__ = ["from_dlpack"]
