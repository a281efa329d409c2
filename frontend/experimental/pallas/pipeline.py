"""`pltpu.emit_pipeline`: a loop over an inner grid inside a kernel, the body seeing one
block of each ref per step.

mjax gives the body `.at[...]` views of the outer refs (blocks picked by each BlockSpec's
index map, as pallas_call picks them), in row-major grid order: the values and the
order of reads and writes are those of JAX's pipeline, without its double-buffered
copies, which only hide DMA latency on a chip. JAX: pallas/mosaic/pipeline.py.
"""
from __future__ import annotations

import numpy as np

from mjax import lax, trace_trees
from mjax.experimental.pallas.core import (Blocked, BlockSpec, Squeezed, no_block_spec)
from mjax.experimental.pallas.ref import Ref, as_ref
from mjax.ref_slice import Slice


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
            views = [_block_view(r, s, ids) for r, s in zip(flat, specs)]
            body(*views, *extra)
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
