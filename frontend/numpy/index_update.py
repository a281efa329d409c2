"""Indexed updates: `x.at[idx].set(v)`, `.add`, `.multiply`, `.min`, `.max`, `.apply`, ...

An index made of integers, integer arrays, slices and None becomes one `scatter` into
x itself, with the dimension numbers of the `gather` that reads `x[idx]` (the scatter is
that gather's transpose, as JAX builds it): integer indices pick collapsed dimensions,
unit-step slices are windows, other steps are iotas of positions, and integer arrays
broadcast together into the scatter's batch dimensions. XLA then updates x in place.

What this plan does not cover (jax.ds windows, scalar boolean masks, mode="clip",
symbolic axis sizes) takes the general path: the flat positions of an iota read with
the same index (`getitem`), then a 1-d scatter into the flattened x. Both follow
NumPy's rules for which elements an index selects.
"""
from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from mjax.specs import dtypes as _dt
from mjax import lax
from mjax.config import config
from mjax.tracing.core import at_user_line, aval_of_value
from mjax.dialect.shape_poly import is_symbolic_dim
from mjax.lax.sharding import takes_out_sharding
from mjax.numpy.conversion import asarray
from mjax.numpy.creation import arange, ones_like
from mjax.numpy.elementwise import divide, negative, power
from mjax.numpy.indexing import (_is_advanced, _is_int_scalar,
                                 _normalize_index, _wrap_negative, getitem)
from mjax.numpy.promotion import broadcast_shapes, broadcast_to, promote
from mjax.numpy.shaping import ravel, reshape, squeeze
from mjax.specs.ref_slice import Slice

_SCATTERS = {"set": lax.scatter, "add": lax.scatter_add, "mul": lax.scatter_mul,
             "min": lax.scatter_min, "max": lax.scatter_max}

# scatters into the flattened array at one position per update (the general path)
_FLAT_SCATTER = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                            scatter_dims_to_operand_dims=(0,))


class ScatterPlan(NamedTuple):
    """How `x.at[idx]` scatters: the update is broadcast to `slice_shape` (the shape of
    `x[idx]`), its `newaxis_dims` (from None) squeezed away and its `reversed_dims`
    (negative-step slices) reversed, then scattered with `indices` and `dnums`."""
    indices: object
    dnums: lax.ScatterDimensionNumbers
    slice_shape: tuple
    newaxis_dims: tuple
    reversed_dims: tuple
    basic: bool         # no integer arrays: every position is written at most once


def _plannable(shape, idx) -> bool:
    return not any(is_symbolic_dim(n) for n in shape) and all(
        i is None or isinstance(i, slice) or _is_int_scalar(i)
        or (hasattr(i, "dtype") and type(i) is not Slice) for i in idx)


def _broadcast_together(arrays):
    shape = broadcast_shapes(*(a.shape for a in arrays))
    return [broadcast_to(a, shape) for a in arrays], tuple(shape)


def scatter_plan(shape, idx) -> ScatterPlan | None:
    """The scatter writing `x[idx]` for an x of `shape` (idx normalized by
    `_normalize_index`), or None when the index needs the general path."""
    if not _plannable(shape, idx):
        return None
    advanced = any(_is_advanced(i) and np.ndim(i) > 0 for i in idx)
    adv_at = [k for k, i in enumerate(idx) if advanced and i is not None
              and not isinstance(i, slice)]
    contiguous = adv_at == list(range(adv_at[0], adv_at[0] + len(adv_at))) if adv_at else True
    block_at = (adv_at[0] if contiguous else 0) if adv_at else -1
    indices = []            # (int32 array, its first dimension in the indices' shape)
    batch_shape: list = []  # the indices' shape, without the index vector dimension
    slice_shape, newaxis, reversed_dims = [], [], []
    offset_dims, collapsed, index_map = [], [], []
    x_axis = y_axis = window_axis = 0
    for k, i in enumerate(idx):
        if k == block_at:   # the integer arrays' broadcast shape: the batch dimensions
            x_axes = [sum(1 for j in idx[:m] if j is not None) for m in adv_at]
            # (a static int among them: a weak int broadcast, then made int32, as JAX)
            arrays, bshape = _broadcast_together(
                [asarray(int(p) if isinstance(p, np.integer) else p)
                 for p in (_position(idx[m], shape[a]) for m, a in zip(adv_at, x_axes))])
            indices += [(lax.convert_element_type(a, np.int32), len(batch_shape))
                        for a in arrays]
            batch_shape += bshape
            index_map += x_axes
            collapsed += x_axes
            slice_shape += bshape
            y_axis += len(bshape)
            window_axis += len(bshape)
        if k in adv_at:
            x_axis += 1
        elif i is None:
            slice_shape.append(1)
            newaxis.append(y_axis)
            y_axis += 1
        elif isinstance(i, slice):
            n = shape[x_axis]
            start, stop, step = i.indices(n)
            size = len(range(start, stop, step))
            slice_shape.append(size)
            if step == 1:
                if size != n:
                    indices.append((np.int32(start), len(batch_shape)))
                    index_map.append(x_axis)
                offset_dims.append(window_axis)
            else:
                positions = np.arange(start, stop, step, dtype=np.int32)
                if step < 0:    # (written in ascending order, the update reversed)
                    reversed_dims.append(window_axis)
                    positions = positions[::-1].copy()
                indices.append((positions, len(batch_shape)))
                batch_shape.append(size)
                collapsed.append(x_axis)
                index_map.append(x_axis)
            window_axis += 1
            y_axis += 1
            x_axis += 1
        else:               # an integer (static or a 0-d array): a collapsed dimension
            if shape[x_axis] == 0:
                raise IndexError(at_user_line(
                    f"index is out of bounds for axis {x_axis} with size 0"))
            j = _position(i, shape[x_axis])
            if not isinstance(j, np.integer):    # (a weak traced index made int32, as JAX)
                j = lax.convert_element_type(j, np.int32)
            indices.append((j, len(batch_shape)))
            collapsed.append(x_axis)
            index_map.append(x_axis)
            x_axis += 1
    dnums = lax.ScatterDimensionNumbers(update_window_dims=tuple(offset_dims),
                                        inserted_window_dims=tuple(sorted(collapsed)),
                                        scatter_dims_to_operand_dims=tuple(index_map))
    return ScatterPlan(_index_array(indices, batch_shape), dnums, tuple(slice_shape),
                       tuple(newaxis), tuple(reversed_dims), not advanced)


def _index_array(indices, batch_shape):
    """The scatter's indices: each part broadcast over the batch dimensions from its
    first one, along a last (index vector) dimension."""
    if not indices:
        return np.zeros((0,), np.int32)
    full = tuple(batch_shape) + (1,)
    if len(indices) == 1:
        a, _ = indices[0]
        return lax.expand_dims(asarray(a), (np.ndim(a),))
    return lax.concatenate([lax.broadcast_in_dim(a, full, tuple(range(k, k + np.ndim(a))))
                            for a, k in indices], len(batch_shape))


def _static_position(i, n) -> np.int32:
    """A static integer index as a position (negatives wrapped, unsigned ones not), held
    in int32: one out of range stays out of range, which the scatter drops."""
    k = int(i)
    if k < 0 and not isinstance(i, np.unsignedinteger):
        k += n
    info = np.iinfo(np.int32)
    return np.int32(min(max(k, info.min), info.max))


def _position(i, n):
    return _static_position(i, n) if _is_int_scalar(i) else _wrap_negative(asarray(i), n)


def _warn_unsafe_cast(values, dtype) -> None:
    """JAX's FutureWarning for update values x's dtype cannot hold (they are cast)."""
    if values.dtype != dtype and _dt.result_type(values, dtype) != dtype:
        warnings.warn(
            f"scatter inputs have incompatible types: cannot safely cast value from "
            f"dtype={values.dtype} to dtype={dtype} with jax_numpy_dtype_promotion="
            f"{config.jax_numpy_dtype_promotion}. In future JAX releases this will result "
            f"in an error.", FutureWarning, stacklevel=4)


def _scatter_mode(mode):
    return lax._mode(mode, "fill")


class _IndexUpdateHelper:
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, idx):
        return _IndexUpdateRef(self.array, idx)


# (x.at[idx].get(out_sharding=...): the gather's result laid out as the caller says, which
# under Explicit mesh axes resolves what the gather alone could not)
_getitem_laid_out = takes_out_sharding(getitem)


class _IndexUpdateRef:
    """x.at[idx]: .get(), .set(v), .add(v), .multiply(v), .min(v), .max(v), ..."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None, out_sharding=None, wrap_negative_indices=True):
        # (indices_are_sorted / unique_indices are promises that let XLA pick a faster
        # gather; mjax's gathers are correct without them)
        if not wrap_negative_indices:
            raise NotImplementedError("x.at[...].get: wrap_negative_indices=False is not "
                                      "supported")
        return _getitem_laid_out(self.array, self.index, mode=mode, fill_value=fill_value,
                                 out_sharding=out_sharding)

    def _plan(self, x, mode):
        if _scatter_mode(mode) == "clip":   # (clamped positions: the general path)
            return None
        return scatter_plan(x.shape, _normalize_index(x.shape, self.index))

    def _positions(self, x, mode):
        """The flat positions of x the index selects, in the index's result shape.
        mode="clip" clamps indices to the array's bounds (as a clipped gather of the
        positions does); otherwise out-of-bounds entries get position x.size (-1 for a
        symbolic size), which the scatter then drops."""
        positions = arange(x.size, dtype=_dt.int32).reshape(x.shape)
        clip = _scatter_mode(mode) == "clip"
        # (a symbolic size is no fill value: -1 is out of bounds as well)
        return getitem(positions, self.index, mode="clip" if clip else "fill",
                       fill_value=-1 if is_symbolic_dim(x.size) else x.size)

    def _update(self, kind, values, mode, unique_indices=False, indices_are_sorted=False):
        x = asarray(self.array)
        if not x.size:
            return x
        if (isinstance(values, int) and not isinstance(values, bool)
                and _dt.issubdtype(x.dtype, np.integer)
                and np.iinfo(x.dtype).min <= values <= np.iinfo(x.dtype).max):
            values = asarray(values, dtype=x.dtype)
        else:
            values = asarray(values)
        _warn_unsafe_cast(values, x.dtype)
        plan = self._plan(x, mode)
        if plan is None:
            return self._flat_update(x, kind, values, mode, unique_indices)
        if 0 in plan.slice_shape:
            return x
        # As JAX: the update runs in the promoted dtype, cast back to x's type after.
        aval = aval_of_value(x)
        xp, values = promote("at", x, values, broadcast=False)
        values = broadcast_to(values, plan.slice_shape)
        if plan.newaxis_dims:
            values = squeeze(values, plan.newaxis_dims)
        if plan.reversed_dims:
            values = lax.rev(values, plan.reversed_dims)
        out = _SCATTERS[kind](xp, plan.indices, values, plan.dnums,
                              indices_are_sorted=plan.basic or bool(indices_are_sorted),
                              unique_indices=plan.basic or bool(unique_indices),
                              mode=_scatter_mode(mode))
        return lax.convert_element_type(out, aval.dtype, weak_type=aval.weak_type)

    def _flat_update(self, x, kind, values, mode, unique_indices):
        aval = aval_of_value(x)
        pos = self._positions(x, mode)
        # (in the promoted dtype and cast back, as the planned scatter)
        xp, values = promote("at", x, values, broadcast=False)
        values = broadcast_to(values, pos.shape)
        out = _SCATTERS[kind](ravel(xp), reshape(pos, (-1, 1)), ravel(values), _FLAT_SCATTER,
                              mode="fill",
                              unique_indices=bool(unique_indices) or self._static_index())
        return lax.convert_element_type(reshape(out, x.shape), aval.dtype,
                                        weak_type=aval.weak_type)

    def _static_index(self):
        """Ints, slices, Ellipsis and None only: each position is selected at most once,
        so the scatter's indices are unique (as JAX marks them: scatter_mul's gradient
        needs it)."""
        parts = self.index if isinstance(self.index, tuple) else (self.index,)
        return all(p is None or p is Ellipsis or isinstance(p, slice)
                   or (isinstance(p, (int, np.integer)) and not isinstance(p, bool))
                   for p in parts)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            **kw):
        return self._update("set", values, mode, unique_indices, indices_are_sorted)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None,
              **kw):
        """x with the elementwise func applied at the index, once per occurrence of an
        entry in it (as JAX's scatter_apply)."""
        x = asarray(self.array)
        if not x.size:
            return x
        plan = self._plan(x, mode)
        if plan is None:
            pos = self._positions(x, mode)
            out = lax.scatter_apply(ravel(x), reshape(pos, (-1, 1)), func, _FLAT_SCATTER,
                                    update_shape=(pos.size,), mode="fill")
            return reshape(out, x.shape)
        if 0 in plan.slice_shape:
            return x
        update_shape = tuple(n for d, n in enumerate(plan.slice_shape)
                             if d not in plan.newaxis_dims)
        return lax.scatter_apply(x, plan.indices, func, plan.dnums, update_shape=update_shape,
                                 indices_are_sorted=plan.basic or bool(indices_are_sorted),
                                 unique_indices=plan.basic or bool(unique_indices),
                                 mode=_scatter_mode(mode))

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            **kw):
        return self._update("add", values, mode, unique_indices, indices_are_sorted)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 **kw):
        return self._update("add", negative(values), mode, unique_indices,
                            indices_are_sorted)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 **kw):
        return self._update("mul", values, mode, unique_indices, indices_are_sorted)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
               **kw):
        # As JAX: x / (ones with `values` multiplied in at idx), so other entries are
        # divided by exactly 1 (and an integer x gives a float result).
        ones = _IndexUpdateRef(ones_like(self.array), self.index)
        return divide(self.array, ones._update("mul", values, mode, unique_indices,
                                               indices_are_sorted))

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
              **kw):
        # As JAX: x ** (ones with `values` multiplied in at idx).
        ones = _IndexUpdateRef(ones_like(self.array), self.index)
        return power(self.array, ones._update("mul", values, mode, unique_indices,
                                              indices_are_sorted))

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            **kw):  # noqa: A003
        return self._update("min", values, mode, unique_indices, indices_are_sorted)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            **kw):  # noqa: A003
        return self._update("max", values, mode, unique_indices, indices_are_sorted)
