"""`histogramdd` and `histogram2d`: n-d binning by searchsorted per dimension, one flat
bin index per point and one bincount. JAX: jnp.histogramdd, jnp.histogram2d.

Each dimension gets two extra bins (below the first edge, above the last) so that points
outside the range land somewhere; they are cut off at the end. A point equal to the last
edge counts in the last bin, as in NumPy.
"""
from __future__ import annotations

import math

import numpy as _onp

from mjax import numpy as jnp


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """(hist, [edges per dimension]) of N points in D dimensions, sample of shape (N, D).
    Without weights the counts are integers, as in JAX."""
    sample = jnp.asarray(sample)
    if weights is None:
        (sample,) = jnp._promote("histogramdd", sample, inexact=True)
    else:
        weights = jnp.asarray(weights)
        if weights.shape != sample.shape[:1]:
            raise ValueError(f"mjax.numpy.histogramdd: should have one weight for each "
                             f"sample; got weights of shape {weights.shape} for sample of "
                             f"shape {sample.shape}")
        sample, weights = jnp._promote("histogramdd", sample, weights, inexact=True,
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
        e = jnp.histogram_bin_edges(column, per_dim[i], None if range is None else range[i])
        e = e.astype(sample.dtype)
        k = jnp.searchsorted(e, column, side="right")
        index.append(jnp.where(column == e[-1], k - 1, k))
        edges.append(e)
    shape = tuple(e.shape[0] + 1 for e in edges)    # with the under/overflow bins
    flat = jnp.ravel_multi_index(tuple(index), shape, mode="clip")
    hist = jnp.bincount(flat, weights, length=math.prod(shape)).reshape(shape)
    hist = hist[(slice(1, -1),) * d]
    if density:
        hist = hist.astype(sample.dtype)
        hist = hist / jnp.sum(hist)
        for i, e in enumerate(edges):
            width = jnp.diff(e)
            hist = hist / width.reshape((1,) * i + (-1,) + (1,) * (d - i - 1))
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """(hist, x_edges, y_edges) of the points (x[i], y[i]). `bins` is an int, a pair of
    ints or edge arrays, or one edge array used for both. JAX: jnp.histogram2d."""
    x, y = jnp.asarray(x), jnp.asarray(y)
    try:
        count = len(bins)
    except TypeError:
        count = 1
    if count not in (1, 2):                       # one array of edges, for both axes
        bins = [jnp.asarray(bins), jnp.asarray(bins)]
    hist, edges = histogramdd(jnp.stack([x, y], axis=1), bins, range, weights, density)
    return hist, edges[0], edges[1]


_builtin_range = range
