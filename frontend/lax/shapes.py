"""Shapes and layouts, as in `jax.lax`: broadcast, reshape, squeeze, expand_dims,
transpose, rev, tile, concatenate, stack, unstack, split, pad, slice (one function per
primitive), and what JAX composes from them (collapse, broadcast_like)."""
from __future__ import annotations

import math
import operator

import numpy as np

from mjax.arrays.array_methods import ArrayMethods
from mjax.specs import dtypes
from mjax.dialect import shape_poly
from mjax.dialect.shape_poly import as_dim, broadcast_shapes as symbolic_broadcast_shapes
from mjax.tracing.core import Tracer, at_user_line, aval_of_value, bind, current_trace
from mjax.dialect.ops.structural import (BroadcastInDimOp, ConcatenateOp, DimAsValueOp,
                                         ConvertElementTypeOp, ExpandDimsOp, PadOp,
                                         ReshapeOp, RevOp, SliceOp, SplitOp, SqueezeOp, TileOp,
                                         StackOp, TransposeOp, UnstackOp)
from mjax.lax.sharding import apply_out_sharding


def unchanged(x):
    """x, when an op would not change it: an Array or tracer comes back itself; a NumPy
    array or Python scalar as an Array of its (canonical, weak for a Python scalar) type,
    as JAX's does."""
    if isinstance(x, ArrayMethods):
        return x
    aval = aval_of_value(x)
    return bind(ConvertElementTypeOp, x, new_dtype=aval.dtype, _weak_type=aval.weak_type)


def fresh(x):
    """x as a new value where a function JAX wraps in `jit` returns its operand unchanged:
    a tracer comes back as a new tracer object on the same IR value (so vmap does not hand
    back the very argument it was given, in its original dtype, as it does for a function
    returning its argument itself: JAX's jitted jnp functions make a new array, of the
    canonical dtype); anything else as `unchanged` gives it."""
    if type(x) is Tracer:
        # (only a tracer of the trace being built: one an inner trace closes over is
        # captured by identity, and stays itself)
        return Tracer(x.trace, x.value, x.aval, x.loc) if x.trace is current_trace() else x
    return unchanged(x)


def _dimension_as_value(d):
    """A symbolic dimension as a weakly typed integer scalar (under a trace: its value is
    known when the program runs). JAX: core.dimension_as_value."""
    if current_trace() is None:
        raise NotImplementedError(at_user_line(
            f"the symbolic dimension '{d}' has no value outside a trace: shape "
            f"polymorphism is for tracing and mjax.export"))
    return bind(DimAsValueOp, dim=d, dtype=dtypes.canonicalize_dtype(np.int64),
                _weak_type=True)


shape_poly.AS_VALUE[:] = [_dimension_as_value]


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
    """JAX: lax.broadcast_in_dim."""
    if out_sharding is not None:
        return apply_out_sharding(broadcast_in_dim(operand, shape, broadcast_dimensions),
                                  out_sharding)
    x = operand
    shape, bd = tuple(map(as_dim, shape)), tuple(int(d) for d in broadcast_dimensions)
    aval = aval_of_value(x)
    if aval.shape == shape and bd == tuple(range(len(shape))):
        # (JAX hands back only a scalar Array or tracer itself; any other operand is
        # bound, so under vmap the result is a new value of the canonical dtype)
        return unchanged(x) if not shape else fresh(x)
    if len(bd) == aval.ndim and len(set(bd)) == len(bd) and list(bd) != sorted(bd) and \
            all(0 <= d < len(shape) for d in bd):
        # Dimensions in another order (JAX allows it): the operand transposed into the
        # target's order, so the op's dimensions are increasing, as mjax's rules assume.
        perm = tuple(sorted(range(len(bd)), key=lambda i: bd[i]))
        return broadcast_in_dim(transpose(x, perm), shape, tuple(sorted(bd)))
    # (A literal scalar's broadcast is staged too, as JAX does: `jnp.zeros(3)` under a
    # trace is a tracer, with `.at` and jnp semantics, printed `broadcast_in_dim 0.0:f32[]`.)
    return bind(BroadcastInDimOp, x, shape=shape, broadcast_dimensions=bd)


def broadcast(operand, sizes, *, out_sharding=None):
    """Prepends dimensions `sizes`. JAX: lax.broadcast."""
    if not len(sizes) and out_sharding is None:
        return unchanged(operand)   # (as JAX's: the operand as an array)
    aval = aval_of_value(operand)
    n = len(sizes)
    return broadcast_in_dim(operand, tuple(sizes) + aval.shape,
                            tuple(range(n, n + aval.ndim)), out_sharding=out_sharding)


def broadcast_to_rank(x, rank):
    aval = aval_of_value(x)
    return broadcast(x, (1,) * (rank - aval.ndim))


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
    """JAX: lax.reshape (dimensions: transpose before reshaping)."""
    if out_sharding is not None:
        return apply_out_sharding(reshape(operand, new_sizes, dimensions), out_sharding)
    x = operand
    new_sizes = tuple(map(as_dim, new_sizes))
    aval = aval_of_value(x)
    same_dims = dimensions is None or tuple(dimensions) == tuple(range(aval.ndim))
    if aval.shape == new_sizes and same_dims and aval.shape:
        return unchanged(x)     # (JAX's binds the op for a scalar: a new value)
    return bind(ReshapeOp, x, new_sizes=new_sizes,
                dimensions=None if same_dims else tuple(dimensions))


def _canonical_axes(dimensions, rank):
    out = []
    for d in dimensions:
        d = int(d)
        if not -rank <= d < rank:
            raise ValueError(at_user_line(f"axis {d} is out of bounds for array of "
                                          f"dimension {rank}"))
        out.append(d % rank)
    return tuple(sorted(out))


def squeeze(array, dimensions):
    x = array
    aval = aval_of_value(x)
    dims = _canonical_axes(dimensions, aval.ndim)
    if any(aval.shape[d] != 1 for d in dims):
        raise ValueError(at_user_line(
            f"cannot select an axis to squeeze out which has size not equal to one, got "
            f"shape={aval.shape} and dimensions={tuple(dimensions)}"))
    if not dims:
        return unchanged(x)
    return bind(SqueezeOp, x, dimensions=dims)


def expand_dims(array, dimensions):
    x = array
    aval = aval_of_value(x)
    dims = _canonical_axes(dimensions, aval.ndim + len(dimensions))
    if not dims:
        return fresh(x)   # (JAX's goes through broadcast_in_dim: a new value)
    return bind(ExpandDimsOp, x, dimensions=dims)


def transpose(operand, permutation):
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(aval_of_value(operand).ndim)):   # (else the op's check)
        return unchanged(operand)
    return bind(TransposeOp, operand, permutation=permutation)


def rev(operand, dimensions):
    return bind(RevOp, operand, dimensions=tuple(int(d) for d in dimensions))


def concatenate(operands, dimension):
    operands = list(operands)
    if len(operands) == 1:
        return unchanged(operands[0])
    return bind(ConcatenateOp, *operands, dimension=int(dimension))


def pad(operand, padding_value, padding_config):
    """operand with low/high (possibly negative) and interior padding per axis.
    JAX: lax.pad."""
    x = operand
    padding_config = tuple(tuple(c) for c in padding_config)
    shape = aval_of_value(x).shape
    if len(padding_config) != len(shape):
        raise ValueError("length of padding_config must equal the number of axes of operand, "
                         f"got padding_config {padding_config} for operand shape {shape}")
    return bind(PadOp, x, padding_value,
                padding_config=tuple(tuple(map(as_dim, c)) for c in padding_config))


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001
    return bind(SliceOp, operand, start_indices=tuple(map(as_dim, start_indices)),
                limit_indices=tuple(map(as_dim, limit_indices)),
                strides=None if strides is None else tuple(int(s) for s in strides))


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    x = operand
    aval = aval_of_value(x)
    start, limit, strides = [0] * aval.ndim, list(aval.shape), [1] * aval.ndim
    axis = _static_axis(axis, aval.ndim, "slice_in_dim")
    d = aval.shape[axis]
    start_index = 0 if start_index is None else (start_index + d if start_index < 0 else start_index)
    limit_index = d if limit_index is None else (limit_index + d if limit_index < 0 else limit_index)
    start[axis], limit[axis], strides[axis] = start_index, limit_index, stride
    return slice(x, start, limit, strides)


def _static_axis(axis, ndim, fn):
    """axis in [-ndim, ndim) made nonnegative; out of range is JAX's IndexError."""
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise IndexError(f"{fn}: axis {axis} is out of bounds for an operand of rank {ndim}")
    return axis % ndim


def index_in_dim(operand, index, axis=0, keepdims=True):
    x = operand
    aval = aval_of_value(x)
    axis = _static_axis(axis, aval.ndim, "index_in_dim")
    index = index + aval.shape[axis] if index < 0 else index
    out = slice_in_dim(x, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))



def collapse(operand, start_dimension, stop_dimension=None):
    """Merges dims start..stop-1 into one. JAX: lax.collapse."""
    shape = aval_of_value(operand).shape
    n = len(shape)
    start = operator.index(start_dimension) % max(n, 1) if n else 0
    stop = n if stop_dimension is None else operator.index(stop_dimension)
    stop = stop + n if stop < 0 else stop
    new = shape[:start] + (math.prod(shape[start:stop]),) + shape[stop:]
    return reshape(operand, new)


def split(operand, sizes, axis=0):
    """Consecutive pieces of the given sizes along axis (one `split` op). JAX: lax.split."""
    aval = aval_of_value(operand)
    axis = _canonical_axis(axis, aval.ndim)
    sizes = tuple(s if shape_poly.is_symbolic_dim(s) else operator.index(s) for s in sizes)
    if any(not shape_poly.is_symbolic_dim(s) and s < 0 for s in sizes):
        raise ValueError(at_user_line(f"Sizes passed to split must be nonnegative, got "
                                      f"{list(sizes)}"))
    if sum(sizes) != aval.shape[axis]:
        raise ValueError(at_user_line(f"Sum of sizes {sum(sizes)} must be equal to dimension "
                                      f"{aval.shape[axis]} of the operand shape {aval.shape}"))
    out = bind(SplitOp, operand, axis=axis, sizes=sizes)
    return out if isinstance(out, list) else [out]


def stack(operands, axis=0):
    """Stacks same-shape arrays along a new axis. JAX: lax.stack."""
    operands = list(operands)
    if not operands:
        raise IndexError("list index out of range")   # (as JAX's lax.stack([]))
    avals = [aval_of_value(x) for x in operands]
    shapes = ", ".join(str(a.shape) for a in avals)
    if len({a.ndim for a in avals}) != 1:
        raise ValueError(at_user_line(f"Cannot stack arrays with different numbers of "
                                      f"dimensions: got {shapes}."))
    if len({a.shape for a in avals}) != 1:
        raise ValueError(at_user_line(f"All input arrays must have the same shape. Got "
                                      f"{shapes}."))
    if len({a.dtype for a in avals}) != 1:
        raise TypeError(at_user_line(f"lax.stack requires arguments to have the same dtypes, "
                                     f"got {', '.join(str(a.dtype) for a in avals)}."))
    return bind(StackOp, *operands, axis=_canonical_axis(axis, avals[0].ndim + 1))


def unstack(x, axis=0):
    """The slices along axis, as a tuple. JAX: lax.unstack."""
    axis = _canonical_axis(axis, aval_of_value(x).ndim)
    out = bind(UnstackOp, x, axis=axis)
    return tuple(out) if isinstance(out, list) else (out,)


def _canonical_axis(axis, rank):
    """axis in [0, rank); negative ones count from the end. JAX: canonicalize_axis."""
    axis = operator.index(axis)
    if not -rank <= axis < rank:
        raise ValueError(at_user_line(f"axis {axis} is out of bounds for array of "
                                      f"dimension {rank}"))
    return axis % rank


def tile(operand, reps):
    """operand repeated reps[i] times along each dim. JAX: lax.tile (its tile_p)."""
    return bind(TileOp, operand, reps=tuple(operator.index(r) for r in reps))


def broadcast_like(arr, like_arr):
    """arr broadcast to like_arr's shape (NumPy's broadcasting rules). JAX:
    lax.broadcast_like."""
    return broadcast_to(arr, aval_of_value(like_arr).shape)


def broadcast_to(arr, shape):
    """arr broadcast to `shape` by NumPy's rules: trailing dimensions aligned, size-1
    dimensions stretched (jnp.broadcast_to, for lax's own compositions)."""
    shape = tuple(map(as_dim, shape))
    have = aval_of_value(arr).shape
    lead = len(shape) - len(have)
    if lead < 0 or any(h not in (1, s) for h, s in zip(have, shape[lead:])):
        raise ValueError(at_user_line(f"Incompatible shapes for broadcasting: {have} and "
                                      f"requested shape {shape}"))
    if have == shape:
        return arr
    keep = tuple(d for d, (h, s) in enumerate(zip(have, shape[lead:])) if h == s)
    if len(keep) != len(have):      # (size-1 dimensions stretched: dropped first)
        arr = reshape(arr, tuple(have[d] for d in keep))
    return broadcast_in_dim(arr, shape, tuple(lead + d for d in keep))


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to (trailing-aligned). JAX:
    lax.broadcast_shapes."""
    shapes = [tuple(s) for s in shapes]
    try:
        try:
            return tuple(np.broadcast_shapes(*shapes))
        except TypeError:   # (symbolic dimensions)
            return symbolic_broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(at_user_line(
            f"Incompatible shapes for broadcasting: shapes="
            f"[{', '.join(map(str, shapes))}]")) from None

