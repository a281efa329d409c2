"""Smaller `pl` names: `estimate_cost`, `with_scoped`, `reciprocal`, `broadcast_to`,
`empty`/`empty_like`, `delay`, `kernel` (over a mesh of cores; `core_map` is
mesh_kernels.py), and the names mjax does not support (they raise NotImplementedError
naming what is missing). JAX: pallas/helpers.py, pallas/core.py.
"""
from __future__ import annotations

import dataclasses
import enum
import functools
from typing import Union

import numpy as np

from mjax import numpy as jnp
from mjax.base import trace_trees, tree_util
from mjax.config import config
from mjax.dialect.ops.pallas import PallasCallOp
from mjax.experimental.pallas.core import (Blocked, BoundedSlice, CostEstimate, Element,
                                           MemoryRef, MemorySpace, Squeezed,
                                           pallas_export_experimental)
from mjax.experimental.pallas import primitives as _p
from mjax.jit.jitted import jit
from mjax.tracing.core import current_trace
from mjax.tracing.primitive import primitive_of
from mjax.ref import Ref as RefType
from mjax.ref import new_ref
from mjax.runtime import get_backend
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct
from mjax.experimental.pallas.memory import run_scoped
from mjax.experimental.pallas.selection import select_ref
from mjax.experimental.pallas.mesh_kernels import core_map, kernel_on_refs, mesh_axis, mesh_call
from mjax.experimental.pallas.pallas_call import _fun_name


def estimate_cost(fun, *args, **kwargs) -> CostEstimate:
    """A pl.CostEstimate for `fun(*args, **kwargs)` (arrays or ShapeDtypeStructs; keyword
    arguments are static): XLA's cost analysis of the function, lowered for the
    default backend, by the host CPU's client where the default's has none before
    compiling (a TPU's). JAX: pl.estimate_cost (JAX counts from its jaxpr, so the
    numbers can differ; they only guide XLA's scheduling of the kernel)."""
    leaves, tree = trace_trees.tree_flatten(args)
    specs = [ShapeDtypeStruct(tuple(x.shape), x.dtype) if hasattr(x, "shape") else x
             for x in leaves]
    try:
        lowered = jit(functools.partial(fun, **kwargs)).lower(
            *tree_util.tree_unflatten(tree, specs))
        cost = lowered.cost_analysis()
        if cost is None:    # (a TPU's client has none before compiling: the host's count)
            cost = lowered._cost_analysis(get_backend("cpu"))
        cost = cost or {}
        if isinstance(cost, (list, tuple)):
            cost = cost[0] if cost else {}
    except Exception:       # (no cost analysis on this backend: no estimate)
        cost = {}
    return CostEstimate(flops=int(cost.get("flops", 0) or 0),
                        transcendentals=int(cost.get("transcendentals", 0) or 0),
                        bytes_accessed=int(cost.get("bytes accessed", 0) or 0))


def with_scoped(*types, collective_axes=(), **kw_types):
    """Decorator form of run_scoped: `@pl.with_scoped(pltpu.VMEM(...), sem=...)` makes
    `f` a function whose call `f(*args)` runs `f(*args, *scoped refs, **scoped refs)`
    in a run_scoped and gives its result. JAX: pl.with_scoped."""
    def wrap(f):
        def inner(*args):
            return run_scoped(functools.partial(f, *args), *types,
                              collective_axes=collective_axes, **kw_types)
        return inner
    return wrap


def reciprocal(x, *, approx: bool = False, full_range: bool = True):
    """1 / x (interpret mode computes it exactly). JAX: pl.reciprocal."""
    return 1.0 / jnp.asarray(x)


def broadcast_to(a, shape):
    """jnp.broadcast_to inside kernels. JAX: pl.broadcast_to."""
    return jnp.broadcast_to(a, tuple(shape))


def empty(shape, dtype, *, out_sharding=None):
    """An array whose contents do not matter (zeros here). JAX: pl.empty."""
    return jnp.zeros(shape, dtype)


def empty_like(x):
    """An array shaped like `x` whose contents do not matter (zeros). JAX: pl.empty_like."""
    return jnp.zeros(x.shape, x.dtype)


def delay(nanos) -> None:
    """Stalls the core for `nanos` nanoseconds on a TPU; nothing when interpreting.
    JAX: pl.delay."""


def _not_supported(name: str, what: str):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"pl.{name} is not supported by mjax: {what}")
    fn.__name__ = fn.__qualname__ = name
    fn.mjax_unsupported = what       # (docs/gen_api_coverage.py lists these)
    fn.__doc__ = f"Not supported by mjax: {what}. JAX: pl.{name}."
    return fn


class _NotSpecified:
    def __repr__(self):
        return "NotSpecified"


def kernel(body=_NotSpecified(), out_type=(), *, mesh, scratch_types=(),
           compiler_params=None, interpret=False, cost_estimate=None, debug=False,
           name=None, metadata=None):
    """A kernel over a mesh of cores: `kernel(body, out_type, mesh=...)(*args)` runs
    `body(*input refs, *output refs, *scratch refs)` once per core, every ref the whole
    array in HBM (pl.ANY; move data with DMAs, sync_copy). Without `body`, a decorator.
    As JAX's: a pallas_call over a grid of one point per core, its axis `parallel`.
    JAX: pl.kernel."""
    if isinstance(body, _NotSpecified):
        return functools.partial(kernel, out_type=out_type, mesh=mesh,
                                 scratch_types=scratch_types,
                                 compiler_params=compiler_params, interpret=interpret,
                                 cost_estimate=cost_estimate, debug=debug, name=name,
                                 metadata=metadata)
    if isinstance(body, (list, tuple)) or isinstance(mesh, (list, tuple)):
        raise NotImplementedError("pl.kernel with several bodies and meshes (MPMD) is not "
                                  "supported by mjax")
    mesh_axis(mesh, "pl.kernel")

    def run(*args):
        if any(isinstance(x, RefType) for x in trace_trees.tree_leaves(args)):
            return _kernel_on_refs(body, out_type, mesh, scratch_types, compiler_params,
                                   interpret, cost_estimate, debug, name, metadata, args)
        call = mesh_call(body, out_type, mesh, len(trace_trees.tree_leaves(args)),
                         scratch_types=scratch_types, compiler_params=compiler_params,
                         interpret=interpret, cost_estimate=cost_estimate, debug=debug,
                         name=name, metadata=metadata)
        return call(*args)
    return run


def _kernel_on_refs(body, out_type, mesh, scratch_types, compiler_params, interpret,
                    cost_estimate, debug, name, metadata, args):
    """pl.kernel given refs (arrays among the arguments become refs): the body writes
    the refs it is given in place (mesh_kernels.kernel_on_refs)."""
    refs = [x if isinstance(x, RefType) else new_ref(jnp.asarray(x))
            for x in trace_trees.tree_leaves(args)]
    run = functools.partial(kernel_on_refs, body, out_type, mesh, refs,
                            scratch_types=scratch_types, name=name,
                            compiler_params=compiler_params, interpret=interpret,
                            cost_estimate=cost_estimate, debug=debug, metadata=metadata)
    return run() if current_trace() is not None else jit(run)()   # (eager: staged)


class semaphore:
    """The dtype of regular semaphores. JAX: pl.semaphore."""





# ---- the rest of pl's names ------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Indirect:
    """A block dimension indexed by an array of indices (a gather or scatter).
    JAX: pl.Indirect; pallas_call refuses it (NotImplementedError)."""
    block_size: int

    def __repr__(self):
        return f"Indirect({self.block_size})"


BlockDim = Union[Element, Squeezed, Blocked, BoundedSlice, Indirect]


class RevisitMode(enum.Enum):
    """How a kernel may revisit an output block. JAX: pl.RevisitMode."""
    IMMEDIATE = "immediate"
    ANY = "any"


def run_state(f):
    """`run_state(f)(init)`: runs `f` on refs holding `init` (a pytree of arrays) and
    returns their final values. JAX: pl.run_state."""
    def wrapped(init):
        leaves, tree = trace_trees.tree_flatten(init)
        refs = [new_ref(jnp.asarray(x)) for x in leaves]
        f(tree_util.tree_unflatten(tree, refs))
        return tree_util.tree_unflatten(tree, [r[...] for r in refs])
    return wrapped


def lower_as_mlir(f, *args, dynamic_shapes=False, device=None, static_argnames=(),
                  platforms=None, **kwargs) -> str:
    """The text of `f`'s lowered module (mjax: its StableHLO after the Pallas passes).
    JAX: pl.lower_as_mlir."""
    if dynamic_shapes:
        raise NotImplementedError("pl.lower_as_mlir(dynamic_shapes=True): mjax shapes are "
                                  "static")
    return jit(functools.partial(f, **kwargs), static_argnames=static_argnames).lower(
        *args).as_text()


def enable_debug_checks(new_val=True):
    """A context manager setting jax_pallas_enable_debug_checks. JAX:
    pl.enable_debug_checks."""
    return config.override(jax_pallas_enable_debug_checks=bool(new_val))


def enable_poison_buffers(new_val=True):
    """A context manager setting jax_pallas_poison_buffers. JAX: pl.enable_poison_buffers."""
    return config.override(jax_pallas_poison_buffers=bool(new_val))


def debug_check(condition, message) -> None:
    """A runtime check of a kernel when jax_pallas_enable_debug_checks is on; nothing
    otherwise. JAX: pl.debug_check (mjax implements the off state only)."""
    if config.read("jax_pallas_enable_debug_checks"):
        raise NotImplementedError("pl.debug_check with jax_pallas_enable_debug_checks on "
                                  "is not supported by mjax (kernel checks)")


debug_check.mjax_unsupported = None      # (works when checks are off: not listed)
def _in_kernel() -> bool:
    return bool(_p._kernels.stack)


def empty_ref_like(x):
    """A new Ref shaped like `x` (a pl.MemoryRef such as pltpu.VMEM(shape, dtype), or a
    ShapeDtypeStruct: memory space ANY) with unspecified contents (zeros here), inside a
    traced function. Inside a kernel it is a kernel-local ref (interpret mode only: as
    JAX's, the Mosaic lowering refuses it); at the jit level only ANY refs (JAX allocates
    others for the core_map kernels closing over them: mjax does not).
    JAX: pl.empty_ref_like."""
    if isinstance(x, MemoryRef):
        space = x.memory_space
    elif isinstance(x, ShapeDtypeStruct):
        space = MemorySpace.ANY
    else:
        raise ValueError(f"empty_ref_like does not support {type(x)}")
    if current_trace() is None:
        raise NotImplementedError("array ref with memory space only works inside of a "
                                  "`jit`.")
    name = getattr(space, "value", space)
    if name == "semaphore_mem":
        raise NotImplementedError("pl.empty_ref_like of a semaphore is not supported by "
                                  "mjax: allocate semaphores with pl.run_scoped or "
                                  "scratch_shapes")
    if name != "any" and not _in_kernel():
        raise NotImplementedError(
            f"pl.empty_ref_like of a {name} ref outside a kernel is not supported by mjax "
            f"(JAX allocates it for the core_map kernels that close over it; mjax's "
            f"jit-level refs have no memory space): use scratch_shapes or pl.run_scoped")
    return new_ref(empty_like(x))


def get_global(what):
    """A reference that persists across kernel invocations: JAX 0.10.2 implements it for
    Mosaic GPU only (no TPU lowering, no interpreter rule), so mjax refuses it with JAX's
    TPU errors. JAX: pl.get_global."""
    if not isinstance(what, (MemoryRef, enum.Enum)):
        raise TypeError(f"pl.get_global takes a scratch type (pltpu.VMEM(...), a "
                        f"SemaphoreType), got {type(what).__name__}")
    if current_trace() is None:
        raise NotImplementedError("Evaluation rule for 'get_global' not implemented")
    if not _in_kernel():
        raise TypeError("No ir_type_handler for aval type: a Ref (pl.get_global outside "
                        "a Pallas kernel)")
    raise NotImplementedError("Unimplemented primitive in Pallas TPU lowering for tc: "
                              "get_global (JAX 0.10.2 lowers it for Mosaic GPU only, and "
                              "its interpreters have no rule for it)")


get_global.mjax_unsupported = None       # (as JAX's on the TPU: not listed)


pallas_call_p = primitive_of(PallasCallOp)


__all__ = ["BlockDim", "Indirect", "RevisitMode", "broadcast_to", "core_map", "debug_check",
           "delay", "empty", "empty_like", "empty_ref_like", "enable_debug_checks",
           "enable_poison_buffers", "estimate_cost", "get_global", "kernel",
           "lower_as_mlir", "pallas_call_p", "pallas_export_experimental", "reciprocal",
           "run_state", "select_ref", "semaphore", "with_scoped"]
