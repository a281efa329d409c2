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

import functools
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
        raise ValueError(f"{name!r} is not a platform: expected 'cpu', 'cuda', 'rocm', "
                         f"'iree' or 'iree-<target>'")
    return Platform("xla", {"gpu": "cuda"}.get(text, text))


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
                options=None, out_avals=None) -> Executable: ...

    @staticmethod
    def to_numpy(buf: Buffer, dtype=None) -> np.ndarray:
        """A host copy of one of this backend's buffers."""


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
                backend = _BACKENDS[platform] = _plugin(platform.backend)(platform.target)
    return backend


def backends_are_initialized() -> bool:
    return bool(_BACKENDS)


def default_platform() -> Platform:
    """The default backend: `set_default_platform`'s choice (the frontend's
    jax_platforms / mjax_backend options), else IREE when MJAX_BACKEND=iree (or
    iree-<target>), else MJAX_PLATFORM, else the first of JAX_PLATFORMS, else XLA's CPU."""
    if _DEFAULT:
        return _DEFAULT[0]
    env = os.environ
    return _platform_from_environment(env.get("MJAX_BACKEND", ""),
                                      env.get("MJAX_PLATFORM", ""),
                                      env.get("JAX_PLATFORMS", ""))


@functools.lru_cache(maxsize=16)
def _platform_from_environment(backend: str, platform: str, platforms: str) -> Platform:
    backend = backend.strip().lower() or "xla"
    if backend.startswith("iree"):
        return Platform.parse(backend)
    if backend != "xla":
        raise ValueError(f"MJAX_BACKEND={backend!r}: expected 'xla' or 'iree'")
    return Platform.parse((platform or platforms or "cpu").split(",")[0])


def set_default_platform(platform: "str | Platform | None") -> None:
    """Overrides the default backend ('iree', 'cpu', ...; None: back to the environment).
    The frontend's `jax_platforms` and `mjax_backend` config options call this."""
    _DEFAULT[:] = [Platform.parse(platform)] if platform else []


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


__all__ = ["Backend", "Buffer", "Executable", "Platform", "backend_of_device",
           "backends_are_initialized", "buffer_to_numpy", "default_platform",
           "get_backend", "register_backend", "set_default_platform"]
