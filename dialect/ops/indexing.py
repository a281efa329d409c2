"""Dynamic slicing, gather and scatter.

As in JAX, gather/scatter indices carry the index vector in their last dimension
(index_vector_dim = indices.ndim - 1). Shape rules are plain functions
(`dynamic_slice_shape`, `gather_shape`, `scatter_check`) shared by every user.
Constraint comments (`# gather_c<N>`) follow the StableHLO spec's numbering.
"""
from __future__ import annotations

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.dtype_rules import check_dtype, check_same_dtypes, is_int
from mjax.dialect.types import ShapedArray, short_dtype_name

GATHER_FIELDS = ("offset_dims", "collapsed_slice_dims", "start_index_map",
                 "operand_batching_dims", "start_indices_batching_dims")
SCATTER_FIELDS = ("update_window_dims", "inserted_window_dims",
                  "scatter_dims_to_operand_dims", "operand_batching_dims",
                  "scatter_indices_batching_dims")
MODES = ("clip", "fill", "promise_in_bounds")


# ---- shared checks ----------------------------------------------------------------
def _sorted(op: str, name: str, dims):
    if list(dims) != sorted(dims):
        raise TypeError(f"{op}: {name} must be sorted, got {tuple(dims)}")


def _unique(op: str, name: str, dims):
    if len(set(dims)) != len(dims):
        raise TypeError(f"{op}: {name} must not repeat, got {tuple(dims)}")


def _in_range(op: str, name: str, dims, rank: int, what: str):
    for d in dims:
        if not 0 <= d < rank:
            raise TypeError(f"{op}: {name} {tuple(dims)} has dimension {d} out of range "
                            f"[0, {rank}) for {what}")


def _disjoint(op: str, name1: str, dims1, name2: str, dims2):
    if set(dims1) & set(dims2):
        raise TypeError(f"{op}: {name1} {tuple(dims1)} and {name2} {tuple(dims2)} must be "
                        f"disjoint")


def _index_dtypes(op: str, indices, what: str = "indices"):
    for i in indices:
        if not is_int(i.dtype):
            raise TypeError(f"{op} {what} must have an integer dtype, got "
                            f"{short_dtype_name(i.dtype)}")


# ---- dynamic_slice / dynamic_update_slice ------------------------------------------
def _scalar_start_indices(op: str, operand: ShapedArray, starts) -> None:
    if len(starts) != operand.ndim:
        raise TypeError(f"{op} start_indices must have length equal to the number of "
                        f"dimensions of the operand, got {len(starts)} indices for operand "
                        f"shape {operand.shape}")
    for i, s in enumerate(starts):
        if s.shape != ():
            raise TypeError(f"{op} start index {i} must be a scalar, got shape {s.shape}")
    _index_dtypes(op, starts, "start indices")
    if any(s.dtype != starts[0].dtype for s in starts[1:]):
        raise TypeError(f"{op} start indices must all have the same dtype, got "
                        + ", ".join(short_dtype_name(s.dtype) for s in starts))


def dynamic_slice_shape(operand: tuple[int, ...], slice_sizes: tuple[int, ...]):
    """Result shape of dynamic_slice. JAX: slicing._dynamic_slice_shape_rule."""
    if len(slice_sizes) != len(operand):
        raise TypeError(f"dynamic_slice slice_sizes must have one entry per operand "
                        f"dimension, got slice_sizes {tuple(slice_sizes)} for operand shape "
                        f"{operand}")
    if any(s < 0 for s in slice_sizes):
        raise TypeError(f"dynamic_slice slice_sizes must be greater than or equal to zero, "
                        f"got slice_sizes {tuple(slice_sizes)}")
    if any(s > d for s, d in zip(slice_sizes, operand)):
        raise TypeError(f"dynamic_slice slice_sizes must be less than or equal to operand "
                        f"shape, got slice_sizes {tuple(slice_sizes)} for operand shape "
                        f"{operand}")
    return tuple(slice_sizes)


class DynamicSliceOp(JaxprOp, name="dynamic_slice"):
    """Slice of `slice_sizes` at clamped scalar start indices. JAX: lax.dynamic_slice_p."""
    num_operands = None
    min_operands = 1
    attributes = {"slice_sizes": A.Shape()}
    weak_type_inputs = slice(0, 1)     # the operand's (the indices' do not count)

    @classmethod
    def infer(cls, x, *starts, slice_sizes):
        _scalar_start_indices("dynamic_slice", x, starts)
        return (ShapedArray(dynamic_slice_shape(x.shape, slice_sizes), x.dtype),)


class DynamicUpdateSliceOp(JaxprOp, name="dynamic_update_slice"):
    """Writes `update` at clamped scalar start indices. JAX: lax.dynamic_update_slice_p."""
    num_operands = None
    min_operands = 2

    @classmethod
    def infer(cls, x, update, *starts):
        check_same_dtypes("dynamic_update_slice", (x, update), "operand and update")
        if update.ndim != x.ndim:
            raise TypeError(f"dynamic_update_slice update must have the same rank as "
                            f"operand, got update shape {update.shape} for operand shape "
                            f"{x.shape}")
        if any(u > d for u, d in zip(update.shape, x.shape)):
            raise TypeError(f"dynamic_update_slice update shape must be smaller than operand "
                            f"shape, got update shape {update.shape} for operand shape "
                            f"{x.shape}")
        _scalar_start_indices("dynamic_update_slice", x, starts)
        return (x.strip_weak_type(),)


# ---- gather ------------------------------------------------------------------------
def gather_shape(operand: tuple[int, ...], indices: tuple[int, ...], dimension_numbers: dict,
                 slice_sizes: tuple[int, ...]) -> tuple[int, ...]:
    """Result shape of gather, checking every StableHLO/JAX constraint.

    JAX: slicing._gather_shape_rule. Output = indices batch dims (all but the last)
    interleaved with the kept slice dims, which land at `offset_dims`.
    """
    dn = dimension_numbers
    offset, collapsed = dn["offset_dims"], dn["collapsed_slice_dims"]
    start_map, obatch = dn["start_index_map"], dn["operand_batching_dims"]
    ibatch = dn["start_indices_batching_dims"]
    rank = len(operand)
    if len(indices) < 1:
        raise TypeError("gather indices must have rank >= 1 (the last dimension holds the "
                        "index vector), got shape ()")
    ivd = len(indices) - 1
    out_rank = len(offset) + ivd
    _sorted("gather", "offset_dims", offset)                           # gather_c7
    _unique("gather", "offset_dims", offset)
    _in_range("gather", "offset_dims", offset, out_rank, f"an output of rank {out_rank}")
    if len(start_map) != indices[-1]:                                  # gather_c13
        raise TypeError(f"gather: start_index_map {tuple(start_map)} has {len(start_map)} "
                        f"entries but the index vector dimension of indices shape {indices} "
                        f"has size {indices[-1]}; they must be equal")
    _in_range("gather", "start_index_map", start_map, rank, f"operand rank {rank}")
    _unique("gather", "start_index_map", start_map)
    _sorted("gather", "collapsed_slice_dims", collapsed)
    _in_range("gather", "collapsed_slice_dims", collapsed, rank, f"operand rank {rank}")
    _unique("gather", "collapsed_slice_dims", collapsed)
    _unique("gather", "operand_batching_dims", obatch)
    _sorted("gather", "operand_batching_dims", obatch)
    _in_range("gather", "operand_batching_dims", obatch, rank, f"operand rank {rank}")
    _disjoint("gather", "collapsed_slice_dims", collapsed, "operand_batching_dims", obatch)
    _disjoint("gather", "start_index_map", start_map, "operand_batching_dims", obatch)
    _unique("gather", "start_indices_batching_dims", ibatch)
    _in_range("gather", "start_indices_batching_dims", ibatch, len(indices),
              f"indices of rank {len(indices)}")
    if ivd in ibatch:
        raise TypeError(f"gather: start_indices_batching_dims {tuple(ibatch)} must not "
                        f"contain the index vector dimension {ivd}")
    if len(obatch) != len(ibatch):
        raise TypeError(f"gather requires equal numbers of operand_batching_dims and "
                        f"start_indices_batching_dims, got {tuple(obatch)} and {tuple(ibatch)}")
    ob_shape = tuple(operand[d] for d in obatch)
    ib_shape = tuple(indices[d] for d in ibatch)
    if ob_shape != ib_shape:
        raise TypeError(f"gather requires operand batching dimensions and indices batching "
                        f"dimensions to have the same shape, got {ob_shape} and {ib_shape}")
    if len(slice_sizes) != rank:                                       # gather_c8
        raise TypeError(f"gather slice_sizes must have one entry per operand dimension, got "
                        f"slice_sizes {tuple(slice_sizes)} for operand shape {operand}")
    if rank != len(offset) + len(collapsed) + len(obatch):
        raise TypeError(f"gather: every operand dimension must be an offset, collapsed or "
                        f"batching dimension, got operand rank {rank} with offset_dims "
                        f"{tuple(offset)}, collapsed_slice_dims {tuple(collapsed)}, "
                        f"operand_batching_dims {tuple(obatch)}")
    empty_indices = any(d == 0 for d in indices)
    for i, (s, d) in enumerate(zip(slice_sizes, operand)):
        if not empty_indices and not 0 <= s <= d:
            raise TypeError(f"gather slice size {s} at index {i} is out of range [0, {d}] "
                            f"for operand shape {operand}")
    for d in collapsed:
        if slice_sizes[d] != 1:
            raise TypeError(f"gather can only collapse slice dims of size 1, got slice size "
                            f"{slice_sizes[d]} for collapsed dimension {d}")
    for d in obatch:
        if slice_sizes[d] > 1:
            raise TypeError(f"gather operand batching dims must have slice size 0 or 1, got "
                            f"slice size {slice_sizes[d]} for dimension {d}")
    kept = iter(s for i, s in enumerate(slice_sizes) if i not in collapsed and i not in obatch)
    batch = iter(indices[:-1])
    return tuple(next(kept) if i in offset else next(batch) for i in range(out_rank))


class GatherOp(JaxprOp, name="gather"):
    """Slices of operand starting at the index vectors in `indices`. JAX: lax.gather_p.

    The index vector is the last dimension of `indices`. `mode`: "clip" clamps starts into
    bounds, "fill" returns `fill_value` (default NaN, lowest/highest integer, True) for
    slices not wholly in bounds, "promise_in_bounds" leaves it to the backend.
    """
    num_operands = 2
    attributes = {"dimension_numbers": A.Dict(GATHER_FIELDS), "slice_sizes": A.Shape(),
                  "indices_are_sorted": A.Bool(default=False),
                  "unique_indices": A.Bool(default=False),
                  "mode": A.Str(default="fill", choices=MODES),
                  "fill_value": A.Float(default=None)}
    weak_type_inputs = slice(0, 1)     # the operand's (the indices' do not count)

    @classmethod
    def infer(cls, x, indices, *, dimension_numbers, slice_sizes, indices_are_sorted,
              unique_indices, mode, fill_value):
        check_dtype("gather", x, "any")
        _index_dtypes("gather", [indices])
        shape = gather_shape(x.shape, indices.shape, dimension_numbers, slice_sizes)
        return (ShapedArray(shape, x.dtype),)


# ---- scatter -----------------------------------------------------------------------
def scatter_window_sizes(operand: tuple[int, ...], updates: tuple[int, ...],
                         dimension_numbers: dict) -> list[int]:
    """The size of the operand window each update writes, per operand dimension."""
    dn = dimension_numbers
    skipped = set(dn["inserted_window_dims"]) | set(dn["operand_batching_dims"])
    window = iter(updates[d] for d in dn["update_window_dims"])
    return [1 if i in skipped else next(window) for i in range(len(operand))]


def scatter_check(op: str, operand: tuple[int, ...], indices: tuple[int, ...],
                  updates: tuple[int, ...], dimension_numbers: dict) -> None:
    """Checks scatter's shapes and dimension numbers. JAX: slicing._scatter_shape_rule."""
    dn = dimension_numbers
    uwd, iwd = dn["update_window_dims"], dn["inserted_window_dims"]
    to_operand, obatch = dn["scatter_dims_to_operand_dims"], dn["operand_batching_dims"]
    ibatch = dn["scatter_indices_batching_dims"]
    rank = len(operand)
    if len(indices) < 1:
        raise TypeError(f"{op} indices must have rank >= 1 (the last dimension holds the "
                        f"index vector), got shape ()")
    ivd = len(indices) - 1
    expected_rank = ivd + len(uwd)
    if len(updates) != expected_rank:                                  # scatter_c4
        raise TypeError(f"{op}: updates must have rank {expected_rank} (indices batch rank "
                        f"{ivd} + {len(uwd)} update_window_dims), got updates shape {updates}")
    _sorted(op, "update_window_dims", uwd)
    _unique(op, "update_window_dims", uwd)
    _in_range(op, "update_window_dims", uwd, len(updates), f"updates of rank {len(updates)}")
    _sorted(op, "inserted_window_dims", iwd)
    _unique(op, "inserted_window_dims", iwd)
    _in_range(op, "inserted_window_dims", iwd, rank, f"operand rank {rank}")
    _sorted(op, "operand_batching_dims", obatch)
    _unique(op, "operand_batching_dims", obatch)
    _in_range(op, "operand_batching_dims", obatch, rank, f"operand rank {rank}")
    _disjoint(op, "inserted_window_dims", iwd, "operand_batching_dims", obatch)
    _disjoint(op, "scatter_dims_to_operand_dims", to_operand, "operand_batching_dims", obatch)
    _unique(op, "scatter_indices_batching_dims", ibatch)
    _in_range(op, "scatter_indices_batching_dims", ibatch, len(indices),
              f"indices of rank {len(indices)}")
    if ivd in ibatch:
        raise TypeError(f"{op}: scatter_indices_batching_dims {tuple(ibatch)} must not "
                        f"contain the index vector dimension {ivd}")
    if len(obatch) != len(ibatch):
        raise TypeError(f"{op} requires equal numbers of operand_batching_dims and "
                        f"scatter_indices_batching_dims, got {tuple(obatch)} and "
                        f"{tuple(ibatch)}")
    ob_shape = tuple(operand[d] for d in obatch)
    ib_shape = tuple(indices[d] for d in ibatch)
    if ob_shape != ib_shape:
        raise TypeError(f"{op} requires operand batching dimensions and indices batching "
                        f"dimensions to have the same shape, got {ob_shape} and {ib_shape}")
    if rank != len(uwd) + len(iwd) + len(obatch):
        raise TypeError(f"{op}: every operand dimension must be an update window, inserted "
                        f"or batching dimension, got operand rank {rank} with "
                        f"update_window_dims {tuple(uwd)}, inserted_window_dims {tuple(iwd)}, "
                        f"operand_batching_dims {tuple(obatch)}")
    if len(to_operand) != indices[-1]:
        raise TypeError(f"{op}: scatter_dims_to_operand_dims {tuple(to_operand)} has "
                        f"{len(to_operand)} entries but the index vector dimension of indices "
                        f"shape {indices} has size {indices[-1]}; they must be equal")
    _in_range(op, "scatter_dims_to_operand_dims", to_operand, rank, f"operand rank {rank}")
    _unique(op, "scatter_dims_to_operand_dims", to_operand)
    window_operand_dims = [i for i in range(rank) if i not in iwd and i not in obatch]
    for ud, od in zip(uwd, window_operand_dims):
        if updates[ud] > operand[od]:
            raise TypeError(f"{op}: update window dimension {ud} of updates shape {updates} "
                            f"has size {updates[ud]}, larger than operand dimension {od} of "
                            f"size {operand[od]} (operand shape {operand})")
    scatter_dims = [d for d in range(len(updates)) if d not in uwd]
    for ud, size in zip(scatter_dims, indices[:-1]):
        if updates[ud] != size:
            raise TypeError(f"{op}: scatter dimension {ud} of updates shape {updates} must "
                            f"match the indices batch shape {indices[:-1]}, got {updates[ud]} "
                            f"and {size}")


class Scatter(JaxprOp):
    """Base of scatter*: combines `updates` into operand windows at `indices`.

    `mode`: "clip" clamps starts into bounds; "fill" drops updates whose window is not
    wholly in bounds; "promise_in_bounds" leaves it to the backend.
    """

    num_operands = 3
    attributes = {"dimension_numbers": A.Dict(SCATTER_FIELDS),
                  "indices_are_sorted": A.Bool(default=False),
                  "unique_indices": A.Bool(default=False),
                  "mode": A.Str(default="fill", choices=MODES)}
    dtypes: tuple[str, ...] = ("any",)
    weak_type_inputs = slice(0, 1)     # the operand's (indices and updates do not count)

    @classmethod
    def infer(cls, x, indices, updates, *, dimension_numbers, indices_are_sorted,
              unique_indices, mode):
        op = cls.primitive
        check_same_dtypes(op, (x, updates), "operand and updates")
        check_dtype(op, x, *cls.dtypes)
        _index_dtypes(op, [indices])
        scatter_check(op, x.shape, indices.shape, updates.shape, dimension_numbers)
        return (x.strip_weak_type(),)


class ScatterOp(Scatter, name="scatter"):
    """Overwrites operand windows with `updates` (duplicates: any one wins). JAX: lax.scatter_p."""


class ScatterAddOp(Scatter, name="scatter_add"):
    """Adds `updates` into operand windows. JAX: lax.scatter_add_p."""
    dtypes = ("numeric",)


class ScatterMulOp(Scatter, name="scatter_mul"):
    """Multiplies operand windows by `updates`. JAX: lax.scatter_mul_p."""
    dtypes = ("numeric",)


class ScatterMinOp(Scatter, name="scatter_min"):
    """Elementwise minimum of operand windows and `updates`. JAX: lax.scatter_min_p."""


class ScatterMaxOp(Scatter, name="scatter_max"):
    """Elementwise maximum of operand windows and `updates`. JAX: lax.scatter_max_p."""


__all__ = [n for n in dir() if n.endswith("Op")]
