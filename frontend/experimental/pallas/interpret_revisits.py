"""JAX's TPU interpreter's check that no output block is revisited: once a core's
iterations leave an output block, coming back to it later raises (the chip would
have written it back already). mjax checks it while tracing, where it can: a static
grid, no scalar prefetch, and index maps that give Python integers for integer grid
indices (others are left unchecked); it visits the grid as JAX's interpreter does
(passes/pallas_interpret_order.py: parallel dimensions in its random order, split over
num_cores_or_threads cores).

JAX: pallas/mosaic/interpret/interpret_pallas_call.py (_check_for_revisiting).
"""
from __future__ import annotations

import itertools

import numpy as np

from mjax.base.errors import JaxRuntimeError
from mjax.passes.pallas_interpret_order import iterations_per_core, parallel_orders

_MOST_POINTS = 1 << 16          # (larger grids are left unchecked: a Python loop)


class RevisitedBlockError(JaxRuntimeError):
    """JAX's RuntimeError for a revisited output block (its interpreter raises it inside
    a JaxRuntimeError, a RuntimeError too)."""

    def __init__(self, message: str):
        super().__init__(message)
        self._error_message = message       # (what JaxRuntimeError's str() shows)


def _block_indices(spec, point):
    """The block indices `spec`'s index map gives at `point` as Python ints, or None
    when it gives something else (a traced value)."""
    try:
        out = spec.index_map(*point)
    except Exception:       # (an index map written for traced indices only)
        return None
    out = out if isinstance(out, tuple) else (out,)
    if not all(isinstance(i, (int, np.integer)) for i in out):
        return None
    return tuple(int(i) for i in out)


def check_revisits(grid, out_specs, skip, semantics, seed, cores) -> None:
    """Raises JAX's RuntimeError for an output block revisited (`skip`: outputs left
    unchecked, those aliased to inputs or in HBM)."""
    if not grid or not all(isinstance(g, int) for g in grid):
        return
    total = int(np.prod(grid, dtype=np.int64))
    if total > _MOST_POINTS:
        return
    specs = [s if (j not in skip and s is not None and s.index_map is not None) else None
             for j, s in enumerate(out_specs)]
    if not any(specs):
        return
    orders = parallel_orders(grid, semantics, seed)
    per_core = iterations_per_core(grid, semantics, cores) or total
    loops = list(itertools.product(*(range(g) for g in grid)))
    for start in range(0, total, per_core):
        seen: list = []              # (grid point, block indices per output)
        for loop in loops[start:start + per_core]:
            point = tuple(int(o[i]) if o is not None else i for i, o in zip(loop, orders))
            blocks = [None if s is None else _block_indices(s, point) for s in specs]
            for j, blk in enumerate(blocks):
                if blk is None or not seen or seen[-1][1][j] == blk:
                    continue
                past = [p for p, bs in seen if bs[j] == blk]
                if past:
                    raise RevisitedBlockError(
                        f"Revisited block {blk} of output {j} in iteration {point}. The "
                        f"block was previously visited in iterations {past[0]} through "
                        f"{past[-1]} .")
            seen.append((point, blocks))


__all__ = ["RevisitedBlockError", "check_revisits"]
