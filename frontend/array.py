"""`mjax.Array`: a device buffer plus its aval."""
from __future__ import annotations

import numpy as np

from mjax.array_methods import ArrayMethods
from mjax.dialect import ShapedArray
from mjax.runtime import get_backend
from mjax.runtime.xla import buffer_to_numpy


class Array(ArrayMethods):
    """An array on a device. Converts to NumPy with `np.asarray`."""

    __slots__ = ("_buf", "aval", "_npy", "__weakref__")
    __array_priority__ = 100

    def __init__(self, buf, aval: ShapedArray):
        self._buf = buf
        self.aval = aval
        self._npy = None

    # ---- device and buffer ----------------------------------------------------------
    @property
    def sharding(self):
        return get_backend().sharding(self._buf.devices().pop() if hasattr(
            self._buf, "devices") else get_backend().devices()[0])

    def devices(self):
        return set(self._buf.devices())

    @property
    def device(self):
        return next(iter(self.devices()))

    def is_deleted(self):
        return self._buf.is_deleted()

    def delete(self):
        self._buf.delete()

    def block_until_ready(self):
        self._buf.block_until_ready()
        return self

    # ---- host conversion ------------------------------------------------------------
    def _value(self) -> np.ndarray:
        if self._npy is None:
            v = buffer_to_numpy(self._buf)
            v.flags.writeable = False
            self._npy = v
        return self._npy

    def __array__(self, dtype=None, copy=None):
        v = self._value()
        if dtype is not None and np.dtype(dtype) != v.dtype:
            return v.astype(dtype)
        return v.copy() if copy else v

    def __dlpack__(self, *args, **kwargs):
        return self._buf.__dlpack__(*args, **kwargs) if hasattr(self._buf, "__dlpack__") \
            else np.array(self._value()).__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU, device 0

    def item(self, *args):
        return self._value().item(*args)

    def tolist(self):
        return self._value().tolist()

    def copy(self):
        return Array(get_backend().put(np.array(self._value())), self.aval)

    def __bool__(self):
        if self.size != 1:
            raise ValueError(f"The truth value of an array with more than one element is "
                             f"ambiguous (shape {self.shape}). Use a.any() or a.all()")
        return bool(self._value())

    def __int__(self):
        return int(self._value())

    def __float__(self):
        return float(self._value())

    def __complex__(self):
        return complex(self._value())

    def __index__(self):
        if not np.issubdtype(self.dtype, np.integer):
            raise TypeError(f"only integer arrays can be converted to an index, got "
                            f"{self.dtype}")
        return int(self._value())

    def __hash__(self):
        raise TypeError("unhashable type: 'Array'")

    def __format__(self, spec):
        return format(self._value(), spec) if self.ndim == 0 else str(self)

    def __repr__(self):
        # Like JAX: Array([1., 2.], dtype=float32), plus weak_type=True when weak.
        body = np.array2string(self._value(), separator=", ", prefix="Array(")
        extra = f", dtype={np.dtype(self.dtype).name}"
        if self.weak_type:
            extra += ", weak_type=True"
        return f"Array({body}{extra})"

    def __str__(self):
        return str(self._value())

    def __reduce__(self):
        return (_reconstruct, (self._value(), self.weak_type))


def _reconstruct(value, weak_type):
    from mjax.api import device_put
    out = device_put(value)
    if weak_type:
        out.aval = out.aval.update(weak_type=True)
    return out
