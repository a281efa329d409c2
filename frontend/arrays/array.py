"""`mjax.Array`: a device buffer plus its aval."""
from __future__ import annotations

import numpy as np
from jaxlib import _jax

from mjax.specs import basearray
from mjax.arrays.caller_errors import original_of
from mjax.tracing import registration
from mjax.arrays.array_methods import ArrayMethods, warn_array_as_dtype
from mjax.dialect import ShapedArray
from mjax.specs.dtypes import to_numpy
from mjax.specs.layout import Format, buffer_layout
from mjax.runtime import get_backend
from mjax.runtime.backend import buffer_to_numpy
from mjax.specs.sharding_impls import SingleDeviceSharding


class Array(ArrayMethods):
    """An array on a device. Converts to NumPy with `np.asarray`."""

    __slots__ = ("_buf", "aval", "_npy", "_exported", "_sharding", "_user_deleted",
                 "_committed", "__weakref__")
    __array_priority__ = 100

    def __init__(self, buf, aval: ShapedArray, sharding=None):
        self._buf = buf
        self.aval = aval
        self._npy = None
        self._sharding = sharding    # None: the one device of `buf`
        if sharding is not None:     # (laid out by a sharding: committed to its devices,
            self._committed = True   # as JAX's results of jit over a mesh are)

    @property
    def __numpy_dtype__(self):
        """NumPy 2.4's dtype protocol (np.dtype(arr)): the dtype, with JAX's
        DeprecationWarning (JAX deprecates an array given as a dtype; its tracers have no
        such property, and neither do mjax's)."""
        warn_array_as_dtype()
        return self.dtype

    # ---- device and buffer ----------------------------------------------------------
    @property
    def sharding(self):
        if self._sharding is None:
            kind = getattr(_backend_of(self._buf), "memory_kind", None)   # (host memory)
            self._sharding = SingleDeviceSharding(
                self.device, memory_kind=kind(self._buf) if kind is not None else None)
        return self._sharding

    @property
    def format(self) -> Format:
        """Its layout in device memory with its sharding. JAX: jax.Array.format."""
        self._check_alive()
        return Format(buffer_layout(self._buf), self.sharding)

    def devices(self):
        return set(_backend_of(self._buf).buffer_devices(self._buf))

    @property
    def device(self):
        devices = self.devices()
        if len(devices) != 1:
            raise ValueError("Length of devices is greater than 1. Please use `.devices()`.")
        return next(iter(devices))

    @property
    def committed(self) -> bool:
        """Whether it is committed to its devices (placed there by device_put or jit's
        shardings, or computed from such an array): a computation with it runs there,
        moving uncommitted operands over, and two operands committed to different
        devices are an error. Arrays over several devices are committed. JAX's rules."""
        return getattr(self, "_committed", False) or len(self.devices()) > 1

    @property
    def is_sharded(self) -> bool:
        return len(self.devices()) > 1

    def is_deleted(self):
        return self._buf.is_deleted()

    def delete(self):
        self._npy = None
        self._user_deleted = True   # (see raise_if_deleted_by_user)
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
        try:
            self._buf.block_until_ready()
        except _jax.JaxRuntimeError as e:
            _raise_original(e)
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
        return self.sharding.is_fully_replicated

    # (one process addresses every device of its arrays)
    is_fully_addressable = True

    def platform(self) -> str:
        return self.device.platform if not self.is_sharded else next(
            iter(self.devices())).platform

    @property
    def addressable_shards(self):
        if not self.is_sharded:
            return [Shard._placed(self.device, tuple(slice(None) for _ in self.shape), self)]
        index = self.sharding.devices_indices_map(self.shape)
        seen: dict = {}
        out = []
        for dev, buf in _backend_of(self._buf).shards(self._buf):
            idx = index[dev]
            key = tuple((s.start, s.stop) for s in idx)
            shard_aval = ShapedArray(self.sharding.shard_shape(self.shape), self.dtype)
            out.append(Shard._placed(dev, idx, Array(buf, shard_aval), seen.get(key, 0)))
            seen[key] = seen.get(key, 0) + 1
        return out

    @property
    def global_shards(self):
        return self.addressable_shards

    def addressable_data(self, index: int) -> "Array":
        """The data of this process's `index`-th shard (JAX: Array.addressable_data)."""
        return self.addressable_shards[index].data

    # ---- host conversion ------------------------------------------------------------
    def _value(self) -> np.ndarray:
        self._check_alive()        # also for a cached value: donated arrays are gone
        if self._npy is None:
            try:
                v = (self._assemble() if self.is_sharded else
                     buffer_to_numpy(self._buf, self.aval.dtype))
            except _jax.JaxRuntimeError as e:
                _raise_original(e)
            if v.flags.writeable:
                v.flags.writeable = False
            self._npy = v
        return self._npy

    def _assemble(self) -> np.ndarray:
        """The global value of a multi-device array, from its shards."""
        if _partial_sums(self):
            return registration.SUM_OF_PARTIALS(self)   # (partial sums: the value is theirs)
        out = np.empty(self.shape, self.dtype)
        index = self.sharding.devices_indices_map(self.shape)
        shards = _backend_of(self._buf).shards(self._buf)
        if len(shards) < len(index):    # other processes hold the rest (mjax.distributed)
            if self.is_fully_replicated:
                return buffer_to_numpy(shards[0][1], self.aval.dtype)
            raise RuntimeError(
                "Fetching value for `jax.Array` that spans non-addressable (non process "
                "local) devices is not possible. Use `.addressable_shards` to read this "
                "process's shards.")
        for dev, buf in shards:
            out[index[dev]] = buffer_to_numpy(buf, self.aval.dtype)
        return out

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
        kind, device_id = _backend_of(self._buf).dlpack_device(self._buf)
        if kind is None:        # (a TPU's buffers: JAX's ArrayImpl.__dlpack_device__)
            raise BufferError(f"__dlpack__ device only supported for CPU and GPU, got "
                              f"platform: {self.platform()}")
        return kind, device_id

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
        return format(self._value(), spec) if self.ndim == 0 and not _partial_sums(
            self) else str(self)

    def __repr__(self):
        # Like JAX: Array([1., 2.], dtype=float32), plus weak_type=True when weak; an
        # empty array shows its shape; when the dtype does not fit on the last line JAX
        # pads it with the prefix's width of spaces (on the same line), and so do we.
        dtype = f"dtype={np.dtype(self.dtype).name}" + (", weak_type=True" if self.weak_type
                                                        else "")
        if _partial_sums(self):    # (as JAX: no value without the all-reduce)
            return f"Array(shape={self.shape}, {dtype}, sharding={self.sharding})"
        width = np.get_printoptions()["linewidth"]
        if self.size == 0:
            body = f"[], shape={self.shape}"
        else:
            body = np.array2string(self._value(), separator=", ", prefix="Array(",
                                   suffix=",", max_line_width=width)
        last = len(body) - body.rfind("\n") + 1
        sep = " " * len("Array(") if last + len(dtype) + 2 > width else " "
        return f"Array({body},{sep}{dtype})"

    def __str__(self):
        return repr(self) if _partial_sums(self) else str(self._value())

    def __reduce__(self):
        return (_reconstruct, (self._value(), self.weak_type))


def _partial_sums(x) -> bool:
    """Whether x is unreduced over mesh axes (mjax/lax/unreduced.py)."""
    spec = getattr(x._sharding, "spec", None)
    return spec is not None and bool(spec.unreduced)


def raise_if_deleted_by_user(leaves):
    """After a failed execution: an Array deleted by `.delete()` raises its RuntimeError.
    (JAX checks these before calling XLA; a donated array reaches Execute(), whose
    ValueError stands, as under JAX's jit cache.)"""
    for x in leaves:
        if type(x) is Array and getattr(x, "_user_deleted", False):
            x._check_alive()


def _tombstone():
    """A deleted buffer: what a deleted Array holds (using it raises jaxlib's error)."""
    buf = get_backend().put(np.zeros((0,), np.float32))
    buf.delete()
    return buf


def _backend_of(buf):
    """The backend that made `buf` (IREE buffers carry a device of their own)."""
    platform = buf.platform()
    return buf.device.backend if platform == "iree" else get_backend(platform)


class Shard:
    """One data shard of an array: its device, its slice of the global array (`index`),
    which replica of that slice it is (`replica_id`), and its data. JAX: jax.Shard,
    made as JAX's is, from (device, sharding, global_shape, data)."""

    def __init__(self, device, sharding, global_shape, data=None):
        self._device, self._sharding, self._global_shape = device, sharding, global_shape
        self._data = data
        self._index = self._replica_id = None

    @classmethod
    def _placed(cls, device, index, data, replica_id=0):
        """A shard whose index and replica id its array already computed."""
        shard = cls(device, None, None, data)
        shard._index, shard._replica_id = index, replica_id
        return shard

    device = property(lambda self: self._device)
    data = property(lambda self: self._data)

    @property
    def index(self):
        if self._index is None:
            indices = getattr(self._sharding, "devices_indices_map", None)
            if indices is None:
                raise ValueError(f"Cannot calculate indices from sharding: "
                                 f"{self._sharding}. Please create a device to index "
                                 f"mapping for your sharding.")
            self._index = indices(self._global_shape)[self._device]
        return self._index

    @property
    def replica_id(self) -> int:
        if self._replica_id is None:
            mine = tuple((s.start, s.stop) for s in self.index)
            indices = self._sharding.devices_indices_map(self._global_shape)
            count = 0           # (replicas are numbered in the sharding's device order)
            for dev, idx in indices.items():
                if dev == self._device:
                    break
                count += tuple((s.start, s.stop) for s in idx) == mine
            self._replica_id = count
        return self._replica_id

    def __repr__(self):
        try:
            return (f"Shard(device={self.device!r}, index={self.index}, "
                    f"replica_id={self.replica_id}, data={self.data})")
        except ValueError:
            return f"Shard(device={self.device!r}, data={self.data})"


def _reconstruct(value, weak_type):
    """An unpickled Array: its value (in its canonical dtype) on the default device."""
    value = to_numpy(value)
    return Array(get_backend().put(value), ShapedArray(value.shape, value.dtype, weak_type))


basearray.Array.register(Array)   # isinstance(x, mjax.Array) (the public class)


def _raise_original(error: BaseException):
    """Raises the exception a host callback of the program that made this array raised
    for its caller (caller_errors.py), where on an accelerator it surfaces only as the
    result is read; else `error` itself."""
    exc = original_of(error, take=False)
    if exc is not None:
        raise exc from None
    raise error
