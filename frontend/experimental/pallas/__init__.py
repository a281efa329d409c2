"""`mjax.experimental.pallas` (`pl`): custom kernels over refs, JAX's Pallas API.

A kernel is traced into a private function over refs (`memref`) and called over a grid
by `jaxpr.pallas_call`; with interpret=True `--jaxpr-pallas-interpret` runs it as a loop
over the grid under XLA (on CPU, as in JAX, interpret=False is a ValueError), on GPUs
`--jaxpr-pallas-to-triton` compiles it with Triton. See docs/design.md ("Pallas").
"""
from mjax.experimental.pallas.core import (ANY, HOST, Blocked, BlockSpec, BoundedSlice,
                                           Buffered, CompilerParams, CostEstimate, Element,
                                           GridSpec,
                                           MemoryRef, MemorySpace, Squeezed, align_to, cdiv,
                                           next_power_of_2, no_block_spec, squeezed,
                                           strides_from_shape)
from mjax.experimental.pallas.pallas_call import pallas_call
from mjax.experimental.pallas.primitives import (atomic_add, atomic_and, atomic_max,
                                                 atomic_min, atomic_or, atomic_xchg,
                                                 atomic_xor, debug_print, dot, load, loop,
                                                 max_contiguous, multiple_of, num_programs,
                                                 program_id, store, swap, when)
from mjax.experimental.pallas.ref import Ref, Slice, ds, dslice
from mjax.experimental.pallas.memory import (DeviceIdType, run_scoped, semaphore_read,
                                             semaphore_signal, semaphore_wait)
from mjax.experimental.pallas.helpers import (BlockDim, Indirect, RevisitMode, broadcast_to,
                                              core_map, debug_check, delay, empty,
                                              empty_like, empty_ref_like,
                                              enable_debug_checks, enable_poison_buffers,
                                              estimate_cost, get_global, kernel,
                                              lower_as_mlir, pallas_call_p,
                                              pallas_export_experimental, reciprocal,
                                              run_state, select_ref, semaphore,
                                              with_scoped)
from mjax.experimental.pallas import tpu  # noqa: E402  (pl.tpu, as JAX's)

__all__ = ["BlockDim", "Indirect", "RevisitMode", "debug_check", "empty_ref_like",
           "enable_debug_checks", "enable_poison_buffers", "get_global", "lower_as_mlir",
           "pallas_call_p", "pallas_export_experimental", "run_state", "select_ref",
           "ANY", "DeviceIdType", "HOST", "broadcast_to", "core_map", "delay", "empty",
           "empty_like", "estimate_cost", "kernel", "reciprocal", "run_scoped",
           "semaphore", "semaphore_read", "semaphore_signal", "semaphore_wait", "tpu",
           "with_scoped", "BlockSpec", "Blocked", "BoundedSlice", "Buffered", "CompilerParams",
           "CostEstimate", "Element", "GridSpec", "MemoryRef", "MemorySpace", "Ref", "Slice",
           "Squeezed", "align_to", "atomic_add", "atomic_and", "atomic_max", "atomic_min",
           "atomic_or", "atomic_xchg", "atomic_xor", "cdiv", "debug_print", "dot", "ds",
           "dslice", "load", "loop", "max_contiguous", "multiple_of", "next_power_of_2",
           "no_block_spec", "num_programs", "pallas_call", "program_id", "squeezed",
           "store", "strides_from_shape", "swap", "when"]
