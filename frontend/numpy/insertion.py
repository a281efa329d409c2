"""Insertion and deletion, and NumPy's in-place updates as new arrays (inplace=False, as
in JAX): append, insert, delete, put, put_along_axis, place, fill_diagonal."""
from __future__ import annotations

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.tracing.core import Tracer
from mjax.numpy.arguments import concrete, index_axis
from mjax.numpy.concrete_values import known
from mjax.numpy.conversion import asarray
from mjax.numpy.creation import arange, ones, zeros
from mjax.numpy.elementwise import clip, where_xy
from mjax.numpy.indexing import take
from mjax.numpy.promotion import broadcast_shapes, broadcast_to
from mjax.numpy.repetition import resize, tile
from mjax.numpy.searching import flatnonzero
from mjax.numpy.shaping import concatenate, moveaxis, ravel, reshape, size
from mjax.numpy.sorting import argsort


def append(arr, values, axis=None):
    """arr with values appended along axis (both raveled when axis is None). JAX: append."""
    arr, values = asarray(arr), asarray(values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)])
    return concatenate([arr, values], axis=axis)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """arr without the entries `obj` (an index, slice or index array) along axis.
    JAX: jnp.delete (obj must be static)."""
    arr = asarray(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = index_axis(axis, arr.ndim)
    n = arr.shape[axis]
    if isinstance(obj, slice):
        drop = _onp.arange(n)[obj]
    elif assume_unique_indices and isinstance(known(obj), Tracer):
        return _delete_traced(arr, obj, axis)
    else:
        drop = concrete(obj, "delete", "the deleted indices must be static")
        if drop.dtype == _onp.bool_:
            if drop.shape != (n,):
                raise ValueError(f"boolean array argument obj to delete must be one "
                                 f"dimensional and match the axis length of {n}")
            drop = _onp.flatnonzero(drop)
        drop = drop.astype(int).ravel()
        if _onp.any((drop < -n) | (drop >= n)):
            raise IndexError(f"index out of bounds for axis {axis} with size {n}")
        drop = drop % n if n else drop
    keep = _onp.setdiff1d(_onp.arange(n), drop)
    return take(arr, keep.astype(_dt.default_int()), axis=axis)


def _delete_traced(arr, obj, axis):
    """delete of traced integer indices the caller promises are unique: the output has
    n - len(obj) entries, those whose positions the indices do not name."""
    obj = asarray(obj)
    if not _dt.issubdtype(obj.dtype, _onp.integer):
        raise TypeError(f"jnp.delete(..., assume_unique_indices=True) needs integer indices "
                        f"under a trace, got {obj.dtype}")
    n, drop = arr.shape[axis], ravel(obj)
    drop = where_xy(drop < 0, drop + n, drop)
    kept = ones(n, bool).at[drop].set(False)
    return take(arr, flatnonzero(kept, size=n - drop.shape[0]), axis=axis)


def insert(arr, obj, values, axis=None):
    """arr with values inserted before the indices `obj` along axis. JAX: jnp.insert."""
    arr = asarray(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = index_axis(axis, arr.ndim)
    n = arr.shape[axis]
    values = asarray(values).astype(arr.dtype)
    if isinstance(obj, slice):
        positions = _onp.arange(n)[obj]
        scalar = False
    else:
        obj = known(obj)
        if isinstance(obj, Tracer):     # under jit: the output size is still static
            return _insert_traced(arr, obj, values, axis)
        positions = concrete(obj, "insert", "the insertion indices must be static")
        scalar = positions.ndim == 0
        positions = positions.astype(int).ravel()
    # Out-of-range indices are clipped, as in JAX (NumPy raises).
    positions = _onp.clip(_onp.where(positions < 0, positions + n, positions), 0, n)
    # As NumPy: values gain leading unit dims up to arr.ndim; a scalar index inserts them
    # all (their first axis moved to `axis`), an index array one slice per index.
    vals = reshape(values, (1,) * (arr.ndim - values.ndim) + values.shape)
    shape = list(arr.shape)
    if scalar:
        vals = moveaxis(vals, 0, axis)
        shape[axis] = vals.shape[axis]
        block = broadcast_to(vals, shape)
        pos = int(positions[0])
        return concatenate([lax.slice_in_dim(arr, 0, pos, 1, axis), block,
                                lax.slice_in_dim(arr, pos, n, 1, axis)], axis=axis)
    m = len(positions)
    shape[axis] = m
    block = broadcast_to(vals, shape)
    order = _onp.argsort(positions, kind="stable")
    # Final layout: old entries shifted right by the number of insertions before them.
    new_pos = positions[order] + _onp.arange(m)
    old_pos = _onp.arange(n) + _onp.searchsorted(positions[order], _onp.arange(n), "right")
    gather = _onp.empty(n + m, int)
    gather[old_pos] = _onp.arange(n)
    gather[new_pos] = n + order
    both = concatenate([arr, block], axis=axis)
    return take(both, gather.astype(_dt.default_int()), axis=axis)


def _insert_traced(arr, obj, values, axis):
    """insert with traced indices (JAX: negative ones wrap, the rest are clipped to
    [0, n]); only their number decides the output shape."""
    if obj.ndim > 1:
        raise ValueError(f"jnp.insert(): obj must be a slice, a one-dimensional array, or "
                         f"a scalar; got shape {obj.shape}")
    if not _dt.issubdtype(obj.dtype, _onp.integer):
        raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj.dtype}")
    n, int_t = arr.shape[axis], _dt.default_int()
    vals = reshape(values, (1,) * (arr.ndim - values.ndim) + values.shape)
    if obj.ndim == 0:
        vals = moveaxis(vals, 0, axis)
    m = vals.shape[axis] if obj.size == 1 else obj.shape[0]
    idx = broadcast_to(ravel(obj).astype(int_t), (m,)) if obj.size == 1 else \
        obj.astype(int_t)
    idx = clip(where_xy(idx < 0, idx + n, idx), 0, n)
    shape = list(arr.shape)
    shape[axis] = m
    block = broadcast_to(vals, shape)
    # The i-th inserted slice lands after the insertions sorted before it (stable order).
    new_pos = idx.at[argsort(idx, stable=True)].add(arange(m, dtype=int_t))
    kept = ones(n + m, bool).at[new_pos].set(False)
    old_pos = flatnonzero(kept, size=n)
    gather = zeros(n + m, int_t).at[new_pos].set(n + arange(m, dtype=int_t))
    gather = gather.at[old_pos].set(arange(n, dtype=int_t))
    return take(concatenate([arr, block], axis=axis), gather, axis=axis)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """a with val written on its main diagonal (inplace=False required). JAX: fill_diagonal."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented")
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = min(a.shape)
    idx = (lax.iota(_dt.default_int(), n),) * a.ndim
    val = ravel(asarray(val)).astype(a.dtype)
    val = resize(val, (n,)) if val.size else val
    return a.at[idx].set(val)


def _no_inplace(fname, inplace):
    if inplace:
        raise ValueError(f"jax.numpy.{fname} cannot modify arrays in-place, because JAX "
                         f"arrays are immutable. Pass inplace=False to instead return an "
                         f"updated array.")


def _tile_to(v, n):
    v = ravel(asarray(v))
    return tile(v, -(-n // v.shape[0]))[:n] if v.shape[0] else v


def put(a, ind, v, mode=None, *, inplace=True):
    """a with ravel(a)[ind] = v (v repeated to fit; indices clipped, or wrapped with
    mode='wrap'). JAX: jnp.put."""
    _no_inplace("put", inplace)
    a = asarray(a)
    ind = ravel(asarray(ind))
    v = ravel(asarray(v))
    if not a.size or not ind.size or not v.size:
        return a
    n = a.size
    if mode is None or mode == "clip":
        ind = clip(ind, -n, n - 1)
        ind = where_xy(ind < 0, ind + n, ind)
    elif mode == "wrap":
        ind = ind % n
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    v = _tile_to(v, ind.shape[0]).astype(a.dtype)
    return reshape(ravel(a).at[ind].set(v), a.shape)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """arr with values written at indices along axis (the counterpart of
    take_along_axis). JAX: jnp.put_along_axis."""
    _no_inplace("put_along_axis", inplace)
    arr, indices = asarray(arr), asarray(indices)
    if axis is None:
        arr_flat = ravel(arr)
        return reshape(put_along_axis(arr_flat, ravel(indices), values, 0,
                                          inplace=False, mode=mode), arr.shape)
    axis = index_axis(axis, arr.ndim)
    if indices.ndim != arr.ndim:
        raise ValueError("indices and arr must have the same number of dimensions")
    shape = broadcast_shapes(tuple(1 if i == axis else d for i, d in enumerate(arr.shape)),
                                 tuple(1 if i == axis else d for i, d in
                                       enumerate(indices.shape)))
    full = tuple(indices.shape[axis] if i == axis else d for i, d in enumerate(shape))
    idx = []
    for i in range(arr.ndim):
        if i == axis:
            ind = broadcast_to(indices, full)
            idx.append(where_xy(ind < 0, ind + arr.shape[axis], ind))
        else:
            idx.append(lax.broadcasted_iota(_dt.default_int(), full, i))
    values = broadcast_to(asarray(values).astype(arr.dtype), full)
    return arr.at[tuple(idx)].set(values, mode=mode)


def place(arr, mask, vals, *, inplace=True):
    """arr with the entries where mask is true set to vals, repeated in order.
    JAX: jnp.place (the mask must be concrete)."""
    _no_inplace("place", inplace)
    arr = asarray(arr)
    mask = known(mask)
    if isinstance(mask, Tracer) and mask.size == arr.size and arr.size and \
            size(vals):
        # Under jit: the k-th True entry takes vals[k % len(vals)]; no True, no change.
        where = flatnonzero(mask, size=mask.size, fill_value=mask.size)
        vals = _tile_to(vals, mask.size).astype(arr.dtype)
        return reshape(ravel(arr).at[where].set(vals, mode="drop"), arr.shape)
    positions = _onp.flatnonzero(concrete(ravel(asarray(mask)), "place",
                                           "the mask must be concrete"))
    if not positions.size:
        return arr
    vals = _tile_to(vals, positions.size).astype(arr.dtype)
    flat = ravel(arr).at[positions.astype(_dt.default_int())].set(vals)
    return reshape(flat, arr.shape)
