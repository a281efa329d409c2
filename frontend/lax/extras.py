"""More of `jax.lax`, composed from existing primitives: batch_matmul, collapse, split,
stack/unstack, tile, dynamic_(update_)index_in_dim, index_take, scatter_sub,
scatter_apply, broadcast_like/broadcast_shapes, empty, dtype, nextafter, mulhi."""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence, Union

import numpy as np

from mjax import dtypes
from mjax.core import at_user_line, aval_of_value

# Type aliases JAX exports for annotations.
ConvGeneralDilatedDimensionNumbers = Union[tuple, Any, None]
DotDimensionNumbers = tuple
PrecisionLike = Any


def _lax():
    from mjax import lax
    return lax


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products batched over the leading dims (equal ranks >= 2). JAX:
    lax.batch_matmul."""
    la, ra = aval_of_value(lhs), aval_of_value(rhs)
    if la.ndim != ra.ndim or la.ndim < 2:
        raise ValueError(at_user_line(f"Arguments to batch_matmul must be at least 2D and "
                                      f"have the same rank, got {la.ndim}D and {ra.ndim}D"))
    n = la.ndim
    batch = tuple(range(n - 2))
    return _lax().dot_general(lhs, rhs, (((n - 1,), (n - 2,)), (batch, batch)),
                              precision=precision)


def collapse(operand, start_dimension, stop_dimension=None):
    """Merges dims start..stop-1 into one. JAX: lax.collapse."""
    shape = aval_of_value(operand).shape
    n = len(shape)
    start = operator.index(start_dimension) % max(n, 1) if n else 0
    stop = n if stop_dimension is None else operator.index(stop_dimension)
    stop = stop + n if stop < 0 else stop
    new = shape[:start] + (math.prod(shape[start:stop]),) + shape[stop:]
    return _lax().reshape(operand, new)


def split(operand, sizes, axis=0):
    """Consecutive pieces of the given sizes along axis. JAX: lax.split."""
    aval = aval_of_value(operand)
    axis = operator.index(axis) % aval.ndim
    sizes = [operator.index(s) for s in sizes]
    if sum(sizes) != aval.shape[axis] or any(s < 0 for s in sizes):
        raise ValueError(at_user_line(f"Sum of sizes {sum(sizes)} must be equal to dimension "
                                      f"{aval.shape[axis]} of the operand shape {aval.shape}"))
    out, start = [], 0
    for s in sizes:
        out.append(_lax().slice_in_dim(operand, start, start + s, 1, axis))
        start += s
    return out


def stack(operands, axis=0):
    """Stacks same-shape arrays along a new axis. JAX: lax.stack."""
    lax = _lax()
    operands = list(operands)
    if not operands:
        raise ValueError("stack requires at least one operand")
    rank = aval_of_value(operands[0]).ndim
    axis = operator.index(axis) % (rank + 1)
    return lax.concatenate([lax.expand_dims(x, (axis,)) for x in operands], axis)


def unstack(x, axis=0):
    """The slices along axis. JAX: lax.unstack."""
    lax = _lax()
    aval = aval_of_value(x)
    axis = operator.index(axis) % aval.ndim
    return tuple(lax.index_in_dim(x, i, axis, keepdims=False) for i in range(aval.shape[axis]))


def tile(operand, reps):
    """operand repeated reps[i] times along each dim. JAX: lax.tile."""
    lax = _lax()
    aval = aval_of_value(operand)
    reps = tuple(operator.index(r) for r in reps)
    if len(reps) != aval.ndim:
        raise ValueError(at_user_line(f"len(reps) = {len(reps)} != operand.ndim = {aval.ndim}"))
    # Broadcast to (r0, d0, r1, d1, ...) then merge each pair.
    shape = tuple(v for r, d in zip(reps, aval.shape) for v in (r, d))
    dims = tuple(range(1, 2 * aval.ndim, 2))
    out = lax.broadcast_in_dim(operand, shape, dims)
    return lax.reshape(out, tuple(r * d for r, d in zip(reps, aval.shape)))


def _index(index, size, allow_negative):
    from mjax import numpy as jnp
    index = jnp.asarray(index)
    if allow_negative:
        index = jnp.where(index < 0, index + size, index)
    return index


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *,
                         allow_negative_indices=True):
    """operand's slice at a (traced) index along axis. JAX: lax.dynamic_index_in_dim."""
    lax = _lax()
    aval = aval_of_value(operand)
    axis = operator.index(axis) % aval.ndim
    idx = _index(index, aval.shape[axis], allow_negative_indices)
    out = lax.dynamic_slice_in_dim(operand, idx, 1, axis)
    return out if keepdims else lax.squeeze(out, (axis,))


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """operand with the slice at a (traced) index along axis replaced. JAX:
    lax.dynamic_update_index_in_dim."""
    lax = _lax()
    aval = aval_of_value(operand)
    axis = operator.index(axis) % aval.ndim
    if aval_of_value(update).ndim == aval.ndim - 1:
        update = lax.expand_dims(update, (axis,))
    idx = _index(index, aval.shape[axis], allow_negative_indices)
    return lax.dynamic_update_slice_in_dim(operand, update, idx, axis)


def index_take(src, idxs, axes):
    """src[idxs[0], idxs[1], ...] along `axes` (a gather). JAX: lax.index_take."""
    from mjax import numpy as jnp
    lax = _lax()
    idxs = [jnp.asarray(i) for i in idxs]
    indices = jnp.stack(idxs, axis=-1) if idxs else jnp.zeros((0,), np.int32)
    aval = aval_of_value(src)
    axes = tuple(operator.index(a) for a in axes)
    slice_sizes = [1 if i in axes else d for i, d in enumerate(aval.shape)]
    offset = tuple(range(1, 1 + aval.ndim - len(axes)))
    dn = lax.GatherDimensionNumbers(offset_dims=offset, collapsed_slice_dims=axes,
                                    start_index_map=axes)
    return lax.gather(src, indices, dn, slice_sizes)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with updates subtracted at the indices. JAX: lax.scatter_sub."""
    lax = _lax()
    return lax.scatter_add(operand, scatter_indices, lax.neg(updates), dimension_numbers,
                           indices_are_sorted=indices_are_sorted,
                           unique_indices=unique_indices, mode=mode)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with func applied at the scattered positions, once per update (so a
    repeated index applies it repeatedly, as XLA's scatter does). JAX: lax.scatter_apply."""
    lax = _lax()
    from mjax import numpy as jnp
    aval = aval_of_value(operand)
    counts = lax.scatter_add(jnp.zeros(aval.shape, np.int32), scatter_indices,
                             jnp.ones(update_shape, np.int32), dimension_numbers,
                             indices_are_sorted=indices_are_sorted,
                             unique_indices=unique_indices, mode=mode)

    def body(state):
        k, x = state
        return k + 1, jnp.where(counts > k, func(x), x)
    _, out = lax.while_loop(lambda state: state[0] < jnp.max(counts, initial=0), body,
                            (jnp.asarray(0, np.int32), operand))
    return out


def broadcast_like(arr, like_arr):
    """arr broadcast to like_arr's shape. JAX: lax.broadcast_like."""
    from mjax import numpy as jnp
    return jnp.broadcast_to(arr, aval_of_value(like_arr).shape)


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to (trailing-aligned). JAX:
    lax.broadcast_shapes."""
    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def empty(shape, dtype, *, out_sharding=None):
    """An array of the shape and dtype (zeros). JAX: lax.empty."""
    return _lax().full(shape, 0, dtype)


def dtype(x):
    """The canonical dtype of x. JAX: lax.dtype."""
    return dtypes.canonicalize_dtype(aval_of_value(x).dtype)


def nextafter(x1, x2):
    """The next representable number after x1 toward x2. JAX: lax.nextafter."""
    from mjax import numpy as jnp
    return jnp.nextafter(x1, x2)


def mulhi(x, y, /):
    """The high half of the double-width product of two integers. JAX: lax.mulhi.

    Computed in the operands' own width from half-width pieces (no wider type needed):
    x*y = hi*2^(2h) + (mid1 + mid2)*2^h + lo, with the signed result corrected from the
    unsigned one by subtracting y where x < 0 and x where y < 0."""
    lax = _lax()
    x, y = lax._prepare(x, y, fn="mulhi")
    dt = np.dtype(aval_of_value(x).dtype)
    if not np.issubdtype(dt, np.integer):
        raise TypeError(at_user_line(f"mulhi requires integer operands, got {dt}"))
    bits = dt.itemsize * 8
    udt = np.dtype(f"uint{bits}")
    ux, uy = lax.bitcast_convert_type(x, udt), lax.bitcast_convert_type(y, udt)
    h = bits // 2

    def const(v):
        return lax.full_like(ux, v)
    mask = const((1 << h) - 1)
    xl, xh = lax.and_(ux, mask), lax.shift_right_logical(ux, const(h))
    yl, yh = lax.and_(uy, mask), lax.shift_right_logical(uy, const(h))
    lo, mid1, mid2, hi = lax.mul(xl, yl), lax.mul(xh, yl), lax.mul(xl, yh), lax.mul(xh, yh)
    carry = lax.shift_right_logical(
        lax.add(lax.add(lax.shift_right_logical(lo, const(h)), lax.and_(mid1, mask)),
                lax.and_(mid2, mask)), const(h))
    out = lax.add(lax.add(hi, lax.shift_right_logical(mid1, const(h))),
                  lax.add(lax.shift_right_logical(mid2, const(h)), carry))
    if np.issubdtype(dt, np.signedinteger):
        zero = lax.full_like(x, 0)
        out = lax.sub(out, lax.select(lax.lt(x, zero), uy, lax.full_like(uy, 0)))
        out = lax.sub(out, lax.select(lax.lt(y, zero), ux, lax.full_like(ux, 0)))
    return lax.bitcast_convert_type(out, dt)


__all__ = ["ConvGeneralDilatedDimensionNumbers", "DotDimensionNumbers", "PrecisionLike",
           "batch_matmul", "collapse", "split", "stack", "unstack", "tile",
           "dynamic_index_in_dim", "dynamic_update_index_in_dim", "index_take", "scatter_sub",
           "scatter_apply", "broadcast_like", "broadcast_shapes", "empty", "dtype",
           "nextafter", "mulhi"]
