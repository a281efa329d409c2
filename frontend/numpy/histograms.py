"""Histograms: `histogram`, `histogram_bin_edges`, and `histogramdd` / `histogram2d`:
n-d binning by searchsorted per dimension, one flat bin index per point and one bincount.
JAX: the jax.numpy functions of the same names.

Each dimension gets two extra bins (below the first edge, above the last) so that points
outside the range land somewhere; they are cut off at the end. A point equal to the last
edge counts in the last bin, as in NumPy.
"""
from __future__ import annotations

import math
import operator

import numpy as _onp

from mjax.numpy import reductions
from mjax.numpy.calculus import diff
from mjax.numpy.concrete_values import concrete_int
from mjax.numpy.conversion import asarray
from mjax.numpy.creation import linspace, ones_like, zeros
from mjax.numpy.elementwise import logical_and, where_xy
from mjax.numpy.index_tricks import ravel_multi_index
from mjax.numpy.promotion import promote, result_type
from mjax.numpy.searching import bincount, scatter_1d, searchsorted
from mjax.numpy.shaping import ndim, ravel, stack


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """The bin edges jnp.histogram would use. JAX: jnp.histogram_bin_edges."""
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    a = ravel(asarray(a))
    dtype = result_type(a, float)
    if ndim(bins) == 1:
        return asarray(bins).astype(dtype)
    if range is None:
        lo, hi = reductions.min(a).astype(dtype), reductions.max(a).astype(dtype)
    else:
        lo, hi = asarray(range[0], dtype), asarray(range[1], dtype)
    # A degenerate range widens by 0.5 on each side, as NumPy does.
    same = lo == hi
    lo, hi = where_xy(same, lo - 0.5, lo), where_xy(same, hi + 0.5, hi)
    return linspace(lo, hi, operator.index(bins) + 1, dtype=dtype)


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """(counts, edges) of a (flattened); `bins` is a static int or an array of edges.
    The last bin includes its right edge. Counts are floats, as in JAX."""
    a = ravel(asarray(a))
    (a,) = promote("histogram", a, inexact=True)
    if _onp.ndim(bins) == 0:      # a bin count (a traced one only where JAX knows it)
        bins = concrete_int(bins, "mjax.numpy.histogram: bins must be a static int or an "
                                  "array")
        if range is None:
            lo, hi = reductions.min(a), reductions.max(a)
        else:
            lo, hi = (asarray(r, a.dtype) for r in range)
        # A degenerate range widens to +-0.5, as NumPy does.
        same = lo == hi
        lo, hi = where_xy(same, lo - 0.5, lo), where_xy(same, hi + 0.5, hi)
        edges = linspace(lo, hi, int(bins) + 1, dtype=a.dtype)
    else:
        edges = asarray(bins, a.dtype)
    nbins = edges.shape[0] - 1
    idx = searchsorted(edges, a, side="right") - 1
    idx = where_xy(a == edges[-1], nbins - 1, idx)
    inside = logical_and(idx >= 0, idx < nbins)
    w = ones_like(a) if weights is None else ravel(asarray(weights, a.dtype))
    counts = scatter_1d("add", zeros(nbins, a.dtype), where_xy(inside, idx, nbins), w)
    if density:
        counts = counts / diff(edges) / reductions.sum(counts)   # (JAX's order)
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """(hist, [edges per dimension]) of N points in D dimensions, sample of shape (N, D).
    Without weights the counts are integers, as in JAX."""
    sample = asarray(sample)
    if weights is None:
        (sample,) = promote("histogramdd", sample, inexact=True)
    else:
        weights = asarray(weights)
        if weights.shape != sample.shape[:1]:
            raise ValueError(f"mjax.numpy.histogramdd: should have one weight for each "
                             f"sample; got weights of shape {weights.shape} for sample of "
                             f"shape {sample.shape}")
        sample, weights = promote("histogramdd", sample, weights, inexact=True,
                                       broadcast=False)
    if sample.ndim != 2:
        raise ValueError(f"mjax.numpy.histogramdd: sample must be 2-d of shape (N, D), got "
                         f"shape {sample.shape}")
    n, d = sample.shape
    if range is not None and (len(range) != d or any(
            r is not None and _onp.shape(r)[0] != 2 for r in range)):
        raise ValueError(f"mjax.numpy.histogramdd: for sample.shape={(n, d)}, range must "
                         f"be a sequence of {d} pairs or Nones; got range={range}")
    try:
        per_dim = list(bins)
    except TypeError:                              # one int for every dimension
        per_dim = [bins] * d
    else:
        if len(per_dim) != d:
            raise ValueError(f"mjax.numpy.histogramdd: should be a bin for each dimension; "
                             f"got {len(per_dim)} for {d} dimensions")
    edges, index = [], []
    for i in _builtin_range(d):
        column = sample[:, i]
        e = histogram_bin_edges(column, per_dim[i], None if range is None else range[i])
        e = e.astype(sample.dtype)
        k = searchsorted(e, column, side="right")
        index.append(where_xy(column == e[-1], k - 1, k))
        edges.append(e)
    shape = tuple(e.shape[0] + 1 for e in edges)    # with the under/overflow bins
    flat = ravel_multi_index(tuple(index), shape, mode="clip")
    hist = bincount(flat, weights, length=math.prod(shape)).reshape(shape)
    hist = hist[(slice(1, -1),) * d]
    if density:
        hist = hist.astype(sample.dtype)
        hist = hist / reductions.sum(hist)
        for i, e in enumerate(edges):
            width = diff(e)
            hist = hist / width.reshape((1,) * i + (-1,) + (1,) * (d - i - 1))
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """(hist, x_edges, y_edges) of the points (x[i], y[i]). `bins` is an int, a pair of
    ints or edge arrays, or one edge array used for both. JAX: jnp.histogram2d."""
    x, y = asarray(x), asarray(y)
    try:
        count = len(bins)
    except TypeError:
        count = 1
    if count not in (1, 2):                       # one array of edges, for both axes
        bins = [asarray(bins), asarray(bins)]
    hist, edges = histogramdd(stack([x, y], axis=1), bins, range, weights, density)
    return hist, edges[0], edges[1]


_builtin_range = range
