"""Searching and counting: `searchsorted`, `digitize`, `interp`, `bincount`, `nonzero`,
`argwhere`, `flatnonzero`. Output shapes are static: counts need a `length`, nonzero a
`size`, unless the input is concrete. JAX: the jax.numpy functions of the same names.
"""
from __future__ import annotations

import functools

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.lax.sharding import takes_out_sharding
from mjax.numpy import elementwise, reductions
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.arguments import check_arraylike
from mjax.numpy.concrete_values import concrete_or_error
from mjax.numpy.conversion import asarray, astype
from mjax.numpy.creation import full, ones, zeros
from mjax.numpy.elementwise import (clip, greater_equal, isnan, less, logical_and, logical_not,
                                    logical_or, maximum, not_equal, where_xy)
from mjax.numpy.indexing import getitem, take
from mjax.numpy.promotion import broadcast_to, promote, result_type
from mjax.numpy.reductions import cumsum
from mjax.numpy.shaping import concatenate, expand_dims, flip, ravel, reshape, stack
from mjax.numpy.sorting import argsort


@fused_when_eager
def nonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero entries, one array per dimension. With `size`, exactly `size`
    entries: the first ones found, padded with fill_value (default 0; a scalar or one value
    per dimension); this also works on traced arrays. JAX: jnp.nonzero."""
    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    if size is None:
        host = concrete_or_error(a, "nonzero/where with one argument needs a concrete array "
                                    "(its output shape depends on the values); pass size=")
        return tuple(asarray(i.astype(_dt.default_int())) for i in _onp.nonzero(host))
    flat = _flat_nonzero(a, int(size), None, "nonzero")
    cols = list(_unravel(flat, a.shape))
    if fill_value is not None:
        # fill_value may be traced (a jit argument): never converted to NumPy here
        fills = ((fill_value,) * a.ndim if _onp.ndim(fill_value) == 0
                 else tuple(fill_value))
        if len(fills) != a.ndim:
            raise ValueError(f"fill_value must be a scalar or a tuple of length {a.ndim}; "
                             f"got {fill_value}")
        valid = greater_equal(_flat_nonzero(a, int(size), -1, "nonzero"), 0)
        cols = [where_xy(valid, c, asarray(f).astype(c.dtype)) for c, f in zip(cols, fills)]
    return tuple(cols)


def digitize(x, bins, right=False, *, method=None):
    """Index of the bin each x falls in (bins increasing or decreasing). JAX: jnp.digitize."""
    x, bins = asarray(x), asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    if bins.shape[0] == 0:
        return zeros(x.shape, dtype=_dt.default_int())
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    increasing = bins[-1] >= bins[0]
    up = searchsorted(bins, x, side=side, **kw)
    down = bins.shape[0] - searchsorted(flip(bins), x, side=side, **kw)
    return where_xy(increasing, up, down).astype(_dt.default_int())


def _concrete(x, fname, why):
    return concrete_or_error(x, f"mjax.numpy.{fname}: {why}")


def _less(a, b):
    """a < b in NumPy's sort order, where NaN is greater than everything else."""
    lt = less(a, b)
    if _dt.is_inexact(result_type(a, b)):
        lt = logical_or(lt, logical_and(isnan(b), logical_not(isnan(a))))
    return lt


def scatter_1d(kind, operand, indices, updates):
    """operand with updates written ("set") or summed ("add") at 1-d int positions;
    out-of-range positions are dropped. (x.at[i] also works for a traced constant.)"""
    dnums = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                        scatter_dims_to_operand_dims=(0,))
    fn = {"set": lax.scatter, "add": lax.scatter_add}[kind]
    updates = astype(asarray(updates), operand.dtype)
    indices = reshape(indices, (-1, 1))
    return fn(operand, indices, broadcast_to(updates, (indices.shape[0],)), dnums,
              mode="fill")


@fused_when_eager
def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Insertion points of v into sorted 1-d a (left: first, right: last), in NumPy's sort
    order (NaN last). JAX's methods: "scan" (default), a binary search of ceil(log2(n+1))
    steps over all of v at once; "scan_unrolled", its steps unrolled; "sort", ranks in a
    stable sort of a and v together; "compare_all", every entry of a against every v.
    JAX: jnp.searchsorted."""
    if side not in ("left", "right"):
        raise ValueError(f"invalid argument side={side!r}, expected 'left' or 'right'")
    if method not in _SEARCHES:
        raise ValueError(f"invalid argument method={method!r}, expected one of "
                         f"{sorted(_SEARCHES)}")
    a, v = asarray(a), asarray(v)
    if a.ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if sorter is not None:
        a = take(a, sorter)
    a, v = promote("searchsorted", a, v, broadcast=False)
    # (as JAX: the smallest signed type that holds twice the length, int32 even under x64)
    dtype = _onp.dtype(_onp.int32 if a.shape[0] <= _onp.iinfo(_onp.int32).max // 2
                       else _onp.int64)
    if a.shape[0] == 0:
        return zeros(v.shape, dtype)
    return _SEARCHES[method](a, v, side, dtype)


def _goes_left(side, entry, v):
    """Whether v's insertion point is at or before `entry`'s position."""
    return logical_not(_less(entry, v)) if side == "left" else _less(v, entry)


def _search_all(a, v, side, dtype):
    entries = lax.broadcast_in_dim(a, v.shape + a.shape, (v.ndim,))
    before = logical_not(_goes_left(side, entries, expand_dims(v, -1)))
    return reductions.sum(before, axis=-1, dtype=dtype)


def _search_scan(a, v, side, dtype, unrolled=False):
    """Binary search: each v's point lies in (low, high]; each step halves the range."""
    n = a.shape[0]
    levels = int(_onp.ceil(_onp.log2(n + 1)))

    def step(bounds, _):
        low, high = bounds
        mid = low + lax.div(high - low, _onp.array(2, dtype))
        left = _goes_left(side, getitem(a, mid), v)
        return (where_xy(left, low, mid), where_xy(left, mid, high)), None
    bounds = (zeros(v.shape, dtype), full(v.shape, n, dtype))
    (_, high), _ = lax.scan(step, bounds, None, length=levels,
                            unroll=levels if unrolled else 1)
    return high


def _search_sort(a, v, side, dtype):
    """A v's point is its rank among a and v sorted together (v first among equals for
    'left', last for 'right') less its rank among the v's."""
    q = ravel(v)

    def ranks(x):
        order = argsort(x, stable=True)
        return zeros(x.shape, _onp.int32).at[order].set(lax.iota(_onp.int32, x.shape[0]))
    if side == "left":
        found = ranks(concatenate([q, a]))[:q.size]
    else:
        found = ranks(concatenate([a, q]))[a.size:]
    return reshape(found - ranks(q), v.shape).astype(dtype)


_SEARCHES = {"compare_all": _search_all, "scan": _search_scan, "sort": _search_sort,
             "scan_unrolled": functools.partial(_search_scan, unrolled=True)}


@fused_when_eager(traced=(3, 4, "left", "right", 5, "period"))
def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of (xp, fp) at x; xp increasing. left/right:
    the value outside xp's range (fp's end values by default), or 'extrapolate' (the end
    segments' lines); with a period both are ignored. JAX: jnp.interp."""
    check_arraylike("interp", x, xp, fp)
    if _onp.shape(xp) != _onp.shape(fp) or _onp.ndim(xp) != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    # (x with xp, fp alone: JAX's promotions, so the result has fp's inexact dtype)
    x, xp = promote("interp", x, xp, inexact=True, broadcast=False)
    (fp,) = promote("interp", fp, inexact=True)
    extrapolate = []
    for name, v in (("left", left), ("right", right)):
        if isinstance(v, str) and v != "extrapolate":
            raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', "
                             f"but got: {v!r}")
        extrapolate.append(isinstance(v, str))
    if _dt.issubdtype(x.dtype, _onp.complexfloating):
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        if _onp.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = elementwise.abs(period)
        x = x % period
        xp = xp % period
        xp, fp = lax.sort_key_val(xp, fp)
        # One period's wrap-around on each side so that every x has two neighbours.
        xp = concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = concatenate([fp[-1:], fp, fp[:1]])
    i = clip(searchsorted(xp, x, side="right"), 1, xp.shape[0] - 1)
    # (JAX's ops in JAX's order: XLA's fusion of them decides the roundings)
    df = getitem(fp, i) - getitem(fp, i - 1)
    dx = getitem(xp, i) - getitem(xp, i - 1)
    delta = x - getitem(xp, i - 1)
    # (a segment shorter than the spacing of eps is a step: no NaN gradients through it)
    flat = lax.abs(dx) <= _onp.spacing(_onp.finfo(xp.dtype).eps)
    out = where_xy(flat, getitem(fp, i - 1),
                   getitem(fp, i - 1) + (delta / where_xy(flat, 1, dx)) * df)
    if period is None and not extrapolate[0]:
        out = where_xy(x < xp[0], fp[0] if left is None else left, out)
    if period is None and not extrapolate[1]:
        out = where_xy(x > xp[-1], fp[-1] if right is None else right, out)
    return out


@takes_out_sharding
def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed weights) of each value in non-negative int array x; negative
    values count as 0 and values >= length are dropped (JAX). `length` must be static
    when x is traced."""
    x = asarray(x)
    if not _dt.issubdtype(x.dtype, _onp.integer):
        raise TypeError(f"mjax.numpy.bincount: x must be an integer array, got {x.dtype}")
    if x.ndim != 1:
        raise ValueError(f"mjax.numpy.bincount: x must be 1-d, got shape {x.shape}")
    if length is None:
        xs = _concrete(x, "bincount", "pass a static `length=` to count a traced array")
        length = max(int(minlength), int(xs.max()) + 1 if xs.size else 0)
    if weights is None:
        weights = ones(x.shape, _dt.default_int())
    else:
        weights = asarray(weights)
    x = maximum(x, 0)
    return scatter_1d("add", zeros(int(length), weights.dtype), x, weights)


def _flat_nonzero(a, size, fill_value, fname):
    """Flat positions of the nonzero entries of a, as a 1-d int array of `size` entries
    (padded with fill_value); `size` defaults to the concrete count."""
    a = ravel(asarray(a))
    mask = not_equal(a, 0) if a.dtype != _onp.bool_ else a
    if size is None:
        size = int(_concrete(mask, fname, "pass a static `size=` for a traced array").sum())
    int_t = _dt.default_int()
    slot = cumsum(mask, dtype=int_t) - 1
    positions = lax.iota(int_t, a.shape[0])
    out = full((size,), 0 if fill_value is None else fill_value, int_t)
    return scatter_1d("set", out, where_xy(mask, slot, size), positions)


def flatnonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero entries of ravel(a). JAX: jax.numpy.flatnonzero."""
    return _flat_nonzero(a, size, fill_value, "flatnonzero")


def argwhere(a, *, size=None, fill_value=None):
    """(count, ndim) array of the indices of a's nonzero entries. JAX: jnp.argwhere."""
    a = asarray(a)
    flat = _flat_nonzero(a, size, None, "argwhere")
    if a.ndim == 0:
        return zeros((flat.shape[0], 0), _dt.default_int())
    cols = list(_unravel(flat, a.shape))
    out = stack(cols, axis=1)
    if fill_value is not None:
        valid = _flat_nonzero(a, size, -1, "argwhere") >= 0
        out = where_xy(valid[:, None], out, asarray(fill_value, out.dtype))
    return out


def _unravel(flat, shape):
    out = []
    for d in reversed(shape):
        out.append(flat % d)
        flat = flat // d
    return reversed(out)
