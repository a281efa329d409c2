"""The IREE backend: StableHLO in (as a portable artifact), IREE's compiler and runtime.

    backend = IreeBackend()                           # llvm-cpu on the local-task driver
    exe = backend.compile(stablehlo_text, out_avals=avals)
    outs = exe.execute([backend.put(np.ones(3, np.float32))])

It has the XlaBackend's interface (devices, put, compile -> executable with execute), so
the frontend runs eager ops, `jit`, AD and control flow on it unchanged. Buffers are
`IreeBuffer`s, with the methods `mjax.Array` calls on a buffer. Buffers of another backend
(an XLA array passed to an IREE-compiled function) are read to the host and sent over.
Needs the `iree` extra: `pip install -e ".[iree]"`. Registered as the 'iree' backend of
runtime/backend.py (`Platform.parse("iree-cuda")` -> IreeBackend("cuda")); it imports no
other backend.
"""
from __future__ import annotations

import atexit
import collections
import gc
import hashlib
import re
import time
import weakref

import numpy as np
from jaxlib.mlir.dialects import stablehlo

from mjax.runtime import compilation_cache
from mjax.runtime.backend import buffer_to_numpy, register_backend
from mjax.runtime.iree_rewrites import rewrite_for_iree

# IREE demotes 64-bit types by default; mjax programs mean the types they say (x64).
_KEEP_TYPES = ["--iree-input-demote-f64-to-f32=false", "--iree-input-demote-i64-to-i32=false"]
_TARGETS = {"cpu": ("llvm-cpu", "local-task", ["--iree-llvmcpu-target-cpu=host"]),
            "cuda": ("cuda", "cuda", []),
            "vulkan": ("vulkan-spirv", "vulkan", [])}


def _iree():
    """IREE's compiler and runtime, imported when the first IreeBackend is made: they are
    an optional extra and slow to import, and most processes never use them."""
    try:
        import iree.compiler as compiler
        import iree.runtime as runtime
    except ImportError as e:
        raise RuntimeError("the IREE backend needs the `iree` extra: pip install -e "
                           "\".[iree]\" (iree-base-compiler, iree-base-runtime)") from e
    return compiler, runtime


class IreeDevice:
    """One IREE device, shaped like jaxlib's Device for what mjax reads."""

    def __init__(self, platform: str, index: int = 0, backend=None):
        self.platform = "iree"
        self.device_kind = f"iree-{platform}"
        self.id = index
        self.process_index = 0
        self.backend = backend      # the IreeBackend that owns it (device_put goes there)

    def __repr__(self):
        return f"IreeDevice({self.device_kind}:{self.id})"


class IreeBuffer:
    """An IREE device array with the buffer methods `mjax.Array` uses. A result of an
    asynchronous execution holds (future, index) until it is first read."""

    __slots__ = ("_array", "_pending", "device", "_deleted", "__weakref__")

    def __init__(self, array, device: IreeDevice, pending=None):
        self._array = array
        self._pending = pending
        self.device = device
        self._deleted = False
        if device.backend is not None:
            device.backend._live.add(self)      # (released in order at exit: close())

    @property
    def array(self):
        if self._pending is not None:
            future, index = self._pending
            self._array = future.result()[index]   # re-raises the execution's error
            self._pending = None
        return self._array

    def platform(self) -> str:
        return "iree"

    def devices(self):
        return {self.device}

    def to_numpy(self, dtype=None) -> np.ndarray:
        self._check()
        return np.array(self.array.to_host(), copy=True)

    def host_view(self) -> np.ndarray:
        """The buffer's memory as a NumPy array (no copy where IREE can map it: the CPU
        drivers). The view keeps the mapping alive after the buffer is deleted."""
        self._check()
        return self.array.to_host()

    def block_until_ready(self):
        self._check()
        self.array   # waits for the execution that makes it
        return self

    def is_ready(self) -> bool:
        return self._pending is None or self._pending[0].done()

    def is_deleted(self) -> bool:
        return self._deleted

    def delete(self):
        self._deleted = True
        self._array = self._pending = None

    def on_device_size_in_bytes(self) -> int:
        self._check()
        return int(self.array._buffer_view.byte_length)

    def unsafe_buffer_pointer(self) -> int:
        self._check()
        if not self.array._is_mappable():
            raise NotImplementedError("unsafe_buffer_pointer: this IREE buffer is not "
                                      "host-mappable (a GPU driver's memory)")
        return int(self.host_view().ctypes.data)

    def _check(self):
        if self._deleted:
            raise RuntimeError("Array has been deleted (IREE buffer)")


class IreeExecutable:
    """One compiled module's `main`, run through IREE's runtime. With known result avals
    it runs on the backend's worker thread and returns at once (as XLA's dispatch does);
    results wait for it when read."""

    def __init__(self, backend: "IreeBackend", fn, text: str, out_avals=None):
        self.backend = backend
        self.fn = fn
        self.text = text
        self.devices = backend.devices()
        self.out_avals = out_avals
        self.donated = _donated_args(text)
        self.in_place = any(op in text for op in _IN_PLACE_OPS)
        backend._programs.add(self)

    def _run(self, buffers) -> list:
        args = [self.backend.as_device_array(b) for b in buffers]
        if self.in_place:
            # IREE may sort, scatter or update an argument's storage in place (a buffer
            # it did not allocate itself): such programs get private copies.
            args = [a._copy_to_host() if hasattr(a, "_buffer_view") else a for a in args]
        results = self.fn(*args)
        if results is None:
            return []
        results = list(results) if isinstance(results, (list, tuple)) else [results]
        return results

    def execute(self, buffers: list) -> list:
        for k, b in enumerate(buffers):
            if isinstance(b, IreeBuffer) and b._deleted:
                # (jaxlib's Execute() raises ValueError for a deleted or donated buffer)
                raise ValueError(f"INVALID_ARGUMENT: Invalid buffer passed to Execute() as "
                                 f"argument {k}: Buffer has been deleted or donated.")
        if self.donated:
            # IREE does not alias inputs to outputs, but a donated input is still gone
            # after the call, as on XLA: the call takes it over, the caller's is deleted.
            buffers = list(buffers)
            for k in self.donated:
                b = buffers[k] if k < len(buffers) else None
                if isinstance(b, IreeBuffer):
                    buffers[k] = IreeBuffer(b._array, b.device, b._pending)
                    b.delete()
                elif hasattr(b, "delete"):      # another backend's: read it, then drop it
                    buffers[k] = self.backend.as_device_array(b)
                    b.delete()
        dev = self.devices[0]
        if self.out_avals is None:
            return [IreeBuffer(r, dev) for r in self._run(buffers)]
        # One worker runs executions in call order, so an argument made by an earlier
        # call is ready when a later one reads it.
        future = self.backend.submit(self._run, list(buffers))
        return [IreeBuffer(None, dev, (future, i)) for i in range(len(self.out_avals))]

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
        self._devices = [IreeDevice(platform, 0, self)]
        self._compiled: dict = {}
        self.stats = {"compiles": 0, "cache_hits": 0}
        self.compile_listeners: list = []
        self._executor = None
        self._in_flight = collections.deque()   # submitted executions, oldest first
        self._live = weakref.WeakSet()     # this backend's IreeBuffers
        self._programs = weakref.WeakSet()     # and IreeExecutables
        atexit.register(self.close)

    def close(self):
        """Releases this backend's IREE objects in order: running programs finish, then
        buffers go, then compiled programs and their contexts, then the device. Runs at
        interpreter exit, while IREE's runtime is still whole (left to the interpreter's
        teardown, objects kept alive by reference cycles were freed in any order, after
        their runtime, and reported as leaked). Buffers used after it raise as deleted."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        self._in_flight.clear()
        gc.collect()
        for buf in list(self._live):
            buf.delete()
        self._live = weakref.WeakSet()
        for exe in list(self._programs):
            exe.fn = None           # (jit caches hold executables past this point)
        self._compiled.clear()
        self.config = None          # the driver, device and VM instance, last
        gc.collect()

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

    @staticmethod
    def to_numpy(buf: IreeBuffer, dtype=None) -> np.ndarray:
        return buf.to_numpy(dtype)

    def put(self, array: np.ndarray, device=None) -> IreeBuffer:
        array = np.asarray(array, order="C")   # (ascontiguousarray makes 0-d arrays 1-d)
        return IreeBuffer(self.runtime.asdevicearray(self.config.device, array),
                          self._devices[0])

    def executor(self):
        """The one worker thread executions run on (made on first use)."""
        if self._executor is None:
            # (imported here: concurrent.futures is slow to import, and only processes
            # that run IREE programs need it)
            from concurrent.futures import ThreadPoolExecutor
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="mjax-iree")
        return self._executor

    def submit(self, run, buffers):
        """Queues an execution on the worker; waits for the oldest while more than
        _MAX_IN_FLIGHT are queued. (A caller that never reads its results would otherwise
        queue without bound: 10^5 quick calls left ~50,000 executions, ~100 MB, waiting.)"""
        future = self.executor().submit(run, buffers)
        queue = self._in_flight
        # Weak references: a finished execution's results are freed with their buffers
        # (the worker holds a queued execution's future until it has run).
        queue.append(weakref.ref(future))
        while queue:
            try:
                oldest = queue[0]()
                if len(queue) <= _MAX_IN_FLIGHT and oldest is not None and \
                        not oldest.done():
                    break
                queue.popleft()
            except IndexError:      # (another thread took it)
                break
            if oldest is not None:
                oldest.exception()  # waits; an error is raised where a result is read
        return future

    # ---- DLPack ----------------------------------------------------------------------
    def from_dlpack(self, producer, device=None, copy=None) -> IreeBuffer:
        """A buffer over a DLPack producer's host memory: imported without a copy on the
        CPU drivers when it is aligned as IREE's buffers are (the buffer keeps the
        producer alive), else copied (as XLA's CPU client does)."""
        host = np.from_dlpack(producer)
        # IREE's kernels assume their buffers' 64-byte alignment (aligned vector loads):
        # a program reading a less aligned import crashed the process.
        if copy or self.target != "llvm-cpu" or not host.flags.c_contiguous or \
                not host.flags.writeable or host.dtype == bool or \
                host.ctypes.data % _HAL_ALIGNMENT:
            return self.put(host)
        rt = self.runtime
        element_type = rt.array_interop.map_dtype_to_element_type(host.dtype)
        if element_type is None:
            return self.put(host)
        hal = self.config.device.allocator.import_host_allocation(
            host, int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE),
            int(rt.BufferUsage.DEFAULT | rt.BufferUsage.MAPPING))
        view = rt.HalBufferView(hal, host.shape, element_type)
        return IreeBuffer(rt.DeviceArray(self.config.device, view), self._devices[0])

    @staticmethod
    def to_dlpack(buf: IreeBuffer, stream=None):
        """A DLPack capsule over the buffer's host view (no copy on the CPU drivers)."""
        return buf.host_view().__dlpack__()

    @staticmethod
    def dlpack_device(buf) -> tuple[int, int]:
        return (1, 0)   # kDLCPU: the capsule is a host view (a copy off the CPU drivers)

    def as_device_array(self, buf):
        """What IREE's invocation takes: our buffers as they are; anything else (numpy,
        another backend's buffer) through the host."""
        if isinstance(buf, IreeBuffer):
            buf._check()
            return buf.array
        if isinstance(buf, np.ndarray):
            return np.asarray(buf, order="C")
        return buffer_to_numpy(buf)

    def compile(self, stablehlo_text: str, devices=None, *, num_partitions: int = 1,
                options=None, out_avals=None, host_callbacks=None, module=None,
                partitioning=None) -> IreeExecutable:
        if host_callbacks:
            raise NotImplementedError("the IREE backend cannot call Python host callbacks "
                                      "(pure_callback, io_callback, debug.print/callback); "
                                      "use the XLA backend")
        if num_partitions > 1:
            raise NotImplementedError("the IREE backend compiles for one device; SPMD "
                                      "partitioning needs the XLA backend")
        fn = self._compiled.get(stablehlo_text)
        if fn is None:
            # IREE takes tf.aliasing_output as a promise that the input is dead once the
            # output is written and writes into it, even when the program reads the input
            # later (wrong results, then a crash). Donation is kept as deletion only.
            text = rewrite_for_iree(_strip_aliasing(stablehlo_text))
            fn = self._compiled[stablehlo_text] = self._load_or_compile(text)
        return IreeExecutable(self, fn, stablehlo_text, out_avals)

    def _load_or_compile(self, text: str):
        """`main` of the compiled module: from the persistent cache when configured and
        its entry is sound and declares the program's types, else compiled (then stored
        if that took at least the configured minimum time, or replaces an unusable
        entry)."""
        key = expected = None
        platform = "iree-" + self.target
        if compilation_cache.settings.active():
            expected = compilation_cache.program_signature(text)
        if expected is not None:
            key = compilation_cache.cache_key(
                text, platform=platform, platform_version=_iree_version(),
                device_kinds=[d.device_kind for d in self._devices], num_devices=1,
                num_partitions=1, options=" ".join(self.flags))
            hit = compilation_cache.get(key, platform=platform, signature=expected)
            if hit is not None:
                try:
                    fn = self._load(hit, expected)
                except Exception:  # noqa: BLE001 - a module IREE cannot load is a miss
                    fn = None
                if fn is not None:
                    self.stats["cache_hits"] += 1
                    return fn
        start = time.perf_counter()
        # The portable format (VHLO) has no CHLO ops (acos, erf_inv, ...) and jaxlib
        # does not register the CHLO legalization: hand IREE the text, whose input
        # conversion legalizes CHLO itself.
        artifact = text
        if "chlo." not in text:
            try:
                artifact = stablehlo.serialize_portable_artifact_str(
                    text, stablehlo.get_current_version())
            except ValueError:
                pass
        vmfb = self._compile_artifact(artifact)
        elapsed = time.perf_counter() - start
        self.stats["compiles"] += 1
        for listener in self.compile_listeners:
            listener(text, elapsed)
        if key and (elapsed >= compilation_cache.settings.min_compile_time_secs or
                    compilation_cache.holds(key)):
            compilation_cache.put(key, vmfb, platform=platform, signature=expected)
        return self._load(vmfb)

    def _compile_artifact(self, artifact: str) -> bytes:
        def run(extra):
            return self.compiler.compile_str(artifact, input_type="stablehlo",
                                             target_backends=[self.target],
                                             extra_args=list(self.flags) + extra)
        try:
            return run([])
        except self.compiler.CompilerToolError as e:
            message = str(e)
        if self.target == "llvm-cpu" and "undefined symbol" in message:
            # IREE's embedded ELF has no libm: float64 sin/exp/... (which IREE does not
            # approximate itself) stay calls to libm. A system shared library links them;
            # IREE's compile-time constant evaluation still links embedded: off.
            try:
                return run(["--iree-llvmcpu-link-embedded=false", "--iree-opt-const-eval=false"])
            except self.compiler.CompilerToolError as e:
                message = str(e)
        raise RuntimeError(f"IREE could not compile the program: "
                           f"{_first_error(message)}") from None

    def _load(self, vmfb: bytes, expected=None):
        """The module's `main`; None if `expected` (a Signature) is not what it declares."""
        ctx = self.runtime.SystemContext(config=self.config)
        module = self.runtime.VmModule.copy_buffer(ctx.instance, vmfb)
        if expected is not None and not expected.matches(module_signature(module)):
            return None
        ctx.add_vm_module(module)
        return ctx.modules[module.name]["main"]


_MAX_IN_FLIGHT = 16    # executions queued ahead of the caller (each holds ~1.5 kB)
_HAL_ALIGNMENT = 64    # bytes: IREE's heap buffers and what its kernels assume

_ALIASING = re.compile(r"(tf\.aliasing_output|jax\.buffer_donor)\s*=\s*[^,}]*(,\s*)?")


def _strip_aliasing(text: str) -> str:
    if "tf.aliasing_output" not in text and "jax.buffer_donor" not in text:
        return text
    return re.sub(r" \{\s*\}", "", _ALIASING.sub("", text)).replace(", }", "}")


# Ops IREE may compute in the storage of their operand (seen: sort, top_k, scatter,
# dynamic_update_slice on buffers made by `put`).
_IN_PLACE_OPS = ("stablehlo.sort", "stablehlo.scatter", "stablehlo.dynamic_update_slice",
                 "top_k", "stablehlo.custom_call")


def _donated_args(text: str) -> list[int]:
    """Indices of `main`'s arguments marked donated (tf.aliasing_output, jax.buffer_donor)."""
    start = text.find("func.func public @main(")
    start = text.find("func.func @main(") if start < 0 else start
    if start < 0 or ("tf.aliasing_output" not in text and "jax.buffer_donor" not in text):
        return []
    signature = text[start:text.find("{\n", start)]
    return [int(m[1]) for m in re.finditer(r"%arg(\d+):([^%]*)", signature)
            if "tf.aliasing_output" in m[2] or "jax.buffer_donor" in m[2]]


# Why IREE rejects an op, for the ops it is known not to lower.
_WHY = {"stablehlo.custom_call": "IREE has no implementation of this library call",
        "stablehlo.cholesky": "IREE does not lower Cholesky factorization",
        "stablehlo.triangular_solve": "IREE does not lower triangular solves",
        "stablehlo.fft": "IREE lowers FFTs of power-of-two lengths only"}
_ILLEGAL = re.compile(r"^(?P<where>\S+?):(?P<line>\d+):(?P<col>\d+): error: failed to "
                      r"legalize operation '(?P<op>[\w.]+)'(?P<rest>.*)$", re.M)


def _first_error(message: str) -> str:
    """IREE's diagnostic cut to what the user needs: the op, its source line, why."""
    missing = sorted(set(re.findall(r"undefined symbol: (\w+)", message)))
    if missing:
        return (f"the compiled code calls {'/'.join(missing)}, which IREE's runtime "
                f"does not provide; use float32 or the XLA backend")
    m = _ILLEGAL.search(message)
    if m:
        op = m["op"]
        target = re.search(r'call_target_name = "([^"]+)"', m["rest"])
        what = f"`{op}`" + (f" (call target {target[1]})" if target else "")
        where = f" at {m['where']}:{m['line']}"
        why = _WHY.get(op, "IREE has no lowering for this op")
        return (f"{what}{where}: {why}. Run this function on the XLA backend "
                f"(MJAX_BACKEND=xla, or jit(f, backend='cpu')).")
    lines = [l for l in message.splitlines() if "error:" in l]
    return "\n".join(lines[:5]) if lines else message[-2000:]


def module_signature(module) -> compilation_cache.Signature | None:
    """The types a compiled module's `main` declares (IREE's ABI declaration), spelled
    as in StableHLO."""
    main = module.lookup_function("main")
    declaration = main.reflection.get("iree.abi.declaration", "") if main else ""
    # IREE declares unsigned integers signless, with the StableHLO type as an encoding.
    return compilation_cache.program_signature(_ENCODING.sub(r"\1", declaration))


_ENCODING = re.compile(r"\S+ \{iree\.abi\.encoding = ([^{}]+?)\}")


def _iree_version() -> str:
    from importlib import metadata    # (slow to import; only the disk cache needs it)
    try:
        return metadata.version("iree-base-compiler")
    except metadata.PackageNotFoundError:
        return hashlib.sha256(b"unknown").hexdigest()[:8]


register_backend("iree", IreeBackend)

__all__ = ["IreeBackend", "IreeBuffer", "IreeExecutable", "IreeDevice"]
