"""`emit_pipeline(core_axis=...)`: a pipeline's grid split over the cores of a mesh (or
a pallas_call grid axis), each core running its part of the grid with its indices
offset into the whole, as JAX 0.10.2's pipeline does (pallas/mosaic/pipeline.py,
_partition_grid).

The first `parallel` grid dimension the core count divides is split evenly (core c
starts at c * size / cores); where none divides, the largest static parallel dimension
(or the one traced one) is split as evenly as it goes: the first `rem` cores run one
step more. Over one core the grid is left whole.
"""
from __future__ import annotations

import enum

import numpy as np

from mjax import lax
from mjax import numpy as jnp
from mjax.experimental.pallas.primitives import num_programs, program_id


def _static(g) -> bool:
    return isinstance(g, (int, np.integer))


def _is_parallel(d) -> bool:
    # (pltpu.PARALLEL only: JAX compares with its enum member, a string is not one)
    return isinstance(d, enum.Enum) and d.value == "parallel"


def partition_grid(grid: tuple, core_axis, dimension_semantics) -> tuple[tuple, tuple]:
    """(this core's grid, its offsets into `grid`); JAX's errors where the grid cannot be
    split."""
    if core_axis is None:
        return grid, (0,) * len(grid)
    if isinstance(core_axis, (int, np.integer)):
        cores, core = num_programs(core_axis), program_id(core_axis)
    else:
        cores, core = lax.axis_size(core_axis), lax.axis_index(core_axis)
    if not _static(cores):
        raise NotImplementedError(f"Cannot partition grid over dynamic number of cores: "
                                  f"core_axis={core_axis!r}")
    cores = int(cores)
    if cores == 1:
        return grid, (0,) * len(grid)
    if dimension_semantics is None:
        dimension_semantics = ("arbitrary",) * len(grid)
    if len(dimension_semantics) != len(grid):
        raise ValueError("dimension_semantics must be the same length as grid.")
    parallel = [i for i, d in enumerate(dimension_semantics) if _is_parallel(d)]
    if not parallel:
        raise NotImplementedError(f"Cannot partition over cores without parallel grid "
                                  f"dimensions: dimension_semantics="
                                  f"{tuple(dimension_semantics)!r}")
    divisible = [i for i in parallel if _static(grid[i]) and grid[i] % cores == 0]
    if divisible:
        dim = divisible[0]
        size = int(grid[dim]) // cores
        return _update(grid, dim, size), _update((0,) * len(grid), dim, core * size)
    dynamic = [i for i in parallel if not _static(grid[i])]
    static = [i for i in parallel if _static(grid[i])]
    if len(dynamic) > 1:
        raise NotImplementedError(f"Cannot partition over multiple dynamic parallel "
                                  f"dimensions: grid={grid!r}")
    if dynamic and not static:
        dim = dynamic[0]
    else:
        largest = max(grid[i] for i in static)
        dim = next(i for i in static if grid[i] == largest)
    base, rem = divmod(grid[dim], cores)
    steps = jnp.where(core < rem, base + 1, base)
    offset = jnp.where(core < rem, core * steps, core * base + rem)
    return _update(grid, dim, steps), _update((0,) * len(grid), dim, offset)


def _update(t: tuple, k: int, v) -> tuple:
    return t[:k] + (v,) + t[k + 1:]


__all__ = ["partition_grid"]
