"""`lax.ragged_dot` composed from a dense batched dot and a row-to-group mask (no ragged
primitive: every group's product is computed, then each row keeps its own group's)."""
from __future__ import annotations

import enum


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """out[i] = lhs[i] @ rhs[g(i)] with rows of lhs split into consecutive groups of
    group_sizes; rows past the last group are 0. JAX: lax.ragged_dot."""
    from mjax import numpy as jnp
    if group_offset is not None:
        raise NotImplementedError("mjax.lax.ragged_dot: group_offset is not supported")
    lhs, rhs, group_sizes = jnp.asarray(lhs), jnp.asarray(rhs), jnp.asarray(group_sizes)
    if lhs.ndim != 2 or rhs.ndim != 3 or group_sizes.ndim != 1:
        raise ValueError(f"ragged_dot expects lhs [m, k], rhs [g, k, n] and group_sizes [g], "
                         f"got {lhs.shape}, {rhs.shape} and {group_sizes.shape}")
    if lhs.shape[1] != rhs.shape[1] or rhs.shape[0] != group_sizes.shape[0]:
        raise ValueError(f"ragged_dot: incompatible shapes lhs {lhs.shape}, rhs {rhs.shape}, "
                         f"group_sizes {group_sizes.shape}")
    per_group = jnp.einsum("mk,gkn->gmn", lhs, rhs, precision=precision,
                           preferred_element_type=preferred_element_type)
    ends = jnp.cumsum(group_sizes)
    rows = jnp.arange(lhs.shape[0])
    group = jnp.sum(rows[:, None] >= ends[None, :], axis=1)  # G for rows past the end
    mask = (group[None, :] == jnp.arange(rhs.shape[0])[:, None]).astype(per_group.dtype)
    return jnp.sum(per_group * mask[:, :, None], axis=0)


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
