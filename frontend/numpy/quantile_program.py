"""The program of jnp.quantile and its twins, op for op as JAX 0.10.2 stages it.

XLA fuses the whole program, so the order and kind of ops decide how the products of the
'linear' method round: sorting along the reduced axis in place (no transpose when it is
one axis), counting the valid entries as an integer sum converted to q's dtype, reading
the two neighbours with gathers, and weighing them with q's dtype. `q` keeps its own
dtype, as in JAX (an integer q computes positions in integers; an inverted_cdf of float16
data with a float32 q raises lax.mul's TypeError, as JAX's does).
"""
from __future__ import annotations

import math

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.numpy import reductions
from mjax.numpy.conversion import asarray
from mjax.numpy.elementwise import where_xy
from mjax.numpy.indexing import take_along_axis
from mjax.numpy.promotion import promote


def _one(x):
    return _onp.ones((), x.dtype)


def _reduced_last(a, weights, axes):
    """a (and weights) with the reduced `axes` flattened into one last axis, laid out as
    JAX's reshape with a dimension permutation does."""
    nd = a.ndim
    order = list(range(nd))
    for i, k in enumerate(sorted(set(range(nd)) - set(axes))):
        order[i], order[k] = order[k], order[i]
    kept = tuple(n for d, n in enumerate(a.shape) if d not in axes)
    flat = kept + (math.prod(n for d, n in enumerate(a.shape) if d in axes),)
    a = lax.reshape(a, flat, order)
    if weights is not None:
        weights = lax.reshape(weights, flat, order)
    return a, weights


def _prepare(a, q, axis, keepdims, weights):
    """(a, q, weights, axis, keepdim shape) after JAX's promotions and axis handling."""
    if weights is not None:
        if _dt.issubdtype(weights.dtype, _onp.complexfloating):
            raise ValueError("Weights cannot be complex types.")
        a, weights = promote("quantile", a, weights, inexact=True, broadcast=False)
        if weights.shape != a.shape:
            if axis is None:
                raise ValueError("Weights shape must match 'a' shape when axis is None.")
            axes = (axis,) if isinstance(axis, int) else axis
            axes = tuple(_canon(d, a.ndim) for d in axes)
            want = tuple(a.shape[d] for d in axes)
            if weights.shape != want:
                raise ValueError(f"Weights shape {weights.shape} must match reduction axes "
                                 f"{want}")
            weights = lax.broadcast_in_dim(weights, a.shape, axes)
    else:
        (a,) = promote("quantile", a, inexact=True)
    if _dt.issubdtype(a.dtype, _onp.complexfloating):
        raise ValueError("quantile does not support complex input, as the operation is "
                         "poorly defined.")
    keepdim = []
    if axis is None:
        keepdim = [1] * a.ndim if keepdims else []
        a = lax.reshape(a, (a.size,))
        weights = None if weights is None else lax.reshape(weights, (weights.size,))
        axis = 0
    elif isinstance(axis, tuple):
        axes = tuple(_canon(d, a.ndim) for d in axis)
        if len(set(axes)) != len(axes):
            raise ValueError("repeated axis")
        keepdim = [1 if d in axes else n for d, n in enumerate(a.shape)]
        a, weights = _reduced_last(a, weights, axes)
        axis = a.ndim - 1
    else:
        axis = _canon(axis, a.ndim)
    if q.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
    return a, weights, axis, keepdim


def _canon(d, ndim):
    if not -ndim <= d < max(ndim, 1):
        raise ValueError(f"axis {d} is out of bounds for array of dimension {ndim}")
    return d % ndim if ndim else 0


def quantile_program(a, q, axis, method, keepdims, squash_nans, weights):
    """JAX's quantile of `a` at `q` (arrays), `method` one of METHODS (checked)."""
    a, q = asarray(a), asarray(q)
    weights = None if weights is None else asarray(weights)
    if weights is not None and method != "inverted_cdf":
        raise NotImplementedError(f"{method} doesn't support weights. Only method "
                                  f"'inverted_cdf' supports weights.")
    a, weights, axis, keepdim = _prepare(a, q, axis, keepdims, weights)
    q_shape, q_ndim, q_orig, a_shape = q.shape, q.ndim, q, a.shape
    gather_reads = not squash_nans
    if squash_nans:
        a = where_xy(lax.ne(a, a), _onp.nan, a)    # (NaNs of either sign sort last)
    else:
        a = where_xy(reductions.any(lax.ne(a, a), axis=axis, keepdims=True), _onp.nan, a)
    if weights is not None:
        a, weights = lax.sort_key_val(a, weights, dimension=axis)
    else:
        a = lax.sort(a, dimension=axis)
    if method == "inverted_cdf":
        result = _inverted_cdf(a, q, q_orig, weights, axis, keepdims, squash_nans, a_shape)
    else:
        low_value, high_value, low_weight, high_weight = (
            _neighbours(a, q, axis, keepdims, a_shape, q_shape) if gather_reads else
            _neighbours_of_valid(a, q, axis, keepdims))
        if method == "linear":
            result = lax.add(lax.mul(low_value.astype(q.dtype), low_weight),
                             lax.mul(high_value.astype(q.dtype), high_weight))
        elif method == "lower":
            result = low_value
        elif method == "higher":
            result = high_value
        elif method == "nearest":
            result = lax.select(lax.le(high_weight, _onp.asarray(0.5, high_weight.dtype)),
                                low_value, high_value)
        else:   # midpoint
            result = lax.mul(lax.add(low_value, high_value),
                             _onp.asarray(0.5, low_value.dtype))
    if keepdims and keepdim:
        result = lax.reshape(result, tuple(q_shape[:1]) + tuple(keepdim))
    return lax.convert_element_type(result, a.dtype)


def _neighbours_of_valid(a, q, axis, keepdims):
    """nanquantile's two neighbours: positions among the valid (sorted first) entries."""
    q_ndim = q.ndim
    counts = reductions.sum(lax.bitwise_not(lax.ne(a, a)), axis=axis, dtype=q.dtype,
                            keepdims=keepdims)
    reduced_shape = counts.shape
    q = lax.expand_dims(q, tuple(range(q_ndim, len(reduced_shape) + q_ndim)))
    counts = lax.expand_dims(counts, tuple(range(q_ndim)))
    q = lax.mul(q, lax.sub(counts, _one(counts)))
    low, high = lax.floor(q), lax.ceil(q)
    high_weight = lax.sub(q, low)
    low_weight = lax.sub(_one(high_weight), high_weight)
    zero = _onp.zeros((), low.dtype)
    low = lax.max(zero, lax.min(low, lax.sub(counts, _one(counts))))
    high = lax.max(zero, lax.min(high, lax.sub(counts, _one(counts))))
    low = low.astype(_dt.default_int())
    high = high.astype(_dt.default_int())
    out_shape = q.shape[:q_ndim] + reduced_shape
    index = [lax.broadcasted_iota(_dt.default_int(), out_shape, d + q_ndim)
             for d in range(len(reduced_shape))]
    if keepdims:
        index[axis] = low
    else:
        index.insert(axis, low)
    low_value = a[tuple(index)]
    index[axis] = high
    high_value = a[tuple(index)]
    return low_value, high_value, low_weight, high_weight


def _neighbours(a, q, axis, keepdims, a_shape, q_shape):
    """quantile's two neighbours: positions in the whole sorted axis, read by gathers."""
    q_ndim = q.ndim
    n = _onp.asarray(a_shape[axis], q.dtype)
    top = lax.sub(n, _one(n))
    q = lax.mul(q, top)
    low, high = lax.floor(q), lax.ceil(q)
    high_weight = lax.sub(q, low)
    low_weight = lax.sub(_one(high_weight), high_weight)
    low = lax.clamp(_onp.zeros((), low.dtype), low, top).astype(_dt.default_int())
    high = lax.clamp(_onp.zeros((), high.dtype), high, top).astype(_dt.default_int())
    sizes = list(a_shape)
    sizes[axis] = 1
    rank = len(a_shape) + q_ndim - (0 if keepdims else 1)
    dnums = lax.GatherDimensionNumbers(offset_dims=tuple(range(q_ndim, rank)),
                                       collapsed_slice_dims=() if keepdims else (axis,),
                                       start_index_map=(axis,))
    # (clamped indices: no bounds mask, which XLA removes from JAX's program too; left
    # in, it changed how the products below were fused)
    mode = lax.GatherScatterMode.PROMISE_IN_BOUNDS
    low_value = lax.gather(a, low[..., None], dimension_numbers=dnums, slice_sizes=sizes,
                           mode=mode)
    high_value = lax.gather(a, high[..., None], dimension_numbers=dnums, slice_sizes=sizes,
                            mode=mode)
    if q_ndim == 1:
        low_weight = lax.broadcast_in_dim(low_weight, low_value.shape, (0,))
        high_weight = lax.broadcast_in_dim(high_weight, high_value.shape, (0,))
    return low_value, high_value, low_weight, high_weight


def _inverted_cdf(a, q, q_orig, weights, axis, keepdims, squash_nans, a_shape):
    """The first sorted entry whose cumulative weight reaches q times the total; NaN where
    a weight is negative or NaN, or the data are NaN (all of them for nanquantile)."""
    q_ndim = q.ndim
    if weights is None:
        weights = lax.full_like(a, 1.0)
    zeros = lax.full_like(weights, 0)
    bad_weights = lax.bitwise_or(lax.lt(weights, zeros), lax.ne(weights, weights))
    nan_data = lax.ne(a, a)
    clean = lax.select(lax.bitwise_or(bad_weights, nan_data), zeros, weights)
    cum = reductions.cumsum(clean, axis=axis)
    total = lax.index_in_dim(cum, -1, axis=axis, keepdims=keepdims)
    total_f = lax.expand_dims(total, tuple(range(q_ndim)))
    q_f = lax.reshape(q_orig, q_orig.shape + (1,) * total.ndim)
    target = lax.mul(q_f, total_f)
    if not keepdims:
        target = lax.expand_dims(target, (axis + q_ndim,))
    below = lax.lt(lax.expand_dims(cum, tuple(range(q_ndim))), target)
    idx = reductions.sum(below.astype(_dt.default_int()), axis=axis + q_ndim,
                         keepdims=keepdims)
    if squash_nans:
        valid = reductions.sum(lax.bitwise_not(nan_data), axis=axis, dtype=q.dtype,
                               keepdims=keepdims)
    else:
        valid = lax.full_like(total, a_shape[axis], dtype=q.dtype)
    top = lax.sub(valid, _one(valid)).astype(_dt.default_int())
    top = lax.expand_dims(top, tuple(range(q_ndim))).astype(idx.dtype)
    idx = lax.max(_onp.zeros((), idx.dtype), lax.min(idx, top))
    if keepdims:
        idx = lax.squeeze(idx, (q_ndim + axis,))
    if q_ndim == 0:
        result = lax.squeeze(take_along_axis(a, lax.expand_dims(idx, (axis,)), axis=axis),
                             (axis,))
    else:
        perm = [*range(q_ndim, q_ndim + axis), *range(q_ndim),
                *range(q_ndim + axis, idx.ndim)]
        result = take_along_axis(a, lax.transpose(idx, perm), axis=axis)
        result = lax.transpose(result, [perm.index(i) for i in range(len(perm))])
    if keepdims:
        result = lax.expand_dims(result, (q_ndim + axis,))
    all_nan = lax.eq(valid, lax.full_like(valid, 0))
    any_bad = reductions.any(bad_weights, axis=axis, keepdims=keepdims)
    force = lax.bitwise_or(any_bad, all_nan if squash_nans else
                           reductions.any(nan_data, axis=axis, keepdims=keepdims))
    force = lax.expand_dims(force, tuple(range(q_ndim)))
    return where_xy(force, lax.full_like(result, _onp.nan), result)
