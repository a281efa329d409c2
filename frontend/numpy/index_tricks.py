"""Index helpers: index grids (indices, meshgrid, mgrid, ogrid, ix_), index
expressions (s_, index_exp, r_, c_), flat/multi-index conversion, and triangle and diagonal
indices."""
from __future__ import annotations

import math
import operator

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.numpy import shaping
from mjax.numpy.arguments import concrete
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.conversion import asarray
from mjax.numpy.creation import arange, linspace, ones, zeros
from mjax.numpy.elementwise import clip, where_xy
from mjax.numpy.promotion import broadcast_shapes, result_type
from mjax.numpy.searching import nonzero
from mjax.numpy.shaping import concatenate, expand_dims, ravel, reshape, stack, transpose


@fused_when_eager
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xi = [ravel(x) for x in xi]
    swap = indexing == "xy" and len(xi) >= 2    # ('xy': the first two axes swapped)
    if swap:
        xi[0], xi[1] = xi[1], xi[0]
    shape = [x.shape[0] for x in xi]
    out = []
    for i, x in enumerate(xi):
        if sparse:
            s = [1] * len(xi)
            s[i] = x.shape[0]
            out.append(reshape(x, s))
        else:   # (one broadcast_in_dim per input, as JAX stages it)
            out.append(lax.broadcast_in_dim(x, shape, (i,)))
    if swap:
        out[0], out[1] = out[1], out[0]
    return out


def unravel_index(indices, shape):
    """The multi-index (one array per dim) of flat indices into shape. JAX: unravel_index."""
    indices = asarray(indices)
    shape = tuple(operator.index(d) for d in shape)
    size = math.prod(shape)
    clipped = clip(indices, -size, size - 1)
    clipped = where_xy(clipped < 0, clipped + size, clipped)
    out = []
    for d in reversed(shape):
        out.append(clipped % d if d else clipped)
        clipped = clipped // d if d else clipped
    return tuple(reversed(out))


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """The flat indices of a multi-index into dims. JAX: ravel_multi_index."""
    if dtype is not None:
        return asarray(ravel_multi_index(multi_index, dims, mode, order), dtype=dtype)
    dims = tuple(operator.index(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    idx = [asarray(i) for i in multi_index]
    for i in idx:
        if not _dt.issubdtype(i.dtype, _onp.integer):
            raise TypeError("only int indices permitted")
    if mode == "raise":
        for i, d in zip(idx, dims):
            host = concrete(i, "ravel_multi_index", "it was traced with mode='raise'; "
                                                     "use mode='wrap' or mode='clip'")
            if host.size and (host.min() < 0 or host.max() >= d):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "wrap":
        idx = [i % d for i, d in zip(idx, dims)]
    elif mode == "clip":
        idx = [clip(i, 0, d - 1) for i, d in zip(idx, dims)]
    else:
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', or 'clip'")
    order_dims = list(zip(idx, dims)) if order == "C" else list(zip(idx, dims))[::-1]
    out = zeros(broadcast_shapes(*(i.shape for i in idx)), _dt.default_int())
    for i, d in order_dims:
        out = out * d + i.astype(out.dtype)
    return out


def tril_indices(n, k=0, m=None):
    """Indices of the lower triangle of an (n, m) array. JAX: jnp.tril_indices."""
    r, c = _onp.tril_indices(n, k, m)
    return asarray(r.astype(_dt.default_int())), asarray(c.astype(_dt.default_int()))


def triu_indices(n, k=0, m=None):
    """Indices of the upper triangle of an (n, m) array. JAX: jnp.triu_indices."""
    r, c = _onp.triu_indices(n, k, m)
    return asarray(r.astype(_dt.default_int())), asarray(c.astype(_dt.default_int()))


def tril_indices_from(arr, k=0):
    shape = shaping.shape(arr)
    if len(shape) != 2:
        raise ValueError("input array must be 2-d")
    return tril_indices(shape[0], k, shape[1])


def triu_indices_from(arr, k=0):
    shape = shaping.shape(arr)
    if len(shape) != 2:
        raise ValueError("input array must be 2-d")
    return triu_indices(shape[0], k, shape[1])


def diag_indices(n, ndim=2):
    """Indices of the main diagonal of an n x ... x n array. JAX: jnp.diag_indices."""
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (lax.iota(_dt.default_int(), n),) * ndim


def diag_indices_from(arr):
    shape = shaping.shape(arr)
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


class _IndexExpression:
    """np.s_ / np.index_exp: returns the index expression it is subscripted with."""

    def __init__(self, maketuple):
        self.maketuple = maketuple

    def __getitem__(self, item):
        if self.maketuple and not isinstance(item, tuple):
            return (item,)
        return item


s_ = _IndexExpression(False)
index_exp = _IndexExpression(True)


class _Grid:
    """mgrid (dense) / ogrid (open) from slices; a complex step is a number of points."""

    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        single = not isinstance(key, tuple)
        keys = (key,) if single else key
        axes = []
        for k in keys:
            start = 0 if k.start is None else k.start
            step = 1 if k.step is None else k.step
            if isinstance(step, complex):
                axes.append(linspace(start, k.stop, int(abs(step))))
            else:
                axes.append(arange(start, k.stop, step))
        dtype = result_type(*axes)
        axes = [x.astype(dtype) for x in axes]
        if single:
            return axes[0]
        grids = meshgrid(*axes, indexing="ij", sparse=self.sparse)
        return list(grids) if self.sparse else stack(grids)


mgrid = _Grid(False)
ogrid = _Grid(True)


class _Concatenator:
    """r_ / c_ (NumPy's AxisConcatenator): pieces made at least `ndmin`-d (their own axes
    placed at position `trans1d` of the new shape), joined along `axis`; slices are
    aranges (a complex step: that many points). A leading string directive
    'axis[,ndmin[,trans1d]]' overrides these; 'r' / 'c' make a 1-d result a row / column."""

    def __init__(self, axis, ndmin, trans1d):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        keys = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, None
        if keys and isinstance(keys[0], str):
            directive, keys = keys[0], keys[1:]
            if directive in ("r", "c"):
                matrix = 0 if directive == "r" else 1
            else:
                fields = directive.split(",")[:3]
                try:
                    values = [int(f) for f in fields]
                except ValueError:
                    raise ValueError(f"could not understand directive {directive!r}") from None
                axis, ndmin, trans1d = values + [axis, ndmin, trans1d][len(values):]
        parts = []
        for k in keys:
            if isinstance(k, str):
                raise ValueError("string directive must be placed at the beginning")
            if isinstance(k, slice):
                step = 1 if k.step is None else k.step
                start = 0 if k.start is None else k.start
                arr = linspace(start, k.stop, int(abs(step))) if isinstance(
                    step, complex) else arange(start, k.stop, step)
                own_ndim = 0
            else:
                arr = asarray(k)
                own_ndim = arr.ndim
            if arr.ndim < ndmin:
                arr = reshape(arr, (1,) * (ndmin - arr.ndim) + arr.shape)
            if trans1d != -1 and ndmin > own_ndim:
                # the piece's own (trailing) axes move to position trans1d
                shift = ndmin - abs(ndmin + trans1d + 1) % ndmin
                order = tuple(range(ndmin))
                arr = transpose(arr, order[shift:] + order[:shift])
            parts.append(arr)
        out = concatenate(parts, axis=axis)
        if matrix is not None and out.ndim == 1:
            out = expand_dims(out, matrix)
        return out


r_ = _Concatenator(0, 1, -1)
c_ = _Concatenator(-1, 2, 0)


def ix_(*args):
    """Open-mesh index arrays from 1-d sequences (booleans: their nonzero positions).
    JAX: jnp.ix_."""
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = asarray(a)
        if a.ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                             f"{a.shape}")
        if a.dtype == _onp.bool_:
            raise TypeError("jax.numpy.ix_ does not support boolean indices")
        out.append(reshape(a, tuple(a.shape[0] if j == i else 1 for j in range(n))))
    return tuple(out)


def mask_indices(n, mask_func, k=0, *, size=None):
    """Indices of the nonzero entries of mask_func(ones((n, n)), k). JAX: mask_indices."""
    mask = mask_func(ones((n, n), _dt.default_int()), k)
    return nonzero(mask, size=size)


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
    return stack(out) if out else zeros((0,), dtype)
