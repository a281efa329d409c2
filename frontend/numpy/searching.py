"""Searching and counting: `searchsorted`, `interp`, `bincount`, `histogram`, `argwhere`,
`flatnonzero`. Output shapes are static: counts need a `length`, nonzero a `size`, unless
the input is concrete. JAX: the jax.numpy functions of the same names.
"""
from __future__ import annotations

import numpy as _onp

from mjax import dtypes as _dt
from mjax import lax
from mjax import numpy as jnp
from mjax.core import Tracer
from mjax.numpy.indexing import getitem as _getitem


def _concrete(x, fname, why):
    from mjax.numpy.concrete_values import concrete_or_error
    return concrete_or_error(x, f"mjax.numpy.{fname}: {why}")


def _concrete_int(x, why):
    from mjax.numpy.concrete_values import concrete_int
    return concrete_int(x, f"mjax.numpy.{why}")


def _less(a, b):
    """a < b in NumPy's sort order, where NaN is greater than everything else."""
    lt = jnp.less(a, b)
    if _dt.is_inexact(jnp.result_type(a, b)):
        lt = jnp.logical_or(lt, jnp.logical_and(jnp.isnan(b), jnp.logical_not(jnp.isnan(a))))
    return lt


def scatter_1d(kind, operand, indices, updates):
    """operand with updates written ("set") or summed ("add") at 1-d int positions;
    out-of-range positions are dropped. (x.at[i] also works for a traced constant.)"""
    dnums = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                        scatter_dims_to_operand_dims=(0,))
    fn = {"set": lax.scatter, "add": lax.scatter_add}[kind]
    updates = jnp.astype(jnp.asarray(updates), operand.dtype)
    indices = jnp.reshape(indices, (-1, 1))
    return fn(operand, indices, jnp.broadcast_to(updates, (indices.shape[0],)), dnums,
              mode="fill")


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Insertion points of v into sorted 1-d a (left: first, right: last), by counting the
    entries of a that belong before each v: O(len(a) * v.size) compares, no loops."""
    if side not in ("left", "right"):
        raise ValueError(f"mjax.numpy.searchsorted: side must be 'left' or 'right', got "
                         f"{side!r}")
    a, v = jnp.asarray(a), jnp.asarray(v)
    if a.ndim != 1:
        raise ValueError(f"mjax.numpy.searchsorted: a must be 1-d, got shape {a.shape}")
    if sorter is not None:
        a = jnp.take(a, sorter)
    a, v = jnp._promote("searchsorted", a, v, broadcast=False)
    aa = lax.broadcast_in_dim(a, v.shape + a.shape, (v.ndim,))
    vv = jnp.expand_dims(v, -1)
    before = _less(aa, vv) if side == "left" else jnp.logical_not(_less(vv, aa))
    return jnp.sum(before, axis=-1, dtype=_dt.default_int())


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of (xp, fp) at x; xp increasing. JAX: jnp.interp."""
    x, xp, fp = jnp._promote("interp", x, xp, fp, inexact=True, broadcast=False)
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape != fp.shape:
        raise ValueError(f"mjax.numpy.interp: xp and fp must be 1-d of equal length, got "
                         f"shapes {xp.shape} and {fp.shape}")
    if period is not None:
        if left is not None or right is not None:
            raise ValueError("mjax.numpy.interp: left/right cannot be used with period")
        period = jnp.abs(period)
        x = x % period
        xp = xp % period
        order = jnp.argsort(xp)
        xp, fp = xp[order], fp[order]
        # One period's wrap-around on each side so that every x has two neighbours.
        xp = jnp.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = jnp.concatenate([fp[-1:], fp, fp[:1]])
    n = xp.shape[0]
    i = jnp.clip(searchsorted(xp, x, side="right"), 1, n - 1)
    x0, x1, f0, f1 = (_getitem(t, j) for t, j in ((xp, i - 1), (xp, i), (fp, i - 1), (fp, i)))
    dx = x1 - x0
    safe_dx = jnp.where(dx == 0, jnp.ones_like(dx), dx)
    out = jnp.where(dx == 0, f1, f0 + (x - x0) / safe_dx * (f1 - f0))
    if period is None:
        out = jnp.where(x < xp[0], fp[0] if left is None else left, out)
        out = jnp.where(x > xp[-1], fp[-1] if right is None else right, out)
    return out


def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed weights) of each value in non-negative int array x; negative
    values count as 0 and values >= length are dropped (JAX). `length` must be static
    when x is traced."""
    x = jnp.asarray(x)
    if not _dt.issubdtype(x.dtype, _onp.integer):
        raise TypeError(f"mjax.numpy.bincount: x must be an integer array, got {x.dtype}")
    if x.ndim != 1:
        raise ValueError(f"mjax.numpy.bincount: x must be 1-d, got shape {x.shape}")
    if length is None:
        xs = _concrete(x, "bincount", "pass a static `length=` to count a traced array")
        length = max(int(minlength), int(xs.max()) + 1 if xs.size else 0)
    if weights is None:
        weights = jnp.ones(x.shape, _dt.default_int())
    else:
        weights = jnp.asarray(weights)
    x = jnp.maximum(x, 0)
    return scatter_1d("add", jnp.zeros(int(length), weights.dtype), x, weights)


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """(counts, edges) of a (flattened); `bins` is a static int or an array of edges.
    The last bin includes its right edge. Counts are floats, as in JAX."""
    a = jnp.ravel(jnp.asarray(a))
    (a,) = jnp._promote("histogram", a, inexact=True)
    if _onp.ndim(bins) == 0:      # a bin count (a traced one only where JAX knows it)
        bins = _concrete_int(bins, "histogram: bins must be a static int or an array")
        if range is None:
            lo, hi = jnp.min(a), jnp.max(a)
        else:
            lo, hi = (jnp.asarray(r, a.dtype) for r in range)
        # A degenerate range widens to +-0.5, as NumPy does.
        same = lo == hi
        lo, hi = jnp.where(same, lo - 0.5, lo), jnp.where(same, hi + 0.5, hi)
        edges = jnp.linspace(lo, hi, int(bins) + 1, dtype=a.dtype)
    else:
        edges = jnp.asarray(bins, a.dtype)
    nbins = edges.shape[0] - 1
    idx = searchsorted(edges, a, side="right") - 1
    idx = jnp.where(a == edges[-1], nbins - 1, idx)
    inside = jnp.logical_and(idx >= 0, idx < nbins)
    w = jnp.ones_like(a) if weights is None else jnp.ravel(jnp.asarray(weights, a.dtype))
    counts = scatter_1d("add", jnp.zeros(nbins, a.dtype), jnp.where(inside, idx, nbins), w)
    if density:
        counts = counts / (jnp.sum(counts) * jnp.diff(edges))
    return counts, edges


def _flat_nonzero(a, size, fill_value, fname):
    """Flat positions of the nonzero entries of a, as a 1-d int array of `size` entries
    (padded with fill_value); `size` defaults to the concrete count."""
    a = jnp.ravel(jnp.asarray(a))
    mask = jnp.not_equal(a, 0) if a.dtype != _onp.bool_ else a
    if size is None:
        size = int(_concrete(mask, fname, "pass a static `size=` for a traced array").sum())
    int_t = _dt.default_int()
    slot = jnp.cumsum(mask, dtype=int_t) - 1
    positions = lax.iota(int_t, a.shape[0])
    out = jnp.full((size,), 0 if fill_value is None else fill_value, int_t)
    return scatter_1d("set", out, jnp.where(mask, slot, size), positions)


def flatnonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero entries of ravel(a). JAX: jax.numpy.flatnonzero."""
    return _flat_nonzero(a, size, fill_value, "flatnonzero")


def argwhere(a, *, size=None, fill_value=None):
    """(count, ndim) array of the indices of a's nonzero entries. JAX: jnp.argwhere."""
    a = jnp.asarray(a)
    flat = _flat_nonzero(a, size, None, "argwhere")
    if a.ndim == 0:
        return jnp.zeros((flat.shape[0], 0), _dt.default_int())
    cols = list(_unravel(flat, a.shape))
    out = jnp.stack(cols, axis=1)
    if fill_value is not None:
        valid = _flat_nonzero(a, size, -1, "argwhere") >= 0
        out = jnp.where(valid[:, None], out, jnp.asarray(fill_value, out.dtype))
    return out


def _unravel(flat, shape):
    out = []
    for d in reversed(shape):
        out.append(flat % d)
        flat = flat // d
    return reversed(out)
