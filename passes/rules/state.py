"""Rules for the ref ops and grid queries (dialect/ops/state.py).

Inside Pallas kernels no transformation walks the ref ops one by one: vmap and jvp of a
`jaxpr.pallas_call` transform the whole kernel (passes/rules/pallas.py). The refs of
`mjax.new_ref` do meet the transformations: a ref holds no tangent (reads have none;
writing a differentiated value is JAX's error), and ref_get/ref_swap/ref_addupdate have
batching rules (a ref passed to vmap with an in_axis is batched there; see below). The
other ref ops' cells in the usual tables are deliberate "not supported" entries.

`--jaxpr-discharge-state` replaces every ref op by value ops before lowering, with the
discharge rules (table `DISCHARGE`):

    rule(b, x, values, starts, **params) -> (new ref value | None, results)

where `x` is the ref's current value, `values` the op's other operands and `starts` its
start indices, all as values. A read of the whole ref is the value itself (dynamic_slice
would clamp every start to 0 anyway); a part is a dynamic_slice (clamped starts, as
dynamic_slice does) reshaped to drop the squeezed dims, and a write is a
dynamic_update_slice. Masked ops first pad the value past its end, so a block hanging
over the edge is not shifted back in (JAX: state/discharge.py and pallas's
`_pad_values_to_avoid_dynamic_slice_oob_shift`).
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect.dtype_rules import bitwidth
from mjax.dialect.ops import indexing as I
from mjax.dialect.ops import state as S
from mjax.dialect.types import aval_of
from mjax.passes import pallas_bounds as BOUNDS
from mjax.passes.ir_util import is_zero_constant
from mjax.passes.registry import PassError
from mjax.passes.rules.batch_util import NOT_MAPPED, bdim_at
from mjax.passes.rules.tables import (BATCH, DISCHARGE, JVP, LOWER, SHARD, TRANSPOSE,
                                      WEAK_TYPES)

_WHY = {
    LOWER: "refs are discharged before lowering: run --jaxpr-discharge-state (or "
           "--jaxpr-pallas-interpret on the pallas_call holding it)",
    BATCH: "ref ops appear only inside Pallas kernels; vmap batches the whole "
           "jaxpr.pallas_call (a new leading grid dimension)",
    SHARD: "ref ops appear only inside Pallas kernels, which sharding propagation "
           "does not enter",
    JVP: "ref ops appear only inside Pallas kernels; jvp of a jaxpr.pallas_call "
         "differentiates the discharged kernel",
    TRANSPOSE: "ref ops appear only inside Pallas kernels, which have no reverse mode "
               "(use jax.custom_vjp around the pallas_call)",
}
_GRID_WHY = {
    LOWER: "grid queries are replaced by the grid indices when a pallas_call is "
           "interpreted (--jaxpr-pallas-interpret) or lowered to Triton",
    BATCH: "grid queries appear only inside Pallas kernels; vmap of a pallas_call "
           "shifts their axes instead",
    SHARD: "grid queries appear only inside Pallas kernels, which sharding "
           "propagation does not enter",
    JVP: "an integer result has no tangent (float0)",
    TRANSPOSE: "not linear: an integer result with no operands",
}
_WHY_USER_REFS = {     # (refs made by mjax.new_ref)
    LOWER: _WHY[LOWER],
    SHARD: _WHY[SHARD],
    JVP: "a ref holds no tangent: reading one gives a value without a tangent",
    TRANSPOSE: "ref ops have no tangents, so they stay in the forward part of a "
               "linearized function and are never transposed",
}
# (the user-ref ops' batching rules, and JVP rules of writes, are below)
for _op in S.REF_OPS:
    user = _op in (S.RefGetOp, S.RefSwapOp, S.RefAddUpdateOp)
    for _table, _why in (_WHY_USER_REFS if user else _WHY).items():
        _table.unsupported(_op, _why)
for _table, _why in _WHY_USER_REFS.items():
    _table.unsupported(S.RefNewOp, _why)
for _op in (S.ProgramIdOp, S.NumProgramsOp):
    for _table, _why in _GRID_WHY.items():
        _table.unsupported(_op, _why)

discharge_rule = DISCHARGE.register   # decorator: rule(b, x, values, starts, **params)


# ---- refs under jvp and vmap (user refs: mjax.new_ref) ---------------------------------
class RefEffectError(PassError):
    """JAX's error (a plain Exception there) for a write a transformation cannot make;
    its text is JAX's, located at the op for mjax-opt."""

    def __str__(self):
        return self.message


class RefVmapNotImplemented(PassError, NotImplementedError):
    """A vmap of ref ops mjax does not implement (located at the op)."""


_REFUSALS = {   # transformation -> (what the value is, what the ref is not, the advice)
    "jvp": ("a differentiated", "a non-differentiated",
            "an argument of the differentiated function"),
    "vmap": ("vmapped", "an unbatched", "an argument to the vmapped function"),
}


def _refuse_write(what: str, transformation: str):
    """A JVP or batching rule of a write (`what`: "a set/swap" or "an addupdate") that
    raises JAX's error: the written value is transformed but the ref is not."""
    value, ref, advice = _REFUSALS[transformation]

    def rule(b, args, *_, **params):
        raise RefEffectError(b.loc, f"performing {what} operation with {value} value on "
                                    f"{ref} array reference of type "
                                    f"{aval_of(args[0].type)}. Move the array reference "
                                    f"to be {advice}?")
    return rule


# (called only when the written value has a tangent: a ref never has one)
JVP.register(S.RefSwapOp)(_refuse_write("a set/swap", "jvp"))
JVP.register(S.RefAddUpdateOp)(_refuse_write("an addupdate", "jvp"))


def _batched_index(b, op_name, ref_dim, start_dims, starts, sizes, squeezed):
    """The starts and params indexing a ref batched at `ref_dim` (the whole batch axis
    is read or written), and where the batch axis is in the indexed value."""
    if any(d is not NOT_MAPPED for d in start_dims):
        raise RefVmapNotImplemented(b.loc, f"vmap of {op_name} at an index that differs "
                                           f"across the batch is not implemented in mjax "
                                           f"(index the value read with ref[...] instead)")
    starts = list(starts)
    starts.insert(ref_dim, b.constant(np.int32(0)))
    sizes = list(sizes)
    sizes.insert(ref_dim, b.axis_size)
    squeezed = tuple(d + 1 if d >= ref_dim else d for d in squeezed)
    value_dim = ref_dim - sum(1 for d in squeezed if d < ref_dim)
    return starts, dict(sizes=tuple(sizes), squeezed=squeezed), value_dim


@BATCH.register(S.RefGetOp)
def _get_batch(b, args, dims, *, sizes, squeezed):
    ref, *starts = args
    if any(d is not NOT_MAPPED for d in dims[1:]):
        return _get_at_batched_index(b, ref, dims[0], starts, dims[1:], sizes, squeezed)
    starts, params, vd = _batched_index(b, "a ref read", dims[0], dims[1:], starts, sizes,
                                        squeezed)
    return b.emit(S.RefGetOp, ref, *starts, **params), [vd]


def _gathered(b, ref, ref_dim, starts, start_dims, sizes):
    """(the whole ref's value, each batch element's part of it with the batch at 0):
    the part at an index that differs across the batch, by dynamic_slice's batching
    rule."""
    shape = aval_of(ref.type).shape
    zero = b.constant(np.int32(0))
    whole = b.emit(S.RefGetOp, ref, *[zero] * len(shape), sizes=shape, squeezed=())[0]
    (part,), (pd,) = BATCH.get(I.DynamicSliceOp)(b, [whole, *starts], [ref_dim, *start_dims],
                                                 slice_sizes=tuple(sizes))
    return whole, bdim_at(b, part, pd, 0)


def _squeezed(b, part, sizes, squeezed):
    kept = tuple(s for d, s in enumerate(sizes) if d not in squeezed)
    return b.reshape(part, new_sizes=(b.axis_size,) + kept)


def _get_at_batched_index(b, ref, ref_dim, starts, start_dims, sizes, squeezed):
    """A read whose index differs across the batch: the whole ref is read, and each
    element's part is gathered from it."""
    _, part = _gathered(b, ref, ref_dim, starts, start_dims, sizes)
    return [_squeezed(b, part, sizes, squeezed)], [0]


def _write_batch(op, what):
    refuse = _refuse_write(what, "vmap")

    def rule(b, args, dims, *, sizes, squeezed):
        ref, val, *starts = args
        if dims[0] is NOT_MAPPED:
            if dims[1] is not NOT_MAPPED or b.write_mask is not None:
                refuse(b, args)
            raise RefVmapNotImplemented(b.loc, f"vmap of {what} at an index that differs "
                                               f"across the batch into an unbatched ref is "
                                               f"not implemented in mjax")
        if any(d is not NOT_MAPPED for d in dims[2:]):
            return _write_at_batched_index(b, op, ref, dims[0], val, dims[1], starts,
                                           dims[2:], sizes, squeezed)
        starts, params, vd = _batched_index(b, what, dims[0], dims[2:], starts, sizes,
                                            squeezed)
        val = bdim_at(b, val, dims[1], vd)
        if b.write_mask is not None:      # (finished elements of a batched while_loop)
            val = _masked_value(b, op, ref, val, vd, starts, params)
        outs = b.emit(op, ref, val, *starts, **params)
        return outs, [vd] * len(outs)
    return rule


def _write_at_batched_index(b, op, ref, ref_dim, val, val_dim, starts, start_dims, sizes,
                            squeezed):
    """A write into a batched ref at an index that differs across the batch: each
    element's part is gathered from the whole ref, updated, and scattered back (the
    batching rules of dynamic_slice and dynamic_update_slice), then the whole ref is
    written."""
    whole, old = _gathered(b, ref, ref_dim, starts, start_dims, sizes)
    val = b.reshape(bdim_at(b, val, val_dim, 0), new_sizes=(b.axis_size,) + tuple(sizes))
    if b.write_mask is not None:      # (finished elements of a batched while_loop)
        which = b.broadcast_in_dim(b.write_mask, shape=aval_of(val.type).shape,
                                   broadcast_dimensions=(0,))
        val = b.select_n(which, old, val)
    new = b.add(old, val) if op is S.RefAddUpdateOp else val
    (updated,), (ud,) = BATCH.get(I.DynamicUpdateSliceOp)(
        b, [whole, new, *starts], [ref_dim, 0, *start_dims])
    shape = aval_of(ref.type).shape
    zero = b.constant(np.int32(0))
    b.emit(S.RefSwapOp, ref, bdim_at(b, updated, ud, ref_dim), *[zero] * len(shape),
           sizes=shape, squeezed=())
    if op is S.RefAddUpdateOp:
        return [], []
    return [_squeezed(b, old, sizes, squeezed)], [0]


def _masked_value(b, op, ref, val, vd, starts, params):
    """What an element whose write_mask is off writes instead of `val`: the part as it
    is (swap), or zeros (addupdate)."""
    shape = aval_of(val.type).shape
    which = b.broadcast_in_dim(b.write_mask, shape=shape, broadcast_dimensions=(vd,))
    if op is S.RefAddUpdateOp:
        keep = b.zeros(aval_of(val.type))
    else:
        keep = b.emit(S.RefGetOp, ref, *starts, **params)[0]
    return b.select_n(which, keep, val)


BATCH.register(S.RefSwapOp)(_write_batch(S.RefSwapOp, "a set/swap"))
BATCH.register(S.RefAddUpdateOp)(_write_batch(S.RefAddUpdateOp, "an addupdate"))


@BATCH.register(S.RefNewOp)
def _new_batch(b, args, dims, **params):
    (init,) = args
    return b.emit(S.RefNewOp, init, **params), [dims[0]]


# ---- reading and writing a part of a value ------------------------------------------
def _whole(x: ir.Value, sizes, squeezed) -> bool:
    return tuple(sizes) == aval_of(x.type).shape and not squeezed


def _read(b, x, starts, sizes, squeezed):
    if _whole(x, sizes, squeezed):
        return x
    part = b.dynamic_slice(x, *starts, slice_sizes=tuple(sizes))
    if squeezed:
        part = b.reshape(part, new_sizes=tuple(s for d, s in enumerate(sizes)
                                               if d not in squeezed))
    return part


def _write(b, x, starts, sizes, squeezed, value):
    if _whole(x, sizes, squeezed):
        return value
    if squeezed:
        value = b.reshape(value, new_sizes=tuple(sizes))
    return b.dynamic_update_slice(x, value, *starts)


def _padded(b, x, sizes):
    """`x` padded past its end by `sizes` along each dim (zeros), so no in-bounds start
    of a `sizes` slice is clamped."""
    a = aval_of(x.type)
    if not any(sizes):
        return x
    zero = b.constant(np.zeros((), a.dtype))
    return b.pad(x, zero, padding_config=tuple((0, int(s), 0) for s in sizes))


def _unpadded(b, x, shape):
    if aval_of(x.type).shape == tuple(shape):
        return x
    return b.slice(x, start_indices=(0,) * len(shape), limit_indices=tuple(shape))


# ---- rules -----------------------------------------------------------------------------
@discharge_rule(S.RefGetOp)
def _get(b, x, values, starts, *, sizes, squeezed):
    # (in a kernel JAX's TPU interpreter runs: its bounds check, or past the end its
    # uninitialized value: passes/pallas_bounds.py)
    BOUNDS.check_access(b, x, starts, sizes, BOUNDS.READ)
    fill = BOUNDS.uninitialized_reads()
    if fill is not None and not _whole(x, sizes, squeezed):
        return None, [_read(b, BOUNDS.read_padded(b, x, sizes, fill), starts, sizes,
                            squeezed)]
    return None, [_read(b, x, starts, sizes, squeezed)]


@discharge_rule(S.RefSwapOp)
def _swap(b, x, values, starts, *, sizes, squeezed):
    (val,) = values
    BOUNDS.check_access(b, x, starts, sizes, BOUNDS.SWAP)
    old = _read(b, x, starts, sizes, squeezed)
    return _write(b, x, starts, sizes, squeezed, val), [old]


@discharge_rule(S.RefAddUpdateOp)
def _addupdate(b, x, values, starts, *, sizes, squeezed):
    (val,) = values
    old = _read(b, x, starts, sizes, squeezed)
    return _write(b, x, starts, sizes, squeezed, b.add(old, val)), []


def _masked(b, x, starts, sizes, squeezed, update):
    """Reads the part (padded so it is never shifted), computes (new part, result) =
    update(old part), writes the new part back; gives (new x, result). A window the
    size of the whole ref is the ref only at constant-zero starts: at another start
    (past the end) only its masked-off elements may fall outside, and the in-bounds
    ones must land where they are (JAX's masked store at a start past the edge)."""
    if _whole(x, sizes, squeezed) and all(is_zero_constant(s) for s in starts):
        new, result = update(x)
        return new, result
    shape = aval_of(x.type).shape
    xp = _padded(b, x, sizes)
    old = _read(b, xp, starts, sizes, squeezed)
    new, result = update(old)
    if new is None:
        return None, result
    return _unpadded(b, _write(b, xp, starts, sizes, squeezed, new), shape), result


def _strided_view(b, x, starts, sizes, squeezed, shape, bitcast):
    """The value of a reshaped and/or bitcast view of `x` (the window read, reshaped,
    bitcast)."""
    view = _read(b, x, starts, sizes, squeezed)
    if aval_of(view.type).shape != tuple(shape):
        view = b.reshape(view, new_sizes=tuple(shape))
    if bitcast is not None:
        view = _bitcast_view(b, view, np.dtype(bitcast))
    return view


def _extents(access_sizes, access_strides):
    return tuple((k - 1) * st + 1 if k else 0
                 for k, st in zip(access_sizes, access_strides))


def _strided_read(b, view, starts, access_sizes, access_strides, access_squeezed):
    """Every stride-th element of the access's extent in `view` (squeezed dims
    dropped)."""
    extents = _extents(access_sizes, access_strides)
    part = _read(b, view, starts, extents, ())
    if any(st != 1 for st in access_strides):
        part = b.slice(part, start_indices=(0,) * len(extents), limit_indices=extents,
                       strides=tuple(access_strides))
    if access_squeezed:
        part = b.reshape(part, new_sizes=tuple(k for d, k in enumerate(access_sizes)
                                               if d not in access_squeezed))
    return part


@discharge_rule(S.StridedGetOp)
def _strided_get(b, x, values, starts, *, sizes, squeezed, shape, access_sizes,
                 access_strides, access_squeezed=(), reshaped=False, bitcast=None):
    """The view read, reshaped, bitcast, then every stride-th element of the access's
    extent."""
    n = len(sizes)
    view = _strided_view(b, x, starts[:n], sizes, squeezed, shape, bitcast)
    return None, [_strided_read(b, view, starts[n:], access_sizes, access_strides,
                                access_squeezed)]


@discharge_rule(S.StridedSwapOp)
def _strided_swap(b, x, values, starts, *, sizes, squeezed, shape, access_sizes,
                  access_strides, access_squeezed=(), reshaped=False, bitcast=None):
    """The old value as strided_get reads it; the new value spread over the access's
    extent (interior padding of stride - 1), kept where each index is a multiple of
    the strides (the old elements between), written into the view, which is bitcast
    back (the inverse packing), reshaped to the window and written into `x`."""
    (val,) = values
    n = len(sizes)
    view = _strided_view(b, x, starts[:n], sizes, squeezed, shape, bitcast)
    vstarts = starts[n:]
    old = _strided_read(b, view, vstarts, access_sizes, access_strides, access_squeezed)
    new = val
    if access_squeezed:
        new = b.reshape(new, new_sizes=tuple(access_sizes))
    extents = _extents(access_sizes, access_strides)
    if any(st != 1 for st in access_strides):
        a = aval_of(new.type)
        zero = b.constant(np.zeros((), a.dtype))
        new = b.pad(new, zero, padding_config=tuple((0, 0, st - 1)
                                                    for st in access_strides))
        keep = None
        for d, st in enumerate(access_strides):
            if st == 1:
                continue
            i = b.iota(dtype=np.dtype(np.int32), shape=extents, dimension=d)
            on = b.eq(b.rem(i, b.constant(st, np.int32, shape=extents)),
                      b.constant(0, np.int32, shape=extents))
            keep = on if keep is None else b.emit("and", keep, on)[0]
        new = b.select_n(keep, _read(b, view, vstarts, extents, ()), new)
    view = _write(b, view, vstarts, extents, (), new)
    if bitcast is not None:
        view = _bitcast_view(b, view, np.dtype(aval_of(x.type).dtype))
    window = tuple(k for d, k in enumerate(sizes) if d not in squeezed)
    if aval_of(view.type).shape != window:
        view = b.reshape(view, new_sizes=window)
    return _write(b, x, starts[:n], sizes, squeezed, view), [old]


def _bitcast_view(b, v, dtype):
    """A ref's value as the TPU lays its bits out in a bitcast view (JAX's
    state/utils.py bitcast): k narrow rows of a column packed into one wide element
    (the first in the low bits), or one wide element split into k rows."""
    src = aval_of(v.type)
    a, c = bitwidth(src.dtype), bitwidth(dtype)          # (int4: 4 bits)
    *lead, m, n = src.shape if len(src.shape) >= 2 else (None, None)
    if a < c:                    # (..., m, n) -> (..., m/k, n, k) -> (..., m/k, n)
        k = c // a
        v = b.reshape(v, new_sizes=(*lead, m // k, k, n))
        r = len(lead)
        v = b.transpose(v, permutation=(*range(r), r, r + 2, r + 1))
        return b.bitcast_convert_type(v, new_dtype=dtype)
    v = b.bitcast_convert_type(v, new_dtype=dtype)
    if a > c:                    # (..., m, n, k) -> (..., m, k, n) -> (..., m*k, n)
        k = a // c
        r = len(lead)
        v = b.transpose(v, permutation=(*range(r), r, r + 2, r + 1))
        v = b.reshape(v, new_sizes=(*lead, m * k, n))
    return v


@discharge_rule(S.MaskedLoadOp)
def _masked_load(b, x, values, starts, *, sizes, squeezed):
    mask, other = values
    _, v = _masked(b, x, starts, sizes, squeezed,
                   lambda old: (None, b.select_n(mask, other, old)))
    return None, [v]


@discharge_rule(S.MaskedSwapOp)
def _masked_swap(b, x, values, starts, *, sizes, squeezed):
    val, mask = values
    BOUNDS.check_masked_swap(b, x, starts, sizes, squeezed, mask)
    new_x, (old,) = _masked_rmw(b, x, starts, sizes, squeezed, mask, lambda old: val)
    # (where the mask is off, JAX's discharge gives back the value stored, not the old)
    return new_x, [b.select_n(mask, val, old)]


_COMBINE = {"add": "add", "max": "max", "min": "min", "and": "and", "or": "or",
            "xor": "xor"}


@discharge_rule(S.AtomicRmwOp)
def _atomic_rmw(b, x, values, starts, *, kind, sizes, squeezed):
    val, mask = values
    if kind == "xchg":
        return _masked_rmw(b, x, starts, sizes, squeezed, mask, lambda old: val)
    return _masked_rmw(b, x, starts, sizes, squeezed, mask,
                       lambda old: b.emit(_COMBINE[kind], old, val)[0])


def _masked_rmw(b, x, starts, sizes, squeezed, mask, combine):
    new_x, old = _masked(b, x, starts, sizes, squeezed,
                         lambda old: (b.select_n(mask, old, combine(old)), old))
    return new_x, [old]


__all__ = ["discharge_rule"]


# ---- weak types (passes/weak_cotangents.py) -------------------------------------------
@WEAK_TYPES.register(S.RefGetOp, S.RefSwapOp)
def _ref_read_weak_types(types, op, weak):
    # (what a ref holds has the ref's type)
    return [weak.get(op.operands[0], False)] * len(op.results)
