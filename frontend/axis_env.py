"""The named axes bound while tracing: the axis names of the vmaps (and pmaps,
shard_maps) whose functions are being traced, which collectives look up."""
from __future__ import annotations

import contextlib


class AxisEnv:
    """The axis names of the vmaps whose functions are being traced, innermost last, with
    their sizes: collectives look their names up here (JAX: the axis env of the trace)."""

    def __init__(self):
        self.frames: list[tuple[str, int]] = []

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
