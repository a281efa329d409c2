"""Mosaic lowering rules of the Pallas TPU kernel ops: DMAs, semaphores, scoped
allocations, pl.multiple_of's `tpu.assume_multiple`, pltpu.roll's
`tpu.dynamic_rotate` and the kernel PRNG's `tpu.prng_set_seed_32` /
`tpu.prng_random_bits` (dialect/ops/pallas_tpu.py), as JAX's Pallas TPU lowering emits
them.

A ref view (starts, sizes, squeezed) is `tpu.memref_slice` (i32 starts) then
`tpu.memref_squeeze`; a whole-ref view is the ref itself. A semaphore operand (an i32
ref in mjax's IR, a memref of `!tpu.semaphore` / `!tpu.dma_semaphore` in Mosaic) is
indexed down to one semaphore the same way.

    "jaxpr.dma_start"(%src, %dst, %sem, ...) {...}
  ==>
    tpu.enqueue_dma source(%src_view) target(%dst_view) target_semaphore(%sem_view)
    "jaxpr.dma_wait"(%sem, %dst, %src, ...) {has_src = true, ...}
  ==>
    tpu.wait_dma2 semaphore(%sem_view) src(%src_view) dst(%dst_view)

A view made by chained `.at[...]`s is sliced (and squeezed) once per window. A view of
dynamic size (`pl.ds(start, size)` with a traced size) is a memref with `?` dimensions,
its sizes `tpu.memref_slice`'s dynamic sizes, as JAX's `_slice_memref` makes it.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import memref
from jaxlib.mosaic.python import tpu

from mjax.dialect.ops import pallas_tpu as PT
from mjax.dialect.ops.state import bitcast_shape
from mjax.dialect.types import RefAval
from mjax.passes.mosaic.remote import core_value, logical_device, split_core, split_remote
from mjax.passes.mosaic.table import MOSAIC
from mjax.passes.mosaic.types import (BlockRef, Const, MosaicLoweringError, aval_out,
                                      avals_in, elt_type, expand_ref, full, ref_type, vtype)


def ref_view(kl, ref, starts, sizes=None, squeezed=(), dyn=(), always=False) -> ir.Value:
    """The window of `ref` at `starts` (i32) of `sizes` (default 1 each, all squeezed:
    one element, as semaphores are indexed); a DYNAMIC_SIZE size is the next of `dyn`
    (an i32 value: a memref dimension of dynamic size, as JAX's; a constant one is
    static). A whole-ref window is the ref itself unless `always` (one window of a
    chain: JAX slices for each `.at`, whole or not)."""
    if sizes is None:
        n = len(ir.MemRefType(ref.type).shape) if not isinstance(ref, BlockRef) else \
            len(ir.MemRefType(ref.value.type).shape) - len(ref.squeezed)
        sizes, squeezed = [1] * n, tuple(range(n))
    ref, starts, sizes, squeezed = expand_ref(ref, starts, sizes, squeezed)
    t = ir.MemRefType(ref.type)
    shape = list(t.shape)
    if sizes is None:
        sizes, squeezed = [1] * len(shape), tuple(range(len(shape)))
    dyn, static, dyn_values = iter(dyn), [], []
    for s in sizes:
        if int(s) != PT.DYNAMIC_SIZE:
            static.append(int(s))
            continue
        v = next(dyn)
        if isinstance(v, Const):
            static.append(int(v.value))
        else:
            static.append(ir.ShapedType.get_dynamic_size())
            dyn_values.append(kl.value(v, np.int32))
    sizes = static
    whole = (sizes == shape and not squeezed and all(
        isinstance(s, Const) and int(s.value) == 0 for s in starts))
    if not shape or (whole and not always):
        return ref
    idx = [kl.value(s, np.int32) for s in starts]
    sliced_t = ir.MemRefType.get(sizes, t.element_type, memory_space=t.memory_space)
    view = tpu.memref_slice(sliced_t, ref, idx, dyn_values)
    if squeezed:
        keep = [s for k, s in enumerate(sizes) if k not in tuple(squeezed)]
        view = tpu.memref_squeeze(ir.MemRefType.get(keep, t.element_type,
                                                    memory_space=t.memory_space), view)
    return view


def chained_view(kl, ref, shape, starts, sizes, squeezed, levels, dyn=()) -> ir.Value:
    """The view of `ref` (of `shape` in the kernel) given window by window (`levels`,
    dialect/ops/pallas_tpu.py): one `ref_view` per window, as JAX slices once per
    `.at`; `dyn`: the values of its dynamic sizes."""
    if not levels:
        return ref_view(kl, ref, starts, sizes, tuple(squeezed), dyn)
    at, k = 0, 0
    for _, lv_sizes, lv_sq in PT.view_levels(shape, levels, sizes, squeezed):
        n = PT.n_dynamic(lv_sizes)
        ref = ref_view(kl, ref, starts[at:at + len(lv_sizes)], lv_sizes, lv_sq,
                       dyn[k:k + n], always=True)
        at += len(lv_sizes)
        k += n
    return ref


def dma_view(kl, ref, aval, starts, sizes, squeezed, levels, dyn=(),
             transform=(-1, (), None)) -> ir.Value:
    """A DMA's view: `chained_view`, or where the view is reshaped and/or bitcast
    (`transform`: (the windows before it, the new shape, the new dtype)), its windows
    over the ref, `tpu.memref_reshape` / `tpu.memref_bitcast`, then its windows over
    that (a whole one taken as the view itself), as JAX's _transform_ref."""
    view_at, reshape, bitcast = transform
    if view_at < 0:
        return chained_view(kl, ref, aval.shape, starts, sizes, squeezed, levels, dyn)
    per, _, _ = PT.transformed_levels(RefAval(aval.shape, aval.dtype), levels, sizes,
                                      squeezed, view_at, reshape, bitcast)
    at, dtype = 0, np.dtype(aval.dtype)
    for k, level in enumerate(per + [None]):
        if k == view_at:
            if isinstance(ref, BlockRef):
                if ref.squeezed:
                    raise MosaicLoweringError("a reshaped or bitcast view of a block with "
                                              "squeezed dims (None in its BlockSpec) is "
                                              "not supported in DMAs")
                ref = ref.value
            t = ir.MemRefType(ref.type)
            shape = list(t.shape)
            if reshape:
                shape = list(reshape)
                ref = tpu.memref_reshape(ir.MemRefType.get(shape, t.element_type,
                                                           memory_space=t.memory_space), ref)
            if bitcast is not None:
                shape = list(bitcast_shape(shape, dtype, bitcast))
                ref = tpu.memref_bitcast(ir.MemRefType.get(shape, elt_type(bitcast),
                                                           memory_space=t.memory_space), ref)
        if level is None:
            break
        _, lv_sizes, lv_sq = level
        n = len(lv_sizes)
        ref = ref_view(kl, ref, starts[at:at + n], lv_sizes, lv_sq, always=k < view_at)
        at += n
    return ref


def _literals(kl, starts: list, squeezed: list) -> list:
    """`starts` (per ref) with the static indices of squeezed dims (all of a
    semaphore's: None) made constants first, in operand order: JAX's DMA takes them as
    operands (its slices' static starts it makes as it slices)."""
    out = []
    for st, sq in zip(starts, squeezed):
        out.append([kl.value(v, np.int32) if isinstance(v, Const) and (
            sq is None or k in tuple(sq)) else v for k, v in enumerate(st)])
    return out


def _sem_view(kl, sem, shape, idx, sizes, squeezed, levels) -> ir.Value:
    """One semaphore of `sem`: at its index, or its chained view (a window per `.at`)."""
    if not levels:
        return ref_view(kl, sem, idx)
    return chained_view(kl, sem, shape, idx, sizes, squeezed, levels)


@MOSAIC.register(PT.DmaStartOp)
def _dma_start(kl, op, *operands, src_sizes, src_squeezed=(), dst_sizes, dst_squeezed=(),
               src_levels=(), dst_levels=(), has_src_sem=False, priority=0, add=False,
               dst_sem_sizes=(), dst_sem_squeezed=(), dst_sem_levels=(), src_sem_sizes=(),
               src_sem_squeezed=(), src_sem_levels=(), src_view_at=-1, src_reshape=(),
               src_bitcast=None, dst_view_at=-1, dst_reshape=(), dst_bitcast=None,
               device_ids=0, device_id_type="mesh", core_ids=0, **params):
    if add:
        raise MosaicLoweringError("DMAs with add=True are not supported on the TPU")
    avals = avals_in(op)
    if any(np.dtype(a.dtype) == np.bool_ for a in avals[:2]):
        raise MosaicLoweringError("DMAs of bool refs are not supported")
    operands, core = split_core(operands, core_ids)
    operands, ids = split_remote(operands, device_ids)
    core = core_value(kl, core)
    device = logical_device(kl, ids, device_id_type)    # (JAX: before the views)
    lowered = dict(zip(op.operands, operands))
    refs, starts, dyn = PT.DmaStartOp.layout(list(op.operands)[:len(operands)], has_src_sem,
                                             src_levels,
                                             dst_levels, src_sizes, dst_sizes,
                                             dst_sem_levels, src_sem_levels)
    refs = [lowered[r] for r in refs]
    starts = [[lowered[v] for v in st] for st in starts]
    dyn = [[lowered[v] for v in x] for x in dyn]
    starts = _literals(kl, starts, [src_squeezed, dst_squeezed,
                                    dst_sem_squeezed if dst_sem_levels else None,
                                    src_sem_squeezed if src_sem_levels else None])
    # (views in JAX's order: the last ref's first)
    shapes = [a.shape for a in avals_in(op)]
    src_sem = _sem_view(kl, refs[3], shapes[3], starts[3], src_sem_sizes, src_sem_squeezed,
                        src_sem_levels) if has_src_sem else None
    sem = _sem_view(kl, refs[2], shapes[2], starts[2], dst_sem_sizes, dst_sem_squeezed,
                    dst_sem_levels)
    dst = dma_view(kl, refs[1], avals[1], starts[1], dst_sizes, dst_squeezed, dst_levels,
                   dyn[1], (dst_view_at, dst_reshape, dst_bitcast))
    src = dma_view(kl, refs[0], avals[0], starts[0], src_sizes, src_squeezed, src_levels,
                   dyn[0], (src_view_at, src_reshape, src_bitcast))
    tpu.enqueue_dma(source=src, target=dst, target_semaphore=sem,
                    source_semaphore=src_sem, device_id=device, core_id=core,
                    priority=int(priority))
    return []


@MOSAIC.register(PT.DmaWaitOp)
def _dma_wait(kl, op, *operands, sizes, squeezed=(), levels=(), has_src=False,
              src_sizes=(), src_squeezed=(), src_levels=(), sem_sizes=(), sem_squeezed=(),
              sem_levels=(), view_at=-1, reshape=(), bitcast=None, src_view_at=-1,
              src_reshape=(), src_bitcast=None, device_ids=0, device_id_type="mesh",
              dummy_device=False, core_ids=0, **params):
    operands, core = split_core(operands, core_ids)
    operands, ids = split_remote(operands, device_ids)
    # (JAX: the device before the views; a send's wait names device and core 0)
    core = core_value(kl, core)
    device = full(0, np.int32) if dummy_device else logical_device(kl, ids, device_id_type)
    lowered = dict(zip(op.operands, operands))
    sem, ref, src, idx, starts, src_starts, (dyn, src_dyn) = (
        None if x is None else lowered[x] if isinstance(x, ir.Value) else
        [lowered[v] for v in x] if not x or isinstance(x[0], ir.Value) else
        [[lowered[v] for v in y] for y in x]
        for x in PT.DmaWaitOp.layout(list(op.operands)[:len(operands)], levels, has_src,
                                     src_levels, sizes, src_sizes, sem_levels))
    src_starts, starts, idx = _literals(kl, [src_starts, starts, idx],
                                        [src_squeezed, squeezed,
                                         sem_squeezed if sem_levels else None])
    avals = avals_in(op)
    sem_v = _sem_view(kl, sem, avals[0].shape, idx, sem_sizes, sem_squeezed, sem_levels)
    view = dma_view(kl, ref, avals[1], starts, sizes, squeezed, levels, dyn,
                    (view_at, reshape, bitcast))
    # (a wait without its copy's source names the destination twice: Mosaic reads the
    # transfer's size from either)
    src_v = view if src is None else dma_view(kl, src, avals[2], src_starts, src_sizes,
                                              src_squeezed, src_levels, src_dyn,
                                              (src_view_at, src_reshape, src_bitcast))
    tpu.wait_dma2(sem_v, src_v, view, device_id=device,
                  core_id=device if dummy_device else core)
    return []


@MOSAIC.register(PT.MultipleOfOp)
def _multiple_of(kl, op, x, *, values, **params):
    x = kl.value(x, avals_in(op)[0].dtype)
    for v in values:                     # (one hint per divisor, as JAX's)
        x = tpu.assume_multiple(x, int(v))
    return [x]


@MOSAIC.register(PT.RollOp)
def _roll(kl, op, x, shift, *, axis, stride=None, stride_axis=None, **params):
    x = kl.value(x, avals_in(op)[0].dtype)
    return [tpu.dynamic_rotate(x, kl.value(shift, np.int32), axis, stride=stride,
                               stride_dimension=stride_axis)]



@MOSAIC.register(PT.TpuBitcastOp)
def _tpu_bitcast(kl, op, x, *, dtype, **params):
    x = kl.value(x, avals_in(op)[0].dtype)
    return [tpu.bitcast(vtype(aval_out(op).shape, dtype), x)]

@MOSAIC.register(PT.PrngSeedOp)
def _prng_seed(kl, op, *seeds, **params):
    tpu.prng_set_seed_32([kl.value(s, np.int32) for s in seeds])
    return []


@MOSAIC.register(PT.PrngRandomBitsOp)
def _prng_random_bits(kl, op, *, shape, **params):
    if len(shape) <= 1:
        raise MosaicLoweringError("prng_random_bits makes arrays of rank 2 or more on the "
                                  "TPU (as JAX's)")
    return [tpu.prng_random_bits(vtype(shape, np.int32))]


def _semaphore(kl, op, sem, idx, sizes=(), squeezed=(), levels=()) -> ir.Value:
    """The one semaphore a semaphore op names: its index, or its chained view sliced
    once per `.at` (the views' static indices made constants first, as JAX takes them
    as operands)."""
    if not levels:
        return ref_view(kl, sem, list(idx))
    (idx,) = _literals(kl, [list(idx)], [squeezed])
    return chained_view(kl, sem, avals_in(op)[0].shape, idx, sizes, squeezed, levels)


@MOSAIC.register(PT.SemaphoreSignalOp)
def _semaphore_signal(kl, op, sem, inc, *idx, sizes=(), squeezed=(), levels=(),
                      device_ids=0, device_id_type="mesh", core_ids=0, **params):
    idx, core = split_core(idx, core_ids)
    idx, ids = split_remote(idx, device_ids)
    if levels:           # (JAX: the view's indices, then the increment)
        (idx,) = _literals(kl, [list(idx)], [squeezed])
    inc = kl.value(inc, np.int32)
    core = core_value(kl, core)       # (JAX: its operands' values, then the view)
    sem = _semaphore(kl, op, sem, idx, sizes, squeezed, levels)
    tpu.sem_signal(sem, inc, device_id=logical_device(kl, ids, device_id_type),
                   core_id=core)
    return []


@MOSAIC.register(PT.SemaphoreWaitOp)
def _semaphore_wait(kl, op, sem, value, *idx, decrement=True, sizes=(), squeezed=(),
                    levels=(), **params):
    if not decrement:
        raise MosaicLoweringError("a semaphore wait that does not decrement is not "
                                  "supported on the TPU")
    if levels:
        (idx,) = _literals(kl, [list(idx)], [squeezed])
    value = kl.value(value, np.int32)
    full(True, np.bool_)        # (JAX materializes `decrement` here, unused)
    tpu.sem_wait(_semaphore(kl, op, sem, idx, sizes, squeezed, levels), value)
    return []


@MOSAIC.register(PT.SemaphoreReadOp)
def _semaphore_read(kl, op, sem, *idx, sizes=(), squeezed=(), levels=(), **params):
    return [tpu.sem_read(_semaphore(kl, op, sem, idx, sizes, squeezed, levels))]


@MOSAIC.register(PT.RunScopedOp)
def _run_scoped(kl, op, *captured, scratch_shapes=(), scratch_memory_spaces=None,
                **params):
    scratch = list(scratch_shapes or ())
    spaces = list(scratch_memory_spaces or ()) or ["vmem"] * len(scratch)
    # (JAX makes the body's captured constants values before the region: once, not at
    # each use inside it)
    captured = [kl.value(c) for c in captured]
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
