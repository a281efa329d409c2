"""`pltpu.emit_pipeline`: a loop over an inner grid inside a kernel, the body seeing one
block of each ref per step.

The pipeline is JAX's (pipeline_buffers.py): a ref outside VMEM (pl.ANY, HBM, a default
block) gets VMEM buffers of `buffer_count` slots (2, or the spec's pl.Buffered(n); one
where the block is the whole ref and never moves) and a DMA semaphore per slot, all in one
run_scoped; its blocks are prefetched ahead of the body, waited for, written back, with
copies skipped where a block index repeats (with pl.Buffered(n, use_lookahead=True), an
input fetches its next changed blocks as far ahead as free slots allow, in a while loop).
A ref already in the spec's memory space
(pltpu.VMEM refs with VMEM specs, an HBM output with an HBM spec) is used in place, one
`.at[...]` window per step. `no_pipelining=True` copies each block in and out
synchronously. The ops are emitted in the order JAX's pipeline emits them, so the
Mosaic kernel is JAX's; interpret mode runs the same DMAs as copies.

A block with a `pl.BoundedSlice(n)` dimension (its index map gives `pl.ds(start, size)`
there, in elements, the size traced and at most n) is copied as JAX's pipeline copies
it: each step gets a VMEM buffer of the block's bound shape (run_scoped), an input's
`size` rows DMA'd into its first rows before the body runs, an output's first `size`
rows DMA'd out after it (one DMA semaphore per buffer; the copies are waited for at
once, not overlapped: JAX's overlapped schedule differs).

`pipeline(*refs, allocations=...)` uses buffers made beforehand (pltpu.BufferedRef, one
per ref, allocated by a pl.run_scoped or pallas_call's scratch_shapes; their specs and
roles, input_output included, pick the blocks and copies) instead of allocating its own,
and runs `body_prologue()` before each step's body; emit_pipeline_with_allocations gives
the function making them for given refs (pipeline_allocations.py). With `core_axis` /
`core_axis_name` the grid is split over the cores of that axis (pipeline_cores.py),
each core's indices offset into the whole grid; `tiling` (pltpu.Tiling) lays out a 1-D
block's buffer slots. JAX: pallas/mosaic/pipeline.py.
"""
from __future__ import annotations

import contextlib
import functools

import numpy as np

from mjax import lax
from mjax.base import trace_trees, tree_util
from mjax.experimental.pallas.core import (Blocked, BlockSpec, BoundedSlice, MemoryRef,
                                           Squeezed, no_block_spec)
from mjax.experimental.pallas.memory import (_ONE_DMA_SEMAPHORE, async_copy, run_scoped,
                                             sync_copy)
from mjax.experimental.pallas.pipeline_allocations import (BufferedRef, BufferedRefBase,
                                                           from_pipelined)
from mjax.experimental.pallas.pipeline_cores import partition_grid
from mjax.experimental.pallas.pipeline_buffers import (PipelinedRef, Step, keep_unit_dims,
                                                       next_indices, prev_indices,
                                                       total_steps)
from mjax.experimental.pallas.primitives import current_kernel, when
from mjax.experimental.pallas.ref import Ref, as_ref
from mjax.specs.ref_slice import Slice
from mjax.tracing.source_info import named_scope


def _flat(specs, n: int, what: str) -> list:
    if specs is no_block_spec or specs is None:
        return [None] * n
    if isinstance(specs, BlockSpec):
        specs = [specs]
    leaves = trace_trees.tree_leaves(specs, is_leaf=lambda x: x is no_block_spec
                                     or isinstance(x, BlockSpec))
    if len(leaves) != n:
        raise ValueError(f"emit_pipeline: {len(leaves)} {what} for {n} ref(s)")
    return [None if s is no_block_spec else s for s in leaves]


def _is_bounded(spec) -> bool:
    return (spec is not None and spec.block_shape is not None
            and any(isinstance(b, BoundedSlice) for b in spec.block_shape))


def _bounded_block(ref: Ref, spec, ids) -> tuple[tuple, tuple, MemoryRef]:
    """(the block's index into `ref`, its window into the buffer, the buffer) of a
    BlockSpec with BoundedSlice dims, as JAX's pipeline slices them (without tiling)."""
    shape = tuple(spec.block_shape)
    if len(shape) != len(ref.shape):
        raise ValueError(f"emit_pipeline: block shape {shape} does not match the rank of "
                         f"{ref!r}")
    idx = spec.index_map(*ids) if spec.index_map is not None else (0,) * len(shape)
    if not isinstance(idx, tuple):
        idx = tuple(idx) if isinstance(idx, list) else (idx,)
    if len(idx) != len(shape):
        raise ValueError(f"emit_pipeline: the index map of block shape {shape} returned "
                         f"{len(idx)} indices")
    index, window, buf = [], [], []
    for b, i in zip(shape, idx):
        if b is None or isinstance(b, Squeezed):
            index.append(i)
            continue
        if isinstance(b, BoundedSlice):
            if not isinstance(i, Slice):
                raise ValueError(f"emit_pipeline: the index map must return a pl.ds "
                                 f"(start, size, in elements) for the BoundedSlice "
                                 f"dimension of block shape {shape}, got {i!r}")
            index.append(i)
            window.append(Slice(0, i.size))
            buf.append(int(b.block_size))
            continue
        size = b.block_size if isinstance(b, Blocked) else int(b)
        index.append(Slice(i * size, size))
        window.append(Slice(0, size))
        buf.append(size)
    return tuple(index), tuple(window), MemoryRef(tuple(buf), ref.dtype)


def _block_view(ref: Ref, spec, ids) -> Ref:
    if spec is None or spec.block_shape is None:
        return ref
    shape = tuple(spec.block_shape)
    if len(shape) != len(ref.shape):
        raise ValueError(f"emit_pipeline: block shape {shape} does not match the rank of "
                         f"{ref!r}")
    idx = spec.index_map(*ids) if spec.index_map is not None else (0,) * len(shape)
    idx = tuple(trace_trees.tree_leaves(idx))
    index = []
    for b, i, n in zip(shape, idx, ref.shape):
        if b is None or isinstance(b, Squeezed):
            index.append(i)
            continue
        size = b.block_size if isinstance(b, Blocked) else int(b)
        if n % size:
            raise NotImplementedError(f"emit_pipeline over {ref!r} with block shape "
                                      f"{shape}: blocks that do not divide the ref are not "
                                      f"supported by mjax")
        index.append(Slice(i * size, size))
    return ref.at[tuple(index)]


@contextlib.contextmanager
def _pipeline_grid(ids, grid):
    """program_id/num_programs in the body answer for the pipeline's grid (JAX: the
    scheduler's grid_env)."""
    ctx = current_kernel("emit_pipeline")
    ctx.pipelines.append((list(ids), tuple(grid)))
    try:
        yield
    finally:
        ctx.pipelines.pop()


def _is_spec(x) -> bool:
    return x is no_block_spec or isinstance(x, BlockSpec)


def _spec_groups(specs) -> list:
    """The body's arguments for `specs`: one per top-level entry, each a pytree of
    specs (as JAX's pipeline passes the body its refs)."""
    if specs is None or specs is no_block_spec or isinstance(specs, BlockSpec):
        return [specs]
    return list(specs) if isinstance(specs, (list, tuple)) else [specs]


def _body_args(groups, views, is_leaf=_is_spec) -> list:
    out, k = [], 0
    for g in groups:
        if is_leaf(g):
            out.append(views[k])
            k += 1
            continue
        leaves, tree = trace_trees.tree_flatten(g, is_leaf=is_leaf)
        out.append(tree_util.tree_unflatten(tree, list(views[k:k + len(leaves)])))
        k += len(leaves)
    return out


def _pipelined(body, grid, refs, stages, no_pipelining, prologue=None,
               bound=False, offsets=None) -> None:
    """The pipeline over the VMEM buffers of `refs` (PipelinedRefs, pipeline_buffers.py)
    as JAX's emits it: allocated here in one run_scoped, or already `bound` to a
    BufferedRef's refs (allocations=...). `prologue` runs before each step's body;
    `offsets`: this core's offsets into the grid (pipeline_cores.py). As JAX's, the
    no_pipelining copies do not add them."""
    total = total_steps(grid)
    allocs = [r.allocations for r in refs]

    def run_body():
        if prologue is not None:
            prologue()
        views = [r.current() for r in refs]
        with named_scope("ep_run_kernel"):
            body(*views)

    def run_step(step, ids, r_slots):
        ids = keep_unit_dims(ids, grid)
        for r, sl in zip(refs, r_slots):
            r.set_slots(sl)
        sched = Step(step, ids, grid, stages, offsets)
        with _pipeline_grid(sched.ids, grid):
            for r in refs:
                sched.alias(r)
            if no_pipelining:
                for r in refs:
                    if r.is_input:
                        _sync_block(r, ids, True)
                run_body()
                for r in refs:
                    if r.is_output:
                        _sync_block(r, ids, False)
            else:
                for phase in (sched.copy_in, sched.wait_in):
                    for r in refs:
                        phase(r)
                run_body()
                for phase in (sched.copy_out, sched.wait_out, sched.advance):
                    for r in refs:
                        phase(r)
        return [r.slots() for r in refs], next_indices(ids, grid)

    def scoped(*buffers):
        buffers = list(buffers)
        for r, a in zip(refs, allocs):
            if not bound:
                r.bind(buffers[:len(a)])
                del buffers[:len(a)]
        init = (0,) * len(grid)
        if no_pipelining:
            for r in refs:
                r.init_slots()
            lax.fori_loop(0, total, lambda k, c: run_step(k, c[1], c[0]),
                          ([r.slots() for r in refs], init))
            return

        def main():
            sched = Step(0, init, grid, stages, offsets)
            for r in refs:
                r.init_slots()
            for r in refs:
                if r.is_input and r.trivial and r.buffered:
                    sync_copy(r.src, r.window)
            with _pipeline_grid(sched.ids, grid):
                for k in range(stages - 1):
                    for r in refs:
                        sched.prefetch(r, k)
            slots, last = lax.fori_loop(0, total, lambda k, c: run_step(k, c[1], c[0]),
                                        ([r.slots() for r in refs], init))
            for r, sl in zip(refs, slots):
                r.set_slots(sl)
            final = prev_indices(last, grid)    # (before the step count, as JAX's)
            sched = Step(total - 1, final, grid, stages, offsets)
            with _pipeline_grid(sched.ids, grid):
                for r in refs:
                    sched.finalize(r)
            for r in refs:
                if r.is_output and r.trivial and r.buffered:
                    sync_copy(r.window, r.src)
        when(total > 0)(main)

    if bound:
        scoped()
    else:
        run_scoped(scoped, *[a for al in allocs for a in al])


def _num_in(in_specs) -> int:
    if isinstance(in_specs, (list, tuple)):
        return len(trace_trees.tree_leaves(in_specs, is_leaf=_is_spec))
    return 1 if in_specs not in (None, ()) else 0


def _stages(in_specs, out_specs) -> int:
    """The pipeline's prefetch depth with allocations, as JAX's: the largest
    buffer_count of its own specs' pipeline modes, at least 2."""
    specs = trace_trees.tree_leaves((in_specs, out_specs), is_leaf=_is_spec)
    counts = [getattr(getattr(s, "pipeline_mode", None), "buffer_count", None)
              for s in specs if isinstance(s, BlockSpec)]
    return max([2] + [int(c) for c in counts if c is not None])


def _is_bref(x) -> bool:
    return isinstance(x, BufferedRefBase)


def _with_allocations(body, grid, refs, allocations, extra, stages, no_pipelining,
                      prologue, offsets=None) -> None:
    """The pipeline over the buffers of `allocations` (BufferedRefs already allocated, one
    per ref; their specs, not the pipeline's, pick the blocks)."""
    if isinstance(allocations, list):
        allocations = tuple(allocations)
    if not isinstance(allocations, tuple):
        allocations = (allocations,)
    brefs = trace_trees.tree_leaves(allocations, is_leaf=_is_bref)
    flat = [as_ref(r, "emit_pipeline") for r in
            trace_trees.tree_leaves(refs, is_leaf=lambda x: isinstance(x, Ref))]
    if len(brefs) != len(flat):
        raise ValueError(f"emit_pipeline: {len(brefs)} allocation(s) for {len(flat)} "
                         f"ref(s)")
    ctx = current_kernel("emit_pipeline")
    prefs = []
    for b, r in zip(brefs, flat):
        if not isinstance(b, BufferedRef) or b.is_manual:
            raise NotImplementedError(f"emit_pipeline with an allocation of type "
                                      f"{type(b).__name__} (not an input, output or "
                                      f"input_output pltpu.BufferedRef) is not supported "
                                      f"by mjax")
        if b.is_buffered and not isinstance(b.window_ref, Ref):
            raise ValueError("emit_pipeline: allocations must be allocated first (pass "
                             "the BufferedRefs to pl.run_scoped or scratch_shapes), got "
                             f"{b!r}")
        p = PipelinedRef(b.spec, r, b.is_input, grid, ctx.memory_space(r),
                         is_output=b.is_output, count=b._buffer_count,
                         trivial=b.is_trivial_windowing, lookahead=b.use_lookahead)
        p.bind([x for x in (b.window_ref, b.sem_recvs, b.sem_sends) if x is not None])
        prefs.append(p)
    groups = list(allocations)
    _pipelined(lambda *views: body(*_body_args(groups, views, _is_bref), *extra), grid,
               prefs, stages, no_pipelining, prologue, bound=True, offsets=offsets)


def make_pipeline_allocations(*refs, in_specs=(), out_specs=(), tiling=None, grid=()):
    """The BufferedRefs (scratch specs: pass them to pl.run_scoped) of a pipeline over
    `refs`, one per ref, as `pipeline(*refs)` would allocate them.
    JAX: pallas/mosaic/pipeline.py _make_pipeline_allocations."""
    ctx = current_kernel("emit_pipeline allocations")
    flat = [as_ref(r, "emit_pipeline") for r in
            trace_trees.tree_leaves(refs, is_leaf=lambda x: isinstance(x, Ref))]
    n_in = _num_in(in_specs)
    specs = _flat(in_specs, n_in, "in_specs") + _flat(out_specs, len(flat) - n_in,
                                                       "out_specs")
    grid = tuple(grid)
    return tuple(from_pipelined(PipelinedRef(s, r, k < n_in, grid, ctx.memory_space(r),
                                             tiling=tiling))
                 for k, (s, r) in enumerate(zip(specs, flat)))


def emit_pipeline_with_allocations(body, *, grid, in_specs=(), out_specs=()):
    """(pipeline, make_allocations): `emit_pipeline(body, ...)` and the function making
    its BufferedRefs for given refs, to allocate once (pl.run_scoped) and pass to several
    `pipeline(*refs, allocations=...)` calls. JAX: pltpu.emit_pipeline_with_allocations."""
    make = functools.partial(make_pipeline_allocations, in_specs=in_specs,
                             out_specs=out_specs, grid=grid)
    return emit_pipeline(body, grid=grid, in_specs=in_specs, out_specs=out_specs), make


def _sync_block(r, ids, into: bool) -> None:
    """A step's block copied in (or out) and waited for (no_pipelining=True)."""
    window, outer = r.current(), r.src
    if not r.trivial:
        dma = r.dma_slice(ids)
        outer = outer.at[dma]
        window = window.at[tuple(Slice(0, s.size) for s, d in zip(dma, r.dims)
                                 if d is not None)]
    if into:
        sync_copy(outer, window)
    else:
        sync_copy(window, outer)


def emit_pipeline(body, *, grid, in_specs=(), out_specs=(), tiling=None, core_axis=None,
                  core_axis_name=None, dimension_semantics=None, trace_scopes=True,
                  no_pipelining=False, _explicit_indices=False):
    """Returns `pipeline(*in_refs, *out_refs)`, which runs `body(*in_blocks,
    *out_blocks)` once per point of `grid` on the blocks the specs pick (inside a
    kernel; the refs are usually in pl.ANY). JAX: pltpu.emit_pipeline."""
    if core_axis is not None and core_axis_name is not None:
        raise ValueError("core_axis and core_axis_name cannot both be provided.")
    if any(isinstance(g, (int, np.integer)) and g <= 0 for g in grid):
        raise ValueError(f"All elements in the grid must be strictly positive, but got "
                         f"grid={tuple(grid)}")
    axis = core_axis_name if core_axis is None else core_axis
    # (this core's part of the grid, made here as JAX's: before the pipeline runs)
    grid, offsets = partition_grid(tuple(grid), axis, dimension_semantics)
    split = any(not isinstance(o, int) or o for o in offsets)
    if _explicit_indices:
        raise NotImplementedError("emit_pipeline(_explicit_indices=True) is not supported "
                                  "by mjax")

    def pipeline(*refs, scratches=None, allocations=None, body_prologue=None,
                 first_cycle=None, last_cycle=None, init_accumulators=None, prefetch=None,
                 postyeet=None, schedule=None):
        if body_prologue is not None and allocations is None:
            # (JAX 0.10.2 runs it only with allocations: without, its pipeline drops it)
            raise NotImplementedError("emit_pipeline's pipeline(body_prologue=...) runs only "
                                      "with allocations=... in JAX 0.10.2 (without them it "
                                      "is dropped); pass the allocations of "
                                      "emit_pipeline_with_allocations")
        if any(x is not None for x in (first_cycle, last_cycle, init_accumulators, prefetch,
                                       postyeet, schedule)):
            raise NotImplementedError("emit_pipeline's pipelining hooks (first_cycle, "
                                      "prefetch, schedule, ...) are not supported by mjax")
        if allocations is not None:
            _with_allocations(body, grid, refs, allocations, list(scratches or ()),
                              _stages(in_specs, out_specs), no_pipelining, body_prologue,
                              offsets)
            return
        flat = trace_trees.tree_leaves(refs, is_leaf=lambda x: isinstance(x, Ref))
        flat = [as_ref(r, "emit_pipeline") for r in flat]
        n_in = _num_in(in_specs)
        ins = _flat(in_specs, n_in, "in_specs")
        outs = _flat(out_specs, len(flat) - n_in, "out_specs")
        specs = ins + outs
        extra = list(scratches or ())
        static = all(isinstance(g, (int, np.integer)) for g in grid)
        total = int(np.prod(grid, dtype=np.int64)) if static else None

        def step(k, carry):
            ids, rest = [], k
            for d in range(len(grid) - 1, -1, -1):
                ids.append(lax.rem(rest, grid[d]) if d else rest)
                rest = lax.div(rest, grid[d]) if d else rest
            ids = ids[::-1]
            if split:       # (this core's indices into the whole grid)
                ids = [i + o for i, o in zip(ids, offsets)]
            with _pipeline_grid(ids, grid):
                return _step(ids, carry)

        if not any(_is_bounded(s) for s in specs):
            groups = _spec_groups(in_specs) + _spec_groups(out_specs)
            ctx = current_kernel("emit_pipeline")
            prefs = [PipelinedRef(sp, r, k < n_in, grid, ctx.memory_space(r),
                                  tiling=tiling) for k, (sp, r) in enumerate(zip(specs, flat))]
            stages = max([2] + [r.count for r in prefs if r.buffered and getattr(
                getattr(r.spec, "pipeline_mode", None), "buffer_count", None) is not None])
            _pipelined(lambda *views: body(*_body_args(groups, views), *extra), grid,
                       prefs, stages, no_pipelining, offsets=offsets)
            return

        def _step(ids, carry):
            bounded = [k for k, s in enumerate(specs) if _is_bounded(s)]
            blocks = {k: _bounded_block(flat[k], specs[k], ids) for k in bounded}

            def scoped(*scratch):
                bufs, sems = scratch[:len(bounded)], scratch[len(bounded):]
                views = [None if _is_bounded(s) else _block_view(r, s, ids)
                         for r, s in zip(flat, specs)]
                copies = {}
                for k, buf, sem in zip(bounded, bufs, sems):
                    index, window, _ = blocks[k]
                    copies[k] = (flat[k].at[index], buf.at[window], sem)
                    views[k] = buf
                for k in bounded:
                    if k < n_in:
                        src, dst, sem = copies[k]
                        async_copy(src, dst, sem).wait()
                body(*views, *extra)
                for k in bounded:
                    if k >= n_in:
                        dst, src, sem = copies[k]
                        async_copy(src, dst, sem).wait()

            run_scoped(scoped, *[blocks[k][2] for k in bounded],
                       *[_ONE_DMA_SEMAPHORE] * len(bounded))
            return carry

        if static:
            if total == 1:
                step(0, None)
                return
            lax.fori_loop(0, total, step, None)
            return
        n = 1
        for g in grid:
            n = n * g
        lax.fori_loop(0, n, step, None)

    return pipeline


__all__ = ["emit_pipeline", "emit_pipeline_with_allocations", "make_pipeline_allocations"]
