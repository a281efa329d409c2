"""`pltpu.emit_pipeline`: a loop over an inner grid inside a kernel, the body seeing one
block of each ref per step.

mjax gives the body `.at[...]` views of the outer refs (blocks picked by each BlockSpec's
index map, as pallas_call picks them), in row-major grid order: the values and the
order of reads and writes are those of JAX's pipeline, without its double-buffered
copies, which only hide DMA latency on a chip.

A block with a `pl.BoundedSlice(n)` dimension (its index map gives `pl.ds(start, size)`
there, in elements, the size traced and at most n) is copied as JAX's pipeline copies
it: each step gets a VMEM buffer of the block's bound shape (run_scoped), an input's
`size` rows DMA'd into its first rows before the body runs, an output's first `size`
rows DMA'd out after it (one DMA semaphore per buffer; the copies are waited for at
once, not overlapped). JAX: pallas/mosaic/pipeline.py.
"""
from __future__ import annotations

import contextlib

import numpy as np

from mjax import lax
from mjax.base import trace_trees
from mjax.experimental.pallas.core import (Blocked, BlockSpec, BoundedSlice, MemoryRef,
                                           Squeezed, no_block_spec)
from mjax.experimental.pallas.memory import _ONE_DMA_SEMAPHORE, async_copy, run_scoped
from mjax.experimental.pallas.primitives import current_kernel
from mjax.experimental.pallas.ref import Ref, as_ref
from mjax.specs.ref_slice import Slice


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


def emit_pipeline(body, *, grid, in_specs=(), out_specs=(), tiling=None, core_axis=None,
                  core_axis_name=None, dimension_semantics=None, trace_scopes=True,
                  no_pipelining=False, _explicit_indices=False):
    """Returns `pipeline(*in_refs, *out_refs)`, which runs `body(*in_blocks,
    *out_blocks)` once per point of `grid` on the blocks the specs pick (inside a
    kernel; the refs are usually in pl.ANY). JAX: pltpu.emit_pipeline."""
    if core_axis is not None or core_axis_name is not None:
        raise NotImplementedError("emit_pipeline(core_axis=...) (splitting a pipeline "
                                  "over cores) is not supported by mjax")
    if _explicit_indices:
        raise NotImplementedError("emit_pipeline(_explicit_indices=True) is not supported "
                                  "by mjax")
    grid = tuple(grid)

    def pipeline(*refs, scratches=None, first_cycle=None, last_cycle=None,
                 init_accumulators=None, prefetch=None, postyeet=None, schedule=None,
                 body_prologue=None):
        if any(x is not None for x in (first_cycle, last_cycle, init_accumulators, prefetch,
                                       postyeet, schedule, body_prologue)):
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

        def _step(ids, carry):
            bounded = [k for k, s in enumerate(specs) if _is_bounded(s)]
            if not bounded:
                body(*[_block_view(r, s, ids) for r, s in zip(flat, specs)], *extra)
                return carry
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
