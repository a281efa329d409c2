"""What a backend is: the interface `XlaBackend` (runtime/xla.py) and `IreeBackend`
(runtime/iree.py) implement, and the only way the frontend reaches devices.

    backend = get_backend()          # or get_backend("iree"), get_backend("cuda")
    buf = backend.put(np.ones(3))    # a Buffer on the first device
    exe = backend.compile(stablehlo_text, out_avals=avals)
    outs = exe.execute([buf])        # Buffers; buffer_to_numpy(out) reads one back

The frontend holds buffers only inside `mjax.Array` and hands them back to a backend;
an executable accepts buffers of another backend too (they travel through the host).
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence

import numpy as np


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
    name: str          # "xla" or "iree"
    platform: str      # "cpu", "cuda", "iree", ...
    stats: dict        # {"compiles": n, "cache_hits": n}
    compile_listeners: list   # callbacks (stablehlo_text, seconds) after each compile

    def devices(self) -> list: ...
    def put(self, array: np.ndarray, device=None) -> Buffer: ...
    def compile(self, stablehlo_text: str, devices=None, *, num_partitions: int = 1,
                options=None, out_avals=None) -> Executable: ...


def backend_of_device(device):
    """The backend that owns `device` (an IREE device's IreeBackend, an XLA device's
    XlaBackend for its platform); None: the default backend."""
    from mjax.runtime.xla import get_backend
    if device is None:
        return get_backend()
    owner = getattr(device, "backend", None)
    if owner is not None and not isinstance(owner, str):
        return owner
    platform = getattr(device, "platform", None)
    return get_backend(platform) if isinstance(platform, str) else get_backend()


__all__ = ["Backend", "Buffer", "Executable", "backend_of_device"]
