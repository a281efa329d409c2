"""Differentiation rules for the indexing family (dialect/ops/indexing.py): JVP rules,
transposes of the linear ops, and declared reasons where JAX does not differentiate.

Kept apart from the family's lowering file (passes/rules/indexing.py); imported by
passes/__init__.py. JAX: the ad rules in lax/slicing.py.

The duality every rule here leans on: a gather and a scatter with "mirrored" dimension
numbers (offset_dims <-> update_window_dims, collapsed_slice_dims <-> inserted_window_dims,
start_index_map <-> scatter_dims_to_operand_dims) touch the same operand windows, so
gather's transpose is a scatter_add and scatter_add's transpose (for the updates) is a
gather. Both keep the op's `mode`: "clip" clamps the same windows on both sides, "fill"
drops (scatter) exactly the windows it fills (gather, with fill value 0 for tangents).
"""
from __future__ import annotations

import math

import numpy as np

from mjax.dialect.ops import indexing as I
from mjax.dialect.ops.indexing import scatter_window_sizes
from mjax.passes.registry import PassError
from mjax.passes.rules import ad_util as AD


# ---- gather <-> scatter dimension numbers ------------------------------------------
def scatter_dnums_of_gather(dn: dict) -> dict:
    """Dimension numbers of the scatter that writes where a gather with `dn` reads."""
    return {"update_window_dims": dn["offset_dims"],
            "inserted_window_dims": dn["collapsed_slice_dims"],
            "scatter_dims_to_operand_dims": dn["start_index_map"],
            "operand_batching_dims": dn["operand_batching_dims"],
            "scatter_indices_batching_dims": dn["start_indices_batching_dims"]}


def gather_dnums_of_scatter(dn: dict) -> dict:
    """Dimension numbers of the gather that reads where a scatter with `dn` writes."""
    return {"offset_dims": dn["update_window_dims"],
            "collapsed_slice_dims": dn["inserted_window_dims"],
            "start_index_map": dn["scatter_dims_to_operand_dims"],
            "operand_batching_dims": dn["operand_batching_dims"],
            "start_indices_batching_dims": dn["scatter_indices_batching_dims"]}


def gather_windows(b, x, indices, updates_shape, dimension_numbers, mode,
                   indices_are_sorted=False):
    """The updates-shaped values of operand-shaped `x` at the windows a scatter with
    `dimension_numbers` writes (0 for windows a "fill" scatter drops)."""
    sizes = scatter_window_sizes(AD.aval(x).shape, tuple(updates_shape), dimension_numbers)
    return b.gather(x, indices, dimension_numbers=gather_dnums_of_scatter(dimension_numbers),
                    slice_sizes=tuple(sizes), indices_are_sorted=indices_are_sorted,
                    unique_indices=False, mode=mode, fill_value=0.0)


def _select(b, pred, on_true, on_false):
    return b.select_n(pred, on_false, on_true)


# ---- dynamic_slice / dynamic_update_slice -------------------------------------------
@AD.jvp_rule(I.DynamicSliceOp)
def _dynamic_slice_jvp(b, primals, tangents, *, slice_sizes):
    x, *starts = primals
    out = b.dynamic_slice(x, *starts, slice_sizes=slice_sizes)
    if tangents[0] is None:
        return [out], [None]
    return [out], [b.dynamic_slice(tangents[0], *starts, slice_sizes=slice_sizes)]


@AD.transpose_rule(I.DynamicSliceOp)
def _dynamic_slice_transpose(b, ct, x, *starts, slice_sizes):
    # (JAX's zeros here are lax.full: a broadcast_in_dim of the scalar 0, which
    # make_jaxpr prints; a splat constant would print as a bare literal)
    a = AD.aval(x)
    zeros = b.broadcast_in_dim(b.constant(np.zeros((), a.dtype)), shape=tuple(a.shape),
                               broadcast_dimensions=())
    return [b.dynamic_update_slice(zeros, ct, *starts)] + [None] * len(starts)


@AD.jvp_rule(I.DynamicUpdateSliceOp)
def _dynamic_update_slice_jvp(b, primals, tangents):
    x, upd, *starts = primals
    out = b.dynamic_update_slice(x, upd, *starts)
    if tangents[0] is None and tangents[1] is None:
        return [out], [None]
    tx = AD.instantiate(b, tangents[0], AD.aval(x))
    tu = AD.instantiate(b, tangents[1], AD.aval(upd))
    return [out], [b.dynamic_update_slice(tx, tu, *starts)]


@AD.transpose_rule(I.DynamicUpdateSliceOp)
def _dynamic_update_slice_transpose(b, ct, x, upd, *starts):
    ushape = AD.aval(upd).shape
    t_x = b.dynamic_update_slice(ct, AD.zeros(b, AD.aval(upd)), *starts) \
        if AD.is_linear(x) else None
    t_u = b.dynamic_slice(ct, *starts, slice_sizes=tuple(ushape)) if AD.is_linear(upd) else None
    return [t_x, t_u] + [None] * len(starts)


# ---- gather --------------------------------------------------------------------------
@AD.jvp_rule(I.GatherOp)
def _gather_jvp(b, primals, tangents, **params):
    # JAX: _gather_jvp_rule. Linear in the operand; out-of-bounds windows get tangent 0.
    x, indices = primals
    out = b.gather(x, indices, **params)
    if tangents[0] is None:
        return [out], [None]
    return [out], [b.gather(tangents[0], indices, **{**params, "fill_value": 0.0})]


@AD.transpose_rule(I.GatherOp)
def _gather_transpose(b, ct, x, indices, *, dimension_numbers, slice_sizes,
                      indices_are_sorted, unique_indices, mode, fill_value):
    # JAX: _gather_transpose_rule. Windows read twice get both cotangents (scatter_add);
    # windows a "fill" gather filled get none (the scatter drops them).
    zeros = AD.zeros(b, AD.aval(x))
    out = b.scatter_add(zeros, indices, ct,
                        dimension_numbers=scatter_dnums_of_gather(dimension_numbers),
                        indices_are_sorted=indices_are_sorted,
                        unique_indices=unique_indices, mode=mode)
    return [out, None]


# ---- scatter_add: linear in (operand, updates) -----------------------------------------
@AD.jvp_rule(I.ScatterAddOp)
def _scatter_add_jvp(b, primals, tangents, **params):
    # JAX: _scatter_addsub_jvp.
    x, indices, updates = primals
    t_x, _, t_u = tangents
    out = b.scatter_add(x, indices, updates, **params)
    if t_x is None and t_u is None:
        return [out], [None]
    t_x = AD.instantiate(b, t_x, AD.aval(x))
    t_u = AD.instantiate(b, t_u, AD.aval(updates))
    return [out], [b.scatter_add(t_x, indices, t_u, **params)]


@AD.transpose_rule(I.ScatterAddOp)
def _scatter_add_transpose(b, ct, x, indices, updates, *, dimension_numbers,
                           indices_are_sorted, unique_indices, mode):
    # JAX: _scatter_addsub_transpose_rule.
    t_x = ct if AD.is_linear(x) else None
    t_u = None
    if AD.is_linear(updates):
        t_u = gather_windows(b, ct, indices, AD.aval(updates).shape, dimension_numbers, mode,
                             indices_are_sorted)
    return [t_x, None, t_u]


# ---- scatter (overwrite) ---------------------------------------------------------------
def _update_ids(b, updates_shape, update_window_dims):
    """1, 2, 3, ... per update window (constant across each window), shaped like updates."""
    ids_shape = tuple(1 if d in update_window_dims else s for d, s in enumerate(updates_shape))
    n = math.prod(ids_shape)
    dtype = np.dtype(np.int32 if n < np.iinfo(np.int32).max else np.int64)
    ids = b.iota(dtype=dtype, shape=(n,), dimension=0)
    ids = b.add(ids, AD.constant(b, np.ones((n,), dtype)))
    ids = b.reshape(ids, new_sizes=ids_shape)
    return b.broadcast_in_dim(ids, shape=tuple(updates_shape),
                              broadcast_dimensions=tuple(range(len(updates_shape))))


@AD.jvp_rule(I.ScatterOp)
def _scatter_jvp(b, primals, tangents, **params):
    x, indices, updates = primals
    t_x, _, t_u = tangents
    if t_x is None and t_u is None:
        return [b.scatter(x, indices, updates, **params)], [None]
    t_x = AD.instantiate(b, t_x, AD.aval(x))
    t_u = AD.instantiate(b, t_u, AD.aval(updates))
    if params["unique_indices"]:
        return ([b.scatter(x, indices, updates, **params)],
                [b.scatter(t_x, indices, t_u, **params)])
    # JAX: _scatter_jvp. Which of several updates to one element wins is unspecified, so
    # scatter an id per update window, gather the ids back to see which update won each
    # element, mask every operand element that was overwritten and every update that lost,
    # and finish with scatter_add (linear, so no transpose of scatter is needed). The primal
    # comes from the same masks so that value and tangent agree on the winner.
    dn = params["dimension_numbers"]
    ushape = AD.aval(updates).shape
    ids = _update_ids(b, ushape, dn["update_window_dims"])
    id_zeros = AD.zeros(b, AD.aval(x).update(dtype=AD.aval(ids).dtype))
    scattered = b.scatter(id_zeros, indices, ids, **params)
    won = b.eq(ids, gather_windows(b, scattered, indices, ushape, dn, params["mode"],
                                   params["indices_are_sorted"]))
    kept = b.eq(scattered, id_zeros)

    def masked(pred, v):
        return _select(b, pred, v, AD.zeros_like(b, v))
    out = b.scatter_add(masked(kept, x), indices, masked(won, updates), **params)
    t_out = b.scatter_add(masked(kept, t_x), indices, masked(won, t_u), **params)
    return [out], [t_out]


@AD.transpose_rule(I.ScatterOp)
def _scatter_transpose(b, ct, x, indices, updates, *, dimension_numbers,
                       indices_are_sorted, unique_indices, mode):
    # JAX: _scatter_transpose_rule. Only the unique_indices JVP emits a scatter of tangents.
    if not unique_indices:
        raise PassError(b.loc, "cannot transpose jaxpr.scatter without unique_indices=True "
                               "(JAX has the same restriction); the JVP of a scatter with "
                               "possibly repeated indices uses scatter_add instead")
    params = dict(dimension_numbers=dimension_numbers, indices_are_sorted=indices_are_sorted,
                  unique_indices=unique_indices, mode=mode)
    t_x = t_u = None
    if AD.is_linear(x):  # the overwritten elements get no cotangent
        t_x = b.scatter(ct, indices, AD.zeros(b, AD.aval(updates)), **params)
    if AD.is_linear(updates):
        t_u = gather_windows(b, ct, indices, AD.aval(updates).shape, dimension_numbers, mode,
                             indices_are_sorted)
    return [t_x, None, t_u]


# ---- scatter_mul -------------------------------------------------------------------------
class _UniqueIndicesNeeded(PassError, NotImplementedError):
    """JAX's class: its scatter_mul gradient is not implemented for repeated indices."""


def _scatter_mul_jvp_operand(b, t, x, indices, updates, **params):
    return b.scatter_mul(t, indices, updates, **params)


def _scatter_mul_jvp_updates(b, t, x, indices, updates, **params):
    # JAX: _scatter_mul_jvp_rhs. With unique indices each element is x * u for one u.
    if not params["unique_indices"]:
        raise _UniqueIndicesNeeded(b.loc, "cannot differentiate jaxpr.scatter_mul with respect "
                                          "to its updates unless unique_indices=True (JAX "
                                          "has the same restriction)")
    return b.mul(x, b.scatter_add(AD.zeros_like(b, x), indices, t, **params))


AD.defjvp(I.ScatterMulOp, _scatter_mul_jvp_operand, None, _scatter_mul_jvp_updates)


@AD.transpose_rule(I.ScatterMulOp)
def _scatter_mul_transpose(b, ct, x, indices, updates, *, dimension_numbers,
                           indices_are_sorted, unique_indices, mode):
    # JAX: _scatter_mul_transpose_rule. Linear in one of operand / updates at a time.
    params = dict(dimension_numbers=dimension_numbers, indices_are_sorted=indices_are_sorted,
                  unique_indices=unique_indices, mode=mode)
    if AD.is_linear(x) and AD.is_linear(updates):
        raise ValueError("scatter_mul is not linear in operand and updates together")
    if AD.is_linear(x):
        return [b.scatter_mul(ct, indices, updates, **params), None, None]
    if not unique_indices:
        raise _UniqueIndicesNeeded(b.loc, "cannot transpose jaxpr.scatter_mul with respect "
                                          "to its updates unless unique_indices=True (JAX "
                                          "has the same restriction)")
    t_u = gather_windows(b, b.mul(ct, x), indices, AD.aval(updates).shape, dimension_numbers,
                         mode, indices_are_sorted)
    return [None, None, t_u]


# ---- scatter_min / scatter_max -------------------------------------------------------------
def _scatter_extremal_jvp(op):
    # JAX: _scatter_extremal_jvp. Each output element's tangent averages the tangents of the
    # values that attain it: the updates equal to it and, if it kept its value, the operand.
    def rule(b, primals, tangents, **params):
        x, indices, updates = primals
        t_x, _, t_u = tangents
        out = b.emit(op, x, indices, updates, **params)[0]
        if t_x is None and t_u is None:
            return [out], [None]
        t_x = AD.instantiate(b, t_x, AD.aval(x))
        t_u = AD.instantiate(b, t_u, AD.aval(updates))
        dn, mode = params["dimension_numbers"], params["mode"]
        ushape = AD.aval(updates).shape

        def windows(v):
            return gather_windows(b, v, indices, ushape, dn, mode, params["indices_are_sorted"])

        def count(v):  # per update element: the sum of v over the updates hitting its target
            return windows(b.scatter_add(AD.zeros_like(b, x), indices, v, **params))

        target = windows(out)
        won = b.eq(updates, target)
        kept = b.eq(windows(x), target)
        one, zero = AD.full_like(b, updates, 1), AD.zeros_like(b, updates)
        n_won = count(_select(b, won, one, zero))
        n_refs = count(one)
        n_refs = _select(b, b.eq(n_refs, zero), one, n_refs)  # dropped windows: no 1/0
        share_kept = b.div(one, b.add(n_won, one))
        u_coef = _select(b, won, _select(b, kept, share_kept, b.div(one, n_won)), zero)
        # The operand's own tangent is added back by the final scatter_add; per update that
        # hits it, remove 1/n_refs of it and put back its share if it kept its value.
        x_coef = b.div(b.sub(_select(b, kept, share_kept, zero), one), n_refs)
        t_updates = b.add(b.mul(windows(t_x), x_coef), b.mul(t_u, u_coef))
        return [out], [b.scatter_add(t_x, indices, t_updates, **params)]
    AD.jvp_rule(op)(rule)
    return rule


_scatter_extremal_jvp(I.ScatterMinOp)
_scatter_extremal_jvp(I.ScatterMaxOp)
