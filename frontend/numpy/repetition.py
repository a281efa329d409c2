"""Repeating an array's contents: tile, repeat (by counts, or to a static total length),
resize."""
from __future__ import annotations

import math
import operator

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.lax.sharding import takes_out_sharding
from mjax.numpy.arguments import check_arraylike, normalize_axis
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.concrete_values import concrete_or_error
from mjax.numpy.conversion import asarray
from mjax.numpy.creation import arange, zeros
from mjax.numpy.elementwise import minimum
from mjax.numpy.indexing import take
from mjax.numpy.promotion import broadcast_to
from mjax.numpy.reductions import cumsum
from mjax.numpy.searching import searchsorted
from mjax.numpy.shaping import ravel, reshape


@fused_when_eager
def tile(A, reps):
    # As JAX's: reps padded with leading 1s to A's rank, A given leading unit dims
    # (expand_dims) up to the reps' length, then lax.tile (one `tile` op).
    A = asarray(A)
    reps = (reps,) if _onp.ndim(reps) == 0 else tuple(reps)
    reps = tuple(operator.index(r) for r in reps)
    reps = (1,) * (A.ndim - len(reps)) + reps
    if len(reps) > A.ndim:
        A = lax.expand_dims(A, tuple(range(len(reps) - A.ndim)))
    return lax.tile(A, reps)


@fused_when_eager
@takes_out_sharding
def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    check_arraylike("repeat", a, repeats)
    a = asarray(a)
    if not isinstance(repeats, int) or total_repeat_length is not None:
        return repeat_general(a, repeats, axis, total_repeat_length)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis(axis, a.ndim)
    shape = list(a.shape)
    b = lax.broadcast_in_dim(a, shape[:axis + 1] + [repeats] + shape[axis + 1:], [
        d if d <= axis else d + 1 for d in range(a.ndim)])
    shape[axis] *= repeats
    return reshape(b, shape)


def resize(a, new_shape):
    """a repeated (or cut) to fill new_shape, in C order. JAX: jnp.resize."""
    a = ravel(asarray(a))
    new_shape = (new_shape,) if isinstance(new_shape, int) else tuple(new_shape)
    size = math.prod(new_shape)
    if a.size == 0 or size == 0:
        return zeros(new_shape, a.dtype)
    reps = -(-size // a.size)
    return reshape(tile(a, reps)[:size], new_shape)


def repeat_general(a, repeats, axis, total_repeat_length):
    """repeat with per-element repeats and/or a static total length (longer totals repeat
    the last element; shorter ones drop the tail). JAX: jnp.repeat."""
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis(axis, a.ndim)
    n = a.shape[axis]
    if total_repeat_length is None and isinstance(repeats, (_onp.ndarray, _onp.generic)):
        # (NumPy values are concrete under jit too: their total is known)
        counts = _onp.asarray(repeats)
        if counts.ndim <= 1 and counts.size in (1, n):
            total_repeat_length = int(_onp.broadcast_to(counts, (n,)).sum())
    repeats = asarray(repeats)
    if repeats.ndim > 1 or (repeats.ndim == 1 and repeats.shape[0] not in (1, n)):
        raise ValueError(f"repeat: repeats must be a scalar or have length {n} (the axis "
                         f"size), got shape {repeats.shape}")
    repeats = broadcast_to(repeats, (n,)).astype(_dt.default_int())
    if total_repeat_length is None:
        total_repeat_length = int(concrete_or_error(
            repeats, "jnp.repeat with traced repeats needs a static total_repeat_length").sum())
    total = operator.index(total_repeat_length)
    if n == 0 or total == 0:
        shape = list(a.shape)
        shape[axis] = total
        return zeros(shape, a.dtype)
    ends = cumsum(repeats)
    # Output position j comes from the first element whose cumulative count exceeds j.
    src = searchsorted(ends, arange(total, dtype=ends.dtype), side="right")
    return take(a, minimum(src, n - 1), axis=axis)
