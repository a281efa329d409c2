"""Indexing, as in `jax.lax`: dynamic_slice, dynamic_update_slice, gather and the scatters
(one function per primitive), and what JAX composes from them (the *_in_dim forms,
index_take, scatter_sub, scatter_apply)."""
from __future__ import annotations

import enum
import operator
from collections import namedtuple

import numpy as np

from mjax.specs import dtypes
from mjax.tracing.core import Tracer, aval_of_value, bind
from mjax.dialect.shape_poly import as_dim, is_symbolic_dim
from mjax.dialect.ops.indexing import (DynamicSliceOp, DynamicUpdateSliceOp, GatherOp,
                                       ScatterAddOp, ScatterMaxOp, ScatterMinOp, ScatterMulOp,
                                       ScatterOp)
from mjax.lax import elementwise as E
from mjax.lax.control_flow import while_loop
from mjax.lax.elementwise import (_is_python_scalar, add, as_array, convert_element_type, full,
                                  gt, lt, neg, select)
from mjax.lax.reduce import reduce_max
from mjax.lax.shapes import expand_dims, squeeze, stack


def _start_indices(start_indices, shape, allow_negative_indices):
    """Start indices as arrays; negative ones count from the end (JAX's default), before
    XLA clamps them into range."""
    allow = allow_negative_indices
    allow = [bool(allow)] * len(shape) if isinstance(allow, bool) else list(allow)
    out, static = [], []
    for i, size, negative in zip(start_indices, shape, allow):
        if _is_python_scalar(i) or (isinstance(i, (np.ndarray, np.generic))
                                    and not isinstance(i, Tracer) and np.ndim(i) == 0):
            i = int(i)
            if i < 0 and not negative:
                raise ValueError(f"Index {i} is out of bounds for dimension {size} if "
                                 "allow_negative_indices=False")
            static.append(len(out))
            out.append(i + size if negative and i < 0 else i)
            continue
        dtype = aval_of_value(i).dtype
        if negative and dtypes.issubdtype(dtype, np.signedinteger):
            zero = convert_element_type(0, dtype)
            below = lt(i, zero)
            # (as JAX stages it: a weakly typed index is made strong where the size is
            # added)
            strong = convert_element_type(i, dtype, weak_type=False)
            i = select(below, add(strong, convert_element_type(size, dtype)), i)
        out.append(i)
    # Static starts take the dtype of the traced ones (so x[i] with an int32 `i` under x64
    # slices with int32 starts throughout, as JAX's *_in_dim helpers build them).
    traced = {aval_of_value(v).dtype for k, v in enumerate(out) if k not in static}
    target = traced.pop() if len(traced) == 1 else dtypes.default_int()
    for k in static:
        if is_symbolic_dim(out[k]):     # (i + size for a symbolic size: a value)
            out[k] = convert_element_type(out[k], target)
            continue
        fits = np.iinfo(target).min <= out[k] <= np.iinfo(target).max
        out[k] = convert_element_type(out[k], target if fits else dtypes.default_int())
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """operand[start:start + size] per axis, starts clamped into range (negative ones
    counting from the end). JAX: lax.dynamic_slice."""
    idx = _start_indices(start_indices, aval_of_value(operand).shape, allow_negative_indices)
    return bind(DynamicSliceOp, operand, *idx, slice_sizes=tuple(map(as_dim, slice_sizes)))


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """operand with update written at start (clamped; negative starts count from the
    end). JAX: lax.dynamic_update_slice."""
    idx = _start_indices(start_indices, aval_of_value(operand).shape, allow_negative_indices)
    return bind(DynamicUpdateSliceOp, operand, update, *idx)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
    aval = aval_of_value(operand)
    starts = [0] * aval.ndim
    sizes = list(aval.shape)
    starts[axis], sizes[axis] = start_index, slice_size
    return dynamic_slice(operand, starts, sizes,
                         allow_negative_indices=allow_negative_indices)


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    aval = aval_of_value(operand)
    starts = [0] * aval.ndim
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts,
                                allow_negative_indices=allow_negative_indices)


def _index(index, size, allow_negative):
    index = as_array(index)
    if allow_negative:
        dtype = aval_of_value(index).dtype
        zero, size = (convert_element_type(v, dtype, weak_type=True) for v in (0, size))
        index = select(lt(index, zero), add(index, size), index)
    return index


def _max_or_zero(x):
    """max(x, initial=0) over every axis of an int32 array."""
    m = reduce_max(x, tuple(range(aval_of_value(x).ndim)))
    return E.max(m, full((), 0, np.int32))


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *,
                         allow_negative_indices=True):
    """operand's slice at a (traced) index along axis. JAX: lax.dynamic_index_in_dim."""
    aval = aval_of_value(operand)
    axis = operator.index(axis) % aval.ndim
    idx = _index(index, aval.shape[axis], allow_negative_indices)
    out = dynamic_slice_in_dim(operand, idx, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """operand with the slice at a (traced) index along axis replaced. JAX:
    lax.dynamic_update_index_in_dim."""
    aval = aval_of_value(operand)
    axis = operator.index(axis) % aval.ndim
    if aval_of_value(update).ndim == aval.ndim - 1:
        update = expand_dims(update, (axis,))
    idx = _index(index, aval.shape[axis], allow_negative_indices)
    return dynamic_update_slice_in_dim(operand, update, idx, axis)


# ---- gather and scatter ------------------------------------------------------------------
GatherDimensionNumbers = namedtuple(
    "GatherDimensionNumbers", ["offset_dims", "collapsed_slice_dims", "start_index_map",
                               "operand_batching_dims", "start_indices_batching_dims"],
    defaults=((), ()))


ScatterDimensionNumbers = namedtuple(
    "ScatterDimensionNumbers", ["update_window_dims", "inserted_window_dims",
                                "scatter_dims_to_operand_dims", "operand_batching_dims",
                                "scatter_indices_batching_dims"], defaults=((), ()))


class GatherScatterMode(enum.Enum):
    """How a gather or scatter treats out-of-bounds indices (see passes/rules/indexing.py).
    Each member's value is the mode's name in the dialect. JAX: lax.GatherScatterMode."""
    CLIP = "clip"
    FILL_OR_DROP = "fill"
    PROMISE_IN_BOUNDS = "promise_in_bounds"
    ONE_HOT = "one_hot"

    @staticmethod
    def from_any(s) -> GatherScatterMode:
        if isinstance(s, GatherScatterMode):
            return s
        found = _MODES.get("fill" if s is None else s) if isinstance(s, (str, type(None))) \
            else None
        if found is None:
            raise ValueError(f'Unknown gather mode "{s}"')
        return found


_MODES = {"clip": GatherScatterMode.CLIP, "fill": GatherScatterMode.FILL_OR_DROP,
          "drop": GatherScatterMode.FILL_OR_DROP,
          "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS,
          "one_hot": GatherScatterMode.ONE_HOT}


def _mode(mode, default):
    """The dialect's name of a gather/scatter mode (a string or a GatherScatterMode)."""
    if mode is None:
        return default
    if isinstance(mode, str):
        mode = mode.lower()
    found = GatherScatterMode.from_any(mode)
    if found is GatherScatterMode.ONE_HOT:
        raise NotImplementedError("gather/scatter mode GatherScatterMode.ONE_HOT is not "
                                  "supported by mjax")
    return found.value


def gather(operand, start_indices, dimension_numbers, slice_sizes, *,
           indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
    return bind(GatherOp, operand, start_indices,
                dimension_numbers=_int_fields(dimension_numbers),
                slice_sizes=tuple(map(as_dim, slice_sizes)),
                indices_are_sorted=bool(indices_are_sorted),
                unique_indices=bool(unique_indices), mode=_mode(mode, "fill"),
                fill_value=fill_value)


def _int_fields(dimension_numbers) -> dict:
    """Gather/scatter dimension numbers as a dict of int tuples (fields may be any integer
    sequences: ranges, lists, NumPy arrays, as JAX takes them)."""
    return {k: tuple(int(d) for d in v) for k, v in dimension_numbers._asdict().items()}


def _scatter_params(dimension_numbers, indices_are_sorted, unique_indices, mode) -> dict:
    return dict(dimension_numbers=_int_fields(dimension_numbers),
                indices_are_sorted=bool(indices_are_sorted),
                unique_indices=bool(unique_indices), mode=_mode(mode, "fill"))


def scatter(operand, scatter_indices, updates, dimension_numbers, *,
            indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with its windows at the indices overwritten by updates. JAX: lax.scatter."""
    return bind(ScatterOp, operand, scatter_indices, updates, **_scatter_params(
        dimension_numbers, indices_are_sorted, unique_indices, mode))


def scatter_add(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with updates added at the indices. JAX: lax.scatter_add."""
    return bind(ScatterAddOp, operand, scatter_indices, updates, **_scatter_params(
        dimension_numbers, indices_are_sorted, unique_indices, mode))


def scatter_mul(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """operand multiplied by updates at the indices. JAX: lax.scatter_mul."""
    return bind(ScatterMulOp, operand, scatter_indices, updates, **_scatter_params(
        dimension_numbers, indices_are_sorted, unique_indices, mode))


def scatter_min(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with the minimum of it and updates at the indices. JAX: lax.scatter_min."""
    return bind(ScatterMinOp, operand, scatter_indices, updates, **_scatter_params(
        dimension_numbers, indices_are_sorted, unique_indices, mode))


def scatter_max(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with the maximum of it and updates at the indices. JAX: lax.scatter_max."""
    return bind(ScatterMaxOp, operand, scatter_indices, updates, **_scatter_params(
        dimension_numbers, indices_are_sorted, unique_indices, mode))


def index_take(src, idxs, axes):
    """src[idxs[0], idxs[1], ...] along `axes` (a gather). JAX: lax.index_take."""
    aval = aval_of_value(src)
    axes = tuple(operator.index(a) for a in axes)
    if len(idxs) != len(axes):
        raise TypeError(f"index_take: {len(idxs)} index arrays for {len(axes)} axes {axes}")
    # (indices wrap modulo the axis size, as JAX's: -1 is the last element)
    idxs = [_wrap_index(as_array(i), aval.shape[ax]) for i, ax in zip(idxs, axes)]
    indices = stack(idxs, axis=-1) if idxs else full((0,), 0, np.int32)
    slice_sizes = [1 if i in axes else d for i, d in enumerate(aval.shape)]
    offset = tuple(range(1, 1 + aval.ndim - len(axes)))
    dn = GatherDimensionNumbers(offset_dims=offset, collapsed_slice_dims=axes,
                                    start_index_map=axes)
    return gather(src, indices, dn, slice_sizes)


def _wrap_index(i, size):
    """i modulo size, Python's way (the result has size's sign), without overflow."""
    if is_symbolic_dim(size):
        raise NotImplementedError("lax.index_take along an axis of symbolic size: mjax wraps "
                                  "its indices only modulo a concrete size")
    r = E.rem(i, full((), size, aval_of_value(i).dtype))
    if not dtypes.issubdtype(aval_of_value(i).dtype, np.signedinteger):
        return r
    return select(lt(r, full((), 0, aval_of_value(r).dtype)), add(r, full((), size,
                  aval_of_value(r).dtype)), r)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with updates subtracted at the indices. JAX: lax.scatter_sub."""
    return scatter_add(operand, scatter_indices, neg(updates), dimension_numbers,
                           indices_are_sorted=indices_are_sorted,
                           unique_indices=unique_indices, mode=mode)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with func applied at the scattered positions, once per update (so a
    repeated index applies it repeatedly, as XLA's scatter does). JAX: lax.scatter_apply."""
    aval = aval_of_value(operand)
    counts = scatter_add(full(aval.shape, 0, np.int32), scatter_indices,
                         full(update_shape, 1, np.int32), dimension_numbers,
                         indices_are_sorted=indices_are_sorted,
                         unique_indices=unique_indices, mode=mode)

    def body(state):
        k, x = state
        return add(k, 1), select(gt(counts, k), func(x), x)

    def more(state):
        return lt(state[0], _max_or_zero(counts))
    _, out = while_loop(more, body, (full((), 0, np.int32), operand))
    return out
