"""Pallas TPU kernel ops: DMAs, semaphores and scoped allocations.

They appear only inside Pallas kernels (the functions `jaxpr.pallas_call` runs). Refs
are indexed as the ref ops of dialect/ops/state.py index theirs: one start per ref
dimension (i32 scalars) with `sizes` / `squeezed` attributes; a semaphore operand is an
i32 ref of counters (a scratch buffer whose `scratch_memory_spaces` entry is
"semaphore", "dma_semaphore" or "barrier_semaphore") indexed down to one counter by one
start per dimension (every dim squeezed, so it needs no attributes).

    "jaxpr.dma_start"(%src, %dst, %dst_sem, [%src_sem,] %src_starts..., %dst_starts...,
                      %dst_sem_idx..., [%src_sem_idx...])
        {src_sizes, src_squeezed, dst_sizes, dst_squeezed, has_src_sem = false,
         priority = 0, add = false}
        starts copying src[src index] into dst[dst index] (the two views must have one
        shape and dtype; with add, adding into it); signals dst_sem (and src_sem) when
        done.
    "jaxpr.dma_wait"(%sem, %ref, [%src,] %sem_idx..., %ref_starts..., [%src_starts...])
        {sizes, squeezed, has_src = false, [src_sizes, src_squeezed]}
        waits until the copy into ref[index] (from src[src index]) signalled by sem is
        complete.
    A view made by chained `.at[...]`s (`ref.at[h].at[p]`) may be given window by
    window, as JAX keeps it (`src_levels`/`dst_levels`/`levels`/`src_levels`: each
    window's rank; starts and sizes one window after the other, `squeezed` positions in
    the sizes); `fold_view` makes it one window. A DMA's semaphore may be such a view too
    (`dst_sem_*`/`src_sem_*`, `sem_*` of dma_wait: levels, sizes, squeezed), down to one
    semaphore.
    A DMA's view may have dynamic sizes (`pl.ds(start, size)` with a traced size): such a
    size is DYNAMIC_SIZE (-1) in its `sizes`, its value an i32 operand after all the
    starts (dma_start: the source's, then the destination's; dma_wait: the ref's, then
    the source's), in the order of the sizes. The two views must have the same static
    sizes and their dynamic ones at the same places.
    A DMA to another device (pltpu.make_async_remote_copy) has `device_ids` = n > 0: its
    last n operands (i32 scalars) name the device, by its coordinates along each axis of
    the kernel's mesh (`device_id_type = "mesh"`, n = the mesh's rank: the pallas_call's
    `mesh_axes`) or by its logical id (`"logical"`, n = 1). A dma_wait for such a copy
    names the device too (waiting to receive), or has `dummy_device` (waiting for the
    send to finish: Mosaic's wait names device and core 0). semaphore_signal takes
    `device_ids`/`device_id_type` as well (a signal to another device's semaphore).
    With `core_ids` = 1 (dma_start, dma_wait, semaphore_signal) the last operand (i32,
    after any device ids) names a core of the chip: a copy or signal to another
    TensorCore of a multi-core mesh (semaphore_signal's core_index, a device_id naming
    the core axis).
    "jaxpr.semaphore_signal"(%sem, %inc: i32[], %sem_idx...)      adds inc
        (a semaphore op's `levels`/`sizes`/`squeezed` give a chained view of the
        semaphores, as a DMA's)
    "jaxpr.semaphore_wait"(%sem, %value: i32[], %sem_idx...) {decrement = true}
                                      waits for >= value, then (decrement) subtracts it
    %v = "jaxpr.semaphore_read"(%sem, %sem_idx...) -> i32[]
    %outs = "jaxpr.run_scoped"(%captured...) ({
      ^bb0(%captured..., %scoped: memref<...>...): ... "jaxpr.yield"(%outs) })
        {scratch_shapes = [memref types], scratch_memory_spaces = ["vmem", ...]}
        runs its body with fresh buffers (uninitialized; semaphores at zero) that live
        only while it runs. Its region is isolated from above: refs and values the body
        uses are operands, passed as the first block arguments.
    "jaxpr.debug_print"(%values...) {fmt, callback_id, ordered, has_placeholders,
                                     keywords}
        pl.debug_print / jax.debug.print in a kernel: Mosaic's tpu.log / tpu.log_buffer,
        Triton's tt.print; discharged, its host callback `callback_id`.

Interpret mode (`--jaxpr-pallas-interpret`, through the discharge rules in
passes/rules/pallas_tpu.py) runs a DMA as a copy at its start, which adds its size to
each semaphore it signals; a wait subtracts the size of the view it names (bytes with
pltpu.InterpretParams, elements with interpret=True: the pallas_call's `dma_bytes`,
as JAX's two interpreters count); semaphore_signal / semaphore_wait add and
subtract (a wait never blocks: interpret mode runs one kernel instance at a time).
JAX: pallas/mosaic/primitives.py (dma_start_p, dma_wait_p, semaphore_signal_p,
semaphore_wait_p, semaphore_read_p) and pallas/primitives.py (run_scoped_p).
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.ops.control_flow import RegionOp, _expect, _types
from mjax.dialect.ops.pallas import MEMORY_SPACES, SEMAPHORE_SPACES
from mjax.dialect.ops.state import bitcast_shape, indexed_shape
from mjax.dialect.types import RefAval, ShapedArray, aval_of

I32 = ShapedArray((), np.int32)


def _ref(op: str, what: str, aval) -> RefAval:
    if not isinstance(aval, RefAval):
        raise TypeError(f"{op} {what} must be a ref (memref), got {aval.str_short()}")
    return aval


def _sem(op: str, what: str, aval) -> RefAval:
    aval = _ref(op, what, aval)
    if aval.dtype != np.int32:
        raise TypeError(f"{op} {what} must be a semaphore (an i32 ref of counters), got "
                        f"{aval.str_short()}")
    return aval


def _starts(op: str, what: str, avals, n: int) -> None:
    if len(avals) != n:
        raise TypeError(f"{op} {what} takes {n} start indices (one per dimension), got "
                        f"{len(avals)}")
    for a in avals:
        if isinstance(a, RefAval) or a.shape != () or getattr(a.dtype, "kind", "?") not in "iu":
            raise TypeError(f"{op} {what} start indices must be integer scalars, got "
                            f"{a.str_short()}")


DYNAMIC_SIZE = -1   # a `sizes` entry known when the kernel runs (its value an operand)
# The mark on the add of chained views' starts on one dim (the frontend's Ref.resolve
# folds them; the TPU lowering takes the terms apart again: passes/mosaic/types.py)
VIEW_START = "mjax.view_start"


def n_dynamic(sizes) -> int:
    """How many of a view's sizes are dynamic (operands)."""
    return sum(1 for s in sizes if s == DYNAMIC_SIZE)


def _dynamic_shape(op: str, ref: RefAval, sizes, squeezed) -> tuple:
    """indexed_shape where sizes may be DYNAMIC_SIZE (and the ref's dims too, for a
    window of a window): dynamic sizes stay DYNAMIC_SIZE."""
    if DYNAMIC_SIZE not in tuple(sizes) and DYNAMIC_SIZE not in ref.shape:
        return indexed_shape(op, ref, sizes, squeezed)
    if len(sizes) != len(ref.shape):
        raise TypeError(f"{op} sizes {tuple(sizes)} must have one entry per dimension of "
                        f"the ref {ref.str_short()}")
    for d, (sz, n) in enumerate(zip(sizes, ref.shape)):
        if sz != DYNAMIC_SIZE and not (0 <= sz and (n == DYNAMIC_SIZE or sz <= n)):
            raise TypeError(f"{op} size {sz} along dimension {d} is out of range for the "
                            f"ref {ref.str_short()}")
    for d in squeezed:
        if sizes[d] != 1:
            raise TypeError(f"{op} squeezed dimension {d} must have size 1, got "
                            f"{sizes[d]}")
    return tuple(x for d, x in enumerate(sizes) if d not in squeezed)


def view_levels(shape, levels, sizes, squeezed) -> list[tuple]:
    """[(the level's input shape, its sizes, its squeezed dims)] of a ref view given as
    a chain of `.at[...]` windows, each over the view before it: `levels` holds each
    window's rank (default: one window over `shape`), `sizes` their sizes one after the
    other, `squeezed` positions in `sizes`. JAX keeps chained views apart too (one
    NDIndexer per `.at`)."""
    levels = tuple(levels) or (len(shape),)
    out, at, cur = [], 0, tuple(shape)
    for n in levels:
        if n != len(cur):
            raise TypeError(f"a view's window {len(out)} has {n} dimensions, but the view "
                            f"it takes is of shape {cur}")
        lv_sizes = tuple(sizes[at:at + n])
        lv_sq = tuple(d - at for d in squeezed if at <= d < at + n)
        out.append((cur, lv_sizes, lv_sq))
        cur = tuple(x for d, x in enumerate(lv_sizes) if d not in lv_sq)
        at += n
    if at != len(sizes):
        raise TypeError(f"a view's sizes {tuple(sizes)} must have one entry per dimension "
                        f"of its windows {levels}")
    return out


def fold_view(shape, levels, sizes, squeezed) -> list[tuple]:
    """The one window a chained view is, per dimension of the ref: (positions of the
    starts that add up to its start, size, squeezed, the position of that size in
    `sizes`, None for a whole dimension)."""
    dims = [[[], n, False, None] for n in shape]
    visible, at = list(range(len(shape))), 0
    for _, lv_sizes, lv_sq in view_levels(shape, levels, sizes, squeezed):
        for k, d in enumerate(visible):
            dims[d][0].append(at + k)
            dims[d][1] = lv_sizes[k]
            dims[d][2] = dims[d][2] or k in lv_sq
            dims[d][3] = at + k
        visible = [d for k, d in enumerate(visible) if k not in lv_sq]
        at += len(lv_sizes)
    return [tuple(x) for x in dims]


def _view_shape(op: str, ref: RefAval, levels, sizes, squeezed) -> tuple:
    """The shape of a chained view of `ref` (checked)."""
    shape = ref.shape
    for k, (cur, lv_sizes, lv_sq) in enumerate(view_levels(ref.shape, levels, sizes,
                                                           squeezed)):
        shape = _dynamic_shape(op if k == 0 else f"{op} (window {k})",
                               RefAval(cur, ref.dtype), lv_sizes, lv_sq)
    return shape


def transformed_levels(ref: RefAval, levels, sizes, squeezed, view_at=-1, reshape=(),
                       bitcast=None, op: str = "a view") -> tuple[list, tuple, object]:
    """A DMA view through a reshape and/or bitcast (`ref.reshape(...)`,
    `ref.bitcast(dtype)`): its first `view_at` windows (`levels`) over `ref`, then the
    view reshaped to `reshape` (if given) and bitcast to `bitcast` (if given, the
    second-minor dim scaled as JAX's TPU rule), then the other windows over that.
    Returns ([(the window's input RefAval, its sizes, its squeezed dims)], the view's
    shape, its dtype); checked. JAX: tpu.memref_reshape / tpu.memref_bitcast."""
    levels = tuple(levels)
    if not 0 <= view_at <= len(levels):
        raise TypeError(f"{op}: the reshape or bitcast of a view comes after {view_at} of "
                        f"its {len(levels)} windows")
    out, at, cur, dtype = [], 0, RefAval(ref.shape, ref.dtype), ref.dtype
    for k in range(len(levels) + 1):
        if k == view_at:
            shape = cur.shape
            if reshape:
                if int(np.prod(reshape, dtype=np.int64)) != int(np.prod(shape,
                                                                         dtype=np.int64)):
                    raise TypeError(f"{op}: cannot reshape a view of shape {shape} to "
                                    f"{tuple(reshape)}")
                shape = tuple(reshape)
            if bitcast is not None:
                shape = bitcast_shape(shape, dtype, bitcast)
                dtype = np.dtype(bitcast)
            cur = RefAval(shape, dtype)
        if k == len(levels):
            break
        n = levels[k]
        if n != len(cur.shape):
            raise TypeError(f"{op}: window {k} has {n} dimensions, but the view it takes "
                            f"is of shape {cur.shape}")
        lv_sizes = tuple(sizes[at:at + n])
        lv_sq = tuple(d - at for d in squeezed if at <= d < at + n)
        out.append((cur, lv_sizes, lv_sq))
        cur = RefAval(_dynamic_shape(f"{op} (window {k})", cur, lv_sizes, lv_sq), dtype)
        at += n
    if at != len(sizes):
        raise TypeError(f"{op}: sizes {tuple(sizes)} must have one entry per dimension "
                        f"of its windows {levels}")
    return out, cur.shape, dtype


def _checked_view(op: str, ref: RefAval, levels, sizes, squeezed, transform) -> tuple:
    """(shape, dtype) of a DMA's view: `transform` = (view_at, reshape, bitcast)."""
    if transform[0] < 0:
        return _view_shape(op, ref, levels, sizes, squeezed), ref.dtype
    _, shape, dtype = transformed_levels(ref, levels, sizes, squeezed, *transform, op=op)
    return shape, dtype


def _check_sizes(op: str, what: str, avals) -> None:
    for a in avals:
        if isinstance(a, RefAval) or a.shape != () or a.dtype != np.int32:
            raise TypeError(f"{op} {what} dynamic sizes must be i32 scalars, got "
                            f"{a.str_short()}")


def _n_starts(ref, levels) -> int:
    n = len(aval_of(ref.type).shape if isinstance(ref, ir.Value) else ref.shape)
    return sum(levels) if levels else n


REMOTE = {"device_ids": A.Int(default=0), "device_id_type": A.Str(default="mesh"),
          "core_ids": A.Int(default=0)}


def split_core_id(operands, core_ids: int, name: str = "op") -> tuple[list, list]:
    """(the operands before the core index, [the core index] or []): with `core_ids` = 1
    the op names a core of the chip (a TensorCore mesh's axis; JAX's core_index/core_id)
    by its last operand, an i32 scalar after any device ids."""
    operands = list(operands)
    n = int(core_ids or 0)
    if n not in (0, 1) or n > len(operands):
        raise TypeError(f"{name} has core_ids = {n}; it names at most one core")
    return operands[:len(operands) - n], operands[len(operands) - n:]


def split_device_ids(operands, device_ids: int, device_id_type: str = "mesh",
                     name: str = "op") -> tuple[list, list]:
    """(the operands before the device id, the device id's `device_ids` operands)."""
    operands = list(operands)
    if device_id_type not in ("mesh", "logical"):
        raise TypeError(f"{name} device_id_type must be \"mesh\" or \"logical\", got "
                        f"{device_id_type!r}")
    n = int(device_ids or 0)
    if n < 0 or n > len(operands) or (device_id_type == "logical" and n > 1):
        raise TypeError(f"{name} has {n} device id operands ({device_id_type}), but "
                        f"{len(operands)} operands")
    return operands[:len(operands) - n], operands[len(operands) - n:]


def _check_device_ids(name: str, ids) -> None:
    for a in ids:
        a = a if not isinstance(a, ir.Value) else aval_of(a.type)
        if isinstance(a, RefAval) or a.shape != () or a.dtype != np.int32:
            raise TypeError(f"{name} device ids must be i32 scalars, got {a.str_short()}")


class DmaStartOp(JaxprOp, name="dma_start"):
    """Starts an asynchronous copy between two ref views. JAX: tpu dma_start_p."""

    num_operands = None
    pure = False
    attributes = {"src_sizes": A.Ints(), "src_squeezed": A.Ints(default=()),
                  "dst_sizes": A.Ints(), "dst_squeezed": A.Ints(default=()),
                  "src_levels": A.Ints(default=()), "dst_levels": A.Ints(default=()),
                  "has_src_sem": A.Bool(default=False), "priority": A.Int(default=0),
                  "add": A.Bool(default=False),
                  "dst_sem_sizes": A.Ints(default=()), "dst_sem_squeezed": A.Ints(default=()),
                  "dst_sem_levels": A.Ints(default=()),
                  "src_sem_sizes": A.Ints(default=()), "src_sem_squeezed": A.Ints(default=()),
                  "src_sem_levels": A.Ints(default=()),
                  # (a reshaped/bitcast view: after its first `view_at` windows; -1: none)
                  "src_view_at": A.Int(default=-1), "src_reshape": A.Ints(default=()),
                  "src_bitcast": A.DType(default=None),
                  "dst_view_at": A.Int(default=-1), "dst_reshape": A.Ints(default=()),
                  "dst_bitcast": A.DType(default=None), **REMOTE}

    @classmethod
    def layout(cls, avals, has_src_sem: bool, src_levels=(), dst_levels=(), src_sizes=(),
               dst_sizes=(), dst_sem_levels=(), src_sem_levels=()):
        """(refs, [starts per ref], [src dynamic sizes, dst dynamic sizes]) of an operand
        list: refs are (src, dst, dst_sem) and src_sem when has_src_sem; a chained view
        has the starts of each of its windows."""
        k = 4 if has_src_sem else 3
        if len(avals) < k:
            raise TypeError(f"jaxpr.dma_start expects {k} refs (src, dst, dst_sem"
                            f"{', src_sem' if has_src_sem else ''}), got {len(avals)} "
                            f"operands")
        refs = list(avals[:k])
        starts, at = [], k
        for r, lv in zip(refs, (src_levels, dst_levels, dst_sem_levels, src_sem_levels)):
            n = _n_starts(r, lv)
            starts.append(list(avals[at:at + n]))
            at += n
        dyn = []
        for sizes in (src_sizes, dst_sizes):
            n = n_dynamic(sizes)
            dyn.append(list(avals[at:at + n]))
            at += n
        if at != len(avals):
            raise TypeError(f"jaxpr.dma_start expects {at} operands (refs, one start per "
                            f"ref dimension, then the views' dynamic sizes), got "
                            f"{len(avals)}")
        return refs, starts, dyn

    @classmethod
    def infer(cls, *avals, src_sizes, src_squeezed, dst_sizes, dst_squeezed, src_levels,
              dst_levels, has_src_sem, priority, add, dst_sem_sizes=(), dst_sem_squeezed=(),
              dst_sem_levels=(), src_sem_sizes=(), src_sem_squeezed=(), src_sem_levels=(),
              src_view_at=-1, src_reshape=(), src_bitcast=None, dst_view_at=-1,
              dst_reshape=(), dst_bitcast=None, device_ids=0, device_id_type="mesh",
              core_ids=0):
        name = "jaxpr.dma_start"
        avals, core = split_core_id(avals, core_ids, name)
        avals, ids = split_device_ids(avals, device_ids, device_id_type, name)
        _check_device_ids(name, ids + core)
        for a in avals[:4 if has_src_sem else 3]:
            if not isinstance(a, RefAval):
                raise TypeError(f"{name} expects refs (src, dst, dst_sem"
                                f"{', src_sem' if has_src_sem else ''}) first, got "
                                f"{a.str_short()}")
        src, dst = avals[0], avals[1]
        s_shape, s_dtype = _checked_view(f"{name} src", src, src_levels, src_sizes,
                                         src_squeezed, (src_view_at, src_reshape, src_bitcast))
        d_shape, d_dtype = _checked_view(f"{name} dst", dst, dst_levels, dst_sizes,
                                         dst_squeezed, (dst_view_at, dst_reshape, dst_bitcast))
        sem_views = ((dst_sem_levels, dst_sem_sizes, dst_sem_squeezed),
                     (src_sem_levels, src_sem_sizes, src_sem_squeezed))
        refs, starts, dyn = cls.layout(avals, has_src_sem, src_levels, dst_levels,
                                       src_sizes, dst_sizes, dst_sem_levels, src_sem_levels)
        for what, r, st, lv in zip(("src", "dst", "dst_sem", "src_sem"), refs, starts,
                                   (src_levels, dst_levels, dst_sem_levels, src_sem_levels)):
            _starts(name, what, st, _n_starts(r, lv))
        _check_sizes(name, "src", dyn[0])
        _check_sizes(name, "dst", dyn[1])
        for k, what in enumerate(("dst_sem", "src_sem")[:len(refs) - 2]):
            sem = _sem(name, what, refs[2 + k])
            levels, sizes, squeezed = sem_views[k]
            if levels and _view_shape(f"{name} {what}", sem, levels, sizes, squeezed) != ():
                raise TypeError(f"{name} {what} must name one semaphore")
        if s_shape != d_shape or s_dtype != d_dtype:
            raise TypeError(f"{name} copies {ShapedArray(s_shape, s_dtype).str_short()} "
                            f"into {ShapedArray(d_shape, d_dtype).str_short()}; the "
                            f"source and destination views must have the same shape and "
                            f"dtype")
        return ()


class DmaWaitOp(JaxprOp, name="dma_wait"):
    """Waits for a DMA into a ref view signalled on a semaphore; with `has_src`, the
    copy's source view too (Mosaic's wait names both). JAX: tpu dma_wait_p."""

    num_operands = None
    pure = False
    attributes = {"sizes": A.Ints(), "squeezed": A.Ints(default=()),
                  "levels": A.Ints(default=()), "has_src": A.Bool(default=False),
                  "src_sizes": A.Ints(default=()), "src_squeezed": A.Ints(default=()),
                  "src_levels": A.Ints(default=()),
                  "sem_sizes": A.Ints(default=()), "sem_squeezed": A.Ints(default=()),
                  "sem_levels": A.Ints(default=()),
                  "view_at": A.Int(default=-1), "reshape": A.Ints(default=()),
                  "bitcast": A.DType(default=None),
                  "src_view_at": A.Int(default=-1), "src_reshape": A.Ints(default=()),
                  "src_bitcast": A.DType(default=None), **REMOTE,
                  "dummy_device": A.Bool(default=False)}

    @classmethod
    def layout(cls, avals, levels=(), has_src=False, src_levels=(), sizes=(), src_sizes=(),
               sem_levels=()):
        """(sem, ref, src or None, sem index, ref starts, src starts, [ref dynamic sizes,
        src dynamic sizes]) of an operand list: (sem, ref, [src], sem index..., ref
        starts..., [src starts...], ref dynamic sizes..., [src dynamic sizes...])."""
        k = 3 if has_src else 2
        sem, ref = avals[0], avals[1]
        src = avals[2] if has_src else None
        n_sem = _n_starts(sem, sem_levels)
        n_ref = _n_starts(ref, levels)
        idx = list(avals[k:k + n_sem])
        starts = list(avals[k + n_sem:k + n_sem + n_ref])
        at = k + n_sem + n_ref
        n_src = (_n_starts(src, src_levels) if has_src
                 else max(len(avals) - at - n_dynamic(sizes), 0))
        src_starts = list(avals[at:at + n_src])
        at += n_src
        dyn = []
        for sz in (sizes, src_sizes):
            dyn.append(list(avals[at:at + n_dynamic(sz)]))
            at += n_dynamic(sz)
        return sem, ref, src, idx, starts, src_starts, dyn

    @classmethod
    def infer(cls, *avals, sizes, squeezed, levels, has_src, src_sizes, src_squeezed,
              src_levels, sem_sizes=(), sem_squeezed=(), sem_levels=(), view_at=-1,
              reshape=(), bitcast=None, src_view_at=-1, src_reshape=(), src_bitcast=None,
              device_ids=0, device_id_type="mesh", dummy_device=False, core_ids=0):
        name = "jaxpr.dma_wait"
        avals, core = split_core_id(avals, core_ids, name)
        avals, ids = split_device_ids(avals, device_ids, device_id_type, name)
        _check_device_ids(name, ids + core)
        if len(avals) < (3 if has_src else 2):
            raise TypeError(f"{name} expects a semaphore and a ref"
                            f"{' and a source ref' if has_src else ''}, got {len(avals)} "
                            f"operands")
        sem = _sem(name, "semaphore", avals[0])
        ref = _ref(name, "ref", avals[1])
        _, _, src, idx, starts, src_starts, dyn = cls.layout(
            avals, levels, has_src, src_levels, sizes, src_sizes, sem_levels)
        n_ops = (3 if has_src else 2) + len(idx) + len(starts) + len(src_starts) + sum(
            map(len, dyn))
        if n_ops != len(avals):
            raise TypeError(f"{name} expects {n_ops} operands (semaphore, refs, their "
                            f"starts, then the views' dynamic sizes), got {len(avals)}")
        _check_sizes(name, "ref", dyn[0])
        _check_sizes(name, "source", dyn[1])
        _starts(name, "semaphore", idx, _n_starts(sem, sem_levels))
        if sem_levels and _view_shape(f"{name} semaphore", sem, sem_levels, sem_sizes,
                                      sem_squeezed) != ():
            raise TypeError(f"{name} must name one semaphore")
        _starts(name, "ref", starts, _n_starts(ref, levels))
        shape, dtype = _checked_view(name, ref, levels, sizes, squeezed,
                                     (view_at, reshape, bitcast))
        if has_src:
            src = _ref(name, "source", src)
            _starts(name, "source", src_starts, _n_starts(src, src_levels))
            s_shape, s_dtype = _checked_view(f"{name} source", src, src_levels, src_sizes,
                                             src_squeezed, (src_view_at, src_reshape,
                                                            src_bitcast))
            if s_shape != shape or s_dtype != dtype:
                raise TypeError(f"{name} waits for a copy of "
                                f"{ShapedArray(s_shape, s_dtype).str_short()} into "
                                f"{ShapedArray(shape, dtype).str_short()}; the views "
                                f"must have the same shape and dtype")
        elif src_starts:
            raise TypeError(f"{name} has {len(src_starts)} operands more than its "
                            f"semaphore and ref take")
        return ()


class SemaphoreOp(JaxprOp):
    """Base of the semaphore ops: (sem, *values, *one index per semaphore dim); a
    semaphore named by chained `.at[...]`s (`sems.at[b].at[j]`) is given window by
    window as a DMA's view is (`levels`, `sizes`, `squeezed`: its starts one window after
    the other), down to one semaphore."""

    num_operands = None
    pure = False
    num_values = 0
    attributes = {"sizes": A.Ints(default=()), "squeezed": A.Ints(default=()),
                  "levels": A.Ints(default=())}

    @classmethod
    def infer(cls, *avals, sizes=(), squeezed=(), levels=(), **params):
        name = cls.OPERATION_NAME
        if len(avals) < 1 + cls.num_values:
            raise TypeError(f"{name} expects a semaphore and {cls.num_values} value(s), "
                            f"got {len(avals)} operands")
        sem = _sem(name, "semaphore", avals[0])
        for v in avals[1:1 + cls.num_values]:
            if isinstance(v, RefAval) or v.shape != () or v.dtype != np.int32:
                raise TypeError(f"{name} value must be an i32 scalar, got {v.str_short()}")
        _starts(name, "semaphore", avals[1 + cls.num_values:], _n_starts(sem, levels))
        if levels:
            shape = _view_shape(name, sem, levels, sizes, squeezed)
            if shape != ():
                raise TypeError(f"{name} needs one semaphore; its view {tuple(levels)} "
                                f"of {sem.str_short()} has shape {shape}")
        return cls.results()

    @classmethod
    def results(cls):
        return ()


class SemaphoreSignalOp(SemaphoreOp, name="semaphore_signal"):
    """Adds `inc` to a semaphore, on another device where `device_ids` > 0 (its last
    operands name the device). JAX: semaphore_signal_p."""
    num_values = 1
    attributes = {**SemaphoreOp.attributes, **REMOTE}

    @classmethod
    def infer(cls, *avals, device_ids=0, device_id_type="mesh", core_ids=0, **params):
        avals, core = split_core_id(avals, core_ids, cls.OPERATION_NAME)
        avals, ids = split_device_ids(avals, device_ids, device_id_type, cls.OPERATION_NAME)
        _check_device_ids(cls.OPERATION_NAME, ids + core)
        return super().infer(*avals, **params)


class SemaphoreWaitOp(SemaphoreOp, name="semaphore_wait"):
    """Waits until a semaphore holds at least `value`, then (with decrement) subtracts
    it. JAX: semaphore_wait_p."""
    num_values = 1
    attributes = {**SemaphoreOp.attributes, "decrement": A.Bool(default=True)}


class SemaphoreReadOp(SemaphoreOp, name="semaphore_read"):
    """A semaphore's current count (i32). JAX: semaphore_read_p."""

    @classmethod
    def results(cls):
        return (I32,)


class RunScopedOp(RegionOp, name="run_scoped"):
    """Runs its body with scoped buffers. JAX: run_scoped_p."""

    num_regions = 1
    pure = False
    attributes = {"scratch_shapes": A.AnyAttr(default=()),
                  "scratch_memory_spaces": A.AnyAttr(default=None),
                  # What the scoped buffers hold at first in interpret mode: "" for
                  # interpret=True's fill, "nan"/"zero" for pltpu.InterpretParams'
                  # uninitialized_memory (see jaxpr_pallas_interpret.uninitialized)
                  "uninitialized_memory": A.Str(default="", choices=("", "nan", "zero"))}
    holds_refs = True       # (the discharge pass enters it even when no operand is a ref)

    @classmethod
    def infer_regions(cls, avals, params, regions):
        scratch = list(params.get("scratch_shapes") or ())
        for i, s in enumerate(scratch):
            if not isinstance(s, RefAval):
                raise TypeError(f"jaxpr.run_scoped scratch_shapes[{i}] must be a memref "
                                f"type, got {s!r}")
        spaces = params.get("scratch_memory_spaces")
        if spaces:
            spaces = tuple(spaces)
            if len(spaces) != len(scratch) or not all(
                    s in MEMORY_SPACES + SEMAPHORE_SPACES for s in spaces):
                raise TypeError(f"jaxpr.run_scoped scratch_memory_spaces {spaces} must "
                                f"name one of {', '.join(MEMORY_SPACES + SEMAPHORE_SPACES)} "
                                f"per scratch buffer ({len(scratch)})")
            for i, (sp, s) in enumerate(zip(spaces, scratch)):
                if sp in SEMAPHORE_SPACES and s.dtype != np.int32:
                    raise TypeError(f"jaxpr.run_scoped scratch buffer {i} is a {sp} but "
                                    f"has type {s.str_short()}; semaphores are i32 "
                                    f"counters")
        ins, outs = regions[0]
        _expect("jaxpr.run_scoped", "block arguments", ins, list(avals) + scratch)
        for o in outs:
            if isinstance(o, RefAval):
                raise TypeError(f"jaxpr.run_scoped cannot return a ref ({_types([o])}): "
                                f"its buffers end with it")
        return tuple(a.strip_weak_type() for a in outs)


class MultipleOfOp(JaxprOp, name="multiple_of"):
    """`x` itself, promised to be a multiple of each of `values` (a compiler hint:
    Mosaic's tpu.assume_multiple). JAX: pl.multiple_of (multiple_of_p)."""

    num_operands = 1
    attributes = {"values": A.Ints()}

    @classmethod
    def infer(cls, x, *, values):
        if isinstance(x, RefAval):
            raise TypeError(f"jaxpr.multiple_of takes a value, got {x.str_short()}")
        if any(int(v) <= 0 for v in values):
            raise TypeError(f"jaxpr.multiple_of values must be positive, got "
                            f"{tuple(values)}")
        return (x,)


class RollOp(JaxprOp, name="roll"):
    """`x` rotated by `shift` (an i32 scalar) along `axis`, as jnp.roll; with `stride`
    and `stride_axis`, slice i along stride_axis by shift + i * stride (Mosaic's
    tpu.dynamic_rotate). JAX: pltpu.roll (roll_p)."""

    num_operands = 2
    attributes = {"axis": A.Int(), "stride": A.Int(default=None),
                  "stride_axis": A.Int(default=None)}

    @classmethod
    def infer(cls, x, shift, *, axis, stride=None, stride_axis=None):
        name = "jaxpr.roll"
        if isinstance(x, RefAval) or not 0 <= axis < x.ndim:
            raise TypeError(f"{name} rotates an array along one of its axes, got "
                            f"{x.str_short()} and axis {axis}")
        if isinstance(shift, RefAval) or shift.shape != () or shift.dtype != np.int32:
            raise TypeError(f"{name} shift must be an i32 scalar, got {shift.str_short()}")
        if (stride is None) != (stride_axis is None):
            raise TypeError(f"{name} takes stride and stride_axis together or neither")
        if stride_axis is not None and not (0 <= stride_axis < x.ndim
                                            and stride_axis != axis):
            raise TypeError(f"{name} stride_axis {stride_axis} must be another axis of "
                            f"{x.str_short()} than axis {axis}")
        return (x,)


class TpuBitcastOp(JaxprOp, name="tpu_bitcast"):
    """`x` (rank >= 2) with its bits read as `dtype`: where the bitwidths differ, the
    second-minor dim is scaled by their ratio, k narrow rows of a column packed in one
    wide element (the first in its low bits). Mosaic's tpu.bitcast. JAX: pltpu.bitcast
    (bitcast_p)."""

    attributes = {"dtype": A.DType()}

    @classmethod
    def infer(cls, x, *, dtype):
        if isinstance(x, RefAval) or x.ndim < 2:
            raise TypeError(f"jaxpr.tpu_bitcast takes an array of rank >= 2, got "
                            f"{x.str_short()}")
        return (ShapedArray(bitcast_shape(x.shape, x.dtype, dtype), np.dtype(dtype)),)


class PrngSeedOp(JaxprOp, name="prng_seed"):
    """Seeds the TPU core's hardware PRNG with i32 scalars (mixed when several).
    JAX: pltpu.prng_seed (prng_seed_p)."""

    num_operands = None
    pure = False

    @classmethod
    def infer(cls, *seeds):
        if not seeds:
            raise TypeError("jaxpr.prng_seed takes at least one seed")
        for a in seeds:
            if isinstance(a, RefAval) or a.shape != () or a.dtype != np.int32:
                raise TypeError(f"jaxpr.prng_seed seeds must be i32 scalars, got "
                                f"{a.str_short()}")
        return ()


class PrngRandomBitsOp(JaxprOp, name="prng_random_bits"):
    """The next i32 bits of `shape` from the TPU core's hardware PRNG.
    JAX: pltpu.prng_random_bits (prng_random_bits_p)."""

    num_operands = 0
    pure = False
    attributes = {"shape": A.Shape()}

    @classmethod
    def infer(cls, *, shape):
        return (ShapedArray(tuple(shape), np.int32),)


class GetBarrierSemaphoreOp(JaxprOp, name="get_barrier_semaphore"):
    """The kernel's barrier semaphore (one i32 counter ref, in the "barrier_semaphore"
    space), shared by the devices of the kernel's collective (its compiler params'
    collective_id); other devices signal it with semaphore_signal's device ids.
    JAX: pltpu.get_barrier_semaphore (get_barrier_semaphore_p)."""

    num_operands = 0
    pure = False
    holds_refs = True        # (its result is a ref: state discharge gives it a counter)

    @classmethod
    def infer(cls):
        return (RefAval((), np.int32),)


PRNG_OPS = (PrngSeedOp, PrngRandomBitsOp)
DMA_OPS = (DmaStartOp, DmaWaitOp)
SEMAPHORE_OPS = (SemaphoreSignalOp, SemaphoreWaitOp, SemaphoreReadOp)

class DebugPrintOp(JaxprOp, name="debug_print"):
    """Prints `fmt` with the operands from inside a Pallas kernel: pl.debug_print, or
    jax.debug.print traced in a kernel. Compiled for a TPU it is Mosaic's `tpu.log` (all
    scalars) or `tpu.log_buffer` (one vector); interpreted it is the host callback
    `callback_id` (the print as outside kernels, which discharge turns it into).
    `keywords`: the call passed keyword arguments (JAX's TPU lowering refuses them).
    JAX: debugging.debug_print_p inside a kernel."""

    num_operands = None
    pure = False                       # (printing is its effect: never removed)
    discharged_without_refs = True     # (discharge enters the bodies holding it)
    attributes = {"fmt": A.Str(), "callback_id": A.Int(), "ordered": A.Bool(default=False),
                  "has_placeholders": A.Bool(default=False),
                  "keywords": A.Bool(default=False)}

    @classmethod
    def infer(cls, *avals, fmt, callback_id, ordered, has_placeholders, keywords):
        for a in avals:
            if isinstance(a, RefAval):
                raise TypeError(f"jaxpr.debug_print prints values, got {a.str_short()}")
        return ()

    @classmethod
    def split(cls, avals_or_values):
        """(no ref, the printed values, no starts): discharge's view of the op."""
        return None, list(avals_or_values), []


__all__ = ["DMA_OPS", "DebugPrintOp", "DYNAMIC_SIZE", "GetBarrierSemaphoreOp", "VIEW_START", "n_dynamic",
           "DmaStartOp", "DmaWaitOp", "MultipleOfOp", "PRNG_OPS", "PrngRandomBitsOp",
           "PrngSeedOp", "RollOp", "TpuBitcastOp", "RunScopedOp", "SEMAPHORE_OPS",
           "SemaphoreOp", "fold_view", "view_levels", "SemaphoreReadOp",
           "SemaphoreSignalOp", "SemaphoreWaitOp", "split_core_id"]
