"""Sorting: sort, argsort, lexsort, partition, argpartition, sort_complex."""
from __future__ import annotations

import operator

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.numpy import reductions
from mjax.numpy.arguments import index_axis, normalize_axis
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.conversion import asarray
from mjax.numpy.creation import arange, zeros
from mjax.numpy.elementwise import where_xy
from mjax.numpy.promotion import result_type
from mjax.numpy.shaping import concatenate, flip, ravel, swapaxes


@fused_when_eager
def _no_kind_or_order(name, kind, order) -> None:
    """JAX's TypeErrors for NumPy's `kind` and `order` (stable= chooses stability)."""
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                        f"stable=False to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    _no_kind_or_order("sort", kind, order)
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    out = lax.sort(a, normalize_axis(axis, a.ndim), is_stable=True)
    return flip(out, normalize_axis(axis, a.ndim)) if descending else out


@fused_when_eager
def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False,
            dtype=None):
    _no_kind_or_order("argsort", kind, order)
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    ax = normalize_axis(axis, a.ndim)
    idx = lax.broadcasted_iota(_dt.default_int() if dtype is None else
                               _dt.check_user_dtype(dtype, "argsort"), a.shape, ax)
    # Descending is the ascending order reversed (negating the keys is wrong for unsigned
    # ints, INT_MIN, NaN and bool). A stable one sorts the reversed array, so that equal
    # keys keep their order once the indices are reversed back; as JAX does.
    if descending and stable:
        a, idx = lax.rev(a, (ax,)), lax.rev(idx, (ax,))
    _, perm = lax.sort((a, idx), ax, is_stable=bool(stable), num_keys=1)
    return lax.rev(perm, (ax,)) if descending else perm


def _last(a, axis):
    a = asarray(a)
    if _dt.issubdtype(a.dtype, _onp.complexfloating):
        raise NotImplementedError("jnp.partition for complex dtype is not implemented.")
    axis = index_axis(axis, a.ndim)
    return swapaxes(a, axis, -1), axis


def _kth(kth, n):
    kth = operator.index(kth)
    if not -n <= kth < n:
        raise ValueError(f"kth(={kth}) out of bounds {n}")
    return kth % n


def _neg_for_min(arr):
    # top_k of the negation finds the smallest entries; unsigned values are shifted by one
    # first so that 0 does not wrap onto itself.
    if _dt.issubdtype(arr.dtype, _onp.unsignedinteger):
        return -(arr + 1)
    return -arr


def partition(a, kth, axis=-1):
    """a with its kth smallest entry (along axis) in place: the kth+1 smallest first,
    ascending, then the rest, descending (as JAX computes it). JAX: jnp.partition."""
    arr, axis = _last(a, axis)
    n = arr.shape[-1]
    kth = _kth(kth, n)
    bottom = -lax.top_k(_neg_for_min(arr), kth + 1)[0]
    if _dt.issubdtype(arr.dtype, _onp.unsignedinteger):
        bottom = bottom - 1
    top = lax.top_k(arr, n - kth - 1)[0]
    return swapaxes(concatenate([bottom, top], axis=-1), -1, axis)


def argpartition(a, kth, axis=-1):
    """Indices that partition a around its kth entry along axis: those of the kth+1
    smallest entries, then the others in increasing order. JAX: jnp.argpartition."""
    arr, axis = _last(a, axis)
    n = arr.shape[-1]
    kth = _kth(kth, n)
    bottom = lax.top_k(_neg_for_min(arr), kth + 1)[1]
    # The other positions: a 0/1 mask of the chosen ones, whose top_k lists the rest in
    # index order (ties go to the lower index).
    chosen = reductions.any(arange(n, dtype=bottom.dtype) == bottom[..., :, None], axis=-2)
    top = lax.top_k(where_xy(chosen, 0.0, 1.0), n - kth - 1)[1]
    return swapaxes(concatenate([bottom, top], axis=-1), -1, axis)


def sort_complex(a):
    """a sorted (by real, then imaginary part) as complex. JAX: jnp.sort_complex."""
    a = sort(asarray(a), axis=-1)
    return a.astype(result_type(a.dtype, _onp.complex64))


def lexsort(keys, axis=-1):
    """Indices that sort by the last key, then the one before, ... (stable). JAX:
    jnp.lexsort."""
    keys = tuple(asarray(k) for k in keys)
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shapes = {k.shape for k in keys}
    if len(shapes) > 1:
        raise ValueError("all keys need to be the same shape")
    shape = keys[0].shape
    if not shape:
        return zeros((), _dt.default_int())
    axis = operator.index(axis) % len(shape)
    iota = lax.broadcasted_iota(_dt.default_int(), shape, axis)
    outs = lax.sort((*keys[::-1], iota), dimension=axis, num_keys=len(keys))
    return outs[-1]
