"""Collectives over named axes: psum, pmax, pmin, all_gather, psum_scatter, all_to_all,
ppermute, axis_index.

Each op names the axes it works over in `axes` (JAX's `axis_name`, always a tuple of
strings here). Under `vmap(..., axis_name=n)` the batching rules turn the ops naming `n`
into reductions, gathers and permutations along the batch axis; under pmap/shard_map they
will lower to device collectives. Ops whose result shape depends on the size of the named
axis carry it as `axis_size` (JAX does the same), so shapes are inferred from the op alone.
"""
from __future__ import annotations

import numpy as np

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.dtype_rules import check_dtype
from mjax.dialect.types import ShapedArray


class AxisNames(A.AttrKind):
    """A non-empty tuple of axis names (strings)."""

    expected = "a non-empty sequence of axis names (strings)"

    def accepts(self, v):
        return (isinstance(v, (tuple, list)) and len(v) > 0
                and all(isinstance(n, str) and not isinstance(n, A.Symbol) for n in v))

    def normalize(self, v):
        return tuple(str(n) for n in v)


def _check_unique_names(op: str, axes):
    if len(set(axes)) != len(axes):
        raise ValueError(f"{op}: axis names must not repeat, got {axes}")


def _check_axis(op: str, what: str, axis: int, rank: int):
    if not 0 <= axis < rank:
        raise ValueError(f"{op}: {what} {axis} is out of range for rank {rank}")


class Collective(JaxprOp):
    """Base of the collectives: one operand, the axis names in `axes`."""

    attributes = {"axes": AxisNames()}


class _Reducer(Collective):
    """Elementwise reduction across the named axes: the result has the operand's type."""
    dtypes: tuple[str, ...] = ("numeric",)

    @classmethod
    def infer(cls, x, *, axes):
        _check_unique_names(cls.primitive, axes)
        check_dtype(cls.primitive, x, *cls.dtypes)
        return (x,)


class PsumOp(_Reducer, name="psum"):
    """Sum over the named axes. JAX: lax.psum_p."""


class PmaxOp(_Reducer, name="pmax"):
    """Maximum over the named axes. JAX: lax.pmax_p."""
    dtypes = ("numeric", "bool")


class PminOp(_Reducer, name="pmin"):
    """Minimum over the named axes. JAX: lax.pmin_p."""
    dtypes = ("numeric", "bool")


class AllGatherOp(Collective, name="all_gather"):
    """Every member's operand, stacked (tiled: concatenated) along `axis`.
    JAX: lax.all_gather_p (all_gather_dimension is `axis`)."""
    attributes = {"axes": AxisNames(), "axis": A.Int(default=0), "tiled": A.Bool(default=False),
                  "axis_size": A.Int()}

    @classmethod
    def infer(cls, x, *, axes, axis, tiled, axis_size):
        _check_unique_names("all_gather", axes)
        shape = list(x.shape)
        _check_axis("all_gather", "axis", axis, len(shape) + (0 if tiled else 1))
        if tiled:
            shape[axis] *= axis_size
        else:
            shape.insert(axis, axis_size)
        return (ShapedArray(tuple(shape), x.dtype),)


class PsumScatterOp(Collective, name="psum_scatter"):
    """The sum over the named axes, of which each member keeps its own block along
    `scatter_dimension` (tiled: a block of size/axis_size; else one index, dropped).
    JAX: lax.reduce_scatter_p."""
    attributes = {"axes": AxisNames(), "scatter_dimension": A.Int(default=0),
                  "tiled": A.Bool(default=False), "axis_size": A.Int()}

    @classmethod
    def infer(cls, x, *, axes, scatter_dimension, tiled, axis_size):
        _check_unique_names("psum_scatter", axes)
        check_dtype("psum_scatter", x, "numeric")
        shape = list(x.shape)
        _check_axis("psum_scatter", "scatter_dimension", scatter_dimension, len(shape))
        size = shape[scatter_dimension]
        if tiled:
            if size % axis_size:
                raise ValueError(f"psum_scatter: dimension {scatter_dimension} of shape "
                                 f"{x.shape} (size {size}) must be divisible by the axis "
                                 f"size {axis_size} when tiled")
            shape[scatter_dimension] = size // axis_size
        else:
            if size != axis_size:
                raise ValueError(f"psum_scatter: dimension {scatter_dimension} of shape "
                                 f"{x.shape} must equal the axis size {axis_size}, got {size}")
            del shape[scatter_dimension]
        return (ShapedArray(tuple(shape), x.dtype),)


class AllToAllOp(Collective, name="all_to_all"):
    """Splits the operand along `split_axis` across the members and concatenates what
    each receives along `concat_axis` (not tiled: the split axis, of the axis size, is
    removed and a new one inserted at `concat_axis`). JAX: lax.all_to_all_p."""
    attributes = {"axes": AxisNames(), "split_axis": A.Int(), "concat_axis": A.Int(),
                  "tiled": A.Bool(default=False), "axis_size": A.Int()}

    @classmethod
    def infer(cls, x, *, axes, split_axis, concat_axis, tiled, axis_size):
        _check_unique_names("all_to_all", axes)
        shape = list(x.shape)
        _check_axis("all_to_all", "split_axis", split_axis, len(shape))
        size = shape[split_axis]
        if tiled:
            _check_axis("all_to_all", "concat_axis", concat_axis, len(shape))
            if size % axis_size:
                raise ValueError(f"all_to_all: split_axis {split_axis} of shape {x.shape} "
                                 f"(size {size}) must be divisible by the axis size "
                                 f"{axis_size}")
            shape[split_axis] = size // axis_size
            shape[concat_axis] *= axis_size
        else:
            _check_axis("all_to_all", "concat_axis", concat_axis, len(shape))
            if size != axis_size:
                raise ValueError(f"all_to_all: split_axis {split_axis} of shape {x.shape} "
                                 f"must equal the axis size {axis_size}, got {size}")
            del shape[split_axis]
            shape.insert(concat_axis, axis_size)
        return (ShapedArray(tuple(shape), x.dtype),)


class PpermuteOp(Collective, name="ppermute"):
    """Member `dst` receives the operand of member `src` for each (src, dst) in `perm`;
    members no pair sends to receive zeros. JAX: lax.ppermute_p."""
    attributes = {"axes": AxisNames(), "perm": A.Nested()}

    @classmethod
    def infer(cls, x, *, axes, perm):
        _check_unique_names("ppermute", axes)
        if any(len(p) != 2 for p in perm):
            raise ValueError(f"ppermute: perm must be a sequence of (source, destination) "
                             f"pairs, got {perm}")
        srcs, dsts = [p[0] for p in perm], [p[1] for p in perm]
        if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
            raise ValueError(f"ppermute: perm sources and destinations must be unique, got "
                             f"{perm}")
        return (x,)


class AxisIndexOp(JaxprOp, name="axis_index"):
    """This member's index along the named axis (int32 scalar). JAX: lax.axis_index_p."""
    num_operands = 0
    attributes = {"axes": AxisNames()}

    @classmethod
    def infer(cls, *, axes):
        if len(axes) != 1:
            raise ValueError(f"axis_index takes one axis name, got {axes}")
        return (ShapedArray((), np.dtype(np.int32)),)


COLLECTIVES = (PsumOp, PmaxOp, PminOp, AllGatherOp, PsumScatterOp, AllToAllOp, PpermuteOp,
               AxisIndexOp)

__all__ = [n for n in dir() if n.endswith("Op")] + ["COLLECTIVES", "Collective"]
