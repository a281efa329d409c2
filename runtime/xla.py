"""The XLA backend: one PJRT client (CPU here; GPU where a plugin is installed).

    exe = get_backend().compile(stablehlo_text)
    outs = exe.run_numpy(np.ones(3, np.float32))     # -> list of numpy arrays
"""
from __future__ import annotations

import functools
import os
import threading

import numpy as np
from jaxlib import xla_client as xc


class _Aval:
    """What `batched_device_put` reads from an aval."""

    __slots__ = ("shape", "dtype", "weak_type", "ndim")

    def __init__(self, shape, dtype):
        self.shape, self.dtype, self.weak_type, self.ndim = shape, dtype, False, len(shape)


class DeviceSharding(xc.SingleDeviceSharding):
    """The single-device sharding jaxlib's device_put and arrays expect."""

    memory_kind = None

    def _to_xla_hlo_sharding(self, ndim):
        return xc.HloSharding.replicate()

    @property
    def _internal_device_list(self):
        return xc.DeviceList((self._device,))


class Executable:
    """A compiled program on a list of devices."""

    def __init__(self, backend: "XlaBackend", loaded, devices, text: str, out_avals=None):
        self.backend = backend
        self.loaded = loaded
        self.devices = devices
        self.text = text
        self._handlers = None
        if out_avals is not None and len(devices) == 1:
            # Result handlers wrap output buffers directly. (The generic
            # disassemble_into_single_device_arrays asks the `jax` package, when it is
            # importable, to build a sharding for every output: slower, and it imports jax.)
            sharding = backend.sharding(devices[0])
            self._handlers = [xc.array_result_handler(_Aval(a.shape, a.dtype), sharding, True,
                                                      _skip_checks=True) for a in out_avals]

    def execute(self, buffers: list) -> list:
        """Runs on device buffers (jaxlib arrays); returns output buffers."""
        results = self.loaded.execute_sharded(buffers)
        if self._handlers is not None:
            return results.consume_with_handlers(self._handlers)
        return [shards[0] for shards in results.disassemble_into_single_device_arrays()]

    def run_numpy(self, *arrays) -> list[np.ndarray]:
        """Convenience for tests: numpy in, numpy out."""
        dev = self.devices[0]
        bufs = [self.backend.put(np.asarray(a), dev) for a in arrays]
        return [np.asarray(b) for b in self.execute(bufs)]

    def hlo_text(self) -> str:
        return self.loaded.hlo_modules()[0].to_string() if hasattr(
            self.loaded, "hlo_modules") else self.loaded.get_hlo_text()

    def cost_analysis(self) -> dict:
        return dict(self.loaded.cost_analysis())


class XlaBackend:
    """Compiles StableHLO with XLA and moves host data to devices."""

    name = "xla"

    def __init__(self, platform: str = "cpu"):
        if platform != "cpu":
            raise NotImplementedError(f"XLA platform '{platform}': only 'cpu' is built in; "
                                      f"GPU needs a PJRT plugin")
        self.client = xc.make_cpu_client()
        self.platform = platform
        self._shardings: dict = {}
        self._compiled: dict = {}  # (StableHLO text, devices, partitions) -> executable

    def devices(self):
        return self.client.devices()

    def sharding(self, device) -> DeviceSharding:
        s = self._shardings.get(device)
        if s is None:
            s = self._shardings[device] = DeviceSharding(device)
        return s

    def put(self, array: np.ndarray, device=None):
        """Copies a host array to `device` (default: the first)."""
        device = device or self.client.devices()[0]
        return xc.batched_device_put(_Aval(array.shape, array.dtype), self.sharding(device),
                                     [array], [device], True, False, enable_x64=True)

    def compile(self, stablehlo_text: str, devices=None, *, num_partitions: int = 1,
                options: xc.CompileOptions | None = None, out_avals=None) -> Executable:
        """Compiles StableHLO text; `out_avals` (shape/dtype of each result) makes
        execution cheaper."""
        devices = list(devices or self.client.devices()[:1])
        # Identical programs (a function re-jitted, `lower().compile()` then a call) share
        # one XLA executable. Custom options bypass the cache.
        key = (stablehlo_text, tuple(devices), num_partitions) if options is None else None
        loaded = self._compiled.get(key) if key else None
        if loaded is None:
            opts = options or xc.CompileOptions()
            if num_partitions > 1:
                build = opts.executable_build_options
                build.num_partitions = num_partitions
                build.use_spmd_partitioning = True
            loaded = self.client.compile_and_load(stablehlo_text,
                                                  xc.DeviceList(tuple(devices)), opts)
            if key:
                self._compiled[key] = loaded
        return Executable(self, loaded, devices, stablehlo_text, out_avals)


_LOCK = threading.Lock()


@functools.cache
def _make_backend(platform: str) -> XlaBackend:
    return XlaBackend(platform)


def get_backend(platform: str | None = None) -> XlaBackend:
    """The process-wide backend, made lazily on first use."""
    with _LOCK:
        return _make_backend(platform or os.environ.get("MJAX_PLATFORM", "cpu"))
