"""`lax.ragged_dot_general` and `lax.ragged_dot`, composed from dense ops (no ragged
primitive): the operand split into groups along its ragged dimension is expanded to one
masked copy per group (a new leading axis of size g, zeros outside the group), which one
`dot_general` then contracts or keeps, by the ragged dimension's kind:

1. ragged non-contracting (`[b,m,k], [g,b,k,n], [b,g] -> [b,m,n]`): the group axis is
   contracted with rhs's group dimension;
2. ragged contracting (`[b,m,k], [b,k,n], [b,g] -> [g,b,m,n]`): both sides are expanded
   and the group axis is a batch dimension;
3. ragged batch (`[b,m,k], [b,k,n], [g] -> [b,m,n]`): a plain dot_general.

Positions past the last group belong to no group (their rows are zero in mode 1)."""
from __future__ import annotations

import numpy as np

from mjax.specs import dtypes
from mjax.tracing.core import at_user_line, aval_of_value
from mjax.lax.dot import dot_general
from mjax.lax.elementwise import (and_, as_array, broadcasted_iota, convert_element_type,
                                  le, lt, select, sub, zeros_like_array)
from mjax.lax.reduce import cumsum
from mjax.lax.shapes import broadcast_in_dim, transpose


class RaggedDotDimensionNumbers:
    """Which dimensions a ragged dot contracts and batches (`dot_dimension_numbers`), the
    lhs dimension split into groups (`lhs_ragged_dimensions`, one) and the rhs dimension
    indexing the groups (`rhs_group_dimensions`: one in mode 1, none otherwise).
    JAX: lax.RaggedDotDimensionNumbers."""
    __slots__ = ("dot_dimension_numbers", "lhs_ragged_dimensions", "rhs_group_dimensions")

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        object.__setattr__(self, "dot_dimension_numbers",
                           tuple(tuple(map(tuple, t)) for t in dot_dimension_numbers))
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", tuple(rhs_group_dimensions))

    def __setattr__(self, name, value):
        raise AttributeError(f"RaggedDotDimensionNumbers is immutable (setting {name!r})")

    def _key(self):
        return (self.dot_dimension_numbers, self.lhs_ragged_dimensions,
                self.rhs_group_dimensions)

    def __eq__(self, other):
        return isinstance(other, RaggedDotDimensionNumbers) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"RaggedDotDimensionNumbers(dot_dimension_numbers="
                f"{self.dot_dimension_numbers}, lhs_ragged_dimensions="
                f"{self.lhs_ragged_dimensions}, rhs_group_dimensions="
                f"{self.rhs_group_dimensions})")


# lax.ragged_dot's layout: lhs [m, k] ragged along m, rhs [g, k, n].
_BASIC = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])

_NONCONTRACTING, _CONTRACTING, _BATCH = 1, 2, 3


def _others(n, *used):
    return [d for d in range(n) if not any(d in u for u in used)]


def _mode(lhs_ndim, dnums):
    if len(dnums.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension.")
    r = dnums.lhs_ragged_dimensions[0]
    if not 0 <= r < lhs_ndim:
        raise TypeError(f"ragged_dot_general requires lhs ragged dimension numbers to be "
                        f"nonnegative and less than the number of axes of the lhs value, "
                        f"got {r} for lhs of rank {lhs_ndim}.")
    (lc, _), (lb, _) = dnums.dot_dimension_numbers
    mode = (_CONTRACTING if r in lc else _BATCH if r in lb else _NONCONTRACTING)
    return mode, r


def _prefix(mode, ndim, ragged, batch, contract):
    """The dimensions of an operand that group_sizes' leading axes index (those outer to
    the ragged one among its kind, after the batch dimensions)."""
    batch, contract = list(batch), list(contract)
    if mode == _NONCONTRACTING:
        free = _others(ndim, batch, contract)
        return batch + free[:free.index(ragged)]
    if mode == _CONTRACTING:
        return batch + contract[:contract.index(ragged)]
    return batch[:batch.index(ragged)]


def _expand(x, ragged, gs, prefix):
    """x [..] -> [g, ..]: copy j keeps the positions of x's `ragged` dimension in group j
    (group_sizes gs of shape [*x.shape[prefix], g]), zeros elsewhere."""
    shape = aval_of_value(x).shape
    g = aval_of_value(gs).shape[-1]
    ends = cumsum(gs, axis=gs.ndim - 1)
    starts = sub(ends, gs)
    grid = (g,) + shape
    pos = broadcasted_iota(aval_of_value(gs).dtype, grid, ragged + 1)
    gs_dims = tuple(1 + d for d in prefix) + (0,)
    inside = and_(le(broadcast_in_dim(starts, grid, gs_dims), pos),
                  lt(pos, broadcast_in_dim(ends, grid, gs_dims)))
    xb = broadcast_in_dim(x, grid, tuple(range(1, len(grid))))
    return select(inside, xb, zeros_like_array(xb))


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """dot_general of lhs and rhs where lhs's ragged dimension is split into consecutive
    groups of `group_sizes` (see the module docstring for the three modes). Results are
    dot_general's, with a leading group axis when the ragged dimension is contracted.
    JAX: lax.ragged_dot_general."""
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not supported")
    lhs, rhs, gs = as_array(lhs), as_array(rhs), as_array(group_sizes)
    dn = ragged_dot_dimension_numbers
    la, ra, ga = (aval_of_value(v) for v in (lhs, rhs, gs))
    if not dtypes.issubdtype(ga.dtype, np.integer):
        raise TypeError(at_user_line("ragged_dot_general requires that group_sizes.dtype "
                                     "is subtype of np.integer."))
    try:
        mode, ragged = _mode(la.ndim, dn)
    except TypeError as e:
        raise TypeError(at_user_line(str(e))) from None
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    l_prefix = _prefix(mode, la.ndim, ragged, lb, lc)
    if ga.ndim == 0:
        raise TypeError(at_user_line("expected rank of group_sizes to be >=1."))
    want = tuple(la.shape[i] for i in l_prefix) + ga.shape[-1:]
    if ga.ndim != 1 and ga.shape != want:
        raise TypeError(at_user_line(f"expected group_sizes to have shape {want}, got "
                                     f"{ga.shape}."))
    g = ga.shape[-1]
    groups = dn.rhs_group_dimensions
    if mode == _NONCONTRACTING:
        if len(groups) != 1:
            raise TypeError(at_user_line(
                "ragged_dot_general requires exactly one rhs group dimension when lhs "
                "ragged dimension is noncontracting."))
        if not 0 <= groups[0] < ra.ndim or groups[0] in rb or groups[0] in rc:
            raise TypeError(at_user_line(
                f"ragged_dot_general requires the rhs group dimension ({groups[0]}) to be "
                f"an axis of the rhs of rank {ra.ndim}, distinct from its contracting and "
                f"batch dimensions."))
        if ra.shape[groups[0]] != g:
            raise TypeError(at_user_line(f"expected rhs group dimension size to be {g}, "
                                         f"got {ra.shape[groups[0]]}."))
    elif groups:
        raise TypeError(at_user_line(
            "ragged_dot_general requires zero group dimensions in the rhs when lhs ragged "
            "dimension is contracting or batch."))
    if ga.ndim == 1:
        gs = broadcast_in_dim(gs, want, (len(want) - 1,))
    one_up = lambda dims: [d + 1 for d in dims]   # noqa: E731 - (past the new group axis)
    common = dict(precision=precision, preferred_element_type=preferred_element_type,
                  out_sharding=out_sharding)
    if mode == _NONCONTRACTING:
        return dot_general(_expand(lhs, ragged, gs, l_prefix), rhs,
                           ((one_up(lc) + [0], list(rc) + [groups[0]]),
                            (one_up(lb), list(rb))), **common)
    if mode == _CONTRACTING:
        r_ragged = rc[list(lc).index(ragged)]
        r_prefix = _prefix(mode, ra.ndim, r_ragged, rb, rc)
        return dot_general(_expand(lhs, ragged, gs, l_prefix),
                           _expand(rhs, r_ragged, gs, r_prefix),
                           ((one_up(lc), one_up(rc)), ([0] + one_up(lb), [0] + one_up(rb))),
                           **common)
    return dot_general(lhs, rhs, dn.dot_dimension_numbers, **common)


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """out[i] = lhs[i] @ rhs[j] for the rows i of lhs [m, k] in group j of rhs [g, k, n]
    (consecutive groups of `group_sizes` rows; rows past the last group are 0).
    JAX: lax.ragged_dot."""
    lhs, rhs = as_array(lhs), as_array(rhs)
    (ls, rs) = (aval_of_value(v).shape for v in (lhs, rhs))
    if len(ls) != 2 or len(rs) != 3:
        raise TypeError(at_user_line(f"ragged_dot expects lhs [m, k] and rhs [g, k, n], "
                                     f"got {ls} and {rs}"))
    dtype = dtypes.result_type(lhs, rhs)
    return ragged_dot_general(convert_element_type(lhs, dtype),
                              convert_element_type(rhs, dtype), group_sizes, _BASIC,
                              precision, preferred_element_type, group_offset, out_sharding)
