"""`mjax.Array`: a device buffer plus its aval."""
from __future__ import annotations

import numpy as np

from mjax.array_methods import ArrayMethods
from mjax.dialect import ShapedArray
from mjax.runtime import get_backend
from mjax.runtime.xla import buffer_to_numpy


class Array(ArrayMethods):
    """An array on a device. Converts to NumPy with `np.asarray`."""

    __slots__ = ("_buf", "aval", "_npy", "_exported", "__weakref__")
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
        self._npy = None
        if getattr(self, "_exported", False):
            # A DLPack consumer still views the buffer, and deleting a buffer with such a
            # hold aborts the process: drop our reference instead; the memory goes when
            # the last view does.
            self._buf = _tombstone()
            return
        self._buf.delete()

    def _check_alive(self):
        if self._buf.is_deleted():
            shape = ",".join(map(str, self.shape))
            raise RuntimeError(f"Array has been deleted with shape="
                               f"{np.dtype(self.dtype).name}[{shape}].")

    def block_until_ready(self):
        self._check_alive()
        self._buf.block_until_ready()
        return self

    def is_ready(self) -> bool:
        self._check_alive()
        return self._buf.is_ready()

    def copy_to_host_async(self):
        """Starts the device-to-host copy that `np.asarray` will wait for."""
        self._check_alive()
        start = getattr(self._buf, "_copy_single_device_array_to_host_async", None)
        if start is not None and self._buf.platform() != "cpu":
            start()

    def on_device_size_in_bytes(self) -> int:
        self._check_alive()
        return self._buf.on_device_size_in_bytes()

    def unsafe_buffer_pointer(self) -> int:
        self._check_alive()
        return self._buf.unsafe_buffer_pointer()

    @property
    def is_fully_replicated(self) -> bool:
        return True

    @property
    def addressable_shards(self):
        return [_Shard(self.device, tuple(slice(None) for _ in self.shape), self)]

    def __array_namespace__(self, *, api_version=None):
        import mjax.numpy as jnp
        return jnp

    # ---- host conversion ------------------------------------------------------------
    def _value(self) -> np.ndarray:
        self._check_alive()        # also for a cached value: donated arrays are gone
        if self._npy is None:
            v = buffer_to_numpy(self._buf, self.aval.dtype)
            if v.flags.writeable:
                v.flags.writeable = False
            self._npy = v
        return self._npy

    def __array__(self, dtype=None, copy=None):
        v = self._value()
        if dtype is not None and np.dtype(dtype) != v.dtype:
            return v.astype(dtype)
        return v.copy() if copy else v

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self._check_alive()
        if copy:
            return np.array(self._value()).__dlpack__()
        self._exported = True
        return get_backend().to_dlpack(self._buf, stream)

    def __dlpack_device__(self):
        return get_backend().dlpack_device(self._buf)

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


def _tombstone():
    """A deleted buffer: what a deleted Array holds (using it raises jaxlib's error)."""
    buf = get_backend().put(np.zeros((0,), np.float32))
    buf.delete()
    return buf


class _Shard:
    """One addressable shard: the whole array on its one device (JAX: Shard)."""

    __slots__ = ("device", "index", "data")

    def __init__(self, device, index, data):
        self.device, self.index, self.data = device, index, data

    @property
    def replica_id(self) -> int:
        return 0

    def __repr__(self):
        return f"Shard(device={self.device!r}, index={self.index}, replica_id=0, data={self.data})"


def _reconstruct(value, weak_type):
    from mjax.api import device_put
    out = device_put(value)
    if weak_type:
        out.aval = out.aval.update(weak_type=True)
    return out
