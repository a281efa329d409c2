"""Mosaic lowering rules of the Pallas ref ops and grid queries.

A ref access reads or writes a window of a kernel memref: each start becomes an `index`
(a constant for a static start, `arith.index_cast` of a traced one). VMEM refs use
`vector.load` / `tpu.vector_store` (a swap loads the old value first, as JAX does; masked
ones pass the mask to `tpu.vector_store`), SMEM refs `memref.load` / `memref.store` of
scalars. Squeezed dims are loaded with size 1 and dropped by `vector.shape_cast`.

    %v = "jaxpr.ref_get"(%x, %c0, %c0) {sizes = array<i64: 8, 128>, squeezed = array<i64>}
  ==>
    %v = vector.load %x[%c0, %c0_0] : memref<8x128xf32, #tpu.memory_space<vmem>>,
                                       vector<8x128xf32>
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith, memref, vector
from jaxlib.mosaic.python import tpu

from mjax.dialect.ops import state as S
from mjax.passes.mosaic.table import MOSAIC
from mjax.passes.mosaic.elementwise import binary
from mjax.passes.mosaic.types import (Const, MosaicLoweringError, avals_in, expand_ref,
                                      index, ref_space, vtype)


@MOSAIC.register(S.ProgramIdOp)
def _program_id(kl, op, *, axis, **params):
    return [kl.program_id(axis)]


@MOSAIC.register(S.NumProgramsOp)
def _num_programs(kl, op, *, axis, **params):
    if not 0 <= axis < len(kl.grid):
        raise MosaicLoweringError(f"num_programs axis {axis} is out of range for a grid "
                                  f"of rank {len(kl.grid)}")
    if kl.grid[axis] < 0:       # a dynamic grid dimension (JAX: tpu.iteration_bound)
        return [tpu.iteration_bound(axis)]
    return [Const(np.asarray(kl.grid[axis], np.int32))]


def _indices(starts) -> list[ir.Value]:
    out = []
    for s in starts:
        if isinstance(s, Const):
            out.append(index(int(s.value)))
        else:
            out.append(arith.index_cast(ir.IndexType.get(), s))
    return out


def _window(op, ref, starts, sizes, squeezed):
    """The memref and the full-rank window a ref op names (types.expand_ref)."""
    ref, starts, sizes, squeezed = expand_ref(ref, starts, sizes, squeezed)
    if not isinstance(getattr(ref, "type", None), ir.MemRefType):
        raise MosaicLoweringError(f"{op.name}: operand 0 is not a kernel ref")
    return ref, _indices(starts), sizes, squeezed


def _dtype_of_ref(op):
    return avals_in(op)[0].dtype


def load(ref, idx, sizes, squeezed, dtype) -> ir.Value:
    """The window `sizes` at `idx` of `ref`, without its squeezed dims."""
    out_shape = [s for k, s in enumerate(sizes) if k not in squeezed]
    if ref_space(ref) == "smem":
        if out_shape:
            raise MosaicLoweringError("only scalars can be read from SMEM refs "
                                      f"(read of shape {tuple(out_shape)})")
        return memref.load(ref, idx)
    v = vector.load(vtype(list(sizes), dtype), ref, idx)
    if list(sizes) != out_shape:
        if not out_shape:
            return vector.extract(v, [], [0] * len(sizes))
        v = vector.shape_cast(vtype(out_shape, dtype), v)
    return v


def store(ref, idx, val, sizes, squeezed, dtype, mask=None) -> None:
    if ref_space(ref) == "smem":
        if mask is not None:
            raise MosaicLoweringError("masked stores to SMEM refs are not supported")
        memref.store(val, ref, idx)
        return
    shape = [s for k, s in enumerate(sizes) if k not in squeezed]
    if list(sizes) != shape:
        if not shape:
            val = vector.broadcast(vtype(list(sizes), dtype), val)
        else:
            val = vector.shape_cast(vtype(list(sizes), dtype), val)
        if mask is not None:
            mask = vector.shape_cast(vtype(list(sizes), np.bool_), mask)
    tpu.VectorStoreOp(val, ref, idx, [], mask=mask)


@MOSAIC.register(S.RefGetOp)
def _ref_get(kl, op, ref, *starts, sizes, squeezed=(), **params):
    ref, idx, sizes, squeezed = _window(op, ref, starts, sizes, squeezed)
    return [load(ref, idx, sizes, squeezed, _dtype_of_ref(op))]


@MOSAIC.register(S.MaskedLoadOp)
def _masked_load(kl, op, ref, mask, other, *starts, sizes, squeezed=(), **params):
    ref, idx, sizes, squeezed = _window(op, ref, starts, sizes, squeezed)
    dtype = _dtype_of_ref(op)
    v = load(ref, idx, sizes, squeezed, dtype)
    return [arith.select(kl.value(mask, np.bool_), v, kl.value(other, dtype))]


def _swap(kl, op, ref, val, mask, starts, sizes, squeezed):
    dtype = _dtype_of_ref(op)
    val = kl.value(val, dtype)
    ref, idx, sizes, squeezed = _window(op, ref, starts, sizes, squeezed)
    old = load(ref, idx, sizes, squeezed, dtype)
    store(ref, idx, val, sizes, squeezed, dtype,
          None if mask is None else kl.value(mask, np.bool_))
    return [old]


@MOSAIC.register(S.RefSwapOp)
def _ref_swap(kl, op, ref, val, *starts, sizes, squeezed=(), **params):
    return _swap(kl, op, ref, val, None, starts, sizes, squeezed)


@MOSAIC.register(S.MaskedSwapOp)
def _masked_swap(kl, op, ref, val, mask, *starts, sizes, squeezed=(), **params):
    return _swap(kl, op, ref, val, mask, starts, sizes, squeezed)


@MOSAIC.register(S.RefAddUpdateOp)
def _ref_addupdate(kl, op, ref, val, *starts, sizes, squeezed=(), **params):
    dtype = _dtype_of_ref(op)
    ref, idx, sizes, squeezed = _window(op, ref, starts, sizes, squeezed)
    old = load(ref, idx, sizes, squeezed, dtype)
    new = binary("add", old, kl.value(val, dtype), dtype)
    store(ref, idx, new, sizes, squeezed, dtype)
    return []


MOSAIC.unsupported(S.AtomicRmwOp, "atomics are a GPU feature; TPU kernels own their "
                                  "output blocks (use semaphores and DMAs to share)")
MOSAIC.unsupported(S.RefNewOp, "a kernel's refs are its arguments and scratch buffers "
                               "(pl.run_scoped allocates more)")

__all__ = ["load", "store"]
