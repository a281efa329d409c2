"""What a backend is, which backends exist, and which one the process uses.

    backend = get_backend()          # or get_backend("iree"), get_backend("cuda")
    buf = backend.put(np.ones(3))    # a Buffer on the first device
    exe = backend.compile(stablehlo_text, out_avals=avals)
    outs = exe.execute([buf])        # Buffers; buffer_to_numpy(out) reads one back

This module is the interface: the protocols `XlaBackend` (runtime/xla.py) and
`IreeBackend` (runtime/iree.py) implement, the registry they add themselves to when
imported, and `Platform`, the one parsed form of the names users write ('cpu', 'gpu',
'iree', 'iree-cuda', ...). The frontend reaches devices only through it. It holds buffers
only inside `mjax.Array` and hands them back to a backend; an executable accepts buffers
of another backend too (they travel through the host).
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import importlib
import logging
import os
import threading
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

import numpy as np


@dataclass(frozen=True)
class Platform:
    """A backend ('xla': jaxlib's PJRT; 'iree') and the device target it compiles for
    ('cpu', 'cuda', 'rocm', ...; IREE: 'cpu', 'cuda', 'vulkan')."""

    backend: str
    target: str

    @staticmethod
    def parse(name: "str | Platform") -> "Platform":
        """'cpu', 'cuda' ('gpu' is CUDA, as in JAX), 'iree' (IREE on the CPU),
        'iree-<target>'. Case and surrounding blanks do not matter."""
        return name if isinstance(name, Platform) else _parse(name)

    def __str__(self) -> str:
        if self.backend == "xla":
            return self.target
        return self.backend if self.target == "cpu" else f"{self.backend}-{self.target}"


@functools.lru_cache(maxsize=64)
def _parse(name: str) -> Platform:
    text = str(name).strip().lower()
    if text == "iree":
        return Platform("iree", "cpu")
    if text.startswith("iree-"):
        return Platform("iree", text[len("iree-"):] or "cpu")
    if not text or text == "xla":
        raise ValueError(f"{name!r} is not a platform: expected "
                         f"{', '.join(map(repr, PLATFORMS))}, 'iree' or 'iree-<target>'")
    return Platform("xla", {"gpu": "cuda"}.get(text, text))


# ---- platform records ----------------------------------------------------------------------
@dataclass(frozen=True)
class PlatformRecord:
    """What the frontend and the runtime know about one XLA platform. Adding a platform is
    its record, the runtime module that finds and opens its plugin, and, if it shares
    JAX's per-platform lowering rules, its entry in the passes' PLATFORM_RULES
    (passes/rules/tables.py; docs/design.md, "Adding a platform"). Code elsewhere names
    a platform only where the code is that platform's own (JAX's TPU SVD, Triton's ROCm
    spellings, the host CPU, JAX's public names); test_architecture.py's PLATFORM_CODE
    lists those files.

    `library` and `client` name functions ('module:function') of the platform's own
    runtime module: `library(name)` finds its PJRT plugin (None: not installed; the CPU's
    is built into jaxlib), `client(name, path)` opens it. `priority` is JAX's: the
    installed and usable platform of highest priority is the default when JAX_PLATFORMS
    is unset; `fail_quietly` platforms that fail to open are skipped then (with a
    warning). (Devices report their memory kinds themselves: jaxlib's
    `addressable_memories`.)"""

    name: str
    priority: int
    library: str | None = None
    client: str | None = None
    fail_quietly: bool = False
    lowering_option: str = ""        # jaxpr-to-stablehlo's option for this target
    pallas_pass: tuple[str, str] | None = None   # (flag, options) for compiled kernels
    host_callback_target: str | None = None   # custom call a Python callback lowers to, or
    #                                           'send-recv': host transfers (TPU, as JAX)
    linalg: str = "xla"              # 'lapack' (jaxlib's CPU kernels), 'gpu-solver', 'xla'
    dlpack_kind: int | None = 1      # DLPack's device type (kDLCPU 1, kDLCUDA 2, kDLROCM 10;
    #                                  None: its buffers are no DLPack device, as in JAX)
    device_put_moves: bool = False   # a device_put to another memory inside a program stays
    #                                  XLA's placement call (JAX's TPU and GPU lowering)
    rule_family: str | None = None   # the family name JAX's lowering rules may be
    #                                  registered for as well ('gpu': CUDA and ROCm)
    host: bool = False               # the host's own devices: callbacks' arrays stay there
    install_hint: str = ""           # how to install the plugin (the missing-plugin error)
    op_by_op_options: tuple = ()     # XLA options under which a program's ops round as
    #                                  each alone would (JAX's eager transformations:
    #                                  mjax/ad/op_by_op.py); () for none

    def find_library(self) -> str | None:
        return _call(self.library, self.name) if self.library else None

    def make_client(self):
        path = self.find_library()
        if self.library and path is None:
            raise RuntimeError(_missing_plugin(self.name))
        return _call(self.client, self.name, path)


def _call(ref: str, *args):
    module, _, function = ref.partition(":")
    return getattr(importlib.import_module(module), function)(*args)


def _missing_plugin(name: str) -> str:
    how = platform_record(name).install_hint or \
        f"set MJAX_PJRT_PLUGIN_{name.upper()} to its PJRT plugin library"
    return f"no PJRT plugin for platform '{name}' is installed ({how}). Available: 'cpu'."


_GPU = "mjax.runtime.gpu_plugin"
PLATFORMS: dict[str, PlatformRecord] = {r.name: r for r in (
    PlatformRecord("cpu", priority=0, client="mjax.runtime.xla:make_cpu_client",
                   lowering_option="platform=cpu", linalg="lapack",
                   pallas_pass=None, host_callback_target="xla_ffi_python_cpu_callback",
                   dlpack_kind=1, host=True,
                   op_by_op_options=(("xla_disable_hlo_passes", "fusion"),)),
    PlatformRecord("tpu", priority=300, library="mjax.runtime.tpu:find_library",
                   client="mjax.runtime.tpu:make_client", fail_quietly=True,
                   lowering_option="platform=tpu", linalg="xla", device_put_moves=True,
                   pallas_pass=("jaxpr-pallas-to-mosaic", ""), host_callback_target="send-recv",
                   dlpack_kind=None, install_hint="pip install \"mjax[tpu]\" (the libtpu "
                   "package), or set TPU_LIBRARY_PATH to libtpu.so"),
    PlatformRecord("cuda", priority=500, library=f"{_GPU}:find_pjrt_plugin",
                   client=f"{_GPU}:plugin_client", fail_quietly=True,
                   lowering_option="platform=cuda", device_put_moves=True,
                   linalg="gpu-solver", pallas_pass=("jaxpr-pallas-to-triton", "platform=cuda"),
                   host_callback_target="xla_ffi_python_gpu_callback", dlpack_kind=2,
                   rule_family="gpu", install_hint="install jax-cuda12-pjrt (or -cuda13-), "
                   "or set MJAX_PJRT_PLUGIN_CUDA"),
    PlatformRecord("rocm", priority=500, library=f"{_GPU}:find_pjrt_plugin",
                   client=f"{_GPU}:plugin_client", fail_quietly=True,
                   lowering_option="platform=rocm", device_put_moves=True,
                   linalg="gpu-solver", pallas_pass=("jaxpr-pallas-to-triton", "platform=rocm"),
                   host_callback_target="xla_ffi_python_gpu_callback", dlpack_kind=10,
                   rule_family="gpu", install_hint="install jax-rocm7-pjrt, or set "
                   "MJAX_PJRT_PLUGIN_ROCM"),
)}
# A platform mjax has no record of (a new PJRT plugin named by MJAX_PJRT_PLUGIN_<NAME>)
# is handled as this one says: XLA's own lowerings, no kernels, no callbacks.
_GENERIC = PlatformRecord("", priority=-1, library=f"{_GPU}:find_pjrt_plugin",
                          client=f"{_GPU}:plugin_client")

# IREE compiles StableHLO itself: XLA's lowerings, its own runtime for callbacks.
_IREE = PlatformRecord("iree", priority=-1, host=True,
                       host_callback_target="xla_ffi_python_cpu_callback")


def platform_record(platform: "str | Platform | None" = None) -> PlatformRecord:
    """The record of an XLA platform ('tpu', a Platform; default: the platform programs
    are lowered for, `target_platform()`); IREE's, whatever its target."""
    if platform is None:
        platform = target_platform()
    platform = Platform.parse(platform)
    if platform.backend == "iree":
        return _IREE
    target = platform.target
    record = PLATFORMS.get(target)
    if record is None:
        return dataclasses.replace(_GENERIC, name=target)
    return record


def device_memory_platform(dlpack_kind: int) -> str | None:
    """The XLA platform whose client imports DLPack device memory of `dlpack_kind`
    (kDLCUDA 2: 'cuda', kDLROCM 10: 'rocm'); None for host memory (kDLCPU 1, which NumPy
    reads) and kinds no record claims."""
    if dlpack_kind == 1:
        return None
    return next((r.name for r in PLATFORMS.values() if r.dlpack_kind == dlpack_kind), None)


class Buffer(Protocol):
    """One array on one device (jaxlib's ArrayImpl, or IreeBuffer)."""

    def platform(self) -> str: ...
    def devices(self) -> set: ...
    def block_until_ready(self) -> Any: ...
    def is_ready(self) -> bool: ...
    def is_deleted(self) -> bool: ...
    def delete(self) -> None: ...
    def on_device_size_in_bytes(self) -> int: ...


class Executable(Protocol):
    """A compiled program: buffers in, buffers out (asynchronously where the backend
    allows)."""

    text: str
    devices: list

    def execute(self, buffers: Sequence[Buffer]) -> list[Buffer]: ...
    def hlo_text(self) -> str: ...
    def cost_analysis(self) -> dict: ...


class Backend(Protocol):
    """Made by its class from a Platform's target: `XlaBackend("cpu")`."""

    name: str          # "xla" or "iree"
    platform: str      # "cpu", "cuda", "iree", ... (what jax.default_backend() says)
    stats: dict        # {"compiles": n, "cache_hits": n}
    compile_listeners: list   # callbacks (stablehlo_text, seconds) after each compile

    def devices(self) -> list: ...
    def put(self, array: np.ndarray, device=None) -> Buffer: ...
    def compile(self, stablehlo_text: str, devices=None, *, num_partitions: int = 1,
                options=None, out_avals=None, host_callbacks=None, module=None,
                partitioning=None) -> Executable: ...

    @staticmethod
    def to_numpy(buf: Buffer, dtype=None) -> np.ndarray:
        """A host copy of one of this backend's buffers."""


class HostPut:
    """What a backend's optional `putter(shape, dtype)` may give: put(array) as
    `call(*args)` with `[array]` for args[2] (None there), its other arguments made once.
    The C jit fast path (runtime/_fastpath.c) reads `call` and `args` and makes the call
    itself; any other callable a putter gives, it calls."""

    __slots__ = ("call", "args")

    def __init__(self, call, *args):
        self.call, self.args = call, args

    def __call__(self, array):
        args = self.args
        return self.call(args[0], args[1], [array], *args[3:])


# ---- the registry ------------------------------------------------------------------------
_PLUGINS: dict[str, Callable[[str], Backend]] = {}   # Platform.backend -> backend class
_BACKENDS: dict[Platform, Backend] = {}               # made on first use
_DEFAULT: list[Platform] = []                         # set_default_platform's choice
_LOCK = threading.Lock()


def register_backend(name: str, backend_class) -> None:
    """Makes Platform(name, target) reachable: `backend_class(target)` builds its backend,
    `backend_class.to_numpy(buf, dtype)` reads its buffers. runtime/xla.py and
    runtime/iree.py call this when imported (mjax.runtime imports both)."""
    _PLUGINS[name] = backend_class


def _plugin(name: str):
    try:
        return _PLUGINS[name]
    except KeyError:
        raise ValueError(f"no backend {name!r} is registered (known: "
                         f"{', '.join(sorted(_PLUGINS))})") from None


def clear_compiled() -> None:
    """Drops the executables each backend made keeps for sharing between identical
    programs (jax.clear_caches); those still in use stay alive through their users."""
    for backend in list(_BACKENDS.values()):
        compiled = getattr(backend, "_compiled", None)
        if compiled is not None:
            compiled.clear()


def get_backend(platform: "str | Platform | None" = None):
    """The process-wide backend for `platform` ('cpu', 'cuda', 'iree', 'iree-cpu', a
    Platform; default: `default_platform()`), made on first use."""
    platform = default_platform() if platform is None else Platform.parse(platform)
    backend = _BACKENDS.get(platform)
    if backend is None:
        with _LOCK:
            backend = _BACKENDS.get(platform)
            if backend is None:
                backend = _BACKENDS[platform] = _open(platform)
    return backend


def _open(platform: Platform):
    """A new backend for `platform`; a plugin that fails to open is JAX's RuntimeError."""
    make = _plugin(platform.backend)
    if platform.backend != "xla":
        return make(platform.target)
    try:
        return make(platform.target)
    except RuntimeError as err:
        if str(err).startswith("no PJRT plugin"):
            raise
        raise RuntimeError(f"Unable to initialize backend '{platform.target}': {err} (set "
                           f"JAX_PLATFORMS='' to automatically choose an available "
                           f"backend)") from err


def backends_are_initialized() -> bool:
    return bool(_BACKENDS)


def default_platform() -> Platform:
    """The default backend: `set_default_platform`'s choice (the frontend's
    jax_platforms / mjax_backend options), else IREE when MJAX_BACKEND=iree (or
    iree-<target>), else MJAX_PLATFORM, else the first of JAX_PLATFORMS, else the
    installed and usable platform of highest priority (`discover`)."""
    chosen = configured_platform()
    return chosen if chosen is not None else discover()


def configured_platform() -> Platform | None:
    """The platform the user chose (set_default_platform, MJAX_BACKEND, MJAX_PLATFORM,
    JAX_PLATFORMS), or None: `discover` picks it. Opens nothing."""
    if _DEFAULT:
        return _DEFAULT[0]
    env = os.environ
    return _platform_from_environment(env.get("MJAX_BACKEND", ""),
                                      env.get("MJAX_PLATFORM", ""),
                                      env.get("JAX_PLATFORMS", ""))


@functools.lru_cache(maxsize=16)
def _platform_from_environment(backend: str, platform: str, platforms: str):
    backend = backend.strip().lower() or "xla"
    if backend.startswith("iree"):
        return Platform.parse(backend)
    if backend != "xla":
        raise ValueError(f"MJAX_BACKEND={backend!r}: expected 'xla' or 'iree'")
    first = (platform or platforms).split(",")[0].strip()
    return Platform.parse(first) if first else None


_DISCOVERED: list[Platform] = []
_SKIPPED: dict[str, str] = {}      # platform -> why it was not used (discover)


def discover() -> Platform:
    """The platform JAX would pick with JAX_PLATFORMS unset: of the platforms whose
    plugin is installed, the one of highest priority (cuda/rocm 500, tpu 300, cpu 0)
    that opens. Opening it makes its backend (a TPU's takes seconds), as JAX does at
    its first use of devices; a platform that fails to open is skipped with a warning
    saying why. Found once per process."""
    if _DISCOVERED:
        return _DISCOVERED[0]
    with _LOCK:
        if _DISCOVERED:
            return _DISCOVERED[0]
        candidates = sorted(PLATFORMS.values(), key=lambda r: -r.priority)
        for record in candidates:
            if record.priority <= 0 or record.find_library() is None:
                continue
            platform = Platform("xla", record.name)
            try:
                if platform not in _BACKENDS:
                    _BACKENDS[platform] = _plugin("xla")(record.name)
            except Exception as err:          # (no chip, or another process holds it)
                if not record.fail_quietly:
                    raise RuntimeError(f"Unable to initialize backend '{record.name}': "
                                       f"{err} (set JAX_PLATFORMS=cpu to skip it)") from err
                _SKIPPED[record.name] = str(err)
                logging.getLogger("mjax").warning(
                    "The %s plugin is installed but did not open (%s); using the CPU. Set "
                    "JAX_PLATFORMS=cpu to skip it.", record.name, str(err).splitlines()[0])
                continue
            _DISCOVERED.append(platform)
            break
        else:
            _DISCOVERED.append(Platform("xla", "cpu"))
    return _DISCOVERED[0]


def backend_platforms(listed: str | None = None) -> list[Platform]:
    """The platforms of the backends JAX holds (xb.backends(): jnp's
    __array_namespace_info__().devices() lists their devices), the default one first.
    With a platform chosen (set_default_platform, MJAX_BACKEND, MJAX_PLATFORM,
    JAX_PLATFORMS): it, and the others of `listed` (the jax_platforms option, 'tpu,cpu')
    when it is that list's first. Otherwise every installed platform that opens, highest
    priority first (the CPU always): on a TPU machine the chip and the host CPU."""
    chosen = configured_platform()
    if chosen is not None:
        names = [n.strip() for n in (listed or "").split(",") if n.strip()]
        if not names or Platform.parse(names[0]) != chosen:
            return [chosen]
        return [chosen, *dict.fromkeys(p for p in map(Platform.parse, names[1:])
                                       if p != chosen)]
    first = discover()
    out = [first]
    for name in available_platforms():
        platform = Platform("xla", name)
        if platform == first or name in _SKIPPED:
            continue
        try:
            get_backend(platform)
        except Exception:              # (as discover: a plugin that does not open)
            if not platform_record(name).fail_quietly:
                raise
            continue
        out.append(platform)
    return out


def available_platforms() -> list[str]:
    """The XLA platforms whose plugins are installed here (cpu always), highest
    priority first; whether each opens is known once it is used."""
    return [r.name for r in sorted(PLATFORMS.values(), key=lambda r: -r.priority)
            if r.priority <= 0 or r.find_library() is not None]


# The platform a program is lowered for, where it is not the default backend's:
# `jit(f).trace(...).lower(lowering_platforms=("tpu",))` and `export(platforms=["tpu"])`
# lower on any machine for a chip it may not have.
_TARGET: contextvars.ContextVar = contextvars.ContextVar("mjax_lowering_target",
                                                         default=None)


def target_platform() -> Platform:
    """The platform programs are lowered for now: `lowering_for`'s, else the default."""
    target = _TARGET.get()
    return default_platform() if target is None else target


@contextlib.contextmanager
def lowering_for(platform: "str | Platform | None"):
    """Lowers (passes' platform options, platform_dependent, Pallas's compiler) for
    `platform` inside the block, whatever the default backend is; None: no change."""
    if platform is None:
        yield
        return
    token = _TARGET.set(Platform.parse(platform))
    try:
        yield
    finally:
        _TARGET.reset(token)


# Called after the default platform changed: programs the frontend keeps compiled for
# the old one must not run on the new one's buffers (mjax.jit.caches registers
# clear_caches).
DEFAULT_PLATFORM_LISTENERS: list = []


def set_default_platform(platform: "str | Platform | None") -> None:
    """Overrides the default backend ('iree', 'cpu', ...; None: back to the environment).
    The frontend's `jax_platforms` and `mjax_backend` config options call this."""
    before = list(_DEFAULT)
    _DEFAULT[:] = [Platform.parse(platform)] if platform else []
    if _DEFAULT != before:
        for listener in DEFAULT_PLATFORM_LISTENERS:
            listener()


def backend_of_device(device):
    """The backend that owns `device` (an IREE device's IreeBackend, an XLA device's
    XlaBackend for its platform); None: the default backend."""
    if device is None:
        return get_backend()
    owner = getattr(device, "backend", None)
    if owner is not None and not isinstance(owner, str):
        return owner
    platform = getattr(device, "platform", None)
    return get_backend(platform) if isinstance(platform, str) else get_backend()


def buffer_to_numpy(buf: Buffer, dtype=None) -> np.ndarray:
    """A host copy of a single-device buffer of any registered backend."""
    return _plugin(Platform.parse(buf.platform()).backend).to_numpy(buf, dtype)


__all__ = ["Backend", "Buffer", "Executable", "HostPut", "PLATFORMS", "Platform", "PlatformRecord",
           "available_platforms", "backend_of_device", "backends_are_initialized",
           "buffer_to_numpy", "configured_platform", "default_platform",
           "device_memory_platform", "discover",
           "get_backend", "lowering_for", "platform_record", "register_backend",
           "set_default_platform", "target_platform"]
