"""Array manipulation: reshape, transpose and axis moves, expand/squeeze, joining
(concatenate, stack, block), splitting, flipping, rolling and rotating."""
from __future__ import annotations

import builtins
import math
import operator
import warnings

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.lax import prng as _prng
from mjax.lax.shapes import fresh as _fresh
from mjax.tracing.core import at_user_line, aval_of_value, Tracer
from mjax.dialect.shape_poly import InconclusiveDimensionOperation, is_symbolic_dim
from mjax.lax.sharding import takes_out_sharding
from mjax.numpy.arguments import (AxisError, canonical_shape, concrete, index_axis, is_array,
                                  no_out, normalize_axes, normalize_axis)
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.concrete_values import concrete_int
from mjax.numpy.conversion import asarray, astype
from mjax.numpy.promotion import promote


def _static(name: str, a, numpy_fn):
    """a.<name> when `a` has it (arrays, key arrays, duck-typed values); else NumPy's answer,
    with JAX's DeprecationWarning for a value that is not array-like (a list, None)."""
    if hasattr(a, name):
        return getattr(a, name)
    if not isinstance(a, (bool, int, float, complex, _onp.ndarray, _onp.generic)):
        warnings.warn(f"{name} requires ndarray or scalar arguments, got {type(a)} at "
                      f"position 0. In a future JAX release this will be an error.",
                      DeprecationWarning, stacklevel=3)
    m = getattr(a, "__jax_array__", None)
    return getattr(m(), name) if m is not None else numpy_fn(a)


def ndim(a):
    return _static("ndim", a, _onp.ndim)


def shape(a):
    return _static("shape", a, _onp.shape)


def size(a, axis=None):
    if axis is None:
        return _static("size", a, _onp.size)
    s = shape(a)
    return math.prod(s[i] for i in normalize_axes(axis, len(s)))


class ReshapeError(TypeError, ValueError):
    """A reshape to another size: JAX raises TypeError for its arrays and NumPy's
    ValueError for NumPy arguments; this is both, so either `except` catches it."""


@takes_out_sharding
def reshape(a, shape, order="C", *, copy=None):
    # (copy: accepted as JAX does; mjax arrays are immutable, so a copy is never visible)
    a = asarray(a)
    shape = canonical_shape(shape)
    if shape.count(-1) > 1:
        raise TypeError("can only specify one unknown axis size with a `-1` value, got "
                        f"{shape}")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        rest = a.size % known if known != 0 else 0
        if is_symbolic_dim(rest):   # (JAX's error: the sizes may not divide evenly)
            raise InconclusiveDimensionOperation(at_user_line(
                f"Cannot divide evenly the sizes of shapes {a.shape} and {shape}. The "
                f"remainder {rest} should be 0."))
        if known == 0 or rest:
            raise ReshapeError(at_user_line(
                f"cannot reshape array of shape {a.shape} (size {a.size}) into "
                f"shape {shape}"))
        shape = tuple(a.size // known if d == -1 else d for d in shape)
    if math.prod(shape) != a.size:
        raise ReshapeError(at_user_line(
            f"cannot reshape array of shape {a.shape} (size {a.size}) into shape "
            f"{shape} (size {math.prod(shape)})"))
    if order == "F":
        return transpose(lax.reshape(transpose(a), shape[::-1]))
    return lax.reshape(a, shape)


@takes_out_sharding
def ravel(a, order="C"):  # (out_sharding: array_api.OUT_SHARDING_FUNCTIONS)
    return _fresh(reshape(a, (-1,), order))


def transpose(a, axes=None):
    a = asarray(a)
    axes = (tuple(range(a.ndim))[::-1] if axes is None
            else tuple(normalize_axis(x, a.ndim) for x in axes))
    return lax.transpose(a, axes)


def permute_dims(a, /, axes):
    """JAX: jnp.permute_dims (the array API's transpose)."""
    return transpose(a, axes)


def swapaxes(a, axis1, axis2):
    a = asarray(a)
    perm = list(range(a.ndim))
    i, j = normalize_axis(axis1, a.ndim), normalize_axis(axis2, a.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return _fresh(lax.transpose(a, perm))


@fused_when_eager
def moveaxis(a, source, destination):
    a = asarray(a)
    if a.ndim == 0:  # (normalize_axes takes axis 0 of a scalar; JAX's moveaxis does not)
        for ax in _onp.atleast_1d(_onp.asarray(source, dtype=object)).tolist() + \
                _onp.atleast_1d(_onp.asarray(destination, dtype=object)).tolist():
            raise AxisError(f"axis {ax} is out of bounds for array of dimension 0")
    src = normalize_axes(source, a.ndim)
    dst = normalize_axes(destination, a.ndim)
    order = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _fresh(lax.transpose(a, order))


@fused_when_eager
def expand_dims(a, axis):
    a = asarray(a)
    axes = (axis,) if isinstance(axis, int) or _onp.ndim(axis) == 0 else tuple(axis)
    rank = a.ndim + len(axes)
    dims = [normalize_axis(concrete_int(x, "expand_dims: axis must be static"), rank)
            for x in axes]
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {dims}")   # (JAX's)
    return _fresh(lax.expand_dims(a, dims))


@fused_when_eager
def squeeze(a, axis=None):
    a = asarray(a)
    if axis is None:
        axes = [i for i, d in enumerate(a.shape) if d == 1]
    else:
        axes = list(normalize_axes(axis, a.ndim))
        if len(set(axes)) != len(axes):
            raise ValueError(f"dimensions are not unique: {tuple(axes)}")   # (JAX's)
        for ax in axes:
            if a.shape[ax] != 1:
                raise ValueError(f"cannot select an axis to squeeze out which has size not "
                                 f"equal to one, got shape={a.shape} and dimensions={tuple(axes)}")
    return _fresh(lax.squeeze(a, axes))


def atleast_1d(*arys):
    out = [reshape(a, (1,)) if asarray(a).ndim == 0 else _fresh(asarray(a)) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = []
    for a in arys:
        a = asarray(a)
        out.append(reshape(a, (1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a)
    return out[0] if len(out) == 1 else out


@fused_when_eager
def concatenate(arrays, axis=0, dtype=None):
    if _prng.any_keys(arrays):
        return _prng.concatenate_keys(list(arrays), axis)
    arrays = [asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    if builtins.any(a.ndim == 0 for a in arrays):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    arrays = promote("concatenate", *arrays, broadcast=False) if len(arrays) > 1 and len(
        {a.dtype for a in arrays}) > 1 else arrays
    if dtype is not None:
        arrays = [astype(a, dtype) for a in arrays]
    return lax.concatenate(arrays, normalize_axis(axis, arrays[0].ndim))


@fused_when_eager
def stack(arrays, axis=0, out=None, dtype=None):
    if not len(arrays):
        raise ValueError("Need at least one array to stack.")
    no_out("stack", out)
    if is_array(arrays) or isinstance(arrays, _onp.ndarray):
        # (one array: its leading axis is the list, stacked without unstacking it)
        return _stack_array(arrays, axis, dtype)
    if _prng.any_keys(arrays):
        return _prng.stack_keys(list(arrays), axis)
    arrays = [asarray(a) for a in arrays]
    if dtype is not None:
        arrays = [astype(a, dtype) for a in arrays]
    elif len(arrays) > 1 and len({(a.dtype, a.weak_type) for a in arrays}) > 1:
        arrays = promote("stack", *arrays, broadcast=False)
    return lax.stack(arrays, axis)


def _stack_array(arr, axis, dtype):
    """jnp.stack of the slices of one array along its leading axis: that axis moved next
    to the new one and merged with it by one reshape (JAX's fast path)."""
    arr = asarray(arr) if dtype is None else astype(asarray(arr), dtype)
    ax = index_axis(axis, arr.ndim)
    arr = expand_dims(arr, ax + 1)
    shape = arr.shape[1:ax + 1] + (arr.shape[0] * arr.shape[ax + 1],) + arr.shape[ax + 2:]
    dims = (*range(1, ax + 1), 0, *range(ax + 1, arr.ndim))
    return lax.reshape(arr, shape, None if ax == 0 else dims)


def hstack(tup, dtype=None):
    arrs = [atleast_1d(a) for a in tup]
    return concatenate(arrs, axis=0 if arrs[0].ndim == 1 else 1, dtype=dtype)


def vstack(tup, dtype=None):
    return concatenate([atleast_2d(a) for a in tup], axis=0, dtype=dtype)


def column_stack(tup):
    return concatenate([a if asarray(a).ndim > 1 else reshape(a, (-1, 1)) for a in tup], 1)


def _split(name, ary, indices_or_sections, axis):
    """Pieces between the bounds [0, *indices, size] (as JAX: a negative size between two
    bounds is an error), or sections of equal size (array_split: the first size % sections pieces
    one longer)."""
    ary = asarray(ary)
    axis = operator.index(axis)
    size = ary.shape[axis]  # (an axis out of range: IndexError, as JAX)
    if isinstance(indices_or_sections, (tuple, list)) or _onp.ndim(indices_or_sections) > 0:
        bounds = [0] + [concrete_int(i, f"{name}: the split indices must be static")
                        for i in indices_or_sections] + [size]
        # (array_split too, as JAX's: no NumPy clamping of negative or decreasing indices)
        sizes = [hi - lo for lo, hi in zip(bounds[:-1], bounds[1:])]
        if any(s < 0 for s in sizes):
            raise ValueError(f"Sizes passed to split must be nonnegative, got {sizes}")
    else:
        n = concrete_int(indices_or_sections, f"{name}: the number of sections must be static")
        part, rest = divmod(size, n)  # (0 sections: ZeroDivisionError, as JAX)
        if rest and name == "split":
            raise ValueError(f"array split does not result in an equal division: rest is "
                             f"{rest}")
        sizes = [part + 1] * rest + [part] * (n - rest)
    return lax.split(ary, sizes, axis)


def split(ary, indices_or_sections, axis=0):
    return _split("split", ary, indices_or_sections, axis)


@fused_when_eager
def flip(m, axis=None):
    m = asarray(m)
    return lax.rev(m, normalize_axes(axis, m.ndim))


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


@fused_when_eager
def concat(arrays, /, *, axis=0):
    """JAX: jnp.concat (the array API's concatenate)."""
    return concatenate(arrays, axis=axis)


def matrix_transpose(x, /):
    ndim = _onp.ndim(x)
    if ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={ndim}")
    return swapaxes(x, -1, -2)


@fused_when_eager
def roll(a, shift, axis=None):
    a = asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    shifts = (shift,) if isinstance(shift, int) or _onp.ndim(shift) == 0 else tuple(shift)
    axes = (axis,) if isinstance(axis, int) or _onp.ndim(axis) == 0 else tuple(axis)
    axes = tuple(concrete_int(ax, "roll: axis must be static") for ax in axes)
    if len(shifts) != len(axes):
        shifts = shifts * len(axes) if len(shifts) == 1 else shifts
    for s, ax in zip(shifts, axes):
        if isinstance(s, Tracer) or (hasattr(s, "aval") and not isinstance(s, int)):
            a = roll_dynamic(a, s, normalize_axis(ax, a.ndim))
            continue
        ax = normalize_axis(ax, a.ndim)
        n = a.shape[ax]
        if n == 0:
            continue
        s = int(s) % n
        if s:
            a = concatenate([lax.slice_in_dim(a, n - s, n, 1, ax),
                             lax.slice_in_dim(a, 0, n - s, 1, ax)], axis=ax)
    return _fresh(a)


def atleast_3d(*arys):
    out = []
    for a in arys:
        a = asarray(a)
        if a.ndim == 0:
            a = reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = reshape(a, (1, a.shape[0], 1))
        elif a.ndim == 2:
            a = expand_dims(a, 2)
        out.append(a)
    return out[0] if len(out) == 1 else out


def rollaxis(a, axis, start=0):
    """Moves axis to position `start`. JAX: jnp.rollaxis."""
    a = asarray(a)
    n = a.ndim
    axis = index_axis(axis, n)
    if not -n <= start <= n:
        raise ValueError(f"start={start} must satisfy {-n}<=start<={n}")
    start = start + n if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


@fused_when_eager
def unstack(x, /, *, axis=0):
    """The slices of x along axis, as a tuple. JAX: jnp.unstack."""
    return lax.unstack(asarray(x), axis)


def trim_zeros(filt, trim="fb", axis=None):
    """filt without its leading ('f') and/or trailing ('b') zero slices along `axis` (all
    axes when None): along each axis, the slices whose every element is zero. JAX:
    jnp.trim_zeros."""
    filt = asarray(filt)
    host = concrete(filt, "trim_zeros", "the output size depends on the values")
    ndim = host.ndim
    axes = range(ndim) if axis is None else (
        axis if isinstance(axis, (tuple, list)) else (axis,))
    axes = {index_axis(a, ndim) for a in axes}
    trim = trim.lower()
    if not axes or ("f" not in trim and "b" not in trim):
        return filt
    index = []
    for ax in range(ndim):
        if ax not in axes:
            index.append(slice(None))
            continue
        kept = _onp.flatnonzero(host.any(axis=tuple(i for i in range(ndim) if i != ax)))
        if kept.size == 0:
            index.append(slice(0, 0))
            continue
        index.append(slice(int(kept[0]) if "f" in trim else None,
                           int(kept[-1]) + 1 if "b" in trim else None))
    return filt[tuple(index)]


def block(arrays):
    """An array assembled from nested lists of blocks: the innermost lists joined along
    the last axis, the next ones along the second-last, ...; each level first gives its
    blocks leading unit dims up to its depth (JAX's order of ops). JAX: jnp.block."""
    def assemble(x):
        if isinstance(x, tuple):
            raise ValueError(f"jax.numpy.block does not allow tuples, got {x}")
        if not isinstance(x, list):
            return asarray(x), 1
        if not x:
            raise ValueError("jax.numpy.block does not allow empty list arguments")
        parts, depths = zip(*(assemble(y) for y in x))
        if any(d != depths[0] for d in depths):
            raise ValueError("Mismatched list depths in jax.numpy.block")
        rank = max(depths[0], max(p.ndim for p in parts))
        parts = [lax.broadcast(p, (1,) * (rank - p.ndim)) if p.ndim < rank else p
                 for p in parts]
        return concatenate(parts, axis=-depths[0]), depths[0] + 1
    return assemble(arrays)[0]


def rot90(m, k=1, axes=(0, 1)):
    """m rotated by 90 degrees k times in the plane of `axes`. JAX: jnp.rot90."""
    m = asarray(m)
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
        return flip(flip(m, ax1), ax2)
    perm = list(range(m.ndim))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return transpose(flip(m, ax2), perm)
    return flip(transpose(m, perm), ax2)


def dstack(tup, dtype=None):
    """Stacks arrays along the third axis (after making them at least 3-d). JAX: jnp.dstack."""
    arrays = [atleast_3d(a) for a in tup]
    return concatenate(arrays, axis=2, dtype=dtype)


def array_split(ary, indices_or_sections, axis=0):
    """Splits into sub-arrays; a number of sections need not divide the axis (the first
    len % n pieces get one more element). JAX: jnp.array_split."""
    return _split("array_split", ary, indices_or_sections, axis)


def _split_along(name, ary, indices_or_sections, axis, min_ndim):
    ary = asarray(ary)
    if ary.ndim < min_ndim:
        raise ValueError(f"{name} only works on arrays of {min_ndim} or more dimensions")
    return split(ary, indices_or_sections, axis=axis)


def hsplit(ary, indices_or_sections):
    """split along axis 1 (axis 0 for 1-d arrays). JAX: jnp.hsplit."""
    ary = asarray(ary)
    return _split_along("hsplit", ary, indices_or_sections, 1 if ary.ndim > 1 else 0, 1)


def vsplit(ary, indices_or_sections):
    """split along axis 0 (1-d arrays too, as JAX's). JAX: jnp.vsplit."""
    return _split_along("vsplit", ary, indices_or_sections, 0, 1)


def dsplit(ary, indices_or_sections):
    """split along axis 2 of an array of 3 or more dimensions. JAX: jnp.dsplit."""
    return _split_along("dsplit", ary, indices_or_sections, 2, 3)


def roll_dynamic(a, shift, axis):
    """roll along one axis by a traced shift: a window of the array doubled along axis."""
    n = a.shape[axis]
    if n == 0:
        return a
    shift = asarray(shift)
    if shift.ndim != 0 or not _dt.issubdtype(shift.dtype, _onp.integer):
        raise TypeError(at_user_line(f"roll: a traced shift must be an integer scalar, got "
                                     f"{shift.dtype}{list(shift.shape)}"))
    start = (-shift) % n
    doubled = concatenate([a, a], axis=axis)
    return lax.dynamic_slice_in_dim(doubled, start.astype(_dt.default_int()), n, axis)
