"""`mjax.experimental.pallas.tpu` (`pltpu`): the TPU backend's public names.

Compiler parameters (`CompilerParams`, with JAX 0.10.2's fields), `PrefetchScalarGridSpec`,
memory spaces and semaphores, DMAs (`make_async_copy`, `async_copy`, `sync_copy`) and the
TPU kernel helpers; descriptions of TPU chips (`get_tpu_info`: tpu_info.py). Kernels using
them run in interpret mode on any platform (`interpret=True` or
`interpret=pltpu.InterpretParams()`: DMAs are copies, semaphores counters) and, on a TPU,
through `--jaxpr-pallas-to-mosaic`. What `jaxpr.pallas_call` records of them is documented
in dialect/ops/pallas.py. Names mjax does not implement raise NotImplementedError saying
what is missing. JAX: jax.experimental.pallas.tpu.
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import enum
from typing import Any, Literal

import numpy as np

from mjax import lax
from mjax.specs import dtypes
from mjax.specs.sharding_impls import get_abstract_mesh
from mjax import numpy as jnp
from mjax.config import config
from mjax.tracing.core import aval_of_value, bind
from mjax.dialect.ops import pallas_tpu as PT
from mjax.dialect.types import RefAval, ShapedArray
from mjax.experimental.pallas import core as _pl_core
from mjax.experimental.pallas.pallas_call import tpu_interpret_mode as _interpret_mode
from mjax.experimental.pallas import primitives as _p
from mjax.experimental.pallas.ref import Ref
from mjax.experimental.pallas.core import ANY, GridSpec, MemoryRef, no_block_spec
from mjax.experimental.pallas.memory import (AsyncCopyDescriptor, async_copy,
                                             async_remote_copy, make_async_copy,
                                             make_async_remote_copy, semaphore_read,
                                             semaphore_signal, semaphore_wait, sync_copy)
from mjax.experimental.pallas.memory import DeviceIdType
from mjax.experimental.pallas.helpers import semaphore   # (deprecated in JAX: pl.semaphore)
from mjax.experimental.pallas.keys import (sample_block, stateful_bernoulli, stateful_bits,
                                           stateful_normal, stateful_uniform, to_pallas_key)
from mjax.experimental.pallas.pipeline import emit_pipeline, emit_pipeline_with_allocations
from mjax.experimental.pallas.pipeline_allocations import (BufferType, BufferedRef,
                                                           BufferedRefBase)
from mjax.experimental.pallas.mesh_kernels import core_barrier
from mjax.experimental.pallas.tpu_info import (ChipVersion, Tiling, TpuInfo, get_tpu_info,
                                               get_tpu_info_for_chip, is_tpu_device)
from mjax.experimental.pallas.ref import ReshapedRef, as_ref
from mjax.experimental.pallas.tpu_mxu import matmul_acc_lhs, matmul_pop, matmul_push_rhs
from mjax.experimental.pallas.tpu_packing import (einshape, pack_elementwise,
                                                  stochastic_round, unpack_elementwise)
from mjax.arrays.placement import devices as devices_
from mjax.tracing.axis_env import AXIS_ENV

core = _pl_core     # (JAX: pltpu.core is its mosaic core module)


# ---- grids and compiler parameters ---------------------------------------------------------
class CoreType(enum.Enum):
    """Which core a kernel runs on. JAX: pltpu.CoreType."""
    TC = "tc"
    SC_SCALAR_SUBCORE = "sc_scalar_subcore"
    SC_VECTOR_SUBCORE = "sc_vector_subcore"

    def __str__(self):
        return self.value

    def __repr__(self):
        return self.name


class GridDimensionSemantics(enum.Enum):
    """How a grid axis may run: in any order ("parallel", which lets a TPU split it
    across cores) or in order ("arbitrary", e.g. a reduction axis that accumulates in
    scratch). JAX: pltpu.GridDimensionSemantics."""
    PARALLEL = "parallel"
    CORE_PARALLEL = "core_parallel"
    SUBCORE_PARALLEL = "subcore_parallel"
    ARBITRARY = "arbitrary"


PARALLEL = GridDimensionSemantics.PARALLEL
CORE_PARALLEL = GridDimensionSemantics.CORE_PARALLEL
SUBCORE_PARALLEL = GridDimensionSemantics.SUBCORE_PARALLEL
ARBITRARY = GridDimensionSemantics.ARBITRARY

_SEMANTICS = {s.value for s in GridDimensionSemantics}


class SideEffectType(enum.Enum):
    """What a kernel's side effects allow XLA to do with it. JAX: pltpu.SideEffectType."""
    PURE = "pure"
    DATAFLOW_SIDE_EFFECTING = "dataflow_side_effecting"
    SIDE_EFFECTING = "side_effecting"


@dataclasses.dataclass(frozen=True, init=False)
class CompilerParams(_pl_core.CompilerParams):
    """Mosaic TPU compiler parameters (JAX 0.10.2's fields). `pallas_call` records them in
    `jaxpr.pallas_call`'s `compiler_params` (dimension_semantics as strings) for the
    Mosaic lowering; interpret mode checks them and runs the grid in order.
    JAX: pltpu.CompilerParams."""
    dimension_semantics: tuple | None = None
    allow_input_fusion: tuple | None = None
    vmem_limit_bytes: int | None = None
    collective_id: int | None = None
    has_side_effects: bool | SideEffectType = False
    flags: Any = None
    internal_scratch_in_bytes: int | None = None
    serialization_format: int = 1
    disable_bounds_checks: bool = False
    disable_semaphore_checks: bool = False
    skip_device_barrier: bool = False
    allow_collective_id_without_custom_barrier: bool = False
    shape_invariant_numerics: bool = True
    use_tc_tiling_on_sc: bool | None = None
    needs_layout_passes: bool = True
    fuse_transposed_lhs_in_matmul: bool = False

    mjax_backend = "mosaic_tpu"    # (a class attribute: how pallas_call recognizes them)

    def __init__(self, dimension_semantics=None, allow_input_fusion=None,
                 vmem_limit_bytes=None, collective_id=None, has_side_effects=False,
                 flags=None, internal_scratch_in_bytes=None, serialization_format=1,
                 disable_bounds_checks=False, disable_semaphore_checks=False,
                 skip_device_barrier=False, allow_collective_id_without_custom_barrier=False,
                 shape_invariant_numerics=True, use_tc_tiling_on_sc=None,
                 needs_layout_passes=True, fuse_transposed_lhs_in_matmul=False):
        if dimension_semantics is not None:
            if isinstance(dimension_semantics, (str, GridDimensionSemantics)):
                raise TypeError(f"dimension_semantics must be a sequence (one entry per "
                                f"grid dimension), got {dimension_semantics!r}")
            dimension_semantics = tuple(dimension_semantics)
            for d in dimension_semantics:
                value = d.value if isinstance(d, GridDimensionSemantics) else d
                if value not in _SEMANTICS:
                    raise ValueError(f"dimension_semantics entries must be one of "
                                     f"{sorted(_SEMANTICS)} or pltpu.GridDimensionSemantics, "
                                     f"got {d!r}")
        if allow_input_fusion is not None:
            allow_input_fusion = tuple(allow_input_fusion)
        if flags is not None:
            flags = dict(flags)
        values = dict(locals())
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, values[f.name])

    def __hash__(self):
        return hash(tuple(tuple(sorted(v.items())) if isinstance(v, dict) else v
                          for v in (getattr(self, f.name) for f in dataclasses.fields(self))))

    replace = dataclasses.replace


class PrefetchScalarGridSpec(GridSpec):
    """A GridSpec whose first `num_scalar_prefetch` pallas_call arguments are
    scalar-prefetch operands: the kernel gets them first (as SMEM refs) and every index
    map gets them after the grid indices, so blocks can be picked by data (block-sparse
    kernels, paged attention). JAX: pltpu.PrefetchScalarGridSpec."""

    def __init__(self, num_scalar_prefetch: int, grid=(), in_specs=no_block_spec,
                 out_specs=no_block_spec, scratch_shapes=()):
        super().__init__(grid, in_specs, out_specs, tuple(scratch_shapes))
        if not isinstance(num_scalar_prefetch, (int, np.integer)) or num_scalar_prefetch < 0:
            raise ValueError(f"num_scalar_prefetch must be a non-negative integer, got "
                             f"{num_scalar_prefetch!r}")
        self.num_scalar_prefetch = int(num_scalar_prefetch)

    def __repr__(self):
        return (f"PrefetchScalarGridSpec(num_scalar_prefetch={self.num_scalar_prefetch}, "
                f"grid={self.grid!r})")


# ---- memory spaces and semaphores ------------------------------------------------------------
class MemorySpace(enum.Enum):
    """TPU memory spaces; calling one gives a scratch buffer spec (pltpu.VMEM((8, 128),
    jnp.float32)). ANY is pl.ANY. JAX: pltpu.MemorySpace."""
    VMEM = "vmem"
    VMEM_SHARED = "vmem_shared"
    SMEM = "smem"
    CMEM = "cmem"
    SEMAPHORE = "semaphore_mem"
    HBM = "hbm"

    def __str__(self):
        return self.value

    def __repr__(self):
        return self.name

    def from_type(self, ty):
        return MemoryRef(tuple(ty.shape), dtypes.canonicalize_dtype(ty.dtype), self)

    def __call__(self, shape, dtype):
        return MemoryRef(tuple(shape), dtypes.canonicalize_dtype(dtype), self)

    def like(self, x):
        return self.from_type(x)


VMEM = MemorySpace.VMEM
VMEM_SHARED = MemorySpace.VMEM_SHARED
SMEM = MemorySpace.SMEM
CMEM = MemorySpace.CMEM
SEMAPHORE = MemorySpace.SEMAPHORE
HBM = MemorySpace.HBM
HOST = _pl_core.MemorySpace.HOST     # (deprecated in JAX: pl.HOST)
TPUMemorySpace = MemorySpace


class dma_semaphore:
    """The dtype of DMA semaphores. JAX: pltpu.dma_semaphore."""


@dataclasses.dataclass(frozen=True)
class _SemaphoreRef(MemoryRef):
    """A scratch array of semaphores (i32 counters in interpret mode)."""
    mjax_semaphore_space: str = "semaphore"


class SemaphoreType(enum.Enum):
    """Kinds of semaphores; `SemaphoreType.DMA((2,))` is a scratch array of two DMA
    semaphores, `SemaphoreType.DMA` alone one. JAX: pltpu.SemaphoreType."""
    REGULAR = "regular"
    DMA = "dma"
    BARRIER = "barrier"

    @property
    def mjax_semaphore_space(self) -> str:
        return {"regular": "semaphore", "dma": "dma_semaphore",
                "barrier": "barrier_semaphore"}[self.value]

    @property
    def dtype(self):
        return dma_semaphore if self is SemaphoreType.DMA else np.dtype(np.int32)

    def __call__(self, shape):
        shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
        return _SemaphoreRef(shape, np.dtype(np.int32), MemorySpace.SEMAPHORE,
                             self.mjax_semaphore_space)

    def get_array_aval(self) -> ShapedArray:
        return ShapedArray((), np.int32)

    def get_ref_aval(self) -> RefAval:
        return RefAval((), np.int32)


# ---- interpret mode --------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, kw_only=True)
class InterpretParams:
    """Options of JAX's TPU interpret mode; `pallas_call(interpret=InterpretParams())`
    runs the kernel interpreted. As JAX's interpreter, mjax's visits parallel grid
    dimensions in the order random_seed draws, splits them over num_cores_or_threads
    cores (each with its own scratch), fills uninitialized memory as
    uninitialized_memory says and checks bounds (out_of_bounds_reads, revisited output
    blocks: passes/pallas_bounds.py), and skip_floating_point_ops makes every float
    value inf. It runs a DMA as a copy at its start, so dma_execution_mode,
    vector_clock_size and logging_mode are accepted and ignored; detect_races=True and
    buffer_bounds='padded' raise NotImplementedError when a kernel is traced (mjax has
    no race detector, and keeps buffers at their logical shapes). JAX:
    pltpu.InterpretParams."""
    detect_races: bool = False
    out_of_bounds_reads: Literal["raise", "uninitialized"] = "raise"
    skip_floating_point_ops: bool = False
    uninitialized_memory: Literal["nan", "zero"] = "nan"
    num_cores_or_threads: int = 1
    vector_clock_size: int | None = None
    logging_mode: Any = None
    dma_execution_mode: Literal["eager", "on_wait"] = "on_wait"
    random_seed: int | None = None
    grid_point_recorder: Any = None
    allow_hbm_allocation_in_run_scoped: bool = False
    buffer_bounds: Literal["logical", "padded"] = "logical"


def _not_supported(name: str, what: str):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"pltpu.{name} is not supported by mjax: {what}")
    fn.__name__ = fn.__qualname__ = name
    fn.mjax_unsupported = what       # (docs/gen_api_coverage.py lists these)
    fn.__doc__ = f"Not supported by mjax: {what}. JAX: pltpu.{name}."
    return fn


@contextlib.contextmanager
def force_tpu_interpret_mode(params: InterpretParams = InterpretParams()):
    """Within the context, every pallas_call traced runs in interpret mode (with
    `params`; None turns forcing off). JAX: pltpu.force_tpu_interpret_mode."""
    with _interpret_mode(params):
        yield


def set_tpu_interpret_mode(params: InterpretParams = InterpretParams()) -> None:
    """From now on (process-wide), every pallas_call traced runs in interpret mode
    (None: stop forcing it). JAX: pltpu.set_tpu_interpret_mode."""
    config.update("mjax_pallas_tpu_interpret_mode", params)


def reset_tpu_interpret_mode_state() -> None:
    """Clears the TPU interpreter's shared state. mjax's interpreter keeps none, so this
    does nothing. JAX: pltpu.reset_tpu_interpret_mode_state."""


# ---- kernel helpers --------------------------------------------------------------------------
def roll(x, shift, axis: int, *, stride: int | None = None, stride_axis: int | None = None):
    """Rotates `x` by `shift` along `axis` (as jnp.roll); with `stride`/`stride_axis`
    slice i along stride_axis rolls by shift + i * stride (Mosaic's tpu.dynamic_rotate,
    a shift known only at run time included). JAX: pltpu.roll."""
    if isinstance(shift, (int, np.integer)) and shift < 0:
        raise ValueError("shift must be non-negative.")
    x = jnp.asarray(x)
    if axis < 0 or axis >= jnp.ndim(x):
        raise ValueError("axis is out of range.")
    if (stride is None) != (stride_axis is None):
        raise ValueError("stride and stride_axis must be both specified or not.")
    if stride is not None:
        if stride < 0:
            raise ValueError("stride must be non-negative.")
        if stride_axis < 0 or stride_axis >= jnp.ndim(x):
            raise ValueError("stride_axis is out of range")
        if axis == stride_axis:
            raise ValueError("expected axis and stride_axis are different.")
    shift_aval = aval_of_value(shift)
    if shift_aval.shape != () or np.dtype(shift_aval.dtype).kind not in "iu":
        raise TypeError(f"roll shift must be an integer scalar, got "
                        f"{shift_aval.str_short()}")
    shift = (np.int32(shift) if isinstance(shift, (int, np.integer))
             else lax.convert_element_type(shift, np.int32))
    return bind(PT.RollOp, x, shift, axis=int(axis),
                stride=None if stride is None else int(stride),
                stride_axis=None if stride_axis is None else int(stride_axis))


def bitcast(x, ty):
    """Reinterprets the bits of `x` (at least 2-D) as dtype `ty`, packing or unpacking
    along the second-minor dimension (jaxpr.tpu_bitcast: Mosaic's tpu.bitcast).
    JAX: pltpu.bitcast (bitcast_p)."""
    ty = dtypes.canonicalize_dtype(ty)
    x = jnp.asarray(x)
    if x.ndim < 2:
        raise ValueError("Not implemented: bitcast 1D")
    src, dst = dtypes.itemsize_bits(x.dtype), dtypes.itemsize_bits(ty)   # (int4: 4)
    if x.shape[-2] * src % dst:
        raise ValueError("Not implemented: the 2nd minor dim can not be perfectly packed "
                         "or unpacked")
    return bind(PT.TpuBitcastOp, x, dtype=np.dtype(ty))


def load(ref, *, mask=None):
    """Loads the whole ref (or view), where `mask` holds. JAX: pltpu.load."""
    view = ref if isinstance(ref, ReshapedRef) else as_ref(ref, "pltpu.load")
    return _p.load(view, ..., mask=mask, _primitive="load_p")


def store(ref, val, *, mask=None) -> None:
    """Stores `val` into the whole ref (or view), where `mask` holds. JAX: pltpu.store."""
    view = ref if isinstance(ref, ReshapedRef) else as_ref(ref, "pltpu.store")
    _p.store(view, ..., val, mask=mask)


def with_memory_space_constraint(x, memory_space):
    """A hint that `x` should live in `memory_space`; returns `x` (interpret mode keeps
    every array in device memory). JAX: pltpu.with_memory_space_constraint."""
    return x


def trace_value(label: str, value) -> None:
    """Records a scalar in a TPU trace; interpret mode records nothing.
    JAX: pltpu.trace_value."""


def touch(ref) -> None:
    """Marks a ref as used (keeps a buffer alive); nothing to do when interpreting.
    JAX: pltpu.touch."""
    as_ref(ref, "pltpu.touch")


def prng_seed(*seeds) -> None:
    """Seeds the kernel's hardware PRNG with integer scalars (mixed when several); a
    kernel compiled for a TPU only (interpret mode cannot make the chip's bits).
    JAX: pltpu.prng_seed."""
    _p.current_kernel("prng_seed")
    vals = []
    for s in seeds:
        a = aval_of_value(s)
        if a.shape != () or np.dtype(a.dtype).kind not in "iu":
            raise ValueError(f"All seed data must be scalar integers. Got {a.str_short()}")
        vals.append(np.int32(s) if isinstance(s, (int, np.integer))
                    else lax.convert_element_type(s, np.int32))
    bind(PT.PrngSeedOp, *vals)


def prng_random_bits(shape):
    """The next int32 bits of `shape` from the kernel's hardware PRNG (rank >= 2 on the
    TPU). JAX: pltpu.prng_random_bits."""
    _p.current_kernel("prng_random_bits")
    return bind(PT.PrngRandomBitsOp, shape=tuple(int(d) for d in shape))


def get_barrier_semaphore():
    """The kernel's barrier semaphore, shared with the devices it signals (give the
    pallas_call a CompilerParams(collective_id=...)); interpret mode runs it inside a
    shard_map or a kernel over several cores only. JAX: pltpu.get_barrier_semaphore."""
    ctx = _p.current_kernel("get_barrier_semaphore")
    if getattr(ctx, "interpret", False) and not AXIS_ENV.meshes and not AXIS_ENV.index_of:
        # (inside a shard_map every device's instance is interpreted together, inside a
        # pl.core_map / pl.kernel every core's)
        raise NotImplementedError(
            "get_barrier_semaphore in interpret mode (interpret=True or "
            "pltpu.InterpretParams) outside a shard_map is not supported by mjax: "
            "interpret mode runs the devices' kernel instances together only for a "
            "pallas_call inside the shard_map whose mesh names them")
    if getattr(ctx, "interpret", False):
        # (interpret mode: one barrier semaphore per kernel, taken at its top level so a
        # call in a branch or loop names it too, as JAX's interpreter keeps one per
        # collective id; the interpreter carries it from grid step to grid step)
        sem = ctx.queries.get("barrier")
        if sem is None:
            sem = ctx.queries["barrier"] = ctx.trace.emit(
                PT.GetBarrierSemaphoreOp, [], {}, [RefAval((), np.int32)])[0]
            ctx.note_memory_spaces([sem], ["barrier_semaphore"])
        return Ref(sem)
    sem = bind(PT.GetBarrierSemaphoreOp)
    ctx.note_memory_spaces([sem], ["barrier_semaphore"])
    return Ref(sem)


def run_on_first_core(core_axis_name: str):
    """A decorator that runs the function on core 0 of the mesh axis `core_axis_name`:
    on a one-core axis it calls the function directly (returning its result), otherwise
    under pl.when(axis_index == 0) (returning None). JAX: pltpu.run_on_first_core."""
    if lax.axis_size(core_axis_name) == 1:
        return lambda f: f()

    def decorate(f):
        _p.when(lax.axis_index(core_axis_name) == 0)(f)
    return decorate
@dataclasses.dataclass(frozen=True)
class TensorCore:
    """One TensorCore of a chip. JAX: pltpu TensorCore."""
    id: int


class TensorCoreMesh:
    """The TensorCores a pl.kernel or pl.core_map runs on, along one named axis (a v5e
    chip has one, a v4/v5p two). JAX: pltpu TensorCoreMesh."""

    def __init__(self, devices, axis_names):
        self.devices = np.asarray(devices, dtype=object)
        self.axis_names = tuple(axis_names)

    @property
    def shape(self):
        return collections.OrderedDict(zip(self.axis_names, self.devices.shape))

    @property
    def size(self) -> int:
        return int(self.devices.size)

    def __repr__(self):
        return f"TensorCoreMesh(devices={self.devices!r}, axis_names={self.axis_names!r})"


def create_tensorcore_mesh(axis_name: str, devices=None, num_cores: int | None = None):
    """A mesh of the chip's TensorCores along `axis_name` (`num_cores` of them, or as many
    as the abstract mesh's device or the first device has). JAX:
    pltpu.create_tensorcore_mesh."""
    if devices is not None and num_cores is not None:
        raise ValueError("cannot specify both devices and num_cores")
    if num_cores is None:
        # (as JAX's: the abstract mesh's device, e.g. a v5p of 2 cores named off the chip
        # by jax.sharding.use_abstract_mesh, else the first device)
        abstract = get_abstract_mesh().abstract_device if devices is None else None
        device = abstract if abstract is not None else (
            list(devices) if devices is not None else devices_())[0]
        num_cores = int(getattr(device, "num_cores", 1) or 1)
    return TensorCoreMesh(np.array([TensorCore(i) for i in range(num_cores)]),
                          [axis_name])


class LoweringException(Exception):
    """A kernel the Mosaic lowering cannot compile. JAX: pltpu.LoweringException."""


class _Unsupported:
    """Base of classes mjax names but does not implement."""
    _what = ""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"pltpu.{type(self).__name__} is not supported by mjax: "
                                  f"{self._what}")


__all__ = ["ANY", "ARBITRARY", "AsyncCopyDescriptor", "BufferType", "BufferedRef",
           "BufferedRefBase", "CMEM", "CORE_PARALLEL", "ChipVersion", "CompilerParams",
           "CoreType", "DeviceIdType", "GridDimensionSemantics", "HBM", "InterpretParams",
           "LoweringException", "MemorySpace", "PARALLEL", "PrefetchScalarGridSpec",
           "SEMAPHORE", "SMEM", "SUBCORE_PARALLEL", "SemaphoreType", "SideEffectType",
           "TensorCore", "TensorCoreMesh",
           "TPUMemorySpace", "Tiling", "TpuInfo", "VMEM", "VMEM_SHARED", "async_copy",
           "async_remote_copy", "bitcast", "core", "core_barrier", "create_tensorcore_mesh",
           "dma_semaphore", "einshape", "emit_pipeline", "emit_pipeline_with_allocations",
           "force_tpu_interpret_mode", "get_barrier_semaphore", "get_tpu_info",
           "get_tpu_info_for_chip", "is_tpu_device", "load", "make_async_copy",
           "make_async_remote_copy", "matmul_acc_lhs", "matmul_pop", "matmul_push_rhs",
           "pack_elementwise", "prng_random_bits", "prng_seed",
           "reset_tpu_interpret_mode_state", "roll", "run_on_first_core", "sample_block",
           "semaphore", "semaphore_read", "semaphore_signal", "semaphore_wait",
           "set_tpu_interpret_mode", "stateful_bernoulli", "stateful_bits",
           "stateful_normal", "stateful_uniform", "stochastic_round", "store", "sync_copy",
           "to_pallas_key", "touch", "trace_value", "unpack_elementwise",
           "with_memory_space_constraint"]
