"""`unique` and `isin`. unique sorts, marks the first of each run of equal values, and
scatters them to their rank; with a static `size=` this traces, otherwise the input must
be concrete so that the number of distinct values is known. JAX: jnp.unique, jnp.isin.
"""
from __future__ import annotations

from mjax import dtypes as _dt
from mjax import lax
from mjax import numpy as jnp
from mjax.numpy.concrete_values import concrete_array, concrete_or_error
from mjax.numpy.indexing import getitem as _getitem
from mjax.numpy.searching import scatter_1d


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """element[i] in test_elements, elementwise, by comparing against every test value."""
    element, test = jnp.asarray(element), jnp.ravel(jnp.asarray(test_elements))
    found = jnp.any(jnp.equal(jnp.expand_dims(element, -1), test), axis=-1)
    return jnp.logical_not(found) if invert else found


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None, sorted=True):  # noqa: A002
    # (sorted=False lets JAX return any order; the sorted order is one.)
    """Sorted distinct values of ravel(ar), optionally with first indices, the inverse
    map (in ar's shape) and counts. With `size`, the output is padded to `size` entries:
    values with fill_value (default: the smallest value), indices with the smallest
    value's index, counts with 0."""
    ar = jnp.asarray(ar)
    if size is None:    # JAX computes on the concrete value (no derivative flows through)
        ar = concrete_array(ar, "mjax.numpy.unique: the number of distinct values is not "
                                "static; pass size=")
    if axis is not None:
        return _unique_axis(ar, axis, return_index, return_inverse, return_counts, equal_nan,
                            size, fill_value)
    flat = jnp.ravel(ar)
    n = flat.shape[0]
    int_t = _dt.default_int()
    if n == 0:
        return _unique_of_nothing(ar, return_index, return_inverse, return_counts, size,
                                  fill_value)
    order = jnp.argsort(flat)
    s = _getitem(flat, order)
    is_new = jnp.not_equal(s[1:], s[:-1])
    if equal_nan and _dt.is_inexact(s.dtype):
        is_new = jnp.logical_and(is_new, jnp.logical_not(
            jnp.logical_and(jnp.isnan(s[1:]), jnp.isnan(s[:-1]))))
    is_new = jnp.concatenate([jnp.ones((1,), jnp.bool_), is_new])
    rank = jnp.cumsum(is_new, dtype=int_t) - 1      # which distinct value, per sorted entry
    if size is None:
        size = int(concrete_or_error(is_new, "mjax.numpy.unique: the number of distinct "
                                             "values is not static; pass size=").sum())
    size = int(size)
    # Each distinct value's slot; repeats and values past `size` are dropped.
    slot = jnp.where(is_new, rank, size)
    fill = s[0] if fill_value is None else jnp.asarray(fill_value, s.dtype)
    out = [scatter_1d("set", jnp.full((size,), fill, s.dtype), slot, s)]
    if return_index:
        # argsort is stable, so a run's first sorted entry has the smallest original index.
        out.append(scatter_1d("set", jnp.full((size,), order[0], int_t), slot, order))
    if return_inverse:
        inverse = scatter_1d("set", jnp.zeros((n,), int_t), order, rank)
        out.append(jnp.reshape(inverse, ar.shape))
    if return_counts:
        out.append(scatter_1d("add", jnp.zeros((size,), int_t), rank, 1))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_axis(ar, axis, return_index, return_inverse, return_counts, equal_nan, size,
                 fill_value):
    """unique slices along `axis`: rows (the slices, flattened) sorted lexicographically
    by one sort keyed on every column, then deduplicated as in the flat case."""
    if ar.ndim == 0:
        raise ValueError("unique: axis must be None for a 0-d array")
    axis = int(axis) % ar.ndim
    moved = jnp.moveaxis(ar, axis, 0)
    n = moved.shape[0]
    rows = jnp.reshape(moved, (n, -1))
    m = rows.shape[1]
    int_t = _dt.default_int()
    if n == 0 or m == 0:
        raise NotImplementedError(f"mjax.numpy.unique: axis= over an array with empty "
                                  f"slices or an empty axis (shape {ar.shape}) is not "
                                  f"supported yet")
    iota = lax.iota(int_t, n)
    cols = [rows[:, j] for j in range(m)]
    *sorted_cols, order = lax.sort((*cols, iota), dimension=0, num_keys=m)
    s = jnp.stack(sorted_cols, axis=1)
    differ = jnp.not_equal(s[1:], s[:-1])
    if equal_nan and _dt.is_inexact(s.dtype):
        differ = jnp.logical_and(differ, jnp.logical_not(
            jnp.logical_and(jnp.isnan(s[1:]), jnp.isnan(s[:-1]))))
    is_new = jnp.concatenate([jnp.ones((1,), jnp.bool_), jnp.any(differ, axis=1)])
    rank = jnp.cumsum(is_new, dtype=int_t) - 1
    if size is None:
        size = int(concrete_or_error(is_new, "mjax.numpy.unique: the number of distinct "
                                             "values is not static; pass size=").sum())
    size = int(size)
    slot = jnp.where(is_new, rank, size)
    fill = s[0] if fill_value is None else jnp.broadcast_to(
        jnp.asarray(fill_value, s.dtype), (m,))
    dnums = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                        scatter_dims_to_operand_dims=(0,))
    values = lax.scatter(jnp.broadcast_to(fill, (size, m)), jnp.reshape(slot, (-1, 1)), s,
                         dnums, mode="fill")
    values = jnp.moveaxis(jnp.reshape(values, (size,) + moved.shape[1:]), 0, axis)
    out = [values]
    if return_index:
        out.append(scatter_1d("set", jnp.full((size,), order[0], int_t), slot, order))
    if return_inverse:
        out.append(scatter_1d("set", jnp.zeros((n,), int_t), order, rank))
    if return_counts:
        out.append(scatter_1d("add", jnp.zeros((size,), int_t), rank, 1))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_of_nothing(ar, return_index, return_inverse, return_counts, size, fill_value):
    int_t = _dt.default_int()
    size = 0 if size is None else int(size)
    fill = 0 if fill_value is None else fill_value
    out = [jnp.full((size,), fill, ar.dtype)]
    if return_index:
        out.append(jnp.zeros((size,), int_t))
    if return_inverse:
        out.append(jnp.zeros(ar.shape, int_t))
    if return_counts:
        out.append(jnp.zeros((size,), int_t))
    return out[0] if len(out) == 1 else tuple(out)
