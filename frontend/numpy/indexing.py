"""NumPy indexing (`x[idx]`), `take` and `take_along_axis`.

Static slices become `slice`/`rev`, integers `slice`/`dynamic_slice` + `squeeze`, and
integer-array (advanced) indices one `gather`. Indexed updates (`x.at[idx].set(v)`) are
in index_update.py.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from mjax.specs import dtypes as _dt
from mjax import lax
from mjax.tracing.core import Tracer, at_user_line
from mjax.dialect.shape_poly import (InconclusiveDimensionOperation, is_symbolic_dim,
                                     max_dim, min_dim)
from mjax.base.errors import NonConcreteBooleanIndexError
from mjax.numpy.arguments import AxisError, index_axis, normalize_axis
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.concrete_values import known
from mjax.numpy.conversion import asarray
from mjax.numpy.creation import zeros
from mjax.numpy.elementwise import where_xy
from mjax.numpy.promotion import broadcast_shapes
from mjax.numpy.shaping import ravel, reshape
from mjax.specs.ref_slice import Slice


def _is_int_scalar(i):
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _check_index_types(idx):
    """JAX's TypeErrors for a string index and a list (a non-tuple sequence) index."""
    if isinstance(idx, str):
        raise TypeError(f"JAX does not support string indexing; got idx={idx!r}")
    if isinstance(idx, list):
        nested = any(i is None or i is Ellipsis or isinstance(i, (slice, list, tuple))
                     or getattr(i, "ndim", 0) > 0 for i in idx)
        use = "arr[tuple(seq)]" if nested else "arr[array(seq)]"
        raise TypeError(
            "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
            f"`{use}` instead of `arr[seq]`. See https://github.com/jax-ml/jax/issues/4564 "
            "for more information.")


def _check_indexer_dtype(i):
    """An index that is neither a slice/None/Ellipsis nor of integer or boolean type (a
    float, a string array) is a TypeError, as in JAX."""
    if i is None or i is Ellipsis or isinstance(i, (slice, Slice)):
        return
    if isinstance(i, str):
        raise TypeError(f"JAX does not support string indexing; got idx={i!r}")
    dtype = getattr(i, "dtype", None)
    if dtype is None:
        if isinstance(i, (bool, int, np.integer, np.bool_)):
            return
        dtype = np.asarray(i).dtype
    dtype = np.dtype(dtype) if not isinstance(dtype, np.dtype) else dtype
    if not (np.issubdtype(dtype, np.integer) or dtype == np.bool_):
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                        f"{dtype}")


def _static_slice(i: slice, position: int) -> slice:
    """`i` with traced entries whose values are known (inside an eager grad) made
    concrete; other traced entries are JAX's IndexError (a slice's size must be static)."""
    parts = (i.start, i.stop, i.step)
    if not any(isinstance(p, Tracer) for p in parts):
        return i
    parts = [known(p) for p in parts]
    if any(isinstance(p, Tracer) for p in parts):
        raise IndexError(f"Slice entries must be static integers. Got {i} at position "
                         f"{position}")
    return slice(*parts)


def _normalize_index(x_shape, idx):
    """Expands Ellipsis, turns bool masks into integer arrays, lists into arrays."""
    _check_index_types(idx)
    if not isinstance(idx, tuple):
        idx = (idx,)
    out = []
    for position, i in enumerate(idx):
        if isinstance(i, list):
            i = asarray(i)
        if isinstance(i, slice):
            i = _static_slice(i, position)
        _check_indexer_dtype(i)
        if isinstance(i, Tracer) and i.dtype == np.bool_:
            i = known(i)        # a mask JAX knows (inside an eager grad) indexes as concrete
        if isinstance(i, (bool, np.bool_)) or (
                getattr(i, "ndim", None) == 0 and getattr(i, "dtype", None) == np.bool_):
            # A scalar mask adds an axis of length 1 (True) or 0 (False), as in NumPy.
            if isinstance(i, Tracer):
                raise NonConcreteBooleanIndexError(i)
            out.append(_ScalarMask(bool(i)))
            continue
        if hasattr(i, "dtype") and not isinstance(i, slice) and np.dtype(i.dtype) == np.bool_ \
                and getattr(i, "ndim", 0) >= 0 and not _is_int_scalar(i):
            if isinstance(i, Tracer):
                raise NonConcreteBooleanIndexError(i)
            out.extend(asarray(n) for n in np.nonzero(np.asarray(i)))
            continue
        out.append(i)
    n_ellipsis = sum(1 for i in out if i is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for i in out if i is not None and i is not Ellipsis
                   and not isinstance(i, _ScalarMask))
    if consumed > len(x_shape):
        raise IndexError(at_user_line(
            f"Too many indices for array: {consumed} non-None/Ellipsis indices "
            f"for dim {len(x_shape)}."))
    if n_ellipsis:
        k = next(k for k, i in enumerate(out) if i is Ellipsis)  # (list.index compares
        #                                                   arrays with ==)
        out = out[:k] + [slice(None)] * (len(x_shape) - consumed) + out[k + 1:]
    else:
        out += [slice(None)] * (len(x_shape) - consumed)
    return out


class _ScalarMask:
    """A 0-d boolean index: a new axis, indexed by [0] (True) or [] (False)."""

    __slots__ = ("value",)

    def __init__(self, value: bool):
        self.value = value

    def as_index(self):
        return zeros((1 if self.value else 0,), _dt.default_int())


def _is_advanced(i):
    return not (i is None or isinstance(i, slice) or _is_int_scalar(i))


def getitem(x, idx, *, mode=None, fill_value=None):
    """x[idx] with NumPy semantics. Out-of-bounds array indices are clamped (JAX)."""
    x = asarray(x)
    idx = _normalize_index(x.shape, idx)
    mode = lax._mode(mode, None)        # (an unknown mode is JAX's ValueError)
    gather_ints = mode == "fill"
    if not gather_ints and _is_static_basic(x, idx):
        return _static_getitem(x, idx)
    # 1. None -> new size-1 axis (then a full slice over it).
    new_axes = [k for k, i in enumerate(idx) if i is None or isinstance(i, _ScalarMask)]
    if new_axes:
        x = lax.expand_dims(x, new_axes)
        idx = [slice(None) if i is None else i.as_index() if isinstance(i, _ScalarMask)
               else i for i in idx]
    # jax.ds(start, size, stride): the window gathered from a (wrapped) start, as JAX
    # does (clamped into the axis, or filled when mode="fill": an update drops it).
    for d, i in enumerate(idx):
        if type(i) is Slice:
            x, idx[d] = _window(x, d, i, mode, fill_value), slice(None)
    # An out-of-bounds static integer is clamped like a traced one (JAX indexes with it
    # through dynamic_slice, so checkify's index checks see it); an empty axis raises.
    # (Along a symbolic axis, an integer the constraints do not place in bounds is one too.)
    idx = [_out_of_bounds_as_array(i, n, d) if _is_int_scalar(i) and not _in_bounds(i, n)
           else i for d, (i, n) in enumerate(zip(idx, x.shape))]
    any_array = any(_is_advanced(i) for i in idx)
    if (not any_array and not gather_ints and not isinstance(x, Tracer)
            and any(_is_int_scalar(i) for i in idx)
            and all(_is_int_scalar(i) or i == slice(None) for i in idx)):
        return _eager_int_index(x, idx)
    # 2. Static slices and (when no arrays) static ints -> lax.slice / rev / squeeze.
    starts, limits, strides, rev_dims, squeeze_dims = [], [], [], [], []
    for d, (i, n) in enumerate(zip(idx, x.shape)):
        if isinstance(i, slice) and is_symbolic_dim(n):
            s, e, st, reverse = _symbolic_slice(i, n)
            if reverse:
                rev_dims.append(d)
            starts.append(s), limits.append(e), strides.append(st)
        elif isinstance(i, slice):
            s, e, st = i.indices(n)
            if st < 0:
                # Reverse, then slice forward: x[s:e:-k] == rev(x)[n-1-s : n-1-e : k].
                rev_dims.append(d)
                s, e, st = n - 1 - s, n - 1 - e, -st
            cnt = max(0, (e - s + st - 1) // st)
            starts.append(s), limits.append(s + max(cnt - 1, 0) * st + (1 if cnt else 0))
            strides.append(st)
        elif _is_int_scalar(i) and not any_array and not gather_ints:
            k = int(i) + n if i < 0 else int(i)   # (in bounds: see _out_of_bounds_as_array)
            starts.append(k), limits.append(k + 1), strides.append(1)
            squeeze_dims.append(d)
        else:
            starts.append(0), limits.append(n), strides.append(1)
    if rev_dims:
        x = lax.rev(x, rev_dims)
    if starts != [0] * x.ndim or limits != list(x.shape) or strides != [1] * x.ndim:
        x = lax.slice(x, starts, limits, strides if any(s != 1 for s in strides) else None)
    idx = [slice(None) if isinstance(i, slice) or d in squeeze_dims else i
           for d, i in enumerate(idx)]
    dyn = [d for d, i in enumerate(idx) if _is_advanced(i) or _is_int_scalar(i)]
    if not dyn:
        return lax.squeeze(x, squeeze_dims)
    # 3. Traced scalar ints only -> dynamic_slice (clamped) + squeeze.
    if not gather_ints and all(np.ndim(idx[d]) == 0 and not _is_int_scalar(idx[d])
                               for d in dyn) and not any(_is_int_scalar(idx[d]) for d in dyn):
        starts = [0] * x.ndim
        sizes = list(x.shape)
        for d in dyn:
            starts[d] = _int32_index(asarray(idx[d]))  # (dynamic_slice wraps negatives)
            sizes[d] = 1
        return lax.squeeze(lax.dynamic_slice(x, starts, sizes), sorted(squeeze_dims + dyn))
    # JAX gathers with "promise_in_bounds" by default: the gather clamps, and its transpose
    # (a scatter) drops the cotangents of out-of-range indices.
    out = _advanced_gather(x, idx, dyn, mode or "promise_in_bounds", fill_value)
    return lax.squeeze(out, squeeze_dims) if squeeze_dims else out


def _is_static_basic(x, idx) -> bool:
    """Static slices, None and in-bounds static ints on a traced x (concrete arrays
    index with ints through _eager_int_index) along axes of known size."""
    if any(is_symbolic_dim(n) for n in x.shape):
        return False
    has_int, axis = False, 0
    for i in idx:
        if i is None:
            continue
        if _is_int_scalar(i):
            if not -x.shape[axis] <= i < x.shape[axis]:
                return False
            has_int = True
        elif type(i) is not slice:
            return False
        axis += 1
    return isinstance(x, Tracer) or not has_int


def _static_getitem(x, idx):
    """x[idx] for a static basic index, as JAX stages it: one `slice` (a negative step
    slices forward, then `rev`), `squeeze` for the ints, new axes for None last."""
    starts, limits, strides, rev, squeeze_dims, new_axes = [], [], [], [], [], []
    axis = 0
    for i in idx:
        if i is None:   # (its position in the result: after the kept axes before it)
            new_axes.append(len(starts) - len(squeeze_dims) + len(new_axes))
            continue
        n = x.shape[axis]
        if _is_int_scalar(i):
            k = int(i) + n if i < 0 else int(i)
            starts.append(k), limits.append(k + 1), strides.append(1)
            squeeze_dims.append(axis)
        else:
            start, stop, step = i.indices(n)
            if step < 0:    # (the first element taken forward: the last one backward)
                first = min(n, stop + 1 + abs(start - stop - 1) % -step)
                starts.append(first), limits.append(max(first, start + 1))
                strides.append(-step), rev.append(axis)
            else:
                starts.append(start), limits.append(max(start, stop)), strides.append(step)
        axis += 1
    if starts != [0] * x.ndim or limits != list(x.shape) or strides != [1] * x.ndim:
        x = lax.slice(x, starts, limits, strides if any(s != 1 for s in strides) else None)
    if rev:
        x = lax.rev(x, rev)
    if squeeze_dims:
        x = lax.squeeze(x, squeeze_dims)
    return lax.expand_dims(x, new_axes) if new_axes else x


def _window(x, d, i: Slice, mode, fill_value):
    """x's window along axis d selected by jax.ds `i`."""
    if i.is_dynamic_size:
        raise TypeError(f"jax.ds with a traced size ({i.size!r}) cannot index an array: "
                        f"its shape would not be static (only a Pallas kernel's DMAs "
                        f"copy ref views of traced size)")
    span = (i.size - 1) * i.stride + 1 if i.size else 0
    start = reshape(_wrap_negative(asarray(i.start), x.shape[d]), (1,))
    dnums = lax.GatherDimensionNumbers(offset_dims=tuple(range(x.ndim)),
                                       collapsed_slice_dims=(), start_index_map=(d,))
    sizes = [span if k == d else n for k, n in enumerate(x.shape)]
    out = lax.gather(x, start, dnums, sizes, mode=mode or "promise_in_bounds",
                     fill_value=fill_value)
    return out if i.stride == 1 else lax.slice_in_dim(out, 0, span, i.stride, axis=d)


def _symbolic_slice(i: slice, n) -> tuple:
    """(start, limit, step, reversed) of a slice of an axis of symbolic size n: the
    bounds clamped with max/min of dimensions (which simplify where the constraints
    decide); a negative step slices the reversed axis forward."""
    step = 1 if i.step is None else operator.index(i.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")

    def bound(v, default, lo):
        if v is None:
            return default
        v = v if is_symbolic_dim(v) else operator.index(v)
        if not is_symbolic_dim(v) and v < 0:
            v = n + v
        return min_dim(max_dim(v, lo), n if lo == 0 else n - 1)
    if step > 0:
        start = bound(i.start, 0, 0)
        return start, max_dim(bound(i.stop, n, 0), start), step, False
    # x[start:stop:-k] == rev(x)[n-1-start : n-1-stop : k], bounds in [-1, n - 1]
    start = n - 1 - bound(i.start, n - 1, -1)
    return start, max_dim(n - 1 - bound(i.stop, -1, -1), start), -step, True


def _in_bounds(i, n) -> bool:
    try:
        return -n <= i < n
    except InconclusiveDimensionOperation:
        return False


def _out_of_bounds_as_array(i, n, d):
    """An out-of-bounds static index `i` into axis `d` (size n) as an int32 array index,
    which dynamic_slice/gather clamp as JAX does; an empty axis has nothing to clamp to."""
    if n == 0:
        raise IndexError(at_user_line(
            f"index {int(i)} is out of bounds for axis {d} with size {n}"))
    info = np.iinfo(np.int32)
    return np.asarray(min(max(int(i), info.min), info.max), np.int32)


def _eager_int_index(x, idx):
    """x[i, :, j] on a concrete array: a dynamic_slice whose start indices are operands,
    so one compiled program serves every index value (a static slice compiles one per
    position, which made element-by-element reads compile hundreds of programs)."""
    starts, sizes, squeeze_dims = [], [], []
    for d, (i, n) in enumerate(zip(idx, x.shape)):
        if _is_int_scalar(i):
            k = int(i) + n if i < 0 else int(i)   # (in bounds: see _out_of_bounds_as_array)
            starts.append(np.int32(k)), sizes.append(1), squeeze_dims.append(d)
        else:
            starts.append(np.int32(0)), sizes.append(n)
    return lax.squeeze(lax.dynamic_slice(x, starts, sizes), squeeze_dims)


def _int32_index(i):
    if not _dt.issubdtype(i.dtype, np.integer):
        raise IndexError(f"indices must be integers, got dtype {i.dtype}")
    return i.astype(_dt.int32) if i.dtype != _dt.int32 else i


def _wrap_negative(i, n):
    i = _int32_index(i)
    if _dt.issubdtype(i.dtype, np.unsignedinteger):
        return i
    return where_xy(i < 0, i + n, i)


def _advanced_gather(x, idx, dyn, mode, fill_value):
    arrays = [_wrap_negative(asarray(idx[d]), x.shape[d]) for d in dyn]
    bshape = broadcast_shapes(*(a.shape for a in arrays))
    # (as JAX stages them: one array gains a last axis, several are broadcast along it
    # and concatenated)
    indices = lax.expand_dims(arrays[0], (arrays[0].ndim,)) if len(arrays) == 1 else \
        lax.concatenate([lax.broadcast_in_dim(a, tuple(bshape) + (1,), tuple(
            range(len(bshape) - a.ndim, len(bshape)))) for a in arrays], len(bshape))
    rest = [d for d in range(x.ndim) if d not in dyn]
    adjacent = dyn == list(range(dyn[0], dyn[0] + len(dyn)))
    nb = len(bshape)
    if adjacent:
        before = [d for d in rest if d < dyn[0]]
        offset_dims = tuple(range(len(before))) + tuple(
            range(len(before) + nb, len(rest) + nb))
    else:
        offset_dims = tuple(range(nb, nb + len(rest)))
    dnums = lax.GatherDimensionNumbers(offset_dims=offset_dims,
                                       collapsed_slice_dims=tuple(dyn),
                                       start_index_map=tuple(dyn))
    empty_axes = [d for d in dyn if x.shape[d] == 0]
    if empty_axes:
        if math.prod(bshape):
            raise IndexError(at_user_line(
                f"index is out of bounds for axis {empty_axes[0]} with size 0"))
        # Nothing is selected: gather (which needs a slice of size 1) from a stand-in.
        x = zeros([1 if d in empty_axes else n for d, n in enumerate(x.shape)], x.dtype)
    slice_sizes = [1 if d in dyn else x.shape[d] for d in range(x.ndim)]
    return lax.gather(x, indices, dnums, slice_sizes, mode=mode, fill_value=fill_value)


@fused_when_eager
def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    if out is not None:
        raise NotImplementedError("mjax.numpy.take: the `out` argument is not supported")
    a, indices = asarray(a), asarray(indices)
    if axis is None:
        a, axis = ravel(a), 0
    if a.ndim == 0:  # (index_axis takes axis 0 of a scalar; JAX's take does not)
        raise AxisError(at_user_line(f"axis {axis} is out of bounds for array of dimension 0"))
    axis = index_axis(axis, a.ndim)
    # JAX's modes of take: "fill" (the default) fills out-of-range positions, "clip"
    # clamps, "wrap" takes indices modulo the axis's size; no others.
    if mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    if mode == "wrap":
        n = a.shape[axis]
        indices = lax.rem(indices, lax.full_like(indices, n)) if n else indices
        indices = where_xy(lax.lt(indices, lax.full_like(indices, 0)),
                           lax.add(indices, lax.full_like(indices, n)), indices) if n else indices
        mode = "promise_in_bounds"
    elif mode == "clip" and a.shape[axis]:
        # (clamped as they are: negative indices go to 0, not from the end)
        indices = lax.clamp(lax.full_like(indices, 0), indices,
                            lax.full_like(indices, a.shape[axis] - 1))
        mode = "promise_in_bounds"
    elif mode is None:
        mode = "fill"
    elif mode not in ("fill", "clip"):
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    idx = [slice(None)] * axis + [indices]
    return getitem(a, tuple(idx), mode=mode, fill_value=fill_value)


@fused_when_eager
def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *,
                    wrap_negative_indices=None):
    """JAX: jnp.take_along_axis, staged as JAX stages it, so XLA is handed JAX's program:
    the indices cast to the axis's index type and wrapped from the end, reshaped to the
    gather's index shape, and one gather whose other dims are batching dims (dims of
    size 1 in the indices take the array's whole axis; dims of size 1 in the array are
    squeezed out), not iotas of positions concatenated into full indices."""
    arr, indices = asarray(arr), asarray(indices)
    if not np.issubdtype(np.dtype(indices.dtype), np.integer):
        raise TypeError(f"take_along_axis indices must be of integer type, got "
                        f"{np.dtype(indices.dtype)}")
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(f"take_along_axis indices must be 1D if axis=None, got shape "
                             f"{tuple(indices.shape)}")
        arr, axis = ravel(arr), 0
    rank = arr.ndim
    if rank != indices.ndim:
        raise ValueError(f"indices and arr must have the same number of dimensions; "
                         f"{indices.ndim} vs. {rank}")
    axis = normalize_axis(operator.index(axis), rank)
    idx_shape = tuple(indices.shape)
    axis_size = arr.shape[axis]
    arr_shape = tuple(1 if d == axis else n for d, n in enumerate(arr.shape))
    out_shape = broadcast_shapes(idx_shape, arr_shape)
    if axis_size == 0:
        return lax.full(out_shape, 0, arr.dtype)
    if wrap_negative_indices is None:   # (JAX's legacy default)
        wrap_negative_indices = mode != "promise_in_bounds"
    if wrap_negative_indices:           # (JAX: index_dtype_for_axis_size)
        big = not is_symbolic_dim(axis_size) and axis_size > np.iinfo(np.int32).max
        indices = lax.convert_element_type(indices, np.int64 if big else np.int32)
        indices = lax.select(lax.lt(indices, lax.full_like(indices, 0)),
                             lax.add(indices, lax.full_like(indices, axis_size)), indices)
    index_dims = [d for d, n in enumerate(idx_shape) if d == axis or n != 1]
    gather_indices = lax.reshape(indices, tuple(out_shape[d] for d in index_dims) + (1,))
    slice_sizes, offset_dims, start_index_map, collapsed = [], [], [], []
    operand_batching, indices_batching, squeezed = [], [], []
    new_d = j = 0     # (a dim of the squeezed array; of the gather's indices)
    for d in range(rank):
        if d == axis:
            slice_sizes.append(1)
            start_index_map.append(new_d)
            collapsed.append(new_d)
            new_d, j = new_d + 1, j + 1
        elif idx_shape[d] == 1:         # the whole axis of arr: no index formed
            offset_dims.append(d)
            slice_sizes.append(arr_shape[d])
            new_d += 1
        elif arr_shape[d] == 1:         # squeezed out of arr
            squeezed.append(d)
            j += 1
        else:                           # corresponding elements: a batching dim
            slice_sizes.append(0 if arr_shape[d] == 0 else 1)
            operand_batching.append(new_d)
            indices_batching.append(j)
            new_d, j = new_d + 1, j + 1
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(collapsed),
        start_index_map=tuple(start_index_map), operand_batching_dims=tuple(operand_batching),
        start_indices_batching_dims=tuple(indices_batching))
    return lax.gather(lax.squeeze(arr, squeezed), gather_indices, dnums, tuple(slice_sizes),
                      mode="fill" if mode is None else mode, fill_value=fill_value)

