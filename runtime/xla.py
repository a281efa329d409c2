"""The XLA backend: one PJRT client (CPU here; GPU where a plugin is installed).

    exe = XlaBackend("cpu").compile(stablehlo_text)   # (or backend.get_backend("cpu"))
    outs = exe.run_numpy(np.ones(3, np.float32))     # -> list of numpy arrays

Registered as the 'xla' backend of runtime/backend.py, whose registry makes it; it
imports no other backend. Importing it also quiets jaxlib's C++ log
(runtime/jaxlib_process.py).
"""
from __future__ import annotations

import collections
import contextlib
import ctypes
import functools
import sys
import threading
import time
from dataclasses import dataclass

import numpy as np
from jaxlib import _jax
from jaxlib import xla_client as xc
from jaxlib.mlir import ir

from mjax.dialect import context
from mjax.dialect.types import element_type_name
from mjax.runtime import compilation_cache, host_effects, ir_dump, jaxlib_process  # noqa: F401
from mjax.runtime.backend import (HostPut, Platform, buffer_to_numpy, platform_record,
                                  register_backend)


class _Aval:
    """What `batched_device_put` reads from an aval."""

    __slots__ = ("shape", "dtype", "weak_type", "ndim")

    def __init__(self, shape, dtype):
        self.shape, self.dtype, self.weak_type, self.ndim = shape, dtype, False, len(shape)

    def __repr__(self):     # (jaxlib's transfer-guard messages print it, as JAX's aval)
        return f"ShapedArray({self.dtype.name}[{','.join(map(str, self.shape))}])"


_REPLICATED = xc.HloSharding.replicate()


class DeviceSharding(xc.SingleDeviceSharding):
    """The single-device sharding jaxlib's device_put and arrays expect; made with a
    memory kind ('pinned_host', 'unpinned_host'), jaxlib places buffers in that memory of
    the device (None: its default memory)."""

    @property
    def memory_kind(self):
        return self._memory_kind

    def _to_xla_hlo_sharding(self, ndim):
        return _REPLICATED      # (jaxlib asks at each put: made once)

    def __repr__(self):
        return (f"SingleDeviceSharding(device={self._device!r}, "
                f"memory_kind={self._memory_kind or 'device'})")

    @functools.cached_property     # (read on every put: made once per sharding)
    def _internal_device_list(self):
        return xc.DeviceList((self._device,))


class _DLPackView:
    """Hands a buffer's DLPack capsule to `np.from_dlpack` (CPU: no copy)."""

    __slots__ = ("capsule",)

    def __init__(self, buf):
        self.capsule = _jax.buffer_to_dlpack_managed_tensor(buf, None)

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU


def _to_numpy(buf, dtype=None) -> np.ndarray:
    """Host copy of a single-device jaxlib buffer (CPU: read through DLPack).

    jaxlib's own readers (`np.asarray(buf)`, `_single_device_array_to_np_array_did_copy`)
    import the `jax` package when it is installed, which patches jaxlib's array class for
    the whole process; mjax must behave the same with and without jax, so CPU buffers go
    through DLPack. Dtypes DLPack cannot describe (bfloat16, float8, int4) and other
    platforms take jaxlib's reader."""
    if buf.platform() == "cpu" and _dlpack_dtype(dtype):
        try:
            # Copied: a lasting view would hold the buffer, and deleting a held buffer
            # aborts the process.
            return np.array(np.from_dlpack(_DLPackView(buf)), copy=True)
        except (BufferError, TypeError, RuntimeError, ValueError):
            pass
    if buf.platform() == "cpu" and dtype is not None:
        host = _cpu_bytes_to_numpy(buf, np.dtype(dtype))
        if host is not None:
            return host
    read = getattr(buf, "_single_device_array_to_np_array_did_copy", None)
    if read is not None:
        try:
            with _jax_import_refused():
                return read()[0]
        except ImportError:   # (a jaxlib whose reader needs jax)
            return read()[0]
    return np.asarray(buf)


_SHARED_EXECUTABLES = 256    # compiled programs XlaBackend keeps for sharing
_SUB_BYTE = {"int1", "uint1", "int2", "uint2", "int4", "uint4", "float4_e2m1fn"}


def _cpu_bytes_to_numpy(buf, dtype: np.dtype):
    """A copy of a CPU buffer's bytes viewed as `dtype` (bfloat16, float8: DLPack cannot
    describe them, and jaxlib's reader imports jax), or None where the buffer is not
    plain row-major `dtype` elements (packed sub-byte types, other layouts)."""
    try:
        shape = tuple(buf.aval.shape)
        rank = len(shape)
        layout = buf._pjrt_layout._xla_layout()
        row_major = tuple(layout.minor_to_major()) == tuple(range(rank))[::-1]
        # Sub-byte types (int4, float4, ...) are stored otherwise: jaxlib's reader.
        packed = dtype.name in _SUB_BYTE or layout.element_size_in_bits() not in (
            0, 8 * dtype.itemsize)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if not row_major or packed or buf.on_device_size_in_bytes() != nbytes:
            return None
        buf.block_until_ready()
        with _jax_import_refused():
            ptr = buf.unsafe_buffer_pointer()
    except (AttributeError, RuntimeError, ValueError, TypeError):
        return None
    if nbytes == 0:
        return np.zeros(shape, dtype)
    raw = (ctypes.c_uint8 * nbytes).from_address(ptr)
    return np.frombuffer(raw, np.uint8).copy().view(dtype).reshape(shape)


class _RefuseJax:
    """A meta-path finder that makes `import jax` fail in one thread while it is
    installed. jaxlib's unsafe_buffer_pointer tries to import the jax package (for arrays
    it made from host data, e.g. rank 0) and carries on when it cannot; mjax must not
    load jax for it (issue 21.5). Other threads import as usual."""

    def __init__(self):
        self.thread = threading.get_ident()

    def find_spec(self, name, path=None, target=None):
        if threading.get_ident() == self.thread and (
                name == "jax" or name.startswith("jax.")):
            raise ImportError(f"mjax reads this buffer without importing {name}")
        return None


class _jax_import_refused:
    """Within it, this thread cannot import jax (a no-op once jax is loaded)."""

    def __enter__(self):
        self.finder = None if "jax" in sys.modules else _RefuseJax()
        if self.finder is not None:
            sys.meta_path.insert(0, self.finder)

    def __exit__(self, *exc):
        if self.finder is not None:
            sys.meta_path.remove(self.finder)


def _dlpack_dtype(dtype) -> bool:
    try:
        return dtype is None or np.dtype(dtype).name in _DLPACK_DTYPES
    except TypeError:  # extended dtypes (PRNG keys)
        return False


_DLPACK_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                  "uint64", "float16", "float32", "float64", "complex64", "complex128"}


def _result_handler(aval, sharding):
    try:
        return xc.array_result_handler(aval, sharding, True, _skip_checks=True)
    except TypeError:  # jaxlib releases without the _skip_checks keyword
        return xc.array_result_handler(aval, sharding, True)


@dataclass
class BuildSettings:
    """XLA build options every compilation gets (the frontend's config sets them: JAX's
    jax_optimization_level, jax_memory_fitting_level, jax_exec_time_optimization_effort,
    jax_memory_fitting_effort, jax_disable_most_optimizations,
    jax_compiler_enable_remat_pass)."""

    optimization_level: int = 0            # XLA's effort levels: 0 (its default), 9..39
    memory_fitting_level: int = 29
    exec_time_optimization_effort: float = 0.0
    memory_fitting_effort: float = 0.0
    disable_most_optimizations: bool = False
    enable_remat_pass: bool = True

    def key(self) -> tuple:
        return tuple(vars(self).values())


build_settings = BuildSettings()
# Options jit(compiler_options=...) takes that are fields of XLA's build options, not
# debug options (as JAX takes them).
_BUILD_FIELDS = ("optimization_level", "memory_fitting_level",
                 "exec_time_optimization_effort", "memory_fitting_effort")


def xla_compile_options(overrides: dict | None) -> xc.CompileOptions | None:
    """CompileOptions carrying XLA options by name (`{"xla_cpu_...": value}`), as
    jax.jit(compiler_options=...) and Lowered.compile(compiler_options=...) take them;
    None without any (compile()'s default, which its program cache serves)."""
    if not overrides:
        return None
    opts = _with_build_settings(xc.CompileOptions())
    build = opts.executable_build_options
    rest = dict(overrides)
    for name in _BUILD_FIELDS:
        if name in rest:
            value = rest.pop(name)
            setattr(build, name, getattr(value, "value", value))   # (an effort enum)
    opts.env_option_overrides = list(rest.items())
    return opts


def _with_build_settings(opts: xc.CompileOptions) -> xc.CompileOptions:
    """`opts` with build_settings applied (as JAX's compile options get its config's)."""
    b = build_settings
    build = opts.executable_build_options
    build.optimization_level = b.optimization_level
    build.memory_fitting_level = b.memory_fitting_level
    for name in ("exec_time_optimization_effort", "memory_fitting_effort"):
        if hasattr(build, name):    # (jaxlib 0.11 dropped them)
            setattr(build, name, getattr(b, name))
    debug = build.debug_options
    if b.disable_most_optimizations:
        debug.xla_backend_optimization_level = 0
        debug.xla_llvm_disable_expensive_passes = True
    if not b.enable_remat_pass:
        debug.xla_disable_hlo_passes = "rematerialization"
    return opts


class Executable:
    """A compiled program on a list of devices."""

    def __init__(self, backend: "XlaBackend", loaded, devices, text: str, out_avals=None):
        self.backend = backend
        self.loaded = loaded
        self.devices = devices
        self.text = text
        self._handlers = None
        self.out_hlo_shardings = None
        # Non-default parameter/result layouts (jit with layouts: frontend/specs/layout.py).
        self.custom_layouts = "mhlo.layout_mode" in text and _has_custom_layouts(loaded)
        if self.custom_layouts:
            LAYOUTS_IN_USE[0] = True
        # The memory kind of each output where some is not 'device' (None: all are):
        # results given `mhlo.memory_kind = "pinned_host"` come back in host memory.
        self.out_memory_kinds = _output_memory_kinds(loaded, text, out_avals)
        kinds = self.out_memory_kinds or [None] * len(out_avals or ())
        if out_avals is not None and len(devices) == 1:
            # Result handlers wrap output buffers directly. (The generic
            # disassemble_into_single_device_arrays asks the `jax` package, when it is
            # importable, to build a sharding for every output: slower, and it imports jax.)
            self._handlers = [_result_handler(_Aval(a.shape, a.dtype),
                                              backend.sharding(devices[0], k))
                              for a, k in zip(out_avals, kinds)]
        elif out_avals is not None:
            # SPMD: each output is one multi-device array laid out as XLA decided.
            device_list = xc.DeviceList(tuple(devices))
            self.out_hlo_shardings = [xc.HloSharding.from_proto(op)
                                      for op in loaded.get_output_shardings()]
            self._handlers = [_result_handler(_Aval(a.shape, a.dtype),
                                              _jax.GSPMDSharding(device_list, h,
                                                                 memory_kind=k))
                              for a, h, k in zip(out_avals, self.out_hlo_shardings, kinds)]

    async_callbacks = False    # (callbacks served beside the run: runtime/host_effects)

    def _execute_sharded(self, buffers):
        if not self.async_callbacks:
            return self.loaded.execute_sharded(buffers)
        results = self.loaded.execute_sharded(buffers, with_tokens=True)
        host_effects.PENDING[tuple(self.devices)] = results.consume_token()
        return results

    def execute(self, buffers: list) -> list:
        """Runs on device buffers (jaxlib arrays); returns output buffers."""
        buffers = self.match_layouts(buffers)
        try:
            results = self._execute_sharded(buffers)
        except TypeError:
            # Buffers of another backend (IREE) come over through the host.
            dev = self.devices[0]
            buffers = [b if Platform.parse(b.platform()).backend == "xla" else
                       self.backend.put(buffer_to_numpy(b), dev) for b in buffers]
            results = self._execute_sharded(buffers)
        except Exception as e:
            for k, b in enumerate(buffers):
                if b.is_deleted():   # (jaxlib's Execute() error, as under JAX)
                    raise ValueError(f"INVALID_ARGUMENT: Invalid buffer passed to Execute() "
                                     f"as argument {k} to replica 0: INVALID_ARGUMENT: Buffer "
                                     f"has been deleted or donated.") from None
            if "is on device" not in str(e) or len(self.devices) != 1:
                raise
            # An array made on another device (jax_default_device): copy it over.
            dev = self.devices[0]
            buffers = [b if dev in tuple(b._sharding._internal_device_list)
                       else self.backend.put(_to_numpy(b), dev) for b in buffers]
            results = self._execute_sharded(buffers)
        if self._handlers is not None:
            return results.consume_with_handlers(self._handlers)
        return [shards[0] for shards in results.disassemble_into_single_device_arrays()]

    def direct_call(self):
        """(run, handlers) for the cheapest call of a one-device program, or None: a
        cached `jit` call does `run(buffers).consume_with_handlers(handlers)` itself and
        falls back to `execute` (which explains errors and moves buffers) when `run`
        raises."""
        return self.sharded_call() if len(self.devices) == 1 else None

    def sharded_call(self):
        """direct_call's (run, handlers) for a program over any number of devices, whose
        caller passes buffers laid out as its parameters (None: results maybe in host
        memory, where Arrays say so, or custom layouts)."""
        if self._handlers is None or self.custom_layouts or self.out_memory_kinds or \
                self.async_callbacks:
            return None
        return self.loaded.execute_sharded, self._handlers

    # ---- layouts ---------------------------------------------------------------------
    def parameter_layouts(self) -> list | None:
        """The PjRtLayout XLA compiled each parameter for (None: not known)."""
        try:
            return self.loaded.get_parameter_layouts()
        except Exception:  # noqa: BLE001 - executables that do not report layouts
            return None

    def output_layouts(self) -> list | None:
        try:
            return self.loaded.get_output_layouts()
        except Exception:  # noqa: BLE001
            return None

    def match_layouts(self, buffers: list) -> list:
        """`buffers`, each one whose layout is not the parameter's copied into it. (PJRT
        CPU runs an executable on buffers of another layout without a word, reading the
        elements in the wrong order; JAX relays out such arguments the same way.) Free
        until some program uses a non-default layout."""
        if not LAYOUTS_IN_USE[0]:
            return buffers
        want = self.__dict__.get("_param_layouts", False)
        if want is False:
            want = self._param_layouts = self.parameter_layouts()
        if not want:
            return buffers
        out = list(buffers)
        for i, (b, layout) in enumerate(zip(buffers, want)):
            try:
                # (a deleted buffer's layout crashes the process: execute explains it)
                if b.is_deleted():
                    continue
                have = b._pjrt_layout
            except Exception:  # noqa: BLE001 - other backends' buffers
                continue
            if have != layout:
                out[i] = self.backend.relayout(
                    b, tuple(layout._xla_layout().minor_to_major()))
        return out

    def run_numpy(self, *arrays) -> list[np.ndarray]:
        """Convenience for tests: numpy in, numpy out."""
        dev = self.devices[0]
        bufs = [self.backend.put(np.asarray(a), dev) for a in arrays]
        return [_to_numpy(b) for b in self.execute(bufs)]

    def hlo_text(self) -> str:
        return self.loaded.hlo_modules()[0].to_string() if hasattr(
            self.loaded, "hlo_modules") else self.loaded.get_hlo_text()

    def cost_analysis(self) -> dict:
        return dict(self.loaded.cost_analysis())

    def memory_analysis(self):
        """XLA's CompiledMemoryStats (argument, output and temporary sizes in bytes)."""
        return self.loaded.get_compiled_memory_stats()


class XlaBackend:
    """Compiles StableHLO with XLA and moves host data to devices."""

    name = "xla"

    to_numpy = staticmethod(_to_numpy)

    def __init__(self, platform: str = "cpu"):
        self.record = platform_record(platform)
        self.client = self.record.make_client()
        self.platform = platform
        self._shardings: dict = {}
        # (StableHLO text, devices, partitions) -> executable, most recently used last;
        # bounded, as each holds memory maps (the kernel allows ~65k per process)
        self._compiled: collections.OrderedDict = collections.OrderedDict()
        self._relayouts: dict = {}  # (shape, dtype, layout, new layout, device) -> exe
        # XLA compilations and persistent-cache hits, and callbacks(text, seconds) run
        # after each XLA compilation (the frontend's log_compiles uses one).
        self.stats = {"compiles": 0, "cache_hits": 0}
        self.compile_listeners: list = []

    def devices(self):
        return self.client.devices()

    def sharding(self, device, memory_kind: str | None = None) -> DeviceSharding:
        """The sharding of buffers in `memory_kind` memory of `device` (None, 'device':
        its default memory)."""
        kind = _jaxlib_kind(memory_kind)
        key = device if kind is None else (device, kind)
        s = self._shardings.get(key)
        if s is None:
            s = self._shardings[key] = DeviceSharding(device, memory_kind=kind)
        return s

    def put(self, array: np.ndarray, device=None, memory_kind: str | None = None):
        """Copies a host array to `device` (default: the first), into its memory of
        `memory_kind` (None: the device's default memory)."""
        device = device or self.client.devices()[0]
        return xc.batched_device_put(_Aval(array.shape, array.dtype),
                                     self.sharding(device, memory_kind),
                                     [array], [device], True, False, enable_x64=True)

    def putter(self, shape, dtype):
        """put(array) for host arrays of one shape and dtype onto the first device, with
        what put works out each time made once (the jit fast path's NumPy arguments,
        whose buffers only go to execute; a HostPut, called by the C fast path itself).
        Its sharding is jaxlib's GSPMDSharding of that one device: jaxlib reads a
        DeviceSharding through its Python methods, ~1 us of a 3.4 us put."""
        device = self.client.devices()[0]
        sharding = _jax.GSPMDSharding(xc.DeviceList((device,)), _REPLICATED)
        return HostPut(xc.batched_device_put, _Aval(tuple(shape), np.dtype(dtype)), sharding,
                       None, (device,), True, False, _jax.HostBufferSemantics.ZERO_COPY, True)

    def host_transfer_callback(self, fn, in_avals, out_avals, send_channels,
                               recv_channels):
        """The object XLA calls for one Python callback lowered to host transfers (send
        ops for `in_avals`, recv ops for `out_avals`, on those channels): `fn(*arrays)`
        gives the received arrays. Compile with it among `host_callbacks`."""
        shape = lambda a: xc.Shape.array_shape(np.dtype(a.dtype), tuple(a.shape))  # noqa
        return self.client.make_python_callback_from_host_send_and_recv(
            fn, [shape(a) for a in in_avals], [shape(a) for a in out_avals],
            list(send_channels), list(recv_channels), _refuse_serializing)

    @staticmethod
    def memory_kind(buf) -> str:
        """The kind of memory a buffer lives in: 'device', 'pinned_host', ..."""
        return getattr(buf._sharding, "_memory_kind", None) or "device"

    # ---- multi-device arrays --------------------------------------------------------
    def put_sharded(self, shards, shard_devices, devices, hlo_sharding, shape, dtype,
                    memory_kind: str | None = None):
        """One array over `devices` (the sharding's device list, in order) from host
        `shards`, one per device of `shard_devices`, laid out by `hlo_sharding`, in
        memory of `memory_kind` (None: the devices' default memory)."""
        sharding = _jax.GSPMDSharding(xc.DeviceList(tuple(devices)), hlo_sharding,
                                      memory_kind=_jaxlib_kind(memory_kind))
        return xc.batched_device_put(_Aval(tuple(shape), np.dtype(dtype)), sharding,
                                     [np.asarray(s, order="C") for s in shards],
                                     list(shard_devices), True, False, enable_x64=True)

    def put_per_device(self, values, shard_devices, devices, hlo_sharding, shape, dtype):
        """As put_sharded, but each device keeps its own value even where `hlo_sharding`
        replicates (batched_device_put would copy the first): arrays holding partial sums
        (mjax/lax/unreduced.py)."""
        sharding = _jax.GSPMDSharding(xc.DeviceList(tuple(devices)), hlo_sharding)
        bufs = [self.put(np.asarray(v, dtype=dtype, order="C"), d)
                for v, d in zip(values, shard_devices)]
        return _jax.ArrayImpl(_Aval(tuple(shape), np.dtype(dtype)), sharding, bufs, True,
                              True)

    def assemble(self, bufs, devices, hlo_sharding, shape, dtype):
        """One array over `devices` from single-device buffers (one per device of this
        process, in the sharding's device order, each holding its shard): no copies. The
        array is in the memory its buffers are in."""
        kind = self.memory_kind(bufs[0]) if bufs else None
        sharding = _jax.GSPMDSharding(xc.DeviceList(tuple(devices)), hlo_sharding,
                                      memory_kind=_jaxlib_kind(kind))
        return _jax.ArrayImpl(_Aval(tuple(shape), np.dtype(dtype)), sharding, list(bufs),
                              True, True)

    @staticmethod
    def buffer_devices(buf) -> list:
        """The devices a buffer lives on, in its sharding's order. (jaxlib's arrays only
        gain a `devices()` method when the jax package patches them.)"""
        sharding = buf._sharding
        device = getattr(sharding, "_device", None)
        if device is not None:
            return [device]
        return list(sharding._devices)

    @staticmethod
    def shards(buf) -> list:
        """(device, single-device buffer) for each shard of a buffer. (Splitting a
        multi-device array makes jaxlib import the jax package when it is installed, and
        carry on without it: mjax keeps jax out, whose import on a TPU VM warns.)"""
        with _jax_import_refused():
            parts = buf._arrays
        return [(XlaBackend.buffer_devices(p)[0], p) for p in parts]

    # ---- layouts ---------------------------------------------------------------------
    def relayout(self, buf, minor_to_major: tuple, text: str | None = None):
        """`buf`'s values in a buffer laid out `minor_to_major` (XLA's order of
        dimensions, fastest-varying first) on the same device: an identity program whose
        parameter and result layouts differ, which XLA compiles into a transposing copy.
        `text`: the whole layout where it has tiles (a TPU's "{0,1:T(8,128)}")."""
        if buf.is_deleted():    # (its layout cannot be read)
            raise RuntimeError("Array has been deleted.")
        devices = self.buffer_devices(buf)
        minor_to_major = tuple(int(d) for d in minor_to_major)
        xla_layout = buf._pjrt_layout._xla_layout()
        have = tuple(xla_layout.minor_to_major())
        if have == minor_to_major and (text is None or str(xla_layout) == text):
            return buf
        if len(devices) != 1:
            # Each device's shard copied into the layout; the array remade of them.
            return _jax.ArrayImpl(buf.aval, buf._sharding, [
                self.relayout(part, minor_to_major, text) for part in buf._arrays],
                True, True)
        shape, dtype = tuple(buf.aval.shape), np.dtype(buf.aval.dtype)
        key = (shape, dtype, have, minor_to_major, text, devices[0])
        exe = self._relayouts.get(key)
        if exe is None:
            tensor = "tensor<" + "".join(f"{d}x" for d in shape) + \
                element_type_name(dtype) + ">"
            text = (f'func.func public @main(%arg0: {tensor} {{mhlo.layout_mode = '
                    f'"{layout_mode_text(have)}"}}) -> ({tensor} {{mhlo.layout_mode = '
                    f'"{text or layout_mode_text(minor_to_major)}"}}) {{\n'
                    f'  return %arg0 : {tensor}\n}}\n')
            exe = self._relayouts[key] = self.compile(text, devices,
                                                      out_avals=[_Aval(shape, dtype)])
        return exe.execute([buf])[0]

    # ---- DLPack ----------------------------------------------------------------------
    def from_dlpack(self, producer, device=None, copy=None):
        """A buffer on `device` holding a DLPack producer's data (no copy for suitably
        aligned CPU memory unless `copy`)."""
        device = device or self.client.devices()[0]
        return _jax.dlpack_managed_tensor_to_buffer(producer.__dlpack__(), device, None, copy)

    def from_device_dlpack(self, producer, dl_kind: int, device_id: int, copy=None):
        """A buffer viewing a GPU DLPack producer's memory on this client's device
        `device_id`, the producer asked to make it ready on that device's stream (JAX's
        way: no copy, no host round trip)."""
        device = self.client.device_from_local_hardware_id(device_id)
        try:
            stream = device.get_stream_for_external_ready_events()
        except _jax.JaxRuntimeError:
            stream = None
        capsule = producer.__dlpack__(stream=stream)
        return _jax.dlpack_managed_tensor_to_buffer(capsule, device, stream, copy, dl_kind)

    @staticmethod
    def to_dlpack(buf, stream=None):
        """A DLPack capsule viewing `buf` (the consumer keeps the buffer alive)."""
        return _jax.buffer_to_dlpack_managed_tensor(buf, stream)

    @staticmethod
    def dlpack_device(buf) -> tuple[int, int]:
        kind = platform_record(buf.platform()).dlpack_kind
        dev = next(iter(buf.devices())) if hasattr(buf, "devices") else None
        return kind, getattr(dev, "local_hardware_id", None) or getattr(dev, "id", 0) or 0

    def compile(self, stablehlo_text: str, devices=None, *, num_partitions: int = 1,
                options: xc.CompileOptions | None = None, out_avals=None,
                host_callbacks=None, module=None, partitioning=None) -> Executable:
        """Compiles StableHLO text; `out_avals` (shape/dtype of each result) makes
        execution cheaper. `host_callbacks` are the Python callables the program's host
        callback custom calls name by `backend_config = {index = i}`; XLA takes such a
        program as the module object the text was printed from (`module`).
        `partitioning` (over several devices): (the partitioner, 'shardy' or 'gspmd'; per
        result of @main whether XLA may choose its sharding), as
        mjax.passes.pipeline.partitioning finds it on the module before printing."""
        devices = list(devices or self.client.devices()[:1])
        # Identical programs (a function re-jitted, `lower().compile()` then a call) share
        # one XLA executable. Custom options and host callbacks bypass the cache.
        settings = build_settings.key()
        key = (stablehlo_text, tuple(devices), num_partitions, settings) \
            if options is None and not host_callbacks else None
        loaded = self._compiled.get(key) if key else None
        if loaded is not None:
            with contextlib.suppress(KeyError):    # (another thread evicted it)
                self._compiled.move_to_end(key)
        if loaded is None:
            ir_dump.dump(stablehlo_text)        # (jax_dump_ir_to)
            opts = options or _with_build_settings(xc.CompileOptions())
            if num_partitions == 1 and len(devices) == 1 and \
                    devices[0] != self.client.devices()[0]:
                # One device other than the first (jax_default_device): XLA places a
                # replica by the device assignment, not by the device list.
                opts.executable_build_options.device_assignment = \
                    xc.DeviceAssignment.create(np.array([[devices[0].id]]))
            if num_partitions > 1:
                build = opts.executable_build_options
                build.num_partitions = num_partitions
                build.use_spmd_partitioning = True
                build.device_assignment = xc.DeviceAssignment.create(
                    np.array([[d.id for d in devices]]))
                if partitioning is None:
                    raise ValueError("compiling for several partitions needs the module's "
                                     "`partitioning` (mjax.passes.pipeline.partitioning)")
                partitioner, free = partitioning
                # Results without a requested sharding keep the layout XLA propagates
                # (GSPMD would override a requested one too: only the others may).
                build.allow_spmd_sharding_propagation_to_output = list(free)
                # (a module with no shardings at all goes to Shardy, as JAX's default:
                # GSPMD would log its deprecation warning)
                build.use_shardy_partitioner = partitioner == "shardy"
            if host_callbacks:
                loaded = self._compile_with_callbacks(stablehlo_text, module, devices,
                                                      opts, host_callbacks)
            else:
                loaded = self._load_or_compile(stablehlo_text, devices, num_partitions,
                                               opts)
            if key:
                self._compiled[key] = loaded
                with contextlib.suppress(KeyError):
                    while len(self._compiled) > _SHARED_EXECUTABLES:
                        self._compiled.popitem(last=False)
        exe = Executable(self, loaded, devices, stablehlo_text, out_avals)
        # (XLA's CPU runs a program's callbacks before its execution returns; elsewhere
        # they are host transfers served while the program runs on)
        exe.async_callbacks = bool(host_callbacks) and self.platform != "cpu"
        return exe

    def _compile_with_callbacks(self, text: str, module, devices, opts, host_callbacks):
        """XLA compilation of a program calling Python: never from or into the persistent
        cache (callables cannot be serialized). XLA takes the module object here (parsed
        from the text where the caller has none)."""
        if module is None:
            with context():
                module = ir.Module.parse(text)
        start = time.perf_counter()
        loaded = self.client.compile_and_load(module, xc.DeviceList(tuple(devices)), opts,
                                              host_callbacks=list(host_callbacks))
        self.stats["compiles"] += 1
        for listener in self.compile_listeners:
            listener(text, time.perf_counter() - start)
        return loaded

    def _load_or_compile(self, text: str, devices, num_partitions: int, opts):
        """An executable from the persistent cache when configured, else from XLA (then
        stored if it took at least the configured minimum compile time, or replaces an
        unusable entry)."""
        device_list = xc.DeviceList(tuple(devices))
        pkey = expected = None
        if compilation_cache.settings.active():
            expected = compilation_cache.program_signature(text)
        if expected is not None:
            pkey = compilation_cache.cache_key(
                text, platform=self.platform, platform_version=self.client.platform_version,
                device_kinds=[d.device_kind for d in devices], num_devices=len(devices),
                num_partitions=num_partitions, options=opts.SerializeAsString().hex())
            loaded = self._load_cached(pkey, expected, device_list, opts, num_partitions)
            if loaded is not None:
                self.stats["cache_hits"] += 1
                return loaded
        start = time.perf_counter()
        loaded = self.client.compile_and_load(text, device_list, opts)
        elapsed = time.perf_counter() - start
        self.stats["compiles"] += 1
        for listener in self.compile_listeners:
            listener(text, elapsed)
        if pkey and (elapsed >= compilation_cache.settings.min_compile_time_secs or
                     compilation_cache.holds(pkey)):
            compilation_cache.put(pkey, self.client.serialize_executable(loaded),
                                  platform=self.platform, signature=expected)
        return loaded

    def _load_cached(self, pkey: str, expected, device_list, opts, num_partitions: int):
        """The cached executable for `pkey` if its entry is sound and the executable takes
        and returns the program's types (per-device shards under SPMD); else None."""
        payload = compilation_cache.get(pkey, platform=self.platform, signature=expected)
        if payload is None:
            return None
        try:
            loaded = self.client.deserialize_executable(payload, device_list, opts)
            actual = executable_signature(loaded)
        except Exception:  # noqa: BLE001 - whatever jaxlib cannot load is a miss
            return None
        return loaded if expected.matches(actual, exact_shapes=num_partitions == 1) else None


def _jaxlib_kind(kind: str | None) -> str | None:
    """A memory kind as jaxlib's shardings take it: None for the device's default."""
    return None if kind in (None, "device") else kind


def _output_memory_kinds(loaded, text: str, out_avals) -> list | None:
    """The memory kind XLA gives each output of a program whose results name host
    memory kinds (`mhlo.memory_kind`); None for other programs (all in device memory)."""
    if out_avals is None or '"pinned_host"' not in text and '"unpinned_host"' not in text:
        return None
    try:
        kinds = list(loaded.get_output_memory_kinds()[0])
    except Exception:  # noqa: BLE001 - executables that do not report memory kinds
        return None
    return kinds if len(kinds) == len(out_avals) else None


# Whether some program has run with non-default layouts: from then on every execution
# checks that its arguments are laid out as its parameters (see match_layouts).
LAYOUTS_IN_USE = [False]


def layout_mode_text(minor_to_major) -> str:
    """A layout as StableHLO's `mhlo.layout_mode` attribute spells it: "{1,0}"."""
    return "{" + ",".join(str(int(d)) for d in minor_to_major) + "}"


def _has_custom_layouts(loaded) -> bool:
    """Whether a compiled program takes or returns a buffer in a non-default layout."""
    try:
        layouts = list(loaded.get_parameter_layouts()) + list(loaded.get_output_layouts())
    except Exception:  # noqa: BLE001 - executables that do not report layouts
        return False
    for layout in layouts:
        order = tuple(layout._xla_layout().minor_to_major())
        if order != tuple(range(len(order)))[::-1]:
            return True
    return False


def executable_signature(loaded) -> compilation_cache.Signature:
    """The parameter and result types of a compiled XLA executable, spelled as in
    StableHLO (an SPMD executable's are its per-device shards)."""
    module = loaded.hlo_modules()[0]
    shape = xc.XlaComputation(module.as_serialized_hlo_module_proto()).program_shape()
    result = shape.result_shape()
    outputs = result.tuple_shapes() if result.is_tuple() else [result]
    return compilation_cache.Signature(tuple(map(_mlir_type, shape.parameter_shapes())),
                                       tuple(map(_mlir_type, outputs)))


def _mlir_type(shape) -> str:
    if shape.is_token():
        return "!stablehlo.token"
    if not shape.is_array():
        return str(shape)           # (a tuple: never a StableHLO parameter)
    name = shape.xla_element_type().name            # F32, S8, U32, PRED, C64, F8E4M3FN
    element = _ELEMENT_TYPES.get(name)
    if element is None:                              # f32, i8, ui32, f8E4M3FN
        element = {"F": "f", "S": "i", "U": "ui"}.get(name[0], name[0]) + name[1:]
    return "tensor<" + "".join(f"{d}x" for d in shape.dimensions()) + element + ">"


_ELEMENT_TYPES = {"PRED": "i1", "BF16": "bf16", "C64": "complex<f32>",
                  "C128": "complex<f64>"}


def block_until_ready(buffers) -> None:
    """Waits for every buffer: jaxlib's in one call, as jax.block_until_ready does (one
    wait for a train step's hundred outputs, not one each), any other backend's (IREE's)
    one by one."""
    own = []
    for buf in buffers:
        if type(buf) is _jax.ArrayImpl:
            own.append(buf)
        else:
            buf.block_until_ready()
    if len(own) == 1:
        own[0].block_until_ready()
    elif own:
        xc.batched_block_until_ready(own)


# CPU devices of the CPU client: the frontend's jax_num_cpu_devices, set before the first
# backend is made (empty: XLA's default, --xla_force_host_platform_device_count).
_CPU_DEVICE_COUNT: list[int] = []


def set_num_cpu_devices(n: int | None) -> None:
    _CPU_DEVICE_COUNT[:] = [] if n is None or n < 0 else [int(n)]


def _refuse_serializing(fn):
    raise ValueError(f"a program calling back into Python ({fn!r}) cannot be serialized "
                     f"(mjax never stores such programs in the compilation cache)")


def make_cpu_client(platform: str = "cpu", library: str | None = None):
    """XLA's CPU client (the 'cpu' platform record's), with set_num_cpu_devices' count."""
    return xc.make_cpu_client(num_devices=_CPU_DEVICE_COUNT[0] if _CPU_DEVICE_COUNT else None)


register_backend("xla", XlaBackend)
