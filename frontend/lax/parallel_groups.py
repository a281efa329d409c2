"""Collectives over groups of an axis's members (`axis_index_groups=`, JAX's pmap option).

Each member takes part in the collective of its own group only. mjax builds a grouped
collective from the ungrouped ones: every member gathers the whole axis (`all_gather`),
then keeps what its group contributes, selected by tables of the static groups indexed
with `axis_index`. This costs an all-gather where XLA could use replica groups, but it is
one design that composes with jit, grad and vmap like the collectives it is made of.
"""
from __future__ import annotations

import numpy as np

from mjax.specs import dtypes
from mjax.tracing.core import aval_of_value, bind
from mjax.dialect.ops import collectives as C
from mjax.lax.elementwise import full, select
from mjax.lax.indexing import dynamic_index_in_dim, dynamic_slice_in_dim
from mjax.lax.reduce import reduce_max, reduce_min, reduce_sum
from mjax.lax.shapes import broadcast_in_dim, concatenate, reshape, transpose


class Groups:
    """Static tables of `axis_index_groups` over an axis of `size` members."""

    def __init__(self, groups, size: int, fn: str, equal_sizes: bool):
        groups = tuple(tuple(int(i) for i in g) for g in groups)
        flat = [i for g in groups for i in g]
        if not groups or sorted(flat) != list(range(len(flat))):
            raise ValueError("axis_index_groups must cover all indices exactly once")
        if len(flat) != size:
            raise ValueError(f"lax.{fn}: axis_index_groups {[list(g) for g in groups]} "
                             f"cover {len(flat)} members, but the axis has {size}")
        if equal_sizes and len({len(g) for g in groups}) != 1:
            raise ValueError(f"lax.{fn}: axis_index_groups must all be the same size, got "
                             f"{[list(g) for g in groups]}")
        self.size = size
        self.group_size = len(groups[0])
        same = np.zeros((size, size), np.bool_)         # same[m, k]: k is in m's group
        position = np.zeros(size, np.int32)              # m's position in its group
        for g in groups:
            for p, m in enumerate(g):
                same[m, list(g)] = True
                position[m] = p
        self._same, self._position = same, position
        if equal_sizes:                                   # members[m]: m's group, in order
            self._members = np.array([groups[_group_of(groups, m)] for m in range(size)],
                                     np.int32)

    def mask(self, me):
        """Bool (size,): which members are in the group of member `me` (traced index)."""
        return dynamic_index_in_dim(self._same, me, keepdims=False)

    def position(self, me):
        return dynamic_index_in_dim(self._position, me, keepdims=False)

    def members(self, me):
        """Int32 (group_size,): the members of `me`'s group, in the group's order."""
        return dynamic_index_in_dim(self._members, me, keepdims=False)


def _group_of(groups, m):
    return next(k for k, g in enumerate(groups) if m in g)


def _gather_all(v, name, size):
    """(size, *v.shape): every member's `v`."""
    return bind(C.AllGatherOp, v, axes=(name,), axis=0, tiled=False, axis_size=size)


def _me(name):
    return bind(C.AxisIndexOp, axes=(name,))


def _group_rows(v, name, groups: Groups, me):
    """(group_size, *v.shape): the `v` of each member of `me`'s group, in its order."""
    stacked, members = _gather_all(v, name, groups.size), groups.members(me)
    rows = [dynamic_index_in_dim(stacked, dynamic_index_in_dim(members, k, keepdims=False))
            for k in range(groups.group_size)]
    return concatenate(rows, 0)


def reduce(v, name, groups: Groups, kind: str):
    """psum/pmax/pmin of `v` over the members of this member's group."""
    stacked = _gather_all(v, name, groups.size)
    aval = aval_of_value(stacked)
    shape, dtype = aval.shape, np.dtype(aval.dtype)
    mask = broadcast_in_dim(groups.mask(_me(name)), shape, (0,))
    if kind == "sum":
        neutral = 0
    elif dtype == np.bool_:
        neutral = kind == "min"
    elif dtypes.issubdtype(dtype, np.inexact):
        neutral = -np.inf if kind == "max" else np.inf
    else:
        info = np.iinfo(dtype)
        neutral = info.min if kind == "max" else info.max
    kept = select(mask, stacked, full(shape, neutral, dtype))
    return {"sum": reduce_sum, "max": reduce_max, "min": reduce_min}[kind](kept, (0,))


def all_gather(v, name, groups: Groups, axis: int, tiled: bool):
    """The values of this member's group, stacked (tiled: concatenated) along `axis`."""
    return _place_leading(_group_rows(v, name, groups, _me(name)), axis, tiled)


def _place_leading(rows, axis, tiled):
    """rows (G, *shape) with its leading axis moved to `axis` (tiled: merged into it)."""
    rank = aval_of_value(rows).ndim
    perm = list(range(1, rank))
    perm.insert(axis, 0)
    moved = transpose(rows, perm)
    if not tiled:
        return moved
    shape = list(aval_of_value(moved).shape)
    shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
    return reshape(moved, shape)


def psum_scatter(v, name, groups: Groups, dimension: int, tiled: bool):
    """The sum over this member's group, of which it keeps the block at its position."""
    total = reduce(v, name, groups, "sum")
    n, pos = groups.group_size, groups.position(_me(name))
    length = aval_of_value(total).shape[dimension]
    if tiled:
        if length % n:
            raise ValueError(f"psum_scatter: the scatter dimension's size {length} is not "
                             f"divisible by the group size {n}")
        return dynamic_slice_in_dim(total, pos * (length // n), length // n, dimension)
    if length != n:
        raise ValueError(f"psum_scatter: the scatter dimension's size {length} must equal "
                         f"the group size {n}")
    return dynamic_index_in_dim(total, pos, dimension, keepdims=False)


def all_to_all(v, name, groups: Groups, split_axis, concat_axis, tiled):
    """Each member of a group sends block j of `v` (along split_axis) to the group's j-th
    member, which concatenates (tiled) or stacks what it receives along concat_axis."""
    n, me = groups.group_size, _me(name)
    pos = groups.position(me)
    rows = _group_rows(v, name, groups, me)
    length = aval_of_value(v).shape[split_axis]
    if tiled:
        if length % n:
            raise ValueError(f"The size of all_to_all split_axis ({length}) has to be "
                             f"divisible by the size of the named axis {name} ({n})")
        blocks = dynamic_slice_in_dim(rows, pos * (length // n), length // n,
                                      split_axis + 1)
        return _place_leading(blocks, concat_axis, True)
    if length != n:
        raise ValueError(f"all_to_all requires the size of the mapped axis axis_name to "
                         f"equal x.shape[split_axis], but they are {n} and {length} "
                         f"respectively.")
    blocks = dynamic_index_in_dim(rows, pos, split_axis + 1, keepdims=False)
    return _place_leading(blocks, concat_axis, False)
