"""Set operations: `unique` (and unique_values/counts/inverse/all), `isin`, `union1d`,
`intersect1d`, `setdiff1d`, `setxor1d`.

unique sorts, marks the first of each run of equal values, and scatters them to their rank;
with a static `size=` this traces, otherwise the input must be concrete so that the number
of distinct values is known. JAX: the jax.numpy functions of the same names.
"""
from __future__ import annotations

import operator

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.numpy import reductions
from mjax.numpy.arguments import concrete, normalize_axis
from mjax.numpy.concrete_values import concrete_array, concrete_or_error
from mjax.numpy.conversion import asarray
from mjax.numpy.creation import arange, full, ones, zeros
from mjax.numpy.elementwise import equal, isnan, logical_and, logical_not, not_equal, where_xy
from mjax.numpy.indexing import getitem
from mjax.numpy.promotion import broadcast_to, result_type
from mjax.numpy.reductions import cumsum
from mjax.numpy.scalar_types import bool_
from mjax.numpy.searching import flatnonzero, scatter_1d
from mjax.numpy.shaping import concatenate, expand_dims, moveaxis, ravel, reshape, shape, stack
from mjax.numpy.sorting import argsort


def _set_result(values, size, fill_value, fname):
    if size is None:
        return asarray(values)
    values = asarray(values)
    if values.shape[0] >= size:
        return values[:size]
    fill = values[0] if fill_value is None and values.shape[0] else (
        0 if fill_value is None else fill_value)
    return concatenate([values, full((size - values.shape[0],), fill, values.dtype)])


def _host_1d(x, fname):
    return concrete(ravel(asarray(x)), fname, "the output size depends on the "
                     "values; the inputs must be concrete")


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """Sorted unique values in either array. JAX: jnp.union1d."""
    return unique(concatenate([ravel(asarray(ar1)),
                                       ravel(asarray(ar2))]), size=size,
                      fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted unique values of ar1 not in ar2. JAX: jnp.setdiff1d."""
    flat = ravel(asarray(ar1))
    if size is None:
        a = unique(flat)
        mask = concrete(logical_not(isin(a, ar2)), "setdiff1d",
                         "pass size= for traced inputs")
        return a[_onp.flatnonzero(mask)]
    size = operator.index(size)
    fill = asarray(0 if fill_value is None else fill_value, flat.dtype)   # (JAX: 0)
    if flat.shape[0] == 0:
        return full((size,), fill, flat.dtype)
    # Traceable: unique padded to the input's length (with its smallest value), the
    # padding masked out, then the kept values compacted to `size` entries.
    a = unique(flat, size=flat.shape[0])
    n_unique = flat.shape[0] + 1 - reductions.sum(a == a[0])
    keep = logical_and(logical_not(isin(a, ar2)),
                           arange(flat.shape[0]) < n_unique)
    idx = flatnonzero(keep, size=size, fill_value=0)
    return where_xy(arange(size) < reductions.sum(keep), a[idx], fill)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """Sorted unique values in both arrays (with their first indices). JAX: intersect1d."""
    if size is not None and not assume_unique:
        return _intersect1d_size(ar1, ar2, operator.index(size), fill_value, return_indices)
    a1 = _host_1d(ar1, "intersect1d")
    a2 = _host_1d(ar2, "intersect1d")
    common, i1, i2 = _onp.intersect1d(a1, a2, assume_unique=assume_unique,
                                      return_indices=True)
    dtype = result_type(asarray(ar1), asarray(ar2))
    out = _set_result(asarray(common).astype(dtype), size, fill_value, "intersect1d")
    if not return_indices:
        return out
    int_t = _dt.default_int()
    # (padding indices are out of bounds, the flattened input's size, as JAX's)
    return (out, _set_result(asarray(i1.astype(int_t)), size, a1.size, "intersect1d"),
            _set_result(asarray(i2.astype(int_t)), size, a2.size, "intersect1d"))


def _intersect1d_size(ar1, ar2, size, fill_value, return_indices):
    """intersect1d's first `size` values (and first indices), traceable: ar1's distinct
    values (padded to its length) kept where ar2 has them; the padding is fill_value, or
    (JAX's) the smallest value found (0 with none); padded indices are out of bounds."""
    dtype = result_type(asarray(ar1), asarray(ar2))
    a1, a2 = (ravel(asarray(x)).astype(dtype) for x in (ar1, ar2))
    n1, n2 = a1.shape[0], a2.shape[0]
    int_t = _dt.default_int()
    if n1 == 0 or n2 == 0:
        vals = full((size,), 0 if fill_value is None else fill_value, dtype)
        out = (vals, full((size,), n1, int_t), full((size,), n2, int_t))
        return out if return_indices else vals
    u, first = unique(a1, size=n1, return_index=True)
    distinct = n1 + 1 - reductions.sum(u == u[0])     # (the padding repeats u[0])
    keep = logical_and(arange(n1) < distinct, isin(u, a2))
    count = reductions.sum(keep)
    at = flatnonzero(keep, size=size, fill_value=0)
    valid = arange(size) < count
    vals = u[at]
    if fill_value is not None:
        vals = where_xy(valid, vals, asarray(fill_value, dtype))
    else:
        smallest = reductions.min(where_xy(valid, vals, reductions.max(vals)))
        vals = where_xy(valid, vals, where_xy(count > 0, smallest, zeros((), dtype)))
    if not return_indices:
        return vals
    ind1 = where_xy(valid, first[at].astype(int_t), n1)
    # (the first position of each value in ar2)
    ind2 = reductions.argmax(a2[None, :] == vals[:, None], axis=1).astype(int_t)
    return vals, ind1, where_xy(valid, ind2, n2)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted values in exactly one of the arrays. JAX: jnp.setxor1d."""
    if size is not None:
        return _setxor1d_size(ar1, ar2, operator.index(size), fill_value)
    a1, a2 = _host_1d(ar1, "setxor1d"), _host_1d(ar2, "setxor1d")
    dtype = result_type(asarray(ar1), asarray(ar2))
    return _set_result(asarray(_onp.setxor1d(a1, a2, assume_unique)).astype(dtype), size,
                       fill_value, "setxor1d")


def _setxor1d_size(ar1, ar2, size, fill_value):
    """setxor1d's first `size` values, traceable: each array's distinct values (padded to
    its length) kept where the other array lacks them, sorted kept-first; the padding is
    fill_value, or (JAX's) the smallest value found (0 with none)."""
    dtype = result_type(asarray(ar1), asarray(ar2))
    flats = [ravel(asarray(x)).astype(dtype) for x in (ar1, ar2)]
    values, keep = [], []
    for mine, other in (flats, flats[::-1]):
        n = mine.shape[0]
        if n == 0:
            continue
        u = unique(mine, size=n)
        distinct = n + 1 - reductions.sum(u == u[0])   # (the padding repeats u[0])
        values.append(u)
        keep.append(logical_and(arange(n) < distinct, logical_not(isin(u, other))))
    if not values:
        return full((size,), 0 if fill_value is None else fill_value, dtype)
    values, keep = concatenate(values), concatenate(keep)
    _, values = lax.sort([logical_not(keep), values], num_keys=2)
    count = reductions.sum(keep)
    if values.shape[0] < size:
        values = concatenate([values, zeros((size - values.shape[0],), dtype)])
    values = values[:size]
    valid = arange(size) < count
    if fill_value is not None:
        return where_xy(valid, values, asarray(fill_value, dtype))
    smallest = reductions.min(where_xy(valid, values, reductions.max(values)))
    return where_xy(valid, values, where_xy(count > 0, smallest, zeros((), dtype)))


def unique_values(x, /, *, size=None, fill_value=None):
    """Sorted distinct values. JAX: jnp.unique_values."""
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    """(values, counts). JAX: jnp.unique_counts."""
    import collections
    v, c = unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value)
    return collections.namedtuple("_UniqueCountsResult", ["values", "counts"])(v, c)


def unique_inverse(x, /, *, size=None, fill_value=None):
    """(values, inverse_indices in x's shape). JAX: jnp.unique_inverse."""
    import collections
    v, inv = unique(x, return_inverse=True, equal_nan=False, size=size,
                        fill_value=fill_value)
    return collections.namedtuple("_UniqueInverseResult", ["values", "inverse_indices"])(
        v, reshape(inv, shape(x)))


def unique_all(x, /, *, size=None, fill_value=None):
    """(values, indices, inverse_indices, counts). JAX: jnp.unique_all."""
    import collections
    v, i, inv, c = unique(x, return_index=True, return_inverse=True, return_counts=True,
                              equal_nan=False, size=size, fill_value=fill_value)
    return collections.namedtuple("_UniqueAllResult", ["values", "indices", "inverse_indices",
                                                       "counts"])(
        v, i, reshape(inv, shape(x)), c)


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """element[i] in test_elements, elementwise, by comparing against every test value."""
    element, test = asarray(element), ravel(asarray(test_elements))
    found = reductions.any(equal(expand_dims(element, -1), test), axis=-1)
    return logical_not(found) if invert else found


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None, sorted=True):  # noqa: A002
    # (sorted=False lets JAX return any order; the sorted order is one.)
    """Sorted distinct values of ravel(ar), optionally with first indices, the inverse
    map (in ar's shape) and counts. With `size`, the output is padded to `size` entries:
    values with fill_value (default: the smallest value), indices with the smallest
    value's index, counts with 0."""
    ar = asarray(ar)
    if size is None:    # JAX computes on the concrete value (no derivative flows through)
        ar = concrete_array(ar, "mjax.numpy.unique: the number of distinct values is not "
                                "static; pass size=")
    if axis is not None:
        return _unique_axis(ar, axis, return_index, return_inverse, return_counts, equal_nan,
                            size, fill_value)
    flat = ravel(ar)
    n = flat.shape[0]
    int_t = _dt.default_int()
    if n == 0:
        return _unique_of_nothing(ar, return_index, return_inverse, return_counts, size,
                                  fill_value)
    order = argsort(flat)
    s = getitem(flat, order)
    is_new = not_equal(s[1:], s[:-1])
    if equal_nan and _dt.is_inexact(s.dtype):
        is_new = logical_and(is_new, logical_not(
            logical_and(isnan(s[1:]), isnan(s[:-1]))))
    is_new = concatenate([ones((1,), bool_), is_new])
    rank = cumsum(is_new, dtype=int_t) - 1      # which distinct value, per sorted entry
    if size is None:
        size = int(concrete_or_error(is_new, "mjax.numpy.unique: the number of distinct "
                                             "values is not static; pass size=").sum())
    size = int(size)
    # Each distinct value's slot; repeats and values past `size` are dropped.
    slot = where_xy(is_new, rank, size)
    fill = s[0] if fill_value is None else asarray(fill_value, s.dtype)
    out = [scatter_1d("set", full((size,), fill, s.dtype), slot, s)]
    if return_index:
        # argsort is stable, so a run's first sorted entry has the smallest original index.
        out.append(scatter_1d("set", full((size,), order[0], int_t), slot, order))
    if return_inverse:
        inverse = scatter_1d("set", zeros((n,), int_t), order, rank)
        out.append(reshape(inverse, ar.shape))
    if return_counts:
        out.append(scatter_1d("add", zeros((size,), int_t), rank, 1))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_axis(ar, axis, return_index, return_inverse, return_counts, equal_nan, size,
                 fill_value):
    """unique slices along `axis`: rows (the slices, flattened) sorted lexicographically
    by one sort keyed on every column, then deduplicated as in the flat case."""
    if ar.ndim == 0:
        raise ValueError("unique: axis must be None for a 0-d array")
    axis = normalize_axis(operator.index(axis), ar.ndim)
    moved = moveaxis(ar, axis, 0)
    n = moved.shape[0]
    rows = reshape(moved, (n, -1))
    m = rows.shape[1]
    int_t = _dt.default_int()
    if n == 0 or m == 0:
        raise NotImplementedError(f"mjax.numpy.unique: axis= over an array with empty "
                                  f"slices or an empty axis (shape {ar.shape}) is not "
                                  f"supported yet")
    iota = lax.iota(int_t, n)
    cols = [rows[:, j] for j in range(m)]
    *sorted_cols, order = lax.sort((*cols, iota), dimension=0, num_keys=m)
    s = stack(sorted_cols, axis=1)
    differ = not_equal(s[1:], s[:-1])
    if equal_nan and _dt.is_inexact(s.dtype):
        differ = logical_and(differ, logical_not(
            logical_and(isnan(s[1:]), isnan(s[:-1]))))
    is_new = concatenate([ones((1,), bool_), reductions.any(differ, axis=1)])
    rank = cumsum(is_new, dtype=int_t) - 1
    if size is None:
        size = int(concrete_or_error(is_new, "mjax.numpy.unique: the number of distinct "
                                             "values is not static; pass size=").sum())
    size = int(size)
    slot = where_xy(is_new, rank, size)
    fill = s[0] if fill_value is None else broadcast_to(
        asarray(fill_value, s.dtype), (m,))
    dnums = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                        scatter_dims_to_operand_dims=(0,))
    values = lax.scatter(broadcast_to(fill, (size, m)), reshape(slot, (-1, 1)), s,
                         dnums, mode="fill")
    values = moveaxis(reshape(values, (size,) + moved.shape[1:]), 0, axis)
    out = [values]
    if return_index:
        out.append(scatter_1d("set", full((size,), order[0], int_t), slot, order))
    if return_inverse:
        out.append(scatter_1d("set", zeros((n,), int_t), order, rank))
    if return_counts:
        out.append(scatter_1d("add", zeros((size,), int_t), rank, 1))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_of_nothing(ar, return_index, return_inverse, return_counts, size, fill_value):
    int_t = _dt.default_int()
    size = 0 if size is None else int(size)
    fill = 0 if fill_value is None else fill_value
    out = [full((size,), fill, ar.dtype)]
    if return_index:
        out.append(zeros((size,), int_t))
    if return_inverse:
        out.append(zeros(ar.shape, int_t))
    if return_counts:
        out.append(zeros((size,), int_t))
    return out[0] if len(out) == 1 else tuple(out)
