"""Pallas's specification objects: BlockSpec, GridSpec, block dims, memory spaces.

JAX: pallas/core.py. Plain data: pallas_call (pallas_call.py) reads them.
"""
from __future__ import annotations

import contextlib
import dataclasses
import enum
from typing import Any, Callable, Sequence

import numpy as np

from mjax import lax
from mjax.specs import dtypes
from mjax.dialect.types import ShapedArray


class Squeezed:
    """A block dimension of size 1 that the kernel's ref does not have (same as `None`
    in a block shape). JAX: pl.Squeezed."""

    def __eq__(self, other):
        return isinstance(other, Squeezed)

    def __hash__(self):
        return hash(Squeezed)

    def __repr__(self):
        return "Squeezed()"


squeezed = Squeezed()


@dataclasses.dataclass(frozen=True)
class Blocked:
    """A block dimension of `block_size` elements, indexed by block (the default meaning
    of an int in a block shape). JAX: pl.Blocked."""
    block_size: int


@dataclasses.dataclass(frozen=True)
class Element:
    """Element-indexed block dimension: the index map gives the block's element offset
    into the array padded by `padding` (low, high) rather than a block index. Interpret
    mode only. JAX: pl.Element."""
    block_size: int
    padding: tuple[int, int] = (0, 0)


@dataclasses.dataclass(frozen=True)
class BoundedSlice:
    """A block dimension of dynamic size, at most `block_size`: the index map gives a
    `pl.ds(start, size)` (in elements; both may be traced) for it. pltpu.emit_pipeline
    takes it (as JAX's); pallas_call's BlockSpecs do not (JAX's Mosaic lowering refuses
    it there too). JAX: pl.BoundedSlice."""
    block_size: int


class MemorySpace(enum.Enum):
    """Where a buffer lives. Interpret mode keeps every buffer in device memory, so the
    space only documents intent. JAX: pl.MemorySpace."""
    ANY = "any"
    DEFAULT = "default"
    ERROR = "error"
    INDEX = "index"
    KEY = "key"
    HOST = "host"

    def __call__(self, shape, dtype):
        return MemoryRef(tuple(shape), dtypes.canonicalize_dtype(dtype), self)

    def __str__(self):
        return self.value


ANY = MemorySpace.ANY
HOST = MemorySpace.HOST

# (the memory spaces jaxpr.pallas_call records; others only document intent)
_RECORDED_SPACES = ("any", "vmem", "smem", "hbm", "vmem_shared", "cmem", "host",
                    "semaphore_mem")


def memory_space_name(ms) -> str | None:
    """The memory space string jaxpr.pallas_call records for a memory space object
    (pl.ANY, pltpu.VMEM, ...; None: the backend's default, or a space the IR does not
    record, such as the GPU's)."""
    if ms is None:
        return None
    sem = getattr(ms, "mjax_semaphore_space", None)
    if sem is not None:
        return sem
    value = getattr(ms, "value", ms)
    if isinstance(value, str) and value in _RECORDED_SPACES:
        return value
    return None


@dataclasses.dataclass(frozen=True)
class MemoryRef:
    """A scratch buffer's shape and dtype (and memory space). JAX: pl.MemoryRef."""
    shape: tuple[int, ...]
    dtype: Any
    memory_space: Any = None

    def get_array_aval(self):
        return ShapedArray(self.shape, self.dtype)


@dataclasses.dataclass(frozen=True)
class Buffered:
    """Pipelining hint: the number of buffers (and, for pltpu.emit_pipeline's inputs,
    whether to fetch ahead as far as free buffers allow); interpret mode runs the same
    copies. `revisit` is accepted and ignored. JAX: pl.Buffered."""
    buffer_count: int = 2
    use_lookahead: bool = False
    revisit: Any = None


@dataclasses.dataclass(frozen=True)
class BlockSpec:
    """How each kernel instance sees an array: a block of `block_shape` at the block
    indices `index_map(*grid_indices)` returns (`None` entries: squeezed dims of size 1;
    `block_shape=None`: the whole array; `index_map=None`: block 0 along every dim).
    JAX: pl.BlockSpec."""
    block_shape: Sequence[Any] | None = None
    index_map: Callable[..., Any] | None = None
    memory_space: Any | None = dataclasses.field(kw_only=True, default=None)
    pipeline_mode: Buffered | None = None

    def __post_init__(self):
        if callable(self.block_shape) and not callable(self.index_map):
            raise TypeError(
                "BlockSpec takes (block_shape, index_map) in that order; got a callable as "
                "block_shape. Write pl.BlockSpec(block_shape, index_map).")
        if self.index_map is not None and not callable(self.index_map):
            raise TypeError(f"BlockSpec index_map must be callable, got "
                            f"{type(self.index_map).__name__}")


class _NoBlockSpec:
    def __repr__(self):
        return "no_block_spec"


no_block_spec = _NoBlockSpec()


class GridSpec:
    """grid, in_specs, out_specs and scratch_shapes in one object. JAX: pl.GridSpec."""

    def __init__(self, grid=(), in_specs=no_block_spec, out_specs=no_block_spec,
                 scratch_shapes=()):
        self.grid = grid
        self.in_specs = in_specs
        self.out_specs = out_specs
        self.scratch_shapes = scratch_shapes


@dataclasses.dataclass(frozen=True)
class CompilerParams:
    """Base of backend compiler parameters (Triton: triton.CompilerParams)."""


@dataclasses.dataclass(frozen=True)
class CostEstimate:
    """A hint of a kernel's cost; recorded nowhere by interpret mode. JAX: pl.CostEstimate."""
    flops: int
    transcendentals: int
    bytes_accessed: int


def cdiv(a, b):
    """Ceiling division: ceil(a / b) for integers (Python or arrays). JAX: pl.cdiv."""
    if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
        return -(-int(a) // int(b))
    return lax.div(a + (b - 1), b)      # (b - 1 first, as JAX: static for a static b)


def next_power_of_2(x: int) -> int:
    """The smallest power of two >= x. JAX: pl.next_power_of_2."""
    if x < 0:
        raise ValueError("`next_power_of_2` requires a non-negative integer.")
    return 1 if x == 0 else 1 << (int(x) - 1).bit_length()


def align_to(x: int, alignment: int) -> int:
    """x rounded up to a multiple of `alignment`. JAX: pl.align_to."""
    return cdiv(x, alignment) * alignment


def strides_from_shape(shape) -> tuple[int, ...]:
    """Row-major element strides of `shape`. JAX: pl.strides_from_shape."""
    size = int(np.prod(shape))
    strides = []
    for s in shape:
        size = size // s if s else 0
        strides.append(size)
    return tuple(strides)


class _ExportMode:
    dynamic_shapes = False


@contextlib.contextmanager
def pallas_export_experimental(dynamic_shapes: bool):
    """Within it, Pallas calls on symbolically shaped arrays (jax.export with
    symbolic_shape) may have dynamically shaped blocks (`dynamic_shapes`); with static
    shapes a kernel lowers as without it. JAX: pl.pallas_export_experimental."""
    saved, _ExportMode.dynamic_shapes = _ExportMode.dynamic_shapes, dynamic_shapes
    try:
        yield
    finally:
        _ExportMode.dynamic_shapes = saved


def dynamic_shapes_export_enabled() -> bool:
    """Whether pallas_export_experimental(dynamic_shapes=True) is in force."""
    return _ExportMode.dynamic_shapes
