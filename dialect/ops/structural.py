"""Structural ops: dtype conversion, shape manipulation, constants, selection, dot_general."""
from __future__ import annotations

import math

import numpy as np

from mjax.dialect import attributes as A
from mjax.dialect import dot_algorithms
from mjax.dialect.core import JaxprOp
from mjax.dialect.shape_poly import max_dim
from mjax.dialect.dtype_rules import (bitwidth, check_dtype, check_same_dtypes, is_bool,
                                      is_complex)
from mjax.dialect.types import ShapedArray, short_dtype_name


def _check_perm(op: str, perm, rank: int, what: str = "permutation"):
    if sorted(perm) != list(range(rank)):
        raise TypeError(f"{op} {what} {tuple(perm)} is not a permutation of "
                        f"(0, ..., {rank - 1}) for operand of rank {rank}")


def _check_axes(op: str, axes, rank: int, what: str = "axes"):
    for a in axes:
        if not 0 <= a < rank:
            raise ValueError(f"{op}: axis {a} in {what} is out of range for rank {rank}")
    if len(set(axes)) != len(axes):
        raise ValueError(f"{op}: {what} {tuple(axes)} has duplicates")


# ---- dtype conversion ------------------------------------------------------------
class ConvertElementTypeOp(JaxprOp, name="convert_element_type"):
    """Casts elementwise to new_dtype. JAX: lax.convert_element_type_p."""
    attributes = {"new_dtype": A.DType()}

    @classmethod
    def infer(cls, x, *, new_dtype):
        check_dtype("convert_element_type", x, "any")
        check_dtype("convert_element_type", ShapedArray((), new_dtype), "any",
                    what="new_dtype")
        return (ShapedArray(x.shape, new_dtype),)


class BitcastConvertTypeOp(JaxprOp, name="bitcast_convert_type"):
    """Reinterprets bits as new_dtype; a width change adds/removes a minor dim.
    JAX: lax.bitcast_convert_type_p."""
    attributes = {"new_dtype": A.DType()}
    weak_type_inputs = None

    @classmethod
    def infer(cls, x, *, new_dtype):
        check_dtype("bitcast_convert_type", x, "any")
        check_dtype("bitcast_convert_type", ShapedArray((), new_dtype), "any",
                    what="new_dtype")
        old, new = bitwidth(x.dtype), bitwidth(new_dtype)     # (int4: 4 bits)
        if old == new:
            shape = x.shape
        elif old > new:
            shape = x.shape + (old // new,)
        else:
            if not x.shape or x.shape[-1] != new // old:
                # (a shape error, checked before the dtypes: ValueError, as JAX's)
                raise ValueError(f"bitcast_convert_type from {short_dtype_name(x.dtype)} to "
                                 f"{short_dtype_name(new_dtype)} needs a minor dimension of "
                                 f"size {new // old}, got shape {x.shape}")
            shape = x.shape[:-1]
        if x.dtype != new_dtype and any(is_bool(d) or is_complex(d)
                                        for d in (x.dtype, new_dtype)):
            raise TypeError(f"bitcast_convert_type does not support bool or complex values "
                            f"unless the operand and result dtypes match, got "
                            f"{short_dtype_name(x.dtype)} to {short_dtype_name(new_dtype)}")
        return (ShapedArray(shape, new_dtype),)


class ReducePrecisionOp(JaxprOp, name="reduce_precision"):
    """Rounds to a float format with fewer exponent/mantissa bits.
    JAX: lax.reduce_precision_p."""
    attributes = {"exponent_bits": A.Int(), "mantissa_bits": A.Int()}

    @classmethod
    def infer(cls, x, *, exponent_bits, mantissa_bits):
        check_dtype("reduce_precision", x, "float")
        if exponent_bits < 1 or mantissa_bits < 0:
            raise ValueError(f"reduce_precision: exponent_bits must be >= 1 and mantissa_bits "
                             f">= 0, got {exponent_bits} and {mantissa_bits}")
        return (x,)


# ---- identity-like -------------------------------------------------------------
MEMORY_KINDS = ("device", "pinned_host", "unpinned_host")

class StopGradientOp(JaxprOp, name="stop_gradient"):
    """Identity whose derivative is zero. JAX: lax.stop_gradient (ad_util.stop_gradient_p)."""

    @classmethod
    def infer(cls, x):
        return (x,)


class CopyOp(JaxprOp, name="copy"):
    """Identity that makes a fresh buffer. JAX: lax.copy_p."""

    @classmethod
    def infer(cls, x):
        return (x,)


class DevicePutOp(JaxprOp, name="device_put"):
    """Identity that moves its operand into memory of `memory_kind` ('device',
    'pinned_host', 'unpinned_host'); `src` is the operand's kind where tracing knew it
    (its transpose moves the cotangent back there). JAX: device_put_p inside jit with
    a memory-kind target."""
    attributes = {"memory_kind": A.Str(choices=MEMORY_KINDS),
                  "src": A.Str(default=None, choices=MEMORY_KINDS)}

    @classmethod
    def infer(cls, x, *, memory_kind, src=None):
        return (x,)


class LayoutConstraintOp(JaxprOp, name="layout_constraint"):
    """Identity that asks the compiler to hold its result in memory in the layout
    `major_to_minor` (dimensions from slowest- to fastest-varying).
    JAX: jax.experimental.layout.with_layout_constraint (layout_constraint_p)."""
    attributes = {"major_to_minor": A.Ints()}

    @classmethod
    def infer(cls, x, *, major_to_minor):
        _check_perm("layout_constraint", major_to_minor, len(x.shape), "major_to_minor")
        return (x,)


class OptimizationBarrierOp(JaxprOp, name="optimization_barrier"):
    """Identity on each operand that the compiler may not look through: no CSE, fusion
    or code motion across it (checkpoint's recomputation relies on it).
    JAX: lax.optimization_barrier_p."""
    num_operands = None
    min_operands = 1

    @classmethod
    def infer(cls, *xs):
        return tuple(xs)


# ---- creation ------------------------------------------------------------------
class ConstantOp(JaxprOp, name="constant"):
    """A literal array. JAX: a Literal / constvar."""
    num_operands = 0
    attributes = {"value": A.Array()}

    @classmethod
    def infer(cls, *, value):
        return (ShapedArray(value.shape, value.dtype),)


class IotaOp(JaxprOp, name="iota"):
    """0, 1, 2, ... along `dimension` of an array of `shape`. JAX: lax.iota_p."""
    num_operands = 0
    attributes = {"dtype": A.DType(), "shape": A.Shape(), "dimension": A.Int(default=0)}

    @classmethod
    def infer(cls, *, dtype, shape, dimension):
        if any(d < 0 for d in shape):
            raise ValueError(f"iota: shape {shape} has a negative dimension")
        if not 0 <= dimension < max(len(shape), 1) or not shape:
            raise ValueError(f"iota: dimension {dimension} is out of range for shape {shape}")
        check_dtype("iota", ShapedArray((), dtype), "int", "float", "complex")
        return (ShapedArray(shape, dtype),)


class DimAsValueOp(JaxprOp, name="dim_as_value"):
    """The value of a dimension, usually symbolic (`jnp.mean` over a dimension `b`
    divides by it), as an integer scalar. JAX: shape_poly's dim_as_value_p."""
    num_operands = 0
    attributes = {"dim": A.Dim(), "dtype": A.DType()}

    @classmethod
    def infer(cls, *, dim, dtype):
        check_dtype("dim_as_value", ShapedArray((), dtype), "int")
        return (ShapedArray((), dtype),)


# ---- shape manipulation --------------------------------------------------------
class BroadcastInDimOp(JaxprOp, name="broadcast_in_dim"):
    """Broadcasts operand dim i to output dim broadcast_dimensions[i].
    JAX: lax.broadcast_in_dim_p."""
    attributes = {"shape": A.Shape(), "broadcast_dimensions": A.Ints()}

    @classmethod
    def infer(cls, x, *, shape, broadcast_dimensions):
        bd = broadcast_dimensions
        if any(isinstance(d, int) and d < 0 for d in shape):
            raise TypeError(f"broadcast_in_dim shape must have every element be nonnegative, "
                            f"got {tuple(shape)}.")
        if len(bd) != x.ndim:
            raise TypeError(f"broadcast_in_dim broadcast_dimensions must have length equal "
                            f"to operand ndim; got broadcast_dimensions {bd} for operand "
                            f"ndim {x.ndim}")
        if len(shape) < x.ndim:
            raise TypeError(f"broadcast_in_dim target broadcast shape must have equal or "
                            f"higher rank to the operand shape; got operand shape {x.shape} "
                            f"and target shape {shape}")
        if any(not 0 <= d < len(shape) for d in bd):
            raise TypeError(f"broadcast_in_dim broadcast_dimensions must be a subset of "
                            f"output dimensions, got {bd} for operand ndim {x.ndim} and "
                            f"shape {tuple(shape)}.")
        for i, d in enumerate(bd):
            if x.shape[i] not in (1, shape[d]):
                raise TypeError(f"broadcast_in_dim operand dimension sizes must either be 1, "
                                f"or be equal to their corresponding dimensions in the target "
                                f"broadcast shape; got operand shape {x.shape}, target "
                                f"broadcast shape {shape}, broadcast_dimensions {bd}")
        if len(set(bd)) != len(bd):
            raise TypeError(f"broadcast_in_dim broadcast_dimensions must not contain "
                            f"duplicates, got broadcast_dimensions {bd}")
        if list(bd) != sorted(bd):   # (lax.broadcast_in_dim transposes the operand first)
            raise TypeError(f"broadcast_in_dim broadcast_dimensions must be strictly "
                            f"increasing in the jaxpr dialect; got {bd}")
        return (ShapedArray(shape, x.dtype),)


class ReshapeOp(JaxprOp, name="reshape"):
    """Reshapes (row-major) to new_sizes. JAX: lax.reshape_p."""
    attributes = {"new_sizes": A.Shape(), "dimensions": A.Ints(default=None)}

    @classmethod
    def infer(cls, x, *, new_sizes, dimensions=None):
        if any(d < 0 for d in new_sizes) or math.prod(new_sizes) != x.size:
            raise TypeError(f"reshape total size must be unchanged, got new_sizes "
                            f"{tuple(new_sizes)} (size {math.prod(new_sizes)}) for shape "
                            f"{x.shape} (size {x.size})")
        if dimensions is not None:
            _check_perm("reshape", dimensions, x.ndim, "dimensions")
        return (ShapedArray(new_sizes, x.dtype),)


class SqueezeOp(JaxprOp, name="squeeze"):
    """Removes the size-1 `dimensions`. JAX: lax.squeeze_p."""
    attributes = {"dimensions": A.Ints()}

    @classmethod
    def infer(cls, x, *, dimensions):
        _check_axes("squeeze", dimensions, x.ndim, "dimensions")
        for d in dimensions:
            if x.shape[d] != 1:
                raise ValueError(f"cannot select an axis to squeeze out which has size not "
                                 f"equal to one, got shape={x.shape} and dimensions="
                                 f"{tuple(dimensions)}")
        return (ShapedArray([s for i, s in enumerate(x.shape) if i not in dimensions], x.dtype),)


class ExpandDimsOp(JaxprOp, name="expand_dims"):
    """Inserts size-1 dims at `dimensions` of the result. JAX: lax.expand_dims."""
    attributes = {"dimensions": A.Ints()}

    @classmethod
    def infer(cls, x, *, dimensions):
        rank = x.ndim + len(dimensions)
        _check_axes("expand_dims", dimensions, rank, "dimensions")
        it = iter(x.shape)
        return (ShapedArray([1 if i in dimensions else next(it) for i in range(rank)],
                            x.dtype),)


class TransposeOp(JaxprOp, name="transpose"):
    """Permutes dimensions: result dim i is operand dim permutation[i]. JAX: lax.transpose_p."""
    attributes = {"permutation": A.Ints()}

    @classmethod
    def infer(cls, x, *, permutation):
        if sorted(permutation) != list(range(x.ndim)):
            raise TypeError(f"transpose permutation isn't a permutation of operand "
                            f"dimensions, got permutation {tuple(permutation)} for operand "
                            f"shape {tuple(x.shape)}.")
        return (ShapedArray([x.shape[p] for p in permutation], x.dtype),)


class RevOp(JaxprOp, name="rev"):
    """Reverses the order of elements along `dimensions`. JAX: lax.rev_p."""
    attributes = {"dimensions": A.Ints()}

    @classmethod
    def infer(cls, x, *, dimensions):
        _check_axes("rev", dimensions, x.ndim, "dimensions")
        return (x,)


class TileOp(JaxprOp, name="tile"):
    """The operand repeated reps[i] times along each dim i. JAX: lax.tile_p."""
    attributes = {"reps": A.Ints()}

    @classmethod
    def infer(cls, x, *, reps):
        if len(reps) != x.ndim:
            raise TypeError(f"reps length must be equal to the ndim of x, got "
                            f"len(reps)={len(reps)} and x.ndim={x.ndim}.")
        if any(r < 0 for r in reps):
            raise ValueError(f"tile: reps {tuple(reps)} must be nonnegative")
        return (ShapedArray([s * r for s, r in zip(x.shape, reps)], x.dtype),)


class ConcatenateOp(JaxprOp, name="concatenate"):
    """Joins operands along `dimension`. JAX: lax.concatenate_p."""
    num_operands = None
    min_operands = 1
    attributes = {"dimension": A.Int()}

    @classmethod
    def infer(cls, *xs, dimension):
        check_same_dtypes("concatenate", xs, "operands")
        rank = xs[0].ndim
        shapes = ", ".join(str(x.shape) for x in xs)
        if any(x.ndim != rank for x in xs):     # (JAX's words, as JAX checks: rank first)
            raise TypeError(f"Cannot concatenate arrays with different numbers of "
                            f"dimensions: got {shapes}.")
        if not 0 <= dimension < rank:
            raise ValueError(f"concatenate dimension out of bounds: dimension {dimension} "
                             f"for shapes {shapes}")
        for x in xs:
            if any(a != b for i, (a, b) in enumerate(zip(x.shape, xs[0].shape))
                   if i != dimension):
                raise TypeError(f"Cannot concatenate arrays with shapes that differ in "
                                f"dimensions other than the one being concatenated: "
                                f"concatenating along dimension {dimension} for shapes "
                                f"{shapes}.")
        shape = list(xs[0].shape)
        shape[dimension] = sum(x.shape[dimension] for x in xs)
        return (ShapedArray(shape, xs[0].dtype),)


class StackOp(JaxprOp, name="stack"):
    """Joins same-shape operands along a new axis `axis` of the result (of size the number
    of operands). JAX: lax.stack_p."""
    num_operands = None
    min_operands = 1
    attributes = {"axis": A.Int()}

    @classmethod
    def infer(cls, *xs, axis):
        if len({x.ndim for x in xs}) != 1:
            raise ValueError(f"Cannot stack arrays with different numbers of dimensions: "
                             f"got {', '.join(str(x.shape) for x in xs)}.")
        if any(x.shape != xs[0].shape for x in xs[1:]):
            raise ValueError(f"All input arrays must have the same shape. Got "
                             f"{', '.join(str(x.shape) for x in xs)}.")
        check_same_dtypes("lax.stack", xs, "arguments")
        rank = xs[0].ndim + 1
        if not 0 <= axis < rank:
            raise ValueError(f"axis {axis} is out of bounds for array of dimension {rank}")
        shape = list(xs[0].shape)
        shape.insert(axis, len(xs))
        return (ShapedArray(shape, xs[0].dtype),)


class UnstackOp(JaxprOp, name="unstack"):
    """The slices of the operand along `axis`, that axis dropped: one result per index
    (none for a size-0 axis). JAX: lax.unstack_p."""
    attributes = {"axis": A.Int()}

    @classmethod
    def infer(cls, x, *, axis):
        if x.ndim == 0:
            raise ValueError(f"unstack requires arrays with rank > 0, however a scalar array "
                             f"of shape {x.shape} was passed.")
        if not 0 <= axis < x.ndim:
            raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
        size = x.shape[axis]
        if not isinstance(size, (int, np.integer)):
            raise ValueError(f"unstack needs a known size along axis {axis}, got the "
                             f"symbolic dimension '{size}' (shape {x.shape})")
        shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
        return (ShapedArray(shape, x.dtype),) * int(size)


class SplitOp(JaxprOp, name="split"):
    """Consecutive pieces of the operand along `axis`, of the given `sizes` (which add up
    to that axis's size): one result per size. JAX: lax.split_p (whose transpose is one
    concatenate, not a pad per piece)."""
    attributes = {"axis": A.Int(), "sizes": A.Shape()}

    @classmethod
    def infer(cls, x, *, axis, sizes):
        if not 0 <= axis < x.ndim:
            raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
        if any(isinstance(s, int) and s < 0 for s in sizes):
            raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
        total = sum(sizes)
        if total != x.shape[axis]:
            raise ValueError(f"Sum of sizes {total} must be equal to dimension "
                             f"{x.shape[axis]} of the operand shape {x.shape}")
        return tuple(ShapedArray(x.shape[:axis] + (s,) + x.shape[axis + 1:], x.dtype)
                     for s in sizes)


class PadOp(JaxprOp, name="pad"):
    """Pads with padding_value: (low, high, interior) per dim, negatives crop.
    JAX: lax.pad_p."""
    num_operands = 2
    attributes = {"padding_config": A.Nested(depth=2, dims=True)}

    @classmethod
    def infer(cls, x, pad_value, *, padding_config):
        check_same_dtypes("pad", (x, pad_value), "operand and padding value")
        if pad_value.shape != ():
            raise TypeError(f"pad padding_value must be a scalar, got shape {pad_value.shape}")
        if len(padding_config) != x.ndim or any(len(c) != 3 for c in padding_config):
            raise ValueError(f"pad: padding_config must have one (low, high, interior) triple "
                             f"per operand dimension; got {padding_config} for shape {x.shape}")
        shape = []
        for d, (lo, hi, interior) in zip(x.shape, padding_config):
            if interior < 0:
                raise ValueError(f"pad: interior padding must be nonnegative, got "
                                 f"{padding_config}")
            size = lo + hi + d + max_dim(d - 1, 0) * interior
            if size < 0:
                raise ValueError(f"pad: dimension size would be negative ({size}) for shape "
                                 f"{x.shape} and padding_config {padding_config}")
            shape.append(size)
        return (ShapedArray(shape, x.dtype),)


class SliceOp(JaxprOp, name="slice"):
    """Static slice [start:limit:stride] per dim. JAX: lax.slice_p."""
    attributes = {"start_indices": A.Shape(), "limit_indices": A.Shape(),
                  "strides": A.Ints(default=None)}

    @classmethod
    def infer(cls, x, *, start_indices, limit_indices, strides=None):
        strides = strides or (1,) * x.ndim
        if not (len(start_indices) == len(limit_indices) == len(strides) == x.ndim):
            raise TypeError(f"slice start_indices, limit_indices and strides must have length "
                            f"{x.ndim} for operand shape {x.shape}; got {start_indices}, "
                            f"{limit_indices}, {strides}")
        shape = []
        for d, s, l, st in zip(x.shape, start_indices, limit_indices, strides):
            if not 0 <= s <= l <= d or st < 1:
                raise TypeError(f"slice indices out of range: start_indices {start_indices}, "
                                f"limit_indices {limit_indices}, strides {strides} for "
                                f"operand shape {x.shape}")
            shape.append((l - s + st - 1) // st)
        return (ShapedArray(shape, x.dtype),)


# ---- selection -----------------------------------------------------------------
class SelectNOp(JaxprOp, name="select_n"):
    """cases[which] elementwise; which is bool (2 cases) or int32. JAX: lax.select_n_p."""
    num_operands = None
    min_operands = 2
    weak_type_inputs = slice(1, None)  # the cases' (`which` does not count)

    @classmethod
    def infer(cls, which, *cases):
        check_dtype("select_n", which, "bool", "int", what="`which`")
        if is_bool(which.dtype) and len(cases) > 2:
            raise TypeError(f"select_n with a bool predicate takes at most 2 cases, got "
                            f"{len(cases)}")
        for c in cases[1:]:
            if c.shape != cases[0].shape or c.dtype != cases[0].dtype:
                raise TypeError(f"select_n cases must have the same shapes and dtypes, got "
                                + ", ".join(c.str_short() for c in cases))
        if which.shape not in ((), cases[0].shape):
            raise TypeError(f"select_n `which` must be scalar or have the same shape as cases, "
                            f"got `which` shape {which.shape} but case shape {cases[0].shape}")
        return (cases[0].strip_weak_type(),)


class ClampOp(JaxprOp, name="clamp"):
    """min(max(x, lo), hi); lo and hi are scalars or x-shaped. JAX: lax.clamp_p."""
    num_operands = 3

    @classmethod
    def infer(cls, lo, x, hi):
        check_same_dtypes("clamp", (lo, x, hi), "operands")
        check_dtype("clamp", x, "bool", "int", "float")
        for name, b in (("min", lo), ("max", hi)):
            if b.shape not in ((), x.shape):
                raise TypeError(f"clamp requires {name} shape to be either a scalar or equal "
                                f"to operand shape, got {name} shape {b.shape} and operand "
                                f"shape {x.shape}")
        return (x,)


# ---- contraction ---------------------------------------------------------------
class DotGeneralOp(JaxprOp, name="dot_general"):
    """Batched tensor contraction; dimension_numbers = ((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch)); result is batch + lhs free + rhs free dims.
    JAX: lax.dot_general_p."""
    num_operands = 2
    attributes = {"dimension_numbers": A.Nested(depth=3),
                  "precision": dot_algorithms.PrecisionKind(default=None),
                  "preferred_element_type": A.DType(default=None)}

    @classmethod
    def infer(cls, lhs, rhs, *, dimension_numbers, precision=None,
              preferred_element_type=None):
        dot_algorithms.check(precision)
        try:
            (lc, rc), (lb, rb) = dimension_numbers
        except (TypeError, ValueError):
            raise TypeError(f"dot_general dimension_numbers must be ((lhs_contracting, "
                            f"rhs_contracting), (lhs_batch, rhs_batch)), got "
                            f"{dimension_numbers}") from None
        for name, dims, aval in (("lhs contracting", lc, lhs), ("rhs contracting", rc, rhs),
                                 ("lhs batch", lb, lhs), ("rhs batch", rb, rhs)):
            _check_axes("dot_general", dims, aval.ndim, f"{name} dimensions")
        if len(lc) != len(rc) or len(lb) != len(rb):
            raise TypeError(f"dot_general requires equal numbers of lhs and rhs contracting "
                            f"and batch dimensions, got {dimension_numbers}")
        if set(lc) & set(lb) or set(rc) & set(rb):
            raise TypeError(f"dot_general requires contracting and batch dimensions to be "
                            f"disjoint, got {dimension_numbers}")
        for what, ld, rd in (("contracting", lc, rc), ("batch", lb, rb)):
            ls, rs = [lhs.shape[d] for d in ld], [rhs.shape[d] for d in rd]
            if ls != rs:
                raise TypeError(f"dot_general requires {what} dimensions to have the same "
                                f"shape, got {tuple(ls)} and {tuple(rs)} (lhs shape "
                                f"{lhs.shape}, rhs shape {rhs.shape})")
        if lhs.dtype != rhs.dtype and preferred_element_type is None:
            raise TypeError(f"dot_general requires operands of the same dtype, got "
                            f"{short_dtype_name(lhs.dtype)} and {short_dtype_name(rhs.dtype)}")
        check_dtype("dot_general", lhs, "bool", "numeric")
        lfree = [d for i, d in enumerate(lhs.shape) if i not in lc and i not in lb]
        rfree = [d for i, d in enumerate(rhs.shape) if i not in rc and i not in rb]
        shape = [lhs.shape[d] for d in lb] + lfree + rfree
        dtype = preferred_element_type if preferred_element_type is not None else lhs.dtype
        return (ShapedArray(shape, dtype),)


__all__ = [n for n in dir() if n.endswith("Op")]
