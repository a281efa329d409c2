"""More jax.numpy array manipulation and creation: rot90, dstack, array_split and
h/v/dsplit, indices, logspace/geomspace, ediff1d, digitize, lexsort, average(returned=),
repeat with array repeats or total_repeat_length, roll by a traced shift."""
from __future__ import annotations

import math
import operator

import numpy as _onp

from mjax import dtypes as _dt
from mjax import lax
from mjax import numpy as jnp
from mjax.core import Tracer, at_user_line


# ---- rotation, stacking, splitting -------------------------------------------------------
def rot90(m, k=1, axes=(0, 1)):
    """m rotated by 90 degrees k times in the plane of `axes`. JAX: jnp.rot90."""
    m = jnp.asarray(m)
    if m.ndim < 2:
        raise ValueError(f"rot90 requires its first argument to have ndim at least two, "
                         f"but got first argument of shape {m.shape}, which has ndim "
                         f"{m.ndim}")
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    ax1, ax2 = (operator.index(a) % m.ndim for a in axes)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return jnp.flip(jnp.flip(m, ax1), ax2)
    perm = list(range(m.ndim))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return jnp.transpose(jnp.flip(m, ax2), perm)
    return jnp.flip(jnp.transpose(m, perm), ax2)


def dstack(tup, dtype=None):
    """Stacks arrays along the third axis (after making them at least 3-d). JAX: jnp.dstack."""
    arrays = [jnp.atleast_3d(a) for a in tup]
    return jnp.concatenate(arrays, axis=2, dtype=dtype)


def array_split(ary, indices_or_sections, axis=0):
    """Splits into sub-arrays; an integer count need not divide the axis (the first
    len % n pieces get one more element). JAX: jnp.array_split."""
    ary = jnp.asarray(ary)
    axis = operator.index(axis) % max(ary.ndim, 1)
    size = ary.shape[axis]
    if isinstance(indices_or_sections, (int, _onp.integer)) or \
            _onp.ndim(indices_or_sections) == 0:
        from mjax.numpy.concrete_values import concrete_int
        n = concrete_int(indices_or_sections, "array_split: the number of sections must "
                                              "be static")
        if n <= 0:
            raise ValueError("number sections must be larger than 0.")
        part, extra = divmod(size, n)
        bounds = [0]
        for i in range(n):
            bounds.append(bounds[-1] + part + (1 if i < extra else 0))
    else:
        bounds = [0] + [min(max(int(i) + (size if int(i) < 0 else 0), 0), size)
                        for i in indices_or_sections] + [size]
    return [lax.slice_in_dim(ary, lo, max(lo, hi), 1, axis)
            for lo, hi in zip(bounds[:-1], bounds[1:])]


def _split_along(name, ary, indices_or_sections, axis, min_ndim):
    ary = jnp.asarray(ary)
    if ary.ndim < min_ndim:
        raise ValueError(f"{name} only works on arrays of {min_ndim} or more dimensions")
    return jnp.split(ary, indices_or_sections, axis=axis)


def hsplit(ary, indices_or_sections):
    """split along axis 1 (axis 0 for 1-d arrays). JAX: jnp.hsplit."""
    ary = jnp.asarray(ary)
    return _split_along("hsplit", ary, indices_or_sections, 1 if ary.ndim > 1 else 0, 1)


def vsplit(ary, indices_or_sections):
    """split along axis 0 of an array of 2 or more dimensions. JAX: jnp.vsplit."""
    return _split_along("vsplit", ary, indices_or_sections, 0, 2)


def dsplit(ary, indices_or_sections):
    """split along axis 2 of an array of 3 or more dimensions. JAX: jnp.dsplit."""
    return _split_along("dsplit", ary, indices_or_sections, 2, 3)


# ---- creation ------------------------------------------------------------------------------
def indices(dimensions, dtype=None, sparse=False):
    """Grid of the indices of an array of shape `dimensions`. JAX: jnp.indices."""
    dtype = _dt.default_int() if dtype is None else dtype
    dimensions = tuple(operator.index(d) for d in dimensions)
    n = len(dimensions)
    out = []
    for i, d in enumerate(dimensions):
        shape = tuple(d if j == i else 1 for j in range(n)) if sparse else dimensions
        out.append(lax.broadcasted_iota(dtype, shape, i))
    if sparse:
        return tuple(out)
    return jnp.stack(out) if out else jnp.zeros((0,), dtype)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop). JAX: jnp.logspace."""
    start, stop = jnp.asarray(start), jnp.asarray(stop)
    computation = jnp.result_type(start, stop, float)
    lin = jnp.linspace(start, stop, num, endpoint=endpoint, dtype=computation, axis=axis)
    out = jnp.power(jnp.asarray(base, computation), lin)
    return out if dtype is None else out.astype(dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Numbers spaced evenly on a log scale between start and stop (negative and complex
    endpoints as NumPy handles them). JAX: jnp.geomspace."""
    start, stop = jnp.asarray(start), jnp.asarray(stop)
    computation = jnp.result_type(start, stop, float)
    start, stop = start.astype(computation), stop.astype(computation)
    if not isinstance(start, Tracer) and not isinstance(stop, Tracer):
        if bool(jnp.any(start == 0)) or bool(jnp.any(stop == 0)):
            raise ValueError("Geometric sequence cannot include zero")
    # Like NumPy: share one sign (or complex phase) and interpolate the log10 magnitudes.
    sign = jnp.where(jnp.real(start) < 0, -1, 1).astype(computation) if not _dt.issubdtype(
        computation, _onp.complexfloating) else jnp.ones_like(start)
    lo, hi = jnp.log10(start * sign), jnp.log10(stop * sign)
    out = logspace(lo, hi, num, endpoint=endpoint, base=10.0, dtype=computation, axis=axis)
    ax = axis % out.ndim
    out = jnp.expand_dims(sign, ax) * out
    # The endpoints exactly, as NumPy and JAX give them.
    n = out.shape[ax]
    if n:
        idx = [slice(None)] * out.ndim
        idx[ax] = 0
        out = out.at[tuple(idx)].set(jnp.broadcast_to(start, out[tuple(idx)].shape))
        if endpoint and n > 1:
            idx[ax] = -1
            out = out.at[tuple(idx)].set(jnp.broadcast_to(stop, out[tuple(idx)].shape))
    return out if dtype is None else out.astype(dtype)


# ---- differences, binning, lexicographic sort ------------------------------------------------
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of ravel(ary), with optional values before
    and after. JAX: jnp.ediff1d."""
    flat = jnp.ravel(jnp.asarray(ary))
    parts = [flat[1:] - flat[:-1]]
    if to_begin is not None:
        parts.insert(0, jnp.ravel(jnp.asarray(to_begin)).astype(flat.dtype))
    if to_end is not None:
        parts.append(jnp.ravel(jnp.asarray(to_end)).astype(flat.dtype))
    return jnp.concatenate(parts) if len(parts) > 1 else parts[0]


def digitize(x, bins, right=False, *, method=None):
    """Index of the bin each x falls in (bins increasing or decreasing). JAX: jnp.digitize."""
    x, bins = jnp.asarray(x), jnp.asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    if bins.shape[0] == 0:
        return jnp.zeros(x.shape, dtype=_dt.default_int())
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    increasing = bins[-1] >= bins[0]
    up = jnp.searchsorted(bins, x, side=side, **kw)
    down = bins.shape[0] - jnp.searchsorted(jnp.flip(bins), x, side=side, **kw)
    return jnp.where(increasing, up, down).astype(_dt.default_int())


def lexsort(keys, axis=-1):
    """Indices that sort by the last key, then the one before, ... (stable). JAX:
    jnp.lexsort."""
    keys = tuple(jnp.asarray(k) for k in keys)
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shapes = {k.shape for k in keys}
    if len(shapes) > 1:
        raise ValueError("all keys need to be the same shape")
    shape = keys[0].shape
    if not shape:
        return jnp.zeros((), _dt.default_int())
    axis = operator.index(axis) % len(shape)
    iota = lax.broadcasted_iota(_dt.default_int(), shape, axis)
    outs = lax.sort((*keys[::-1], iota), dimension=axis, num_keys=len(keys))
    return outs[-1]


# ---- average, repeat, roll -------------------------------------------------------------------
def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted average along axis; with returned=True also the sum of the weights.
    JAX: jnp.average."""
    a = jnp.asarray(a)
    axes = tuple(range(a.ndim)) if axis is None else tuple(
        operator.index(d) % a.ndim for d in ((axis,) if isinstance(axis, int) else axis))
    if weights is None:
        if not _dt.is_inexact(a.dtype):
            a = a.astype(_dt.default_float())
        avg = jnp.mean(a, axis=axis, keepdims=keepdims)
        total = jnp.full((), math.prod(a.shape[d] for d in axes), avg.dtype)
    else:
        weights = jnp.asarray(weights)
        dtype = jnp.result_type(a, weights)
        if not _dt.is_inexact(dtype):
            dtype = jnp.result_type(dtype, float)
        a, weights = a.astype(dtype), weights.astype(dtype)
        if a.shape != weights.shape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights "
                                 "differ.")
            if weights.shape != tuple(a.shape[d] for d in axes):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            # weights' dims follow `axes`; put them in increasing order, then broadcast.
            weights = lax.broadcast_in_dim(jnp.transpose(weights, tuple(_onp.argsort(axes))),
                                           a.shape, tuple(sorted(axes)))
        total = jnp.sum(weights, axis=axis, keepdims=keepdims)
        avg = jnp.sum(a * weights, axis=axis, keepdims=keepdims) / total
    if returned:
        return avg, jnp.broadcast_to(total, avg.shape)
    return avg


def repeat_general(a, repeats, axis, total_repeat_length):
    """repeat with per-element repeats and/or a static total length (longer totals repeat
    the last element; shorter ones drop the tail). JAX: jnp.repeat."""
    if axis is None:
        a, axis = jnp.ravel(a), 0
    axis = operator.index(axis) % max(a.ndim, 1)
    n = a.shape[axis]
    repeats = jnp.asarray(repeats)
    if repeats.ndim > 1 or (repeats.ndim == 1 and repeats.shape[0] not in (1, n)):
        raise ValueError(f"repeat: repeats must be a scalar or have length {n} (the axis "
                         f"size), got shape {repeats.shape}")
    repeats = jnp.broadcast_to(repeats, (n,)).astype(_dt.default_int())
    if total_repeat_length is None:
        from mjax.numpy.concrete_values import concrete_or_error
        total_repeat_length = int(concrete_or_error(
            repeats, "jnp.repeat with traced repeats needs a static total_repeat_length").sum())
    total = operator.index(total_repeat_length)
    if n == 0 or total == 0:
        shape = list(a.shape)
        shape[axis] = total
        return jnp.zeros(shape, a.dtype)
    ends = jnp.cumsum(repeats)
    # Output position j comes from the first element whose cumulative count exceeds j.
    src = jnp.searchsorted(ends, jnp.arange(total, dtype=ends.dtype), side="right")
    return jnp.take(a, jnp.minimum(src, n - 1), axis=axis)


def roll_dynamic(a, shift, axis):
    """roll along one axis by a traced shift: a window of the array doubled along axis."""
    n = a.shape[axis]
    if n == 0:
        return a
    shift = jnp.asarray(shift)
    if shift.ndim != 0 or not _dt.issubdtype(shift.dtype, _onp.integer):
        raise TypeError(at_user_line(f"roll: a traced shift must be an integer scalar, got "
                                     f"{shift.dtype}{list(shift.shape)}"))
    start = (-shift) % n
    doubled = jnp.concatenate([a, a], axis=axis)
    return lax.dynamic_slice_in_dim(doubled, start.astype(_dt.default_int()), n, axis)


__all__ = ["rot90", "dstack", "array_split", "hsplit", "vsplit", "dsplit", "indices",
           "logspace", "geomspace", "ediff1d", "digitize", "lexsort"]
