"""Mosaic lowering rules of the Pallas TPU memory ops: DMAs, semaphores and scoped
allocations (dialect/ops/pallas_tpu.py), as JAX's Pallas TPU lowering emits them.

A ref view (starts, sizes, squeezed) is `tpu.memref_slice` (i32 starts) then
`tpu.memref_squeeze`; a whole-ref view is the ref itself. A semaphore operand (an i32
ref in mjax's IR, a memref of `!tpu.semaphore` / `!tpu.dma_semaphore` in Mosaic) is
indexed down to one semaphore the same way.

    "jaxpr.dma_start"(%src, %dst, %sem, ...) {...}
  ==>
    tpu.enqueue_dma source(%src_view) target(%dst_view) target_semaphore(%sem_view)
    "jaxpr.dma_wait"(%sem, %dst, ...)
  ==>
    tpu.wait_dma2 semaphore(%sem_view) src(%dst_view) dst(%dst_view)
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import memref
from jaxlib.mosaic.python import tpu

from mjax.dialect.ops import pallas_tpu as PT
from mjax.passes.mosaic.table import MOSAIC
from mjax.passes.mosaic.types import (BlockRef, Const, MosaicLoweringError, aval_out,
                                      avals_in, expand_ref, full, ref_type, vtype)


def ref_view(kl, ref, starts, sizes=None, squeezed=()) -> ir.Value:
    """The window of `ref` at `starts` (i32) of `sizes` (default 1 each, all squeezed:
    one element, as semaphores are indexed)."""
    if sizes is None:
        n = len(ir.MemRefType(ref.type).shape) if not isinstance(ref, BlockRef) else \
            len(ir.MemRefType(ref.value.type).shape) - len(ref.squeezed)
        sizes, squeezed = [1] * n, tuple(range(n))
    ref, starts, sizes, squeezed = expand_ref(ref, starts, sizes, squeezed)
    t = ir.MemRefType(ref.type)
    shape = list(t.shape)
    if sizes is None:
        sizes, squeezed = [1] * len(shape), tuple(range(len(shape)))
    sizes = [int(s) for s in sizes]
    whole = (sizes == shape and not squeezed and all(
        isinstance(s, Const) and int(s.value) == 0 for s in starts))
    if not shape or whole:
        return ref
    idx = [kl.value(s, np.int32) for s in starts]
    sliced_t = ir.MemRefType.get(sizes, t.element_type, memory_space=t.memory_space)
    view = tpu.memref_slice(sliced_t, ref, idx, [])
    if squeezed:
        keep = [s for k, s in enumerate(sizes) if k not in tuple(squeezed)]
        view = tpu.memref_squeeze(ir.MemRefType.get(keep, t.element_type,
                                                    memory_space=t.memory_space), view)
    return view


@MOSAIC.register(PT.DmaStartOp)
def _dma_start(kl, op, *operands, src_sizes, src_squeezed=(), dst_sizes, dst_squeezed=(),
               has_src_sem=False, priority=0, add=False, **params):
    if add:
        raise MosaicLoweringError("DMAs with add=True are not supported on the TPU")
    avals = avals_in(op)
    if any(np.dtype(a.dtype) == np.bool_ for a in avals[:2]):
        raise MosaicLoweringError("DMAs of bool refs are not supported")
    refs, starts = _split(operands, avals, 4 if has_src_sem else 3)
    # (views in JAX's order: the last ref's first)
    src_sem = ref_view(kl, refs[3], starts[3]) if has_src_sem else None
    sem = ref_view(kl, refs[2], starts[2])
    dst = ref_view(kl, refs[1], starts[1], dst_sizes, tuple(dst_squeezed))
    src = ref_view(kl, refs[0], starts[0], src_sizes, tuple(src_squeezed))
    tpu.enqueue_dma(source=src, target=dst, target_semaphore=sem,
                    source_semaphore=src_sem, priority=int(priority))
    # The wait of this copy names its semaphore and destination only; Mosaic's wants the
    # source too: remembered here by (block, semaphore and destination operands).
    ops = list(op.operands)
    key = _wait_key(op, ops[2], starts_of(op, 2, avals, has_src_sem), ops[1],
                    starts_of(op, 1, avals, has_src_sem))
    kl.dma_sources[key] = (refs[0], starts[0], src_sizes, tuple(src_squeezed))
    return []


def starts_of(op, k, avals, has_src_sem):
    """The jaxpr operands that index ref operand `k` of a dma_start."""
    at = 4 if has_src_sem else 3
    for a in avals[:k]:
        at += len(a.shape)
    return list(op.operands)[at:at + len(avals[k].shape)]


def _wait_key(op, sem, sem_idx, ref, ref_starts) -> tuple:
    """(block, semaphore, its index, destination, its starts): static starts by value
    (a copy's start and its wait trace their constants apart)."""
    return (op.parent, sem, *map(_static_or_value, sem_idx), None, ref,
            *map(_static_or_value, ref_starts))


def _static_or_value(v: ir.Value):
    owner = v.owner
    if not isinstance(owner, ir.Block) and owner.operation.name == "jaxpr.constant":
        return ("static", str(owner.operation.attributes["value"]))
    return v


def _split(operands, avals, n_refs):
    """(refs, [starts of each ref]) of a DMA's operands."""
    refs = list(operands[:n_refs])
    starts, at = [], n_refs
    for a in avals[:n_refs]:
        starts.append(list(operands[at:at + len(a.shape)]))
        at += len(a.shape)
    return refs, starts


@MOSAIC.register(PT.DmaWaitOp)
def _dma_wait(kl, op, sem, ref, *idx, sizes, squeezed=(), **params):
    sem_aval = avals_in(op)[0]
    n = len(sem_aval.shape)
    ops = list(op.operands)
    sem_v = ref_view(kl, sem, list(idx[:n]))
    view = ref_view(kl, ref, list(idx[n:]), sizes, tuple(squeezed))
    # The source of the copy started in this block on this semaphore into this view;
    # else (a wait for a copy started elsewhere) the destination stands for it: Mosaic
    # reads the transfer's size from either.
    source = kl.dma_sources.get(_wait_key(op, ops[0], ops[2:2 + n], ops[1], ops[2 + n:]))
    src = view if source is None else ref_view(kl, source[0], source[1], source[2],
                                               source[3])
    tpu.wait_dma2(sem_v, src, view)
    return []


@MOSAIC.register(PT.SemaphoreSignalOp)
def _semaphore_signal(kl, op, sem, inc, *idx, **params):
    tpu.sem_signal(ref_view(kl, sem, list(idx)), kl.value(inc, np.int32))
    return []


@MOSAIC.register(PT.SemaphoreWaitOp)
def _semaphore_wait(kl, op, sem, value, *idx, decrement=True, **params):
    if not decrement:
        raise MosaicLoweringError("a semaphore wait that does not decrement is not "
                                  "supported on the TPU")
    value = kl.value(value, np.int32)
    full(True, np.bool_)        # (JAX materializes `decrement` here, unused)
    tpu.sem_wait(ref_view(kl, sem, list(idx)), value)
    return []


@MOSAIC.register(PT.SemaphoreReadOp)
def _semaphore_read(kl, op, sem, *idx, **params):
    return [tpu.sem_read(ref_view(kl, sem, list(idx)))]


@MOSAIC.register(PT.RunScopedOp)
def _run_scoped(kl, op, *captured, scratch_shapes=(), scratch_memory_spaces=None,
                **params):
    scratch = list(scratch_shapes or ())
    spaces = list(scratch_memory_spaces or ()) or ["vmem"] * len(scratch)
    results = [vtype(aval_out(op, i).shape, aval_out(op, i).dtype)
               for i in range(len(op.results))]
    region = tpu.RegionOp(results)
    body = region.body
    with ir.InsertionPoint(body):
        allocs = []
        for s, space in zip(scratch, spaces):
            t = ref_type(s.shape, s.dtype, str(space))
            if "semaphore" in str(space):
                allocs.append(tpu.sem_alloc(t))
            else:
                allocs.append(memref.alloca(t, [], []))
        outs = kl.lower_block(op.regions[0].blocks[0], list(captured) + allocs)
        tpu.yield_([kl.value(v, aval_out(op, i).dtype) for i, v in enumerate(outs)])
    return list(region.results)
