"""`lax.ragged_dot` composed from a dense batched dot and a row-to-group mask (no ragged
primitive: every group's product is computed, then each row keeps its own group's)."""
from __future__ import annotations

import enum

import numpy as np

from mjax import dtypes
from mjax.core import aval_of_value
from mjax.lax.dot import dot_general
from mjax.lax.elementwise import as_array, convert_element_type, eq, ge, iota, mul
from mjax.lax.reduce import cumsum, reduce_sum
from mjax.lax.shapes import broadcast_in_dim, transpose


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """out[i] = lhs[i] @ rhs[g(i)] with rows of lhs split into consecutive groups of
    group_sizes; rows past the last group are 0. JAX: lax.ragged_dot."""
    if group_offset is not None:
        raise NotImplementedError("mjax.lax.ragged_dot: group_offset is not supported")
    lhs, rhs, group_sizes = as_array(lhs), as_array(rhs), as_array(group_sizes)
    ls, rs, gs = (aval_of_value(v).shape for v in (lhs, rhs, group_sizes))
    if len(ls) != 2 or len(rs) != 3 or len(gs) != 1:
        raise ValueError(f"ragged_dot expects lhs [m, k], rhs [g, k, n] and group_sizes [g], "
                         f"got {ls}, {rs} and {gs}")
    if ls[1] != rs[1] or rs[0] != gs[0]:
        raise ValueError(f"ragged_dot: incompatible shapes lhs {ls}, rhs {rs}, "
                         f"group_sizes {gs}")
    (m, _), (g, _, n) = ls, rs
    dtype = dtypes.result_type(lhs, rhs)
    lhs, rhs = convert_element_type(lhs, dtype), convert_element_type(rhs, dtype)
    per_group = transpose(dot_general(lhs, rhs, (((1,), (1,)), ((), ())), precision,
                                      preferred_element_type), (1, 0, 2))   # [g, m, n]
    ends = cumsum(group_sizes)
    rows = convert_element_type(iota(np.int32, m), aval_of_value(ends).dtype)
    past = ge(broadcast_in_dim(rows, (m, g), (0,)), broadcast_in_dim(ends, (m, g), (1,)))
    group = reduce_sum(convert_element_type(past, np.int32), (1,))  # g for rows past the end
    mask = eq(broadcast_in_dim(group, (g, m), (1,)),
              broadcast_in_dim(iota(np.int32, g), (g, m), (0,)))
    mask = convert_element_type(mask, aval_of_value(per_group).dtype)
    return reduce_sum(mul(per_group, broadcast_in_dim(mask, (g, m, n), (0, 1))), (0,))


class RandomAlgorithm(enum.IntEnum):
    """XLA's RngBitGenerator algorithms. JAX: lax.RandomAlgorithm."""
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2


def _not_implemented(name, why):
    def f(*args, **kwargs):
        raise NotImplementedError(f"mjax.lax.{name} is not implemented ({why})")
    f.__name__ = name
    f.__doc__ = f"Not implemented in mjax ({why}). JAX: lax.{name}."
    return f


rng_bit_generator = _not_implemented(
    "rng_bit_generator", "no RngBitGenerator op; use mjax.random with a key")
rng_uniform = _not_implemented("rng_uniform", "no stateful RNG op; use mjax.random.uniform")
ragged_dot_general = _not_implemented("ragged_dot_general", "only lax.ragged_dot's layout")
