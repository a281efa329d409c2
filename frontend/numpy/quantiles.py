"""quantile/percentile/median and their NaN-ignoring twins, as in jax.numpy.

The reduced axes are moved last and flattened, the data sorted along them (NaNs sort
last), and each quantile read at its fractional position in the sorted data. Methods are
JAX's: 'linear', 'lower', 'higher', 'midpoint', 'nearest', and 'inverted_cdf' (the only
one that takes weights).
"""
from __future__ import annotations

import math

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.tracing.core import at_user_line
from mjax.jit.jitted import jit
from mjax.lax.sharding import takes_out_sharding
from mjax.numpy import reductions
from mjax.numpy.conversion import asarray
from mjax.numpy.creation import full, ones_like
from mjax.numpy.elementwise import (ceil, clip, floor, isnan, logical_not, logical_or, maximum,
                                    where_xy)
from mjax.numpy.indexing import take_along_axis
from mjax.numpy.promotion import broadcast_to, result_type
from mjax.numpy.reductions import cumsum
from mjax.numpy.shaping import expand_dims, reshape, transpose


METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(at_user_line(f"axis {a} is out of bounds for array of "
                                          f"dimension {ndim}"))
    out = tuple(a % ndim for a in axes) if ndim else ()
    if len(set(out)) != len(out):
        raise ValueError("repeated axis")
    return out


def _to_last(x, axes):
    """x with `axes` moved last and flattened into one axis."""
    keep = [d for d in range(x.ndim) if d not in axes]
    x = transpose(x, keep + list(axes))
    return reshape(x, tuple(x.shape[:len(keep)]) + (math.prod(x.shape[len(keep):]),))


def _gather_last(sorted_, idx):
    """sorted_[..., idx] per batch entry, for idx of shape q_shape + batch."""
    data = broadcast_to(sorted_, idx.shape + sorted_.shape[-1:])
    return take_along_axis(data, expand_dims(idx, -1), axis=-1)[..., 0]


def _quantile(a, q, axis, method, keepdims, squash_nans, weights):
    if method not in METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', "
                         "'nearest' or 'inverted_cdf'")
    axis = axis if axis is None or isinstance(axis, int) else tuple(axis)
    # One compiled program per call signature, as JAX jits its quantile.
    return _quantile_jit(a, q, axis, method, bool(keepdims), squash_nans, weights)


def _quantile_impl(a, q, axis, method, keepdims, squash_nans, weights):
    if method not in METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', "
                         "'nearest' or 'inverted_cdf'")
    a = asarray(a)
    if not _dt.is_inexact(a.dtype):
        a = a.astype(_dt.default_float())
    if _dt.issubdtype(a.dtype, _onp.complexfloating):
        raise ValueError("quantile does not support complex input, as the operation is "
                         "poorly defined.")
    q = asarray(q)
    if not _dt.is_inexact(q.dtype):
        q = q.astype(_dt.default_float())
    if q.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
    axes = _axes(axis, a.ndim)
    kept_shape = [1 if d in axes else n for d, n in enumerate(a.shape)]
    if weights is not None:
        if method != "inverted_cdf":
            raise NotImplementedError(f"{method} doesn't support weights. Only method "
                                      f"'inverted_cdf' supports weights.")
        weights = asarray(weights)
        if _dt.issubdtype(weights.dtype, _onp.complexfloating):
            raise ValueError("Weights cannot be complex types.")
        weights = weights.astype(result_type(a, weights))
        a = a.astype(weights.dtype)
        if weights.shape != a.shape:
            if axis is None:
                raise ValueError("Weights shape must match 'a' shape when axis is None.")
            want = tuple(a.shape[d] for d in axes)
            if weights.shape != want:
                raise ValueError(f"Weights shape {weights.shape} must match reduction axes "
                                 f"{want}")
            weights = lax.broadcast_in_dim(weights, a.shape, axes)
    x = _to_last(a, axes)
    n = x.shape[-1]
    nan = isnan(x)
    if weights is not None:
        x, w = lax.sort_key_val(x, _to_last(weights, axes), dimension=-1)
    else:
        x, w = lax.sort(x, dimension=-1), None
    batch = x.shape[:-1]
    qb = reshape(q, q.shape + (1,) * len(batch))
    any_nan = reductions.any(nan, axis=-1)
    if squash_nans:
        counts = reductions.sum(logical_not(nan), axis=-1).astype(q.dtype)
    else:
        counts = full(batch, n, q.dtype)
    if method == "inverted_cdf":
        out = _inverted_cdf(x, w, qb, counts, any_nan, squash_nans)
    else:
        pos = qb * (counts - 1)
        low, high = floor(pos), ceil(pos)
        high_weight = pos - low
        low_weight = 1 - high_weight
        top = maximum(counts - 1, 0)
        low = clip(low, 0, top).astype(_dt.default_int())
        high = clip(high, 0, top).astype(_dt.default_int())
        low_value, high_value = _gather_last(x, low), _gather_last(x, high)
        if method == "linear":
            out = low_value.astype(q.dtype) * low_weight + high_value.astype(q.dtype) * high_weight
        elif method == "lower":
            out = low_value
        elif method == "higher":
            out = high_value
        elif method == "nearest":
            out = where_xy(high_weight <= 0.5, low_value, high_value)
        else:  # midpoint
            out = (low_value + high_value) * _onp.asarray(0.5, low_value.dtype)
        if not squash_nans:
            out = where_xy(any_nan, _onp.nan, out)
    if keepdims:    # (JAX's: a 0-d input keeps the axis its ravel made)
        out = reshape(out, q.shape + (tuple(kept_shape) if kept_shape else (1,)))
    return out.astype(a.dtype)


def _jitted(fn):
    return jit(fn, static_argnums=(2, 3, 4, 5))


_quantile_jit = _jitted(_quantile_impl)


def _inverted_cdf(x, w, qb, counts, any_nan, squash_nans):
    # The first sorted entry whose cumulative weight reaches q * total weight; negative or
    # NaN weights make the result NaN, as do NaN data (all-NaN data for nanquantile).
    if w is None:
        w = ones_like(x)
    nan = isnan(x)
    bad = logical_or(w < 0, isnan(w))
    clean = where_xy(logical_or(bad, nan), 0, w)
    cum = cumsum(clean, axis=-1)
    total = cum[..., -1]
    target = (qb * total).astype(cum.dtype)
    idx = reductions.sum((cum < target[..., None]).astype(_dt.default_int()), axis=-1)
    top = maximum(counts - 1, 0).astype(idx.dtype)
    idx = clip(idx, 0, top)
    out = _gather_last(x, idx)
    force = reductions.any(bad, axis=-1)
    force = logical_or(force, counts == 0 if squash_nans else any_nan)
    return where_xy(force, _onp.nan, out)


def _check_unsupported(fname, out, overwrite_input):
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{fname} does not support overwrite_input=True or "
                         f"out != None")


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    """The q-th quantiles (q in [0, 1]) along axis. JAX: jnp.quantile."""
    _check_unsupported("quantile", out, overwrite_input)
    method = interpolation if interpolation is not None else method
    return _quantile(a, q, axis, method, keepdims, False, weights)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    """quantile ignoring NaNs. JAX: jnp.nanquantile."""
    _check_unsupported("nanquantile", out, overwrite_input)
    method = interpolation if interpolation is not None else method
    return _quantile(a, q, axis, method, keepdims, True, weights)


@takes_out_sharding
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    """The q-th percentiles (q in [0, 100]) along axis. JAX: jnp.percentile."""
    _check_unsupported("percentile", out, overwrite_input)
    method = interpolation if interpolation is not None else method
    return _quantile(a, asarray(q) / 100, axis, method, keepdims, False,
                     weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):
    """percentile ignoring NaNs. JAX: jnp.nanpercentile."""
    _check_unsupported("nanpercentile", out, overwrite_input)
    method = interpolation if interpolation is not None else method
    return _quantile(a, asarray(q) / 100, axis, method, keepdims, True,
                     weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along axis (the midpoint of the two middle values). JAX: jnp.median."""
    return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                    keepdims=keepdims, method="midpoint")


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """median ignoring NaNs. JAX: jnp.nanmedian."""
    return nanquantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                       keepdims=keepdims, method="midpoint")


__all__ = ["quantile", "nanquantile", "percentile", "nanpercentile", "median", "nanmedian"]
