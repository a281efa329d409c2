"""The IREE backend: StableHLO in (as a portable artifact), IREE's compiler and runtime.

    backend = IreeBackend()                           # llvm-cpu on the local-task driver
    exe = backend.compile(stablehlo_text, out_avals=avals)
    outs = exe.execute([backend.put(np.ones(3, np.float32))])

It has the XlaBackend's interface (devices, put, compile -> executable with execute), so
the frontend runs eager ops, `jit`, AD and control flow on it unchanged. Buffers are
`IreeBuffer`s, with the methods `mjax.Array` calls on a buffer. Buffers of another backend
(an XLA array passed to an IREE-compiled function) are read to the host and sent over.
Needs the `iree` extra: `pip install -e ".[iree]"`.
"""
from __future__ import annotations

import hashlib
import re

import numpy as np

from mjax.runtime import compilation_cache

# IREE demotes 64-bit types by default; mjax programs mean the types they say (x64).
_KEEP_TYPES = ["--iree-input-demote-f64-to-f32=false", "--iree-input-demote-i64-to-i32=false"]
_TARGETS = {"cpu": ("llvm-cpu", "local-task", ["--iree-llvmcpu-target-cpu=host"]),
            "cuda": ("cuda", "cuda", []),
            "vulkan": ("vulkan-spirv", "vulkan", [])}


def _iree():
    try:
        import iree.compiler as compiler
        import iree.runtime as runtime
    except ImportError as e:
        raise RuntimeError("the IREE backend needs the `iree` extra: pip install -e "
                           "\".[iree]\" (iree-base-compiler, iree-base-runtime)") from e
    return compiler, runtime


class IreeDevice:
    """One IREE device, shaped like jaxlib's Device for what mjax reads."""

    def __init__(self, platform: str, index: int = 0):
        self.platform = "iree"
        self.device_kind = f"iree-{platform}"
        self.id = index
        self.process_index = 0

    def __repr__(self):
        return f"IreeDevice({self.device_kind}:{self.id})"


class IreeBuffer:
    """An IREE device array with the buffer methods `mjax.Array` uses."""

    __slots__ = ("array", "device", "_deleted")

    def __init__(self, array, device: IreeDevice):
        self.array = array
        self.device = device
        self._deleted = False

    def platform(self) -> str:
        return "iree"

    def devices(self):
        return {self.device}

    def to_numpy(self, dtype=None) -> np.ndarray:
        self._check()
        return np.array(self.array.to_host(), copy=True)

    def block_until_ready(self):
        self._check()
        return self   # IREE's synchronous invocation has finished when results exist

    def is_ready(self) -> bool:
        return True

    def is_deleted(self) -> bool:
        return self._deleted

    def delete(self):
        self._deleted = True
        self.array = None

    def on_device_size_in_bytes(self) -> int:
        self._check()
        host = self.array.to_host()
        return int(host.nbytes)

    def unsafe_buffer_pointer(self) -> int:
        raise NotImplementedError("unsafe_buffer_pointer is not available for IREE buffers")

    def _check(self):
        if self._deleted:
            raise RuntimeError("Array has been deleted (IREE buffer)")


class IreeExecutable:
    """One compiled module's `main`, run through IREE's runtime."""

    def __init__(self, backend: "IreeBackend", fn, text: str, out_avals=None):
        self.backend = backend
        self.fn = fn
        self.text = text
        self.devices = backend.devices()
        self.out_avals = out_avals

    def execute(self, buffers: list) -> list:
        args = [self.backend.as_device_array(b) for b in buffers]
        results = self.fn(*args)
        if results is None:
            results = []
        elif not isinstance(results, (list, tuple)):
            results = [results]
        dev = self.devices[0]
        return [IreeBuffer(r, dev) for r in results]

    def run_numpy(self, *arrays) -> list[np.ndarray]:
        return [b.to_numpy() for b in self.execute([np.asarray(a) for a in arrays])]

    def hlo_text(self) -> str:
        return self.text      # IREE has no HLO; the StableHLO it compiled

    def cost_analysis(self) -> dict:
        return {}


class IreeBackend:
    """Compiles StableHLO with IREE for one target ('cpu': llvm-cpu) and runs it."""

    name = "iree"

    def __init__(self, platform: str = "cpu"):
        if platform not in _TARGETS:
            raise ValueError(f"IREE backend: unknown target platform {platform!r}; "
                             f"known: {', '.join(_TARGETS)}")
        self.compiler, self.runtime = _iree()
        self.target, driver, flags = _TARGETS[platform]
        self.flags = flags + _KEEP_TYPES
        self.platform = "iree"
        self.config = self.runtime.Config(driver)
        self._devices = [IreeDevice(platform)]
        self._compiled: dict = {}
        self.stats = {"compiles": 0, "cache_hits": 0}
        self.compile_listeners: list = []

    def devices(self):
        return list(self._devices)

    def sharding(self, device):
        return device

    @staticmethod
    def buffer_devices(buf) -> list:
        return list(buf.devices())

    @staticmethod
    def shards(buf) -> list:
        return [(buf.device, buf)]

    def put(self, array: np.ndarray, device=None) -> IreeBuffer:
        array = np.asarray(array, order="C")   # (ascontiguousarray makes 0-d arrays 1-d)
        return IreeBuffer(self.runtime.asdevicearray(self.config.device, array),
                          self._devices[0])

    def as_device_array(self, buf):
        """What IREE's invocation takes: our buffers as they are; anything else (numpy,
        another backend's buffer) through the host."""
        if isinstance(buf, IreeBuffer):
            buf._check()
            return buf.array
        if isinstance(buf, np.ndarray):
            return np.asarray(buf, order="C")
        from mjax.runtime.xla import buffer_to_numpy
        return buffer_to_numpy(buf)

    def compile(self, stablehlo_text: str, devices=None, *, num_partitions: int = 1,
                options=None, out_avals=None, host_callbacks=None) -> IreeExecutable:
        if host_callbacks:
            raise NotImplementedError("the IREE backend cannot call Python host callbacks "
                                      "(pure_callback, io_callback, debug.print/callback); "
                                      "use the XLA backend")
        if num_partitions > 1:
            raise NotImplementedError("the IREE backend compiles for one device; SPMD "
                                      "partitioning needs the XLA backend")
        fn = self._compiled.get(stablehlo_text)
        if fn is None:
            fn = self._compiled[stablehlo_text] = self._load(self._vmfb(stablehlo_text))
        return IreeExecutable(self, fn, stablehlo_text, out_avals)

    def _vmfb(self, text: str) -> bytes:
        """The compiled module (from the persistent cache when configured)."""
        import time

        from jaxlib.mlir.dialects import stablehlo
        key = None
        if compilation_cache.settings.directory:
            key = compilation_cache.cache_key(
                text, platform="iree-" + self.target, platform_version=_iree_version(),
                device_kinds=[d.device_kind for d in self._devices], num_devices=1,
                num_partitions=1, options=" ".join(self.flags))
            hit = compilation_cache.get(key)
            if hit is not None:
                self.stats["cache_hits"] += 1
                return hit
        start = time.perf_counter()
        try:
            artifact = stablehlo.serialize_portable_artifact_str(text, "1.0.0")
        except ValueError:
            # The portable format (VHLO) has no CHLO ops (acos, erf_inv, ...) and jaxlib
            # does not register the CHLO legalization: hand IREE the text, whose input
            # conversion legalizes CHLO itself.
            artifact = text
        try:
            vmfb = self.compiler.compile_str(artifact, input_type="stablehlo",
                                             target_backends=[self.target],
                                             extra_args=list(self.flags))
        except self.compiler.CompilerToolError as e:
            raise RuntimeError(f"IREE could not compile the program: "
                               f"{_first_error(str(e))}") from None
        elapsed = time.perf_counter() - start
        self.stats["compiles"] += 1
        for listener in self.compile_listeners:
            listener(text, elapsed)
        if key and elapsed >= compilation_cache.settings.min_compile_time_secs:
            compilation_cache.put(key, vmfb)
        return vmfb

    def _load(self, vmfb: bytes):
        ctx = self.runtime.SystemContext(config=self.config)
        module = self.runtime.VmModule.copy_buffer(ctx.instance, vmfb)
        ctx.add_vm_module(module)
        return ctx.modules[module.name]["main"]


def _first_error(message: str) -> str:
    missing = sorted(set(re.findall(r"undefined symbol: (\w+)", message)))
    if missing:
        return (f"IREE's {'/'.join(missing)} is missing for this element type (IREE's "
                f"llvm-cpu target has no float64 transcendental functions); use float32 "
                f"or the XLA backend")
    lines = [l for l in message.splitlines() if "error:" in l]
    return "\n".join(lines[:5]) if lines else message[-2000:]


def _iree_version() -> str:
    from importlib import metadata
    try:
        return metadata.version("iree-base-compiler")
    except metadata.PackageNotFoundError:
        return hashlib.sha256(b"unknown").hexdigest()[:8]


__all__ = ["IreeBackend", "IreeBuffer", "IreeExecutable", "IreeDevice"]
