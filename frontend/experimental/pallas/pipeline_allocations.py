"""`pltpu.BufferedRef`: the buffers of one ref of `pltpu.emit_pipeline`, made beforehand.

A BufferedRef made outside a kernel's refs (`BufferedRef.input(spec, dtype)`, or the
`make_allocations(*refs)` of `emit_pipeline_with_allocations`) is a scratch spec: a pytree
whose leaves are its VMEM buffer (`buffer_count` slots of the spec's block) and the DMA
semaphores of its copies in and out, so `pl.run_scoped` or pallas_call's `scratch_shapes`
allocate it; the kernel then sees the same BufferedRef with refs for leaves, which
`pipeline(*refs, allocations=...)` uses instead of allocating its own (pipeline.py). A ref
already in the spec's memory space gets no buffer (count 0): the pipeline uses it in place.
The pipeline's slot counters live in its loop, not in the BufferedRef.
JAX: pallas/mosaic/pipeline.py (BufferedRef, BufferType, _make_pipeline_allocations).
"""
from __future__ import annotations

import enum

import numpy as np

from mjax.base import tree_util
from mjax.experimental.pallas.core import MemoryRef, memory_space_name
from mjax.experimental.pallas.tpu_info import Tiling


def buffer_shape(count: int, block: tuple, tiling=None) -> tuple:
    """The shape of a buffer of `count` slots of `block`: a 1-D block's slots end to end
    (one row per slot with a SPARSE_CORE tiling), else one leading dim of slots."""
    if len(block) == 1 and tiling is not Tiling.SPARSE_CORE:
        return (count * block[0],)
    return (count, *block)


class BufferType(enum.Enum):
    """Roles of emit_pipeline's buffers. JAX: pltpu.BufferType."""
    INPUT = 1
    OUTPUT = 2
    INPUT_OUTPUT = 3
    MANUAL = 4

    @property
    def is_input(self) -> bool:
        return self in (BufferType.INPUT, BufferType.INPUT_OUTPUT)

    @property
    def is_output(self) -> bool:
        return self in (BufferType.OUTPUT, BufferType.INPUT_OUTPUT)


class BufferedRefBase:
    """What every pipeline buffer answers. JAX: pltpu.BufferedRefBase."""

    @property
    def spec(self):
        raise NotImplementedError()

    @property
    def buffer_type(self) -> BufferType:
        raise NotImplementedError()

    @property
    def is_buffered(self) -> bool:
        return False

    @property
    def is_input(self) -> bool:
        return self.buffer_type.is_input

    @property
    def is_output(self) -> bool:
        return self.buffer_type.is_output

    @property
    def is_input_output(self) -> bool:
        return self.buffer_type == BufferType.INPUT_OUTPUT

    @property
    def is_manual(self) -> bool:
        return self.buffer_type == BufferType.MANUAL


class DmaSemaphores:
    """A scratch spec of `n` DMA semaphores (pltpu.SemaphoreType.DMA((n,)))."""
    mjax_semaphore_space = "dma_semaphore"

    def __init__(self, n: int):
        self.shape, self.dtype = (int(n),), np.dtype(np.int32)


def _block_elems(spec) -> tuple:
    """The block's shape without its squeezed dims (JAX: _get_block_shape)."""
    if spec.block_shape is None:
        raise ValueError("Block shape must be specified.")
    out = []
    for b in spec.block_shape:
        if b is None or type(b).__name__ == "Squeezed":
            continue
        out.append(int(getattr(b, "block_size", b)))
    return tuple(out)


class BufferedRef(BufferedRefBase):
    """One pipelined ref's buffer and DMA semaphores (scratch specs before allocation,
    refs after). JAX: pltpu.BufferedRef."""

    def __init__(self, spec, buffer_type: BufferType, buffer_count: int, window_ref=None,
                 sem_recvs=None, sem_sends=None, *, grid_rank=None,
                 is_trivial_windowing=False, has_allocated_buffer=False):
        self._spec, self._buffer_type, self._buffer_count = spec, buffer_type, buffer_count
        self._grid_rank = grid_rank
        self.window_ref, self.sem_recvs, self.sem_sends = window_ref, sem_recvs, sem_sends
        self.is_trivial_windowing = bool(is_trivial_windowing)
        self.has_allocated_buffer = bool(has_allocated_buffer)
        if self.is_buffered and buffer_count < 1:
            raise ValueError(f"buffer_count must be at least 1, got {buffer_count}")
        if self.is_output and self.is_buffered and buffer_count > 2:
            raise NotImplementedError("Buffer count >2 not supported for output buffered "
                                      "refs.")

    @property
    def spec(self):
        return self._spec

    @property
    def buffer_type(self) -> BufferType:
        return self._buffer_type

    @property
    def is_buffered(self) -> bool:
        return self._buffer_count > 0

    @property
    def use_lookahead(self) -> bool:
        return self._grid_rank is not None

    @property
    def buffer_count(self) -> int:
        if not self.is_buffered:
            raise ValueError("buffer count is undefined")
        return self._buffer_count

    @property
    def block_shape(self):
        return self._spec.block_shape

    def with_spec(self, spec) -> "BufferedRef":
        return BufferedRef(spec, self._buffer_type, self._buffer_count, self.window_ref,
                           self.sem_recvs, self.sem_sends, grid_rank=self._grid_rank,
                           is_trivial_windowing=self.is_trivial_windowing,
                           has_allocated_buffer=self.has_allocated_buffer)

    @classmethod
    def create(cls, spec, dtype_or_type, buffer_type, buffer_count, grid_rank=None,
               use_lookahead=False, source_memory_space=None, tiling=None,
               is_trivial_windowing=False) -> "BufferedRef":
        """The buffer of `buffer_count` slots of `spec`'s block (the whole of
        `dtype_or_type`'s shape where `is_trivial_windowing`) in the spec's memory space,
        with DMA semaphores per slot; none where `source_memory_space` is that space."""
        if tiling is not None and not isinstance(tiling, Tiling):
            raise TypeError(f"pltpu.BufferedRef's tiling must be a pltpu.Tiling, got "
                            f"{tiling!r}")
        space = memory_space_name(getattr(spec, "memory_space", None)) or "vmem"
        if space not in ("vmem", "smem", "hbm"):
            raise ValueError(f"Unsupported buffer memory space: {space}")
        src = "any" if source_memory_space is None else memory_space_name(source_memory_space)
        if src == space:
            return cls(spec, buffer_type, 0, is_trivial_windowing=is_trivial_windowing)
        if use_lookahead and grid_rank is None:
            raise ValueError("grid_rank must be specified when use_lookahead is True.")
        dtype = getattr(dtype_or_type, "dtype", dtype_or_type)
        if is_trivial_windowing:
            shape = getattr(dtype_or_type, "shape", None)
            if shape is None:
                raise ValueError("pltpu.BufferedRef with is_trivial_windowing=True needs the "
                                 "ref's type (with its shape), not only a dtype")
            shape = tuple(shape)
        else:
            shape = buffer_shape(buffer_count, tuple(_block_elems(spec)), tiling)
        sems = DmaSemaphores(buffer_count)
        trivial_or = (lambda other: None if is_trivial_windowing or other else sems)
        return cls(spec, buffer_type, buffer_count,
                   MemoryRef(shape, np.dtype(dtype), space),
                   trivial_or(buffer_type is BufferType.OUTPUT),
                   trivial_or(buffer_type is BufferType.INPUT),
                   grid_rank=grid_rank if use_lookahead else None,
                   is_trivial_windowing=is_trivial_windowing, has_allocated_buffer=True)

    @classmethod
    def input(cls, spec, dtype_or_type, buffer_count=2, **kwargs) -> "BufferedRef":
        return cls.create(spec, dtype_or_type, BufferType.INPUT, buffer_count, **kwargs)

    @classmethod
    def output(cls, spec, dtype_or_type, buffer_count=2, **kwargs) -> "BufferedRef":
        return cls.create(spec, dtype_or_type, BufferType.OUTPUT, buffer_count, **kwargs)

    @classmethod
    def input_output(cls, spec, dtype_or_type, buffer_count=2, **kwargs) -> "BufferedRef":
        return cls.create(spec, dtype_or_type, BufferType.INPUT_OUTPUT, buffer_count,
                          **kwargs)

    @property
    def current_ref(self):
        raise NotImplementedError("pltpu.BufferedRef.current_ref (the slot a pipeline step "
                                  "uses) outside mjax's pipeline loop is not supported by "
                                  "mjax")

    def __repr__(self):
        return (f"BufferedRef({self._buffer_type.name}, buffer_count={self._buffer_count}, "
                f"window_ref={self.window_ref!r})")

    def _flatten(self):
        aux = (self._spec, self._buffer_type, self._buffer_count, self._grid_rank,
               self.is_trivial_windowing, self.has_allocated_buffer)
        return (self.window_ref, self.sem_recvs, self.sem_sends), aux

    @classmethod
    def _unflatten(cls, aux, children):
        spec, kind, count, rank, trivial, allocated = aux
        return cls(spec, kind, count, *children, grid_rank=rank,
                   is_trivial_windowing=trivial, has_allocated_buffer=allocated)


tree_util.register_pytree_node(BufferedRef, BufferedRef._flatten, BufferedRef._unflatten)


def from_pipelined(r) -> BufferedRef:
    """The BufferedRef (scratch specs) of a pipeline's PipelinedRef (pipeline_buffers)."""
    kind = (BufferType.INPUT_OUTPUT if r.is_input and r.is_output else
            BufferType.INPUT if r.is_input else BufferType.OUTPUT)
    leaves = list(r.allocations)
    window = leaves.pop(0) if leaves else None
    recvs = leaves.pop(0) if leaves and r.is_input else None
    sends = leaves.pop(0) if leaves and r.is_output else None
    return BufferedRef(r.spec, kind, r.count, window, recvs, sends,
                       grid_rank=r.rank if r.lookahead else None,
                       is_trivial_windowing=r.trivial, has_allocated_buffer=r.buffered)


__all__ = ["BufferType", "BufferedRef", "BufferedRefBase", "DmaSemaphores", "buffer_shape",
           "from_pipelined"]
