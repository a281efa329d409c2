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
        # Axes whose member index a function gives instead of an axis_index op: inside a
        # pl.core_map kernel, its core axis is the kernel's program id.
        self.index_of: dict = {}
        # The meshes of the shard_maps being traced, innermost last: (axis names, axis
        # sizes). A Pallas TPU kernel traced inside one names devices by their place in
        # it (JAX: the kernel's mesh context).
        self.meshes: list[tuple[tuple, tuple]] = []
        # Per mesh above, whether its shard_map checks varying axes (check_vma; JAX's
        # config._check_vma inside the body): a pallas_call's out_shape must then say them.
        self.vma_checks: list[bool] = []

    @contextlib.contextmanager
    def mesh(self, axis_names: tuple, axis_sizes: tuple, check_vma: bool = False):
        self.meshes.append((tuple(axis_names), tuple(int(n) for n in axis_sizes)))
        self.vma_checks.append(bool(check_vma))
        try:
            yield
        finally:
            self.meshes.pop()
            self.vma_checks.pop()

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

    @contextlib.contextmanager
    def indexed(self, name: str, size: int, index):
        """Binds `name` (of `size`) with `index()` as lax.axis_index's answer for it."""
        saved = self.index_of.get(name)
        self.index_of[name] = index
        try:
            with self.bound(name, size):
                yield
        finally:
            if saved is None:
                del self.index_of[name]
            else:
                self.index_of[name] = saved

    def size(self, name) -> int:
        """The size of the innermost axis called `name`; JAX's NameError if none is."""
        for bound, size in reversed(self.frames):
            if bound == name:
                return size
        raise NameError(f"unbound axis name: {name}")


AXIS_ENV = AxisEnv()
