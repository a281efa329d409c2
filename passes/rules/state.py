"""Rules for the ref ops and grid queries (dialect/ops/state.py).

Ref ops live only inside Pallas kernels, which no transformation walks op by op: vmap
and jvp of a `jaxpr.pallas_call` transform the whole kernel (passes/rules/pallas.py), and
`--jaxpr-discharge-state` replaces every ref op by value ops before lowering. So their
cells in the usual tables are deliberate "not supported" entries, and their one real
rule each is a discharge rule (table `DISCHARGE`):

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

from mjax.dialect.ops import state as S
from mjax.dialect.types import aval_of
from mjax.passes.rules.tables import BATCH, DISCHARGE, JVP, LOWER, SHARD, TRANSPOSE

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
_WHY_USER_REFS = {
    LOWER: _WHY[LOWER],
    BATCH: "vmap of a function using mjax.new_ref refs is not implemented in mjax (JAX "
           "batches ref ops)",
    SHARD: _WHY[SHARD],
    JVP: "grad/jvp of a function using mjax.new_ref refs is not implemented in mjax "
         "(JAX's refs hold no tangents)",
    TRANSPOSE: "reverse mode through mjax.new_ref refs is not implemented in mjax",
}
for _op in S.REF_OPS:
    for _table, _why in (_WHY_USER_REFS if _op in (S.RefGetOp, S.RefSwapOp,
                                                   S.RefAddUpdateOp) else _WHY).items():
        _table.unsupported(_op, _why)
for _table, _why in _WHY_USER_REFS.items():
    _table.unsupported(S.RefNewOp, _why)
for _op in (S.ProgramIdOp, S.NumProgramsOp):
    for _table, _why in _GRID_WHY.items():
        _table.unsupported(_op, _why)

discharge_rule = DISCHARGE.register   # decorator: rule(b, x, values, starts, **params)


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
    return None, [_read(b, x, starts, sizes, squeezed)]


@discharge_rule(S.RefSwapOp)
def _swap(b, x, values, starts, *, sizes, squeezed):
    (val,) = values
    old = _read(b, x, starts, sizes, squeezed)
    return _write(b, x, starts, sizes, squeezed, val), [old]


@discharge_rule(S.RefAddUpdateOp)
def _addupdate(b, x, values, starts, *, sizes, squeezed):
    (val,) = values
    old = _read(b, x, starts, sizes, squeezed)
    return _write(b, x, starts, sizes, squeezed, b.add(old, val)), []


def _masked(b, x, starts, sizes, squeezed, update):
    """Reads the part (padded so it is never shifted), computes (new part, result) =
    update(old part), writes the new part back; gives (new x, result)."""
    if _whole(x, sizes, squeezed):
        new, result = update(x)
        return new, result
    shape = aval_of(x.type).shape
    xp = _padded(b, x, sizes)
    old = _read(b, xp, starts, sizes, squeezed)
    new, result = update(old)
    if new is None:
        return None, result
    return _unpadded(b, _write(b, xp, starts, sizes, squeezed, new), shape), result


@discharge_rule(S.MaskedLoadOp)
def _masked_load(b, x, values, starts, *, sizes, squeezed):
    mask, other = values
    _, v = _masked(b, x, starts, sizes, squeezed,
                   lambda old: (None, b.select_n(mask, other, old)))
    return None, [v]


@discharge_rule(S.MaskedSwapOp)
def _masked_swap(b, x, values, starts, *, sizes, squeezed):
    val, mask = values
    return _masked_rmw(b, x, starts, sizes, squeezed, mask, lambda old: val)


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
