"""`mjax.ops`: segment reductions (segment_sum/prod/max/min), as in `jax.ops`.

Each is one scatter of `data` into an array of `num_segments` rows filled with the
reduction's identity; ids out of range (negative ones too) are dropped by default
(mode "fill", JAX's FILL_OR_DROP) or clamped with mode "clip".
"""
from __future__ import annotations

import operator

import numpy as np

import mjax.numpy as jnp
from mjax import lax
from mjax.tracing.core import Tracer, at_user_line
from mjax.lax.sharding import apply_out_sharding

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def _identity(kind, dtype):
    dtype = np.dtype(dtype)
    if kind == "add":
        return 0
    if kind == "mul":
        return 1
    if dtype == np.bool_:
        return kind == "min"
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return info.min if kind == "max" else info.max
    return -np.inf if kind == "max" else np.inf


def _num_segments(segment_ids, num_segments):
    if num_segments is None:
        if isinstance(segment_ids, Tracer):
            raise TypeError(at_user_line(
                "segment_sum() `num_segments` argument: num_segments must be given when "
                "segment_ids are traced (the output shape depends on it)"))
        num_segments = int(np.max(np.asarray(jnp.asarray(segment_ids)))) + 1 if np.size(
            segment_ids) else 0
    try:
        num_segments = operator.index(num_segments)
    except TypeError:
        raise TypeError(at_user_line(f"segment_sum() `num_segments` argument must be a "
                                     f"concrete integer, got {num_segments!r}")) from None
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    return num_segments


def _segment_update(kind, name, data, segment_ids, num_segments, indices_are_sorted,
                    unique_indices, bucket_size, mode):
    data, segment_ids = jnp.asarray(data), jnp.asarray(segment_ids)
    if not np.issubdtype(segment_ids.dtype, np.integer):
        raise TypeError(at_user_line(f"{name}: segment_ids must be integers, got "
                                     f"{segment_ids.dtype}"))
    n = _num_segments(segment_ids, num_segments)
    dtype = data.dtype
    mode = "fill" if mode is None else mode
    scatter = {"add": lax.scatter_add, "mul": lax.scatter_mul, "max": lax.scatter_max,
               "min": lax.scatter_min}[kind]
    if dtype == np.bool_ and kind in ("add", "mul"):
        scatter = lax.scatter_max if kind == "add" else lax.scatter_min
    ids_shape = segment_ids.shape
    if bucket_size is None:
        out = jnp.full((n,) + data.shape[segment_ids.ndim:], _identity(kind, dtype), dtype)
        idx = segment_ids[..., None]
        lead = (0,)
    else:
        # One row of segments per bucket of `bucket_size` consecutive ids, reduced at the
        # end (JAX's way to keep long sums and products accurate).
        if segment_ids.ndim != 1:
            raise ValueError(at_user_line(f"{name}: bucket_size needs 1-d segment_ids, got "
                                          f"shape {ids_shape}"))
        buckets = -(-ids_shape[0] // bucket_size)
        out = jnp.full((buckets, n) + data.shape[1:], _identity(kind, dtype), dtype)
        bucket = jnp.arange(ids_shape[0], dtype=segment_ids.dtype) // bucket_size
        idx = jnp.stack([bucket, segment_ids], axis=-1)
        lead = (0, 1)
    updates = jnp.broadcast_to(data, ids_shape + out.shape[len(lead):]).astype(dtype)
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=tuple(range(len(ids_shape), updates.ndim)),
        inserted_window_dims=lead, scatter_dims_to_operand_dims=lead)
    out = scatter(out, idx, updates, dnums, indices_are_sorted=indices_are_sorted,
                  unique_indices=unique_indices, mode=mode)
    if bucket_size is not None:
        reducer = {"add": jnp.sum, "mul": jnp.prod, "max": jnp.max, "min": jnp.min}[kind]
        out = reducer(out, axis=0).astype(dtype)
    return out


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None, out_sharding=None):
    """Sums of the `data` rows that share a segment id. JAX: ops.segment_sum."""
    out = _segment_update("add", "segment_sum", data, segment_ids, num_segments,
                           indices_are_sorted, unique_indices, bucket_size, mode)
    return apply_out_sharding(out, out_sharding)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False,
                 unique_indices=False, bucket_size=None, mode=None, out_sharding=None):
    """Products of the `data` rows that share a segment id. JAX: ops.segment_prod."""
    out = _segment_update("mul", "segment_prod", data, segment_ids, num_segments,
                           indices_are_sorted, unique_indices, bucket_size, mode)
    return apply_out_sharding(out, out_sharding)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None, out_sharding=None):
    """Maxima of the `data` rows that share a segment id (-inf, or the lowest integer, for
    empty segments). JAX: ops.segment_max."""
    out = _segment_update("max", "segment_max", data, segment_ids, num_segments,
                           indices_are_sorted, unique_indices, bucket_size, mode)
    return apply_out_sharding(out, out_sharding)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None, out_sharding=None):
    """Minima of the `data` rows that share a segment id (+inf, or the highest integer, for
    empty segments). JAX: ops.segment_min."""
    out = _segment_update("min", "segment_min", data, segment_ids, num_segments,
                           indices_are_sorted, unique_indices, bucket_size, mode)
    return apply_out_sharding(out, out_sharding)
