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
    "jaxpr.dma_wait"(%sem, %ref, %sem_idx..., %ref_starts...) {sizes, squeezed}
        waits until the copy into ref[index] signalled by sem is complete.
    "jaxpr.semaphore_signal"(%sem, %inc: i32[], %sem_idx...)      adds inc
    "jaxpr.semaphore_wait"(%sem, %value: i32[], %sem_idx...) {decrement = true}
                                      waits for >= value, then (decrement) subtracts it
    %v = "jaxpr.semaphore_read"(%sem, %sem_idx...) -> i32[]
    %outs = "jaxpr.run_scoped"(%captured...) ({
      ^bb0(%captured..., %scoped: memref<...>...): ... "jaxpr.yield"(%outs) })
        {scratch_shapes = [memref types], scratch_memory_spaces = ["vmem", ...]}
        runs its body with fresh buffers (uninitialized; semaphores at zero) that live
        only while it runs. Its region is isolated from above: refs and values the body
        uses are operands, passed as the first block arguments.

Interpret mode (`--jaxpr-pallas-interpret`, through the discharge rules in
passes/rules/pallas_tpu.py) runs a DMA as a copy at its start, which adds 1 to each
semaphore it signals; a wait subtracts 1; semaphore_signal / semaphore_wait add and
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
from mjax.dialect.ops.state import indexed_shape
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


class DmaStartOp(JaxprOp, name="dma_start"):
    """Starts an asynchronous copy between two ref views. JAX: tpu dma_start_p."""

    num_operands = None
    pure = False
    attributes = {"src_sizes": A.Ints(), "src_squeezed": A.Ints(default=()),
                  "dst_sizes": A.Ints(), "dst_squeezed": A.Ints(default=()),
                  "has_src_sem": A.Bool(default=False), "priority": A.Int(default=0),
                  "add": A.Bool(default=False)}

    @classmethod
    def layout(cls, avals, has_src_sem: bool):
        """(refs, [starts per ref]) of an operand list: refs are (src, dst, dst_sem) and
        src_sem when has_src_sem."""
        k = 4 if has_src_sem else 3
        if len(avals) < k:
            raise TypeError(f"jaxpr.dma_start expects {k} refs (src, dst, dst_sem"
                            f"{', src_sem' if has_src_sem else ''}), got {len(avals)} "
                            f"operands")
        refs = list(avals[:k])
        starts, at = [], k
        for r in refs:
            n = len(aval_of(r.type).shape if isinstance(r, ir.Value) else r.shape)
            starts.append(list(avals[at:at + n]))
            at += n
        if at != len(avals):
            raise TypeError(f"jaxpr.dma_start expects {at} operands (refs, then one start "
                            f"per ref dimension), got {len(avals)}")
        return refs, starts

    @classmethod
    def infer(cls, *avals, src_sizes, src_squeezed, dst_sizes, dst_squeezed, has_src_sem,
              priority, add):
        name = "jaxpr.dma_start"
        for a in avals[:4 if has_src_sem else 3]:
            if not isinstance(a, RefAval):
                raise TypeError(f"{name} expects refs (src, dst, dst_sem"
                                f"{', src_sem' if has_src_sem else ''}) first, got "
                                f"{a.str_short()}")
        refs, starts = cls.layout(avals, has_src_sem)
        src, dst = refs[0], refs[1]
        for what, r, st in zip(("src", "dst", "dst_sem", "src_sem"), refs, starts):
            _starts(name, what, st, r.ndim)
        for what in ("dst_sem", "src_sem")[:len(refs) - 2]:
            _sem(name, what, refs[2 if what == "dst_sem" else 3])
        s_shape = indexed_shape(f"{name} src", src, src_sizes, src_squeezed)
        d_shape = indexed_shape(f"{name} dst", dst, dst_sizes, dst_squeezed)
        if s_shape != d_shape or src.dtype != dst.dtype:
            raise TypeError(f"{name} copies {ShapedArray(s_shape, src.dtype).str_short()} "
                            f"into {ShapedArray(d_shape, dst.dtype).str_short()}; the "
                            f"source and destination views must have the same shape and "
                            f"dtype")
        return ()


class DmaWaitOp(JaxprOp, name="dma_wait"):
    """Waits for a DMA into a ref view signalled on a semaphore. JAX: tpu dma_wait_p."""

    num_operands = None
    pure = False
    attributes = {"sizes": A.Ints(), "squeezed": A.Ints(default=())}

    @classmethod
    def infer(cls, *avals, sizes, squeezed):
        name = "jaxpr.dma_wait"
        if len(avals) < 2:
            raise TypeError(f"{name} expects a semaphore and a ref, got {len(avals)} "
                            f"operands")
        sem, ref = _sem(name, "semaphore", avals[0]), _ref(name, "ref", avals[1])
        _starts(name, "semaphore", avals[2:2 + sem.ndim], sem.ndim)
        _starts(name, "ref", avals[2 + sem.ndim:], ref.ndim)
        indexed_shape(name, ref, sizes, squeezed)
        return ()


class SemaphoreOp(JaxprOp):
    """Base of the semaphore ops: (sem, *values, *one index per semaphore dim)."""

    num_operands = None
    pure = False
    num_values = 0

    @classmethod
    def infer(cls, *avals, **params):
        name = cls.OPERATION_NAME
        if len(avals) < 1 + cls.num_values:
            raise TypeError(f"{name} expects a semaphore and {cls.num_values} value(s), "
                            f"got {len(avals)} operands")
        sem = _sem(name, "semaphore", avals[0])
        for v in avals[1:1 + cls.num_values]:
            if isinstance(v, RefAval) or v.shape != () or v.dtype != np.int32:
                raise TypeError(f"{name} value must be an i32 scalar, got {v.str_short()}")
        _starts(name, "semaphore", avals[1 + cls.num_values:], sem.ndim)
        return cls.results()

    @classmethod
    def results(cls):
        return ()


class SemaphoreSignalOp(SemaphoreOp, name="semaphore_signal"):
    """Adds `inc` to a semaphore. JAX: semaphore_signal_p (local only)."""
    num_values = 1


class SemaphoreWaitOp(SemaphoreOp, name="semaphore_wait"):
    """Waits until a semaphore holds at least `value`, then (with decrement) subtracts
    it. JAX: semaphore_wait_p."""
    num_values = 1
    attributes = {"decrement": A.Bool(default=True)}


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
                  "scratch_memory_spaces": A.AnyAttr(default=None)}
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


DMA_OPS = (DmaStartOp, DmaWaitOp)
SEMAPHORE_OPS = (SemaphoreSignalOp, SemaphoreWaitOp, SemaphoreReadOp)

__all__ = ["DMA_OPS", "DmaStartOp", "DmaWaitOp", "RunScopedOp", "SEMAPHORE_OPS",
           "SemaphoreOp", "SemaphoreReadOp", "SemaphoreSignalOp", "SemaphoreWaitOp"]
