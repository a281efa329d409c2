"""The named axes bound while tracing: the axis names of the vmaps (and pmaps,
shard_maps) whose functions are being traced, which collectives look up."""
from __future__ import annotations

import contextlib


class AxisEnv:
    """The axis names of the vmaps whose functions are being traced, innermost last, with
    their sizes: collectives look their names up here (JAX: the axis env of the trace)."""

    def __init__(self):
        self.frames: list[tuple[str, int]] = []
        # pmap's axes while its function is traced: JAX runs it once per device there
        # (a pure_callback without vmap_method is called per device, not refused).
        self.device_axes: tuple = ()

    @contextlib.contextmanager
    def per_device(self, name: str):
        saved, self.device_axes = self.device_axes, self.device_axes + (name,)
        try:
            yield
        finally:
            self.device_axes = saved

    @contextlib.contextmanager
    def bound(self, name: str | None, size: int):
        if name is None:
            yield
            return
        self.frames.append((name, size))
        try:
            yield
        finally:
            self.frames.pop()

    def size(self, name) -> int:
        """The size of the innermost axis called `name`; JAX's NameError if none is."""
        for bound, size in reversed(self.frames):
            if bound == name:
                return size
        raise NameError(f"unbound axis name: {name}")


AXIS_ENV = AxisEnv()
