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
once, not overlapped: JAX's overlapped schedule differs). JAX: pallas/mosaic/pipeline.py.
"""
from __future__ import annotations

import contextlib

import numpy as np

from mjax import lax
from mjax.base import trace_trees, tree_util
from mjax.experimental.pallas.core import (Blocked, BlockSpec, BoundedSlice, MemoryRef,
                                           Squeezed, no_block_spec)
from mjax.experimental.pallas.memory import (_ONE_DMA_SEMAPHORE, async_copy, run_scoped,
                                             sync_copy)
from mjax.experimental.pallas.pipeline_buffers import (PipelinedRef, Step, keep_unit_dims,
                                                       next_indices, prev_indices,
                                                       total_steps)
from mjax.experimental.pallas.primitives import current_kernel, num_programs, when
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


def _body_args(groups, views) -> list:
    out, k = [], 0
    for g in groups:
        if _is_spec(g):
            out.append(views[k])
            k += 1
            continue
        leaves, tree = trace_trees.tree_flatten(g, is_leaf=_is_spec)
        out.append(tree_util.tree_unflatten(tree, list(views[k:k + len(leaves)])))
        k += len(leaves)
    return out


def _pipelined(body, grid, specs, flat, n_in, no_pipelining) -> None:
    """The pipeline over VMEM buffers (pipeline_buffers.py), as JAX's emits it."""
    ctx = current_kernel("emit_pipeline")
    refs = [PipelinedRef(s, r, k < n_in, grid, ctx.memory_space(r))
            for k, (s, r) in enumerate(zip(specs, flat))]
    stages = max([2] + [r.count for r in refs if r.buffered and getattr(
        getattr(r.spec, "pipeline_mode", None), "buffer_count", None) is not None])
    total = total_steps(grid)
    allocs = [r.allocations for r in refs]

    def run_step(step, ids, r_slots):
        ids = keep_unit_dims(ids, grid)
        for r, sl in zip(refs, r_slots):
            r.set_slots(sl)
        sched = Step(step, ids, grid, stages)
        with _pipeline_grid(sched.ids, grid):
            for r in refs:
                sched.alias(r)
            if no_pipelining:
                for r in refs:
                    if r.is_input:
                        _sync_block(r, ids, True)
                views = [r.current() for r in refs]
                with named_scope("ep_run_kernel"):
                    body(*views)
                for r in refs:
                    if r.is_output:
                        _sync_block(r, ids, False)
            else:
                for phase in (sched.copy_in, sched.wait_in):
                    for r in refs:
                        phase(r)
                views = [r.current() for r in refs]
                with named_scope("ep_run_kernel"):
                    body(*views)
                for phase in (sched.copy_out, sched.wait_out, sched.advance):
                    for r in refs:
                        phase(r)
        return [r.slots() for r in refs], next_indices(ids, grid)

    def scoped(*buffers):
        buffers = list(buffers)
        for r, a in zip(refs, allocs):
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
            sched = Step(0, init, grid, stages)
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
            sched = Step(total - 1, prev_indices(last, grid), grid, stages)
            with _pipeline_grid(sched.ids, grid):
                for r in refs:
                    sched.finalize(r)
            for r in refs:
                if r.is_output and r.trivial and r.buffered:
                    sync_copy(r.window, r.src)
        when(total > 0)(main)

    run_scoped(scoped, *[a for al in allocs for a in al])


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
    axis = core_axis_name if core_axis is None else core_axis
    if axis is not None:
        # (JAX splits the grid's first parallel dim over the cores; over one core it
        # leaves the grid whole, as here)
        cores = num_programs(axis) if isinstance(axis, int) else lax.axis_size(axis)
        if not isinstance(cores, (int, np.integer)):
            raise NotImplementedError(f"Cannot partition grid over dynamic number of cores: "
                                      f"core_axis={axis!r}")
        if cores != 1:
            raise NotImplementedError(f"emit_pipeline splitting its grid over {cores} cores "
                                      f"(core_axis={axis!r}) is not supported by mjax")
    if _explicit_indices:
        raise NotImplementedError("emit_pipeline(_explicit_indices=True) is not supported "
                                  "by mjax")
    grid = tuple(grid)
    if any(isinstance(g, (int, np.integer)) and g <= 0 for g in grid):
        raise ValueError(f"All elements in the grid must be strictly positive, but got "
                         f"grid={grid}")

    def pipeline(*refs, scratches=None, allocations=None, body_prologue=None,
                 first_cycle=None, last_cycle=None, init_accumulators=None, prefetch=None,
                 postyeet=None, schedule=None):
        if allocations is not None:
            raise NotImplementedError("emit_pipeline's pipeline(allocations=...) (buffers "
                                      "made once by emit_pipeline_with_allocations) is not "
                                      "supported by mjax")
        if body_prologue is not None:
            # (JAX 0.10.2 runs it only with allocations: without, its pipeline drops it)
            raise NotImplementedError("emit_pipeline's pipeline(body_prologue=...) runs only "
                                      "with allocations=... in JAX 0.10.2 (without them it "
                                      "is dropped), which mjax does not support")
        if any(x is not None for x in (first_cycle, last_cycle, init_accumulators, prefetch,
                                       postyeet, schedule)):
            raise NotImplementedError("emit_pipeline's pipelining hooks (first_cycle, "
                                      "prefetch, schedule, ...) are not supported by mjax")
        flat = trace_trees.tree_leaves(refs, is_leaf=lambda x: isinstance(x, Ref))
        flat = [as_ref(r, "emit_pipeline") for r in flat]
        n_in = len(trace_trees.tree_leaves(
            in_specs, is_leaf=lambda x: x is no_block_spec or isinstance(x, BlockSpec))) \
            if isinstance(in_specs, (list, tuple)) else (1 if in_specs not in (None, ()) else 0)
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
            with _pipeline_grid(ids, grid):
                return _step(ids, carry)

        if not any(_is_bounded(s) for s in specs):
            groups = _spec_groups(in_specs) + _spec_groups(out_specs)
            _pipelined(lambda *views: body(*_body_args(groups, views), *extra), grid,
                       specs, flat, n_in, no_pipelining)
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


__all__ = ["emit_pipeline"]
