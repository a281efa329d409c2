"""The buffers and the schedule of `pltpu.emit_pipeline` (pipeline.py).

Each ref of a pipeline is a `PipelinedRef`: a ref outside the spec's memory space (pl.ANY,
HBM, or a default block) gets `buffer_count` slots of a VMEM buffer (one per block, DMA
semaphores per slot); a ref already in that space is used in place, one `.at[...]`
window per step. `Step` is one step of the pipeline's loop: its grid indices and those of
the steps before and after it, and the copies and waits each ref needs then:

- before the loop, the first `buffer_count - 1` blocks of each input are fetched;
- at each step, the next block an input's slots can hold is fetched (if its block index
  changes), the current one waited for, the body run on the current slots, an output's
  block written back when its index is about to change (or at the last step) and the
  previous write-back waited for;
- after the loop, the last write-backs are waited for.

A block index that does not change between steps skips the copy: the body sees the same
slot again (an output accumulates in it). An input with lookahead fetches the next blocks
that change as far ahead as its free slots allow (`Step.fetch_ahead`). Slot counters
are u32 loop carries; the ops are emitted in the order JAX's pipeline emits them, so
Mosaic sees the same kernel.
JAX: pallas/mosaic/pipeline.py (BufferedRef, Scheduler).
"""
from __future__ import annotations

import math

import numpy as np

from mjax import lax
from mjax import numpy as jnp
from mjax.dialect.types import RefAval
from mjax.jaxpr.api import make_jaxpr
from mjax.experimental.pallas.core import (Blocked, BoundedSlice, Element, MemoryRef,
                                           Squeezed, memory_space_name)
from mjax.experimental.pallas.memory import make_async_copy, sync_copy
from mjax.experimental.pallas.pipeline_allocations import DmaSemaphores, buffer_shape
from mjax.experimental.pallas.primitives import when
from mjax.experimental.pallas.ref import Ref
from mjax.specs.ref_slice import Slice
from mjax.tracing.source_info import named_scope


def _static(x) -> bool:
    return isinstance(x, (int, np.integer, bool, np.bool_))


def differ(xs, ys):
    """Whether two index tuples differ anywhere (a Python bool where all are static)."""
    flags = [x != y for x, y in zip(xs, ys)]
    out = False
    for f in flags:
        out = out | f
    return out


def keep_unit_dims(indices, grid) -> tuple:
    """Indices along static size-1 grid dims are 0 (a constant, not a carried value)."""
    return tuple(0 if _static(g) and g == 1 else i for i, g in zip(indices, grid))


def next_indices(indices, grid, overflow: bool = False) -> tuple:
    """The grid indices one step on in row-major order (wrapping to 0)."""
    out, carry = [], True
    for pos, (i, g) in enumerate(reversed(list(zip(indices, grid)))):
        bumped = lax.select(carry, i + 1, i)
        carry = False if overflow and pos == len(grid) - 1 else bumped == g
        out.append(lax.select(carry, 0, bumped))
    out = tuple(reversed(out))
    return out if overflow else keep_unit_dims(out, grid)


def prev_indices(indices, grid) -> tuple:
    """The grid indices one step back in row-major order (wrapping to the last)."""
    out, borrow = [], True
    for i, g in reversed(list(zip(indices, grid))):
        dropped = lax.select(borrow, i - 1, i)
        borrow = dropped == -1
        out.append(lax.select(borrow, g - 1, dropped))
    return keep_unit_dims(tuple(reversed(out)), grid)


def _offset(indices, offsets=None) -> tuple:
    """The indices plus each core's offset into the grid (0 where a pipeline's grid is
    not split over cores: the adds are kept, as JAX's kernel has them)."""
    offsets = (0,) * len(indices) if offsets is None else offsets
    return tuple(i + o for i, o in zip(indices, offsets))


def _advance(slot, pred):
    return lax.select(pred, slot + 1, slot)


def _u32(n):
    return jnp.uint32(n)


def _block_dims(spec, ref) -> list:
    """Per dim of `ref`: the block's size, or None where the block squeezes it."""
    dims = []
    for b in spec.block_shape:
        if b is None or isinstance(b, Squeezed):
            dims.append(None)
        elif isinstance(b, (Element, BoundedSlice)):
            raise NotImplementedError(f"emit_pipeline with a {type(b).__name__} block "
                                      f"dimension over a pipelined ref is not supported by "
                                      f"mjax")
        elif isinstance(b, Blocked):
            dims.append(int(b.block_size))
        else:
            dims.append(int(b))
    if len(dims) != len(ref.shape):
        raise ValueError(f"emit_pipeline: block shape {tuple(spec.block_shape)} does not "
                         f"match the rank of {ref!r}")
    for d, n in zip(dims, ref.shape):
        if d is not None and n % d:
            raise NotImplementedError(f"emit_pipeline over {ref!r} with block shape "
                                      f"{tuple(spec.block_shape)}: blocks that do not divide "
                                      f"the ref are not supported by mjax")
    return dims


def _leaves(idx) -> tuple:
    if isinstance(idx, list):
        idx = tuple(idx)
    return idx if isinstance(idx, tuple) else (idx,)


class PipelinedRef:
    """One ref of a pipeline: its spec, whether it is read or written, and its buffer
    (`count` slots; count 0: the ref is used in place). JAX: BufferedRef."""

    def __init__(self, spec, ref: Ref, is_input: bool, grid, source_space, *,
                 is_output: bool | None = None, count: int | None = None,
                 trivial: bool | None = None, lookahead: bool | None = None,
                 tiling=None):
        # (count, trivial and lookahead given: a pltpu.BufferedRef's, made beforehand)
        self.spec, self.src, self.is_input = spec, ref, is_input
        self.tiling = tiling             # (pltpu.Tiling: a 1-D block's buffer layout)
        self.is_output = not is_input if is_output is None else is_output
        mode = getattr(spec, "pipeline_mode", None)
        self.lookahead = bool(getattr(mode, "use_lookahead", False)) if lookahead is None \
            else lookahead
        if self.lookahead and self.is_output:
            raise ValueError("Output buffering does not support lookahead.")
        self.rank = len(grid)
        self.trivial = self._trivial_windowing(grid) if trivial is None else trivial
        if count is None:
            count = 2
            if mode is not None and getattr(mode, "buffer_count", None) is not None:
                count = int(mode.buffer_count)
            elif self.trivial:
                count = 1
            space = memory_space_name(getattr(spec, "memory_space", None)) or "vmem"
            if space not in ("vmem", "smem", "hbm"):
                raise ValueError(f"Unsupported buffer memory space: {space}")
            count = 0 if source_space == space else count
        self.space = memory_space_name(getattr(spec, "memory_space", None)) or "vmem"
        self.count = count
        if self.count and self.count < 1:
            raise ValueError(f"buffer_count must be at least 1, got {self.count}")
        if self.is_output and self.count > 2:
            raise NotImplementedError("Buffer count >2 not supported for output buffered "
                                      "refs.")
        self.dims = None if self.trivial else _block_dims(spec, ref)
        self.window = None               # the buffer, or the ref's window this step
        self.sem_in = self.sem_out = None
        self.copy_in = self.wait_in = self.copy_out = self.wait_out = None
        self.next_fetch = None           # (lookahead: the grid indices fetched up to)

    # -- what the ref needs ---------------------------------------------------------------
    def _trivial_windowing(self, grid) -> bool:
        """Whether every step sees the whole ref: the block is the ref's shape and the
        index map ignores the grid dims of size > 1 (then the ref is copied once, before
        and after the loop)."""
        spec = self.spec
        if spec is None or spec.block_shape is None:
            return True
        for b, n in zip(spec.block_shape, self.src.shape):
            if b is None or isinstance(b, (BoundedSlice, Squeezed, Element)):
                return False
            if (b.block_size if isinstance(b, Blocked) else b) != n:
                return False
        if spec.index_map is None:
            return True
        varying = [k for k, g in enumerate(grid) if not _static(g) or g != 1]
        if not varying:
            return True
        return _ignores_grid(spec.index_map, grid, varying)

    @property
    def buffered(self) -> bool:
        return self.count > 0

    @property
    def allocations(self) -> list:
        """The scratch specs run_scoped allocates for this ref: its buffer, then the DMA
        semaphores of its copies in and of its copies out (JAX's sem_recvs, sem_sends)."""
        if not self.buffered:
            return []
        if self.trivial:
            shape = tuple(self.src.shape)
        else:
            block = tuple(d for d in self.dims if d is not None)
            shape = buffer_shape(self.count, block, self.tiling)
        out = [MemoryRef(shape, self.src.dtype, self.space)]
        if self.is_input and not self.trivial:
            out.append(DmaSemaphores(self.count))
        if self.is_output and not self.trivial:
            out.append(DmaSemaphores(self.count))
        return out

    def bind(self, refs) -> None:
        if not self.buffered:
            return
        refs = list(refs)
        self.window = refs.pop(0)
        if not self.trivial:
            if self.is_input:
                self.sem_in = refs.pop(0)
            if self.is_output:
                self.sem_out = refs.pop(0)

    # -- slots ------------------------------------------------------------------------
    def init_slots(self) -> None:
        if self.is_input:
            self.copy_in, self.wait_in = _u32(0), _u32(0)
        if self.is_output:
            self.copy_out, self.wait_out = _u32(0), _u32(0)
        if self.lookahead:
            self.next_fetch = tuple(jnp.int32(0) for _ in range(self.rank))

    def slots(self) -> list:
        out = [self.copy_in, self.wait_in] if self.is_input else []
        out += [self.copy_out, self.wait_out] if self.is_output else []
        return out + list(self.next_fetch or ())

    def set_slots(self, values) -> None:
        values = list(values)
        if self.is_input:
            self.copy_in, self.wait_in = values[:2]
            del values[:2]
        if self.is_output:
            self.copy_out, self.wait_out = values[:2]
            del values[:2]
        if self.lookahead:
            self.next_fetch = tuple(values)

    def _slot(self, counter):
        return lax.rem(counter, _u32(self.count))

    # -- blocks -------------------------------------------------------------------------
    def block_index(self, ids) -> tuple:
        if self.spec.index_map is None:
            return (0,) * len(self.src.shape)
        return _leaves(self.spec.index_map(*ids))

    def dma_slice(self, ids) -> tuple:
        """The block's window into the source ref at grid indices `ids`."""
        if not self.src.shape:
            return ()
        out = []
        for d, i in zip(self.dims, self.block_index(ids)):
            out.append(i if d is None else Slice(d * i, d))
        return tuple(out)

    def in_place_slice(self, ids) -> tuple:
        out = []
        for d, i in zip(self.dims, self.block_index(ids)):
            out.append(i if d is None else Slice(i * d, d))
        return tuple(out)

    def _window_slice(self, dma_slice) -> tuple:
        return tuple(Slice(0, s.size) for s, d in zip(dma_slice, self.dims)
                     if d is not None)

    def _slot_window(self, slot, window=None):
        buf = self.window
        if buf.ndim > 1:
            return buf.at[(slot, *(window or ()))]
        n = buf.shape[0] // self.count
        if window is None:
            return buf.at[Slice(slot * n, n)]
        return buf.at[Slice(slot * n + window[0].start, window[0].size)]

    def current(self):
        """The ref the body sees this step."""
        if not self.buffered or self.trivial:
            return self.window
        return self._slot_window(self._slot(self.copy_out if self.is_output
                                            else self.wait_in))

    # -- copies ---------------------------------------------------------------------------
    def start_in(self, ids) -> None:
        if not self.buffered:
            return
        slot = self._slot(self.copy_in)
        src = self.dma_slice(ids)
        make_async_copy(self.src.at[src], self._slot_window(slot, self._window_slice(src)),
                        self.sem_in.at[slot]).start()

    def start_out(self, ids) -> None:
        if not self.buffered:
            return
        slot = self._slot(self.copy_out)
        dst = self.dma_slice(ids)
        window = self._slot_window(slot, self._window_slice(dst))
        if self.count == 1:
            sync_copy(window, self.src.at[dst])
        else:
            make_async_copy(window, self.src.at[dst], self.sem_out.at[slot]).start()

    def finish_in(self, ids) -> None:
        if not self.buffered:
            return
        src = self.dma_slice(ids)
        window = self._window_slice(src)
        slot = self._slot(self.wait_in)
        make_async_copy(self.src.at[src], self._slot_window(slot, window),
                        self.sem_in.at[slot]).wait()

    def finish_out(self, ids) -> None:
        if not self.buffered:
            return
        slot = self._slot(self.wait_out)
        dst = self.dma_slice(ids)
        window = self._window_slice(dst)
        if self.count > 1:
            make_async_copy(self._slot_window(slot, window), self.src.at[dst],
                            self.sem_out.at[slot]).wait()


def _ignores_grid(index_map, grid, varying) -> bool:
    """Whether `index_map`'s results use none of the grid indices in `varying` (traced
    apart, as JAX checks it: no op and no result takes one; a captured value may be a
    ref the pipeline changes, so an index map that captures any does not count)."""
    closed = make_jaxpr(index_map)(*[0] * len(grid))
    jaxpr = closed.jaxpr
    if any(isinstance(getattr(v, "aval", None), RefAval) for v in jaxpr.constvars):
        return False
    used = {id(jaxpr.invars[k]) for k in varying}
    if any(id(v) in used for v in jaxpr.outvars):
        return False
    return not any(id(v) in used for e in jaxpr.eqns for v in e.invars)


class Step:
    """One step of the pipeline's loop (`step` traced, or a Python int before and after
    the loop) at grid indices `ids`. JAX: Scheduler."""

    def __init__(self, step, ids, grid, stages: int, offsets=None):
        # (the step count made again by each step, as JAX's: ops where the grid is traced)
        self.step, self.grid, self.total = step, grid, total_steps(grid)
        self.offsets = offsets
        self.first = step == 0
        self.last = step == self.total - 1
        self.ids = _offset(ids, offsets)
        self.prev = _offset(prev_indices(ids, grid), offsets)
        nxt = next_indices(ids, grid)
        self.next = _offset(nxt, offsets)
        self.fetch = [self.ids, self.next]
        for _ in range(stages - 1):
            nxt = next_indices(nxt, grid)
            self.fetch.append(_offset(nxt, offsets))

    # -- when a ref's block changes ---------------------------------------------------------
    def out_of_fetch(self, r: PipelinedRef):
        if not r.buffered:
            return jnp.bool_(False)
        return self.step >= (self.total - r.count + 1)

    def has_changed(self, r: PipelinedRef):
        if not r.buffered or r.trivial:
            return False
        return differ(r.block_index(self.ids), r.block_index(self.prev))

    def will_change(self, r: PipelinedRef):
        if not r.buffered or r.trivial:
            return False
        return differ(r.block_index(self.ids), r.block_index(self.next))

    def will_change_fetch(self, r: PipelinedRef):
        if not r.buffered or r.trivial:
            return False
        if r.count < 2:
            return self.has_changed(r)
        return differ(r.block_index(self.fetch[r.count - 2]),
                      r.block_index(self.fetch[r.count - 1]))

    # -- the schedule ---------------------------------------------------------------------
    def prefetch(self, r: PipelinedRef, k: int) -> None:
        """Before the loop: fetch the input's block `k` steps ahead."""
        with named_scope(f"ep_initialize_{k}"):
            if not r.is_input or not r.buffered or r.trivial or k + 1 >= r.count:
                return
            if r.lookahead:
                if k == 0:          # (the first block is always fetched)
                    ids = _offset(r.next_fetch, self.offsets)
                    when(self.first)(lambda: r.start_in(ids))
                    r.copy_in = _advance(r.copy_in, self.first)
                else:
                    self.fetch_ahead(r, self.first, max_fetches=1)
                return
            if k == 0:
                pred = self.first
            else:
                changed = differ(r.block_index(self.fetch[k]),
                                 r.block_index(self.fetch[k - 1]))
                pred = self.first & changed
            ids = self.fetch[k]
            when(pred)(lambda: r.start_in(ids))
            r.copy_in = _advance(r.copy_in, pred)

    def fetch_ahead(self, r: PipelinedRef, pred, max_fetches=None) -> None:
        """Lookahead: fetch the input's next blocks that differ from the one before
        them, as far ahead in the grid as its free slots allow (at most `max_fetches`),
        in a while loop. JAX: fetch_with_lookahead."""
        grid = self.grid
        limit = r.wait_in + r.count
        if max_fetches is not None:
            once = r.copy_in + max_fetches
            limit = lax.select(limit < once, limit, once)

        def cond(carry):
            _, nxt, fetched = carry
            within = fetched < limit
            flags = [i < g for i, g in zip(nxt, grid)]
            in_grid = True
            for f in flags:
                in_grid = in_grid & f
            return pred & within & in_grid

        def body(carry):
            cur, nxt, fetched = carry
            cur_ids, nxt_ids = _offset(cur, self.offsets), _offset(nxt, self.offsets)
            changed = differ(r.block_index(cur_ids), r.block_index(nxt_ids))
            saved, r.copy_in = r.copy_in, fetched
            when(changed)(lambda: r.start_in(nxt_ids))
            r.copy_in = saved
            step = _u32(changed) if isinstance(changed, bool) else \
                lax.convert_element_type(changed, np.uint32)
            fetched = fetched + step
            return nxt, next_indices(nxt, grid, overflow=True), fetched

        cur = tuple(r.next_fetch)
        first = next_indices(cur, grid, overflow=True)
        last, _, fetched = lax.while_loop(cond, body, (cur, first, r.copy_in))
        r.next_fetch, r.copy_in = tuple(last), fetched

    def alias(self, r: PipelinedRef) -> None:
        if not r.buffered:
            r.window = r.src if r.trivial else r.src.at[r.in_place_slice(self.ids)]

    def copy_in(self, r: PipelinedRef) -> None:
        if r.trivial:
            return
        pred = self.will_change_fetch(r) & ~self.out_of_fetch(r)
        if r.buffered and r.count < 2:
            pred = pred | self.first
        if not r.is_input:
            return
        if r.lookahead:
            self.fetch_ahead(r, True)
            return

        def start():
            with named_scope("ep_copy_in"):
                if r.buffered:
                    r.start_in(self.fetch[r.count - 1])
        when(pred)(start)
        pred = pred & True
        if r.buffered:
            r.copy_in = _advance(r.copy_in, pred)

    def wait_in(self, r: PipelinedRef) -> None:
        if r.trivial:
            return
        pred = self.has_changed(r) | self.first

        def wait():
            with named_scope("ep_wait_in"):
                if r.is_input:
                    r.finish_in(self.ids)
        when(pred)(wait)

    def copy_out(self, r: PipelinedRef) -> None:
        if r.trivial:
            return
        pred = self.will_change(r) | self.last

        def start():
            with named_scope("ep_copy_out"):
                if r.is_output:
                    r.start_out(self.ids)
        when(pred)(start)
        pred = pred & r.is_output
        if r.buffered and r.is_output:
            r.copy_out = _advance(r.copy_out, pred)

    def wait_out(self, r: PipelinedRef) -> None:
        if r.trivial:
            return
        pred = self.has_changed(r) & ~self.first

        def wait():
            with named_scope("ep_wait_out"):
                if r.is_output:
                    r.finish_out(self.prev)
        when(pred)(wait)
        pred = pred & r.is_output
        if r.buffered and r.is_output:
            r.wait_out = _advance(r.wait_out, pred)

    def finalize(self, r: PipelinedRef) -> None:
        if r.trivial:
            return

        def wait():
            with named_scope("ep_finalize"):
                if r.is_output:
                    r.finish_out(self.ids)
        when(self.last)(wait)

    def advance(self, r: PipelinedRef) -> None:
        if r.is_input:
            pred = self.will_change(r) | self.last
            if r.buffered:
                r.wait_in = _advance(r.wait_in, pred)


def total_steps(grid):
    """The number of steps of `grid` (traced where a grid size is)."""
    return math.prod(grid)


__all__ = ["PipelinedRef", "Step", "next_indices", "prev_indices", "keep_unit_dims",
           "total_steps"]
