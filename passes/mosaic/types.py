"""Mosaic types of jaxpr values and kernel refs, lazy constants, and the error of the
Mosaic lowering.

A rank-0 jaxpr tensor lowers to a scalar (`f32`, `i32`), any other to a `vector<...>`;
integers are signless (`ui32` -> `i32`, rules pick the unsigned op); booleans are `i1`.
A kernel ref is a `memref<... , #tpu.memory_space<...>>` value. A `jaxpr.constant` lowers
to a `Const`, materialized at each use as JAX materializes a jaxpr literal (a scalar
`arith.constant`, broadcast with `vector.broadcast` when splat over a vector).
"""
from __future__ import annotations

import dataclasses

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith, vector

from mjax.dialect.ops.pallas_tpu import VIEW_START
from mjax.passes.kernel_lowering.types import (aval_out, avals_in, element_type,
                                               is_float, is_unsigned)


class MosaicLoweringError(NotImplementedError):
    """A kernel uses something the Mosaic lowering cannot express (the pass adds the
    op's location and name)."""


@dataclasses.dataclass
class Const:
    """A jaxpr constant not yet emitted: `value` (a NumPy array of the op's dtype)."""
    value: np.ndarray

    @property
    def shape(self) -> tuple:
        return tuple(self.value.shape)


_VIEW_USERS = ("jaxpr.ref_get", "jaxpr.ref_swap", "jaxpr.masked_load", "jaxpr.masked_swap",
               "jaxpr.ref_addupdate")


@dataclasses.dataclass
class ViewStart:
    """A ref access's start on one dim that the frontend folded from chained views'
    starts (its add of them, marked VIEW_START), not yet added: `terms` (i32 values or
    Consts), in the order the views were taken. JAX slices once per view, so an access
    through the views takes the terms one by one (state.py); anywhere else the sum is
    emitted where it is used (materialize), as the add would have been."""
    terms: list

    def emit(self) -> ir.Value:
        acc = materialize(self.terms[0], np.int32)
        for t in self.terms[1:]:
            acc = arith.addi(acc, materialize(t, np.int32))
        return acc


def view_start(op, x, y):
    """The value of a frontend's marked add of view starts `x + y`: a ViewStart when
    only ref accesses (or further such adds) use it, None otherwise (an ordinary add)."""
    if VIEW_START not in op.attributes:
        return None
    for use in op.results[0].uses:
        owner = use.owner.operation if hasattr(use.owner, "operation") else use.owner
        if owner.name not in _VIEW_USERS and VIEW_START not in owner.attributes:
            return None
    terms = list(x.terms) if isinstance(x, ViewStart) else [x]
    return ViewStart(terms + [y])


@dataclasses.dataclass
class BlockRef:
    """A kernel block whose BlockSpec squeezes dims (JAX's None / pl.Squeezed): Mosaic's
    memref keeps them (size 1, as the window bounds), the kernel's ref lacks them."""
    value: ir.Value
    squeezed: tuple      # dims of the memref the kernel's ref does not have

    def expand(self, starts, sizes, squeezed):
        """A window of the kernel's ref as one of the memref: (memref, starts, sizes,
        squeezed) with index 0, size 1, squeezed at each squeezed dim."""
        rank = len(self.squeezed) + len(sizes)
        it_st, it_sz = iter(starts), iter(sizes)
        full_starts, full_sizes, full_sq, k = [], [], [], 0
        for d in range(rank):
            if d in self.squeezed:
                full_starts.append(Const(np.asarray(0, np.int32)))
                full_sizes.append(1)
                full_sq.append(d)
            else:
                full_starts.append(next(it_st))
                full_sizes.append(next(it_sz))
                if k in squeezed:
                    full_sq.append(d)
                k += 1
        return self.value, full_starts, full_sizes, tuple(full_sq)


def expand_ref(ref, starts, sizes, squeezed):
    """(memref, starts, sizes, squeezed) of a ref window, block squeezing undone."""
    if isinstance(ref, BlockRef):
        return ref.expand(list(starts), list(sizes), tuple(squeezed))
    return ref, list(starts), list(sizes), tuple(squeezed)


# ---- types -----------------------------------------------------------------------------
def elt_type(dtype) -> ir.Type:
    """Mosaic's element type for a dtype (signless integers, i1 for bool)."""
    return element_type(dtype, MosaicLoweringError, "Mosaic", narrow=True)


def vtype(shape, dtype) -> ir.Type:
    """The type of a value: scalar for rank 0, else a vector."""
    e = elt_type(dtype)
    return e if not shape else ir.VectorType.get(list(shape), e)


def shape_of(v: ir.Value) -> tuple:
    return tuple(ir.ShapedType(v.type).shape) if isinstance(
        v.type, (ir.VectorType, ir.MemRefType)) else ()


# Memory spaces of the IR (dialect/ops/pallas.py) -> Mosaic's; semaphores' kinds
# live in `semaphore_mem`.
_SPACES = {"any": "any", "vmem": "vmem", "smem": "smem", "hbm": "hbm",
           "vmem_shared": "vmem_shared", "cmem": "cmem", "host": "host",
           "semaphore": "semaphore_mem", "dma_semaphore": "semaphore_mem",
           "barrier_semaphore": "semaphore_mem", "semaphore_mem": "semaphore_mem"}
_SEMAPHORE_TYPES = {"semaphore": "!tpu.semaphore", "dma_semaphore": "!tpu.dma_semaphore",
                    "barrier_semaphore": "!tpu.semaphore"}


def memory_space(space: str) -> ir.Attribute:
    if space not in _SPACES:
        raise MosaicLoweringError(f"memory space {space!r} has no Mosaic counterpart "
                                  f"(known: {', '.join(sorted(_SPACES))})")
    return ir.Attribute.parse(f"#tpu.memory_space<{_SPACES[space]}>")


def ref_type(shape, dtype, space: str = "vmem") -> ir.Type:
    """A kernel ref's memref type in `space` (semaphore spaces: arrays of semaphores)."""
    if space in _SEMAPHORE_TYPES:
        elt = ir.Type.parse(_SEMAPHORE_TYPES[space])
    elif np.dtype(dtype) == np.bool_:     # (booleans live in memory as i32, as in JAX)
        elt = ir.IntegerType.get_signless(32)
    else:
        elt = elt_type(dtype)
    return ir.MemRefType.get(list(shape), elt, memory_space=memory_space(space))


def ref_space(ref: ir.Value) -> str:
    """The Mosaic memory space of a ref value ("vmem", "smem", ...)."""
    space = ir.MemRefType(ref.type).memory_space
    text = str(space) if space is not None else ""
    return text.split("<")[-1].rstrip(">") if "<" in text else "any"


# ---- constants -------------------------------------------------------------------------
def scalar_attr(value, dtype) -> ir.Attribute:
    dt = np.dtype(dtype)
    e = elt_type(dt)
    if dt == np.bool_:
        return ir.IntegerAttr.get(e, int(bool(value)))
    if dt.kind == "u":        # signless bits: 0xFFFFFFFF is -1 as an i32
        value = np.asarray(value, dt).view(np.dtype(f"int{dt.itemsize * 8}"))
    if isinstance(e, ir.IntegerType):
        return ir.IntegerAttr.get(e, int(value))
    return ir.FloatAttr.get(e, float(value))


def full(value, dtype, shape=()) -> ir.Value:
    """`value` as a scalar constant, or a dense splat vector constant over `shape`."""
    attr = scalar_attr(value, dtype)
    if not shape:
        return arith.constant(elt_type(dtype), attr)
    t = vtype(shape, dtype)
    return arith.constant(t, ir.DenseElementsAttr.get_splat(t, attr))


def index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), ir.IntegerAttr.get(ir.IndexType.get(),
                                                                  int(value)))


def materialize(x, dtype=None) -> ir.Value:
    """An MLIR value for `x` (a Const is emitted here, as JAX emits a literal at each use:
    a scalar constant, broadcast when splat over a vector)."""
    if isinstance(x, ViewStart):
        return x.emit()
    if not isinstance(x, Const):
        return x
    v = x.value
    dtype = v.dtype if dtype is None else dtype
    if v.ndim == 0:
        return full(v[()], dtype)
    flat = v.reshape(-1)
    if flat.size and (flat == flat[0]).all():
        return vector.broadcast(vtype(v.shape, dtype), full(flat[0], dtype))
    t = vtype(v.shape, dtype)
    if np.dtype(dtype) == np.bool_:
        return arith.constant(t, ir.DenseElementsAttr.get(np.packbits(v, bitorder="little"),
                                                          type=t))
    return arith.constant(t, ir.DenseElementsAttr.get(np.ascontiguousarray(v), type=t))


# (aval_out, avals_in, is_float, is_unsigned: kernel_lowering/types.py, shared with Triton)
__all__ = ["BlockRef", "Const", "MosaicLoweringError", "aval_out", "avals_in", "elt_type",
           "expand_ref", "full", "index", "is_float", "is_unsigned", "materialize",
           "memory_space", "ref_space", "ref_type", "scalar_attr", "shape_of", "view_start",
           "vtype", "ViewStart"]
