"""BCOO's operators and array methods (`@`, `*`, `+`, `-`, `sum`, `reshape`, indexing),
attached to the class here because they are built from bcoo_ops. JAX: the methods of
jax.experimental.sparse.BCOO."""
from __future__ import annotations

import operator

from mjax import numpy as jnp
from mjax.experimental.sparse.bcoo import BCOO, bcoo_todense
from mjax.experimental.sparse.bcoo_ops import (bcoo_add, bcoo_dot_general, bcoo_multiply_dense,
                                               bcoo_multiply_sparse, bcoo_reduce_sum,
                                               bcoo_reshape, bcoo_rev, bcoo_slice,
                                               bcoo_squeeze)


def matmul_dims(a_ndim: int, b_ndim: int):
    """jnp.matmul's dot_general dimension numbers for operands of these ranks, and the
    dimensions to squeeze out of the result (1-d operands)."""
    if a_ndim == 0 or b_ndim == 0:
        raise TypeError("matmul: a scalar operand is not allowed (use *)")
    lc = a_ndim - 1
    rc = 0 if b_ndim == 1 else b_ndim - 2
    nb = min(max(a_ndim, b_ndim) - 2, min(a_ndim, b_ndim) - 2)
    nb = max(nb, 0) if a_ndim > 1 and b_ndim > 1 else 0
    if a_ndim > 2 and b_ndim > 2 and a_ndim != b_ndim:
        raise NotImplementedError("sparse matmul: batch dimensions of different ranks "
                                  "(mjax broadcasts batch dimensions of equal rank only)")
    batch = tuple(range(nb))
    return ((lc,), (rc,)), (batch, batch)


def _matmul(a, b):
    if not isinstance(a, BCOO) and not isinstance(b, BCOO):
        return NotImplemented
    dn = matmul_dims(a.ndim if isinstance(a, BCOO) else jnp.ndim(a),
                     b.ndim if isinstance(b, BCOO) else jnp.ndim(b))
    return bcoo_dot_general(a, b, dimension_numbers=dn)


def _mul(a, b):
    if isinstance(a, BCOO) and isinstance(b, BCOO):
        return bcoo_multiply_sparse(a, b)
    sp, other = (a, b) if isinstance(a, BCOO) else (b, a)
    if hasattr(other, "todense") and not hasattr(other, "shape"):
        return NotImplemented
    return bcoo_multiply_dense(sp, other)


def _add(a, b):
    if isinstance(a, BCOO) and isinstance(b, BCOO):
        return bcoo_add(a, b)
    sp, other = (a, b) if isinstance(a, BCOO) else (b, a)
    if jnp.ndim(other) == 0 and not isinstance(other, BCOO):
        other = jnp.asarray(other)
    return bcoo_todense(sp) + other


def _neg(a):
    return BCOO((-a.data, a.indices), shape=a.shape, indices_sorted=a.indices_sorted,
                unique_indices=a.unique_indices)


def _sum(self, axis=None):
    axes = range(self.ndim) if axis is None else (
        (axis,) if isinstance(axis, int) else tuple(axis))
    out = bcoo_reduce_sum(self, axes=axes)
    return bcoo_todense(out) if out.ndim == 0 else out    # (JAX: a scalar is dense)


def _reshape(self, *shape, dimensions=None):
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    shape = list(shape)
    if -1 in shape:
        known = 1
        for s in shape:
            known *= s if s != -1 else 1
        shape[shape.index(-1)] = self.size // known if known else 0
    return bcoo_reshape(self, new_sizes=tuple(shape), dimensions=dimensions)


def _getitem(self, key):
    """Basic indexing: integers, slices with positive steps, Ellipsis, None."""
    key = key if isinstance(key, tuple) else (key,)
    if any(not isinstance(k, (int, slice, type(None), type(Ellipsis))) or
           isinstance(k, bool) for k in key):
        raise NotImplementedError(f"BCOO indexing with {key}: mjax supports integers, "
                                  f"slices, Ellipsis and None")
    n_real = sum(k is not None and k is not Ellipsis for k in key)
    if Ellipsis in key:
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (self.ndim - n_real) + key[i + 1:]
    key = key + (slice(None),) * (self.ndim - sum(k is not None for k in key))
    if sum(k is not None for k in key) > self.ndim:
        raise IndexError(f"too many indices for a BCOO array of shape {self.shape}")
    start, limit, strides, squeeze, rev, d = [], [], [], [], [], 0
    for k in key:
        if k is None:
            continue
        size = self.shape[d]
        if isinstance(k, int):
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for axis {d} with size {size}")
            k = k % size
            start.append(k), limit.append(k + 1), strides.append(1), squeeze.append(d)
        else:
            lo, hi, st = k.indices(size)
            if st < 0:
                lo, hi, st = hi + 1 + ((lo - hi - 1) % -st), lo + 1, -st
                rev.append(d)
            start.append(lo), limit.append(max(lo, hi)), strides.append(st)
        d += 1
    out = bcoo_slice(self, start_indices=start, limit_indices=limit, strides=strides)
    if rev:
        out = bcoo_rev(out, rev)
    if squeeze:
        out = bcoo_squeeze(out, dimensions=squeeze)
    if any(k is None for k in key):
        shape, d = [], 0
        kept = [k for k in key if not isinstance(k, int)]
        for k in kept:
            if k is None:
                shape.append(1)
            else:
                shape.append(out.shape[d])
                d += 1
        out = bcoo_reshape(out, new_sizes=tuple(shape))
    return out


def _swap(f):
    return lambda a, b: f(b, a)


BCOO.__matmul__ = _matmul
BCOO.__rmatmul__ = _swap(_matmul)
BCOO.__mul__ = _mul
BCOO.__rmul__ = _swap(_mul)
BCOO.__add__ = _add
BCOO.__radd__ = _swap(_add)
BCOO.__sub__ = lambda a, b: _add(a, -b if not isinstance(b, BCOO) else _neg(b))
BCOO.__rsub__ = lambda a, b: _add(_neg(a), b)
BCOO.__neg__ = _neg
BCOO.__pos__ = lambda a: a
BCOO.__truediv__ = lambda a, b: bcoo_multiply_dense(a, 1 / jnp.asarray(b)) \
    if jnp.ndim(b) == 0 else NotImplemented
BCOO.__getitem__ = _getitem
BCOO.sum = _sum
BCOO.reshape = _reshape
BCOO.dot = lambda a, b: operator.matmul(a, b)
