"""Rules of `jaxpr.check` / `jaxpr.checkify`, and the automatic checks of `--jaxpr-checkify`.

    CHECKS[SinOp] == ("nan",)             # the error kinds an op checks, in JAX's order
    fail, payload = SITE_RULES["nan"](b, op, operands, results)

`CHECKS` (rules/tables.py) says which ops `checkify` checks for which errors (JAX's
`error_checks` table: NaN-producing primitives, integer and float division,
out-of-bounds gathers, scatters and dynamic slices); each family's rule file fills it
beside the ops' other rules (`nan_checked(SinOp, ...)`). `SITE_RULES[kind]` emits the
check after the op: a scalar i1 that is true when the error happened and the payload its
message needs (out-of-bounds: int32[3] = index, axis, axis size of the first bad index,
as JAX reports it).
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect.builder import Builder
from mjax.dialect.ops import checkify as C
from mjax.dialect.ops import indexing as I
from mjax.dialect.dtype_rules import is_inexact
from mjax.dialect.types import aval_of
from mjax.passes.registry import PassError
from mjax.passes.rules.ad_util import jvp_rule
from mjax.passes.rules.callbacks import host_call
from mjax.passes.rules.tables import BATCH, JVP, LOWER, SHARD, TRANSPOSE
from mjax.passes.rules import batch_util as B

OOB_PAYLOAD = ("tensor<3xi32>",)
PAYLOAD_TYPES = {"nan": (), "div": (), "index": OOB_PAYLOAD}


def _or(b: Builder, x, y):
    return b.emit("or", x, y)[0]


def _any(b: Builder, x: ir.Value) -> ir.Value:
    rank = len(aval_of(x.type).shape)
    return b.reduce_or(x, axes=tuple(range(rank))) if rank else x


def _false(b: Builder) -> ir.Value:
    return b.constant(False)


def _nan_site(b, op, operands, results):
    # JAX: check_nans: any NaN in any result (integer results never hold one).
    fail = _false(b)
    for r in results:
        if is_inexact(aval_of(r.type).dtype):
            fail = _or(b, fail, _any(b, b.ne(r, r)))
    return fail, []


def _div_site(b, op, operands, results):
    # JAX: div_error_check: any zero divisor (float division too).
    y = operands[1]
    return _any(b, b.eq(y, b.zeros(aval_of(y.type)))), []


def _i32(b, x):
    return x if aval_of(x.type).dtype == np.int32 else b.convert_element_type(
        x, new_dtype=np.dtype(np.int32))


def oob_payload(b: Builder, mask, idx, dims_map, operand_shape):
    """(any(mask), int32[3] [index, axis, axis size] of the first True of `mask`).
    `mask` and `idx` share a shape whose last dimension runs over `dims_map` (the operand
    axis each index entry addresses). JAX: oob_payload."""
    shape = aval_of(mask.type).shape
    n = int(np.prod(shape))
    flat_mask = b.reshape(mask, new_sizes=(n,), dimensions=None)
    flat_idx = _i32(b, b.reshape(idx, new_sizes=(n,), dimensions=None))
    iota = b.iota(dtype=np.dtype(np.int32), shape=(n,), dimension=0)
    pos = b.reduce_min(b.select_n(flat_mask, b.constant(n, np.int32, (n,)), iota), axes=(0,))
    pos = b.min(pos, b.constant(n - 1, np.int32))
    which = b.rem(pos, b.constant(len(dims_map), np.int32))
    axes = b.constant(np.asarray(dims_map, np.int32))
    sizes = b.constant(np.asarray([operand_shape[d] for d in dims_map], np.int32))
    payload = b.concatenate(b.dynamic_slice(flat_idx, pos, slice_sizes=(1,)),
                            b.dynamic_slice(axes, which, slice_sizes=(1,)),
                            b.dynamic_slice(sizes, which, slice_sizes=(1,)), dimension=0)
    return b.reduce_or(flat_mask, axes=(0,)), [payload]


def _outside(b, idx, upper):
    """idx < 0 or idx > upper (elementwise; `upper` a NumPy array of idx's shape)."""
    dt = aval_of(idx.type).dtype
    hi = b.constant(np.asarray(np.minimum(upper, np.iinfo(dt).max), dt))
    return _or(b, b.lt(idx, b.zeros(aval_of(idx.type))), b.gt(idx, hi))


def _starts_site(b, operand, starts, window):
    """Out-of-bounds check of scalar start indices for a window of `window` sizes."""
    shape = aval_of(operand.type).shape
    if not starts:
        return _false(b), [b.constant(np.zeros(3, np.int32))]
    vec = b.concatenate(*[b.reshape(_i32(b, s), new_sizes=(1,), dimensions=None)
                          for s in starts], dimension=0)
    mask = _outside(b, vec, np.asarray(shape, np.int64) - np.asarray(window, np.int64))
    return oob_payload(b, mask, vec, tuple(range(len(shape))), shape)


def _dynamic_slice_site(b, op, operands, results):
    return _starts_site(b, operands[0], operands[1:], op.opview.params["slice_sizes"])


def _dynamic_update_slice_site(b, op, operands, results):
    return _starts_site(b, operands[0], operands[2:], aval_of(operands[1].type).shape)


def _gather_site(b, op, operands, results):
    p = op.opview.params
    operand, idx = operands
    shape, ishape = aval_of(operand.type).shape, aval_of(idx.type).shape
    smap = p["dimension_numbers"]["start_index_map"]
    if not smap or 0 in ishape:
        return _false(b), [b.constant(np.zeros(3, np.int32))]
    upper = np.asarray([shape[d] - p["slice_sizes"][d] for d in smap], np.int64)
    mask = _outside(b, idx, np.broadcast_to(upper, ishape))
    return oob_payload(b, mask, idx, smap, shape)


def _scatter_site(b, op, operands, results):
    dn = op.opview.params["dimension_numbers"]
    operand, idx, updates = operands
    shape, ishape = aval_of(operand.type).shape, aval_of(idx.type).shape
    ushape = aval_of(updates.type).shape
    smap = dn["scatter_dims_to_operand_dims"]
    if not smap or 0 in ishape:
        return _false(b), [b.constant(np.zeros(3, np.int32))]
    inserted = set(dn["inserted_window_dims"]) | set(dn.get("operand_batching_dims", ()))
    window, pos = [], 0
    for i in range(len(shape)):
        if i in inserted:
            window.append(1)
        else:
            window.append(ushape[dn["update_window_dims"][pos]])
            pos += 1
    upper = np.asarray([shape[d] - window[d] for d in smap], np.int64)
    mask = _outside(b, idx, np.broadcast_to(upper, ishape))
    return oob_payload(b, mask, idx, smap, shape)


_INDEX_SITES = {I.DynamicSliceOp: _dynamic_slice_site,
                I.DynamicUpdateSliceOp: _dynamic_update_slice_site, I.GatherOp: _gather_site}


def _index_site(b, op, operands, results):
    rule = _INDEX_SITES.get(type(op.opview), _scatter_site)
    return rule(b, op, operands, results)


SITE_RULES = {"nan": _nan_site, "div": _div_site, "index": _index_site}


# ---- jaxpr.check ------------------------------------------------------------------------
FUNCTIONALIZATION = ("Cannot abstractly evaluate a checkify.check which was not "
                     "functionalized. This probably means you tried to stage "
                     "(jit/scan/pmap/...) a `check` without functionalizing it through "
                     "`checkify.checkify`.")


class FunctionalizationError(PassError, ValueError):
    """A `jaxpr.check` outside `checkify` reached lowering (JAX's ValueError)."""


# (msg, fmt) -> the id of a host callback raising the check's error when it fails, where
# the program being lowered runs at once (checks JAX evaluates op by op); else None.
# Installed by mjax.experimental.checkify.
RUN_TIME_CHECKS: list = [lambda msg, fmt: None]


def _check_lower(ctx, *args, msg, fmt, debug):
    if debug:          # JAX: debug_check is a no-op outside checkify
        return []
    callback = RUN_TIME_CHECKS[0](msg, fmt)
    if callback is None:
        raise FunctionalizationError(ctx.op, FUNCTIONALIZATION)
    host_call(list(args), [], callback, has_side_effect=True)
    return []


LOWER[C.CheckOp] = _check_lower


@jvp_rule(C.CheckOp)
def _check_jvp(b, primals, tangents, *, msg, fmt, debug):
    # JAX: check_jvp_rule: check the primals, the check has no tangents.
    b.emit(C.CheckOp, *primals, msg=msg, fmt=fmt, debug=debug)
    return [], []


def _check_batch(b, vals, dims, *, msg, fmt, debug):
    # JAX: check_batching_rule + _reduce_any_error: one check for the whole batch that
    # fails when any element fails, formatted with the last failing element's values.
    size = b.axis_size
    vals = [B.bdim_at(b, v, d, 0) if d is not None else
            b.broadcast_in_dim(v, shape=(size,) + aval_of(v.type).shape,
                               broadcast_dimensions=tuple(range(1, 1 + len(aval_of(v.type).shape))))
            for v, d in zip(vals, dims)]
    ok = vals[0]
    fail = b.emit("not", ok)[0]
    iota = b.iota(dtype=np.dtype(np.int32), shape=(size,), dimension=0)
    last = b.reduce_max(b.select_n(fail, b.constant(-1, np.int32, (size,)), iota), axes=(0,))
    last = b.max(last, b.constant(0, np.int32))
    zero = b.constant(0, np.int32)
    picked = []
    for v in vals[1:]:
        shape = aval_of(v.type).shape
        row = b.dynamic_slice(v, last, *[zero] * (len(shape) - 1),
                              slice_sizes=(1,) + shape[1:])
        picked.append(b.reshape(row, new_sizes=shape[1:], dimensions=None))
    b.emit(C.CheckOp, b.reduce_and(ok, axes=(0,)), *picked, msg=msg, fmt=fmt, debug=debug)
    return [], []


BATCH[C.CheckOp] = _check_batch
SHARD.unsupported(C.CheckOp, "a check has no results to shard; checkify removes it")
TRANSPOSE.unsupported(C.CheckOp, "a check is not linear: it stays with the primal "
                                 "(forward) computation")
LOWER.unsupported(C.CheckifyOp, "unexpanded transformation op 'jaxpr.checkify'; run "
                                "--jaxpr-checkify or --jaxpr-expand-transforms first")
BATCH.unsupported(C.CheckifyOp, "expanded (inner-first) before its caller is batched")
SHARD.unsupported(C.CheckifyOp, "expanded before sharding propagation")
JVP.unsupported(C.CheckifyOp, "expanded (inner-first) before its caller is "
                              "differentiated")
TRANSPOSE.unsupported(C.CheckifyOp, "expanded before its caller is differentiated")


__all__ = ["FUNCTIONALIZATION", "FunctionalizationError",
           "OOB_PAYLOAD", "PAYLOAD_TYPES", "SITE_RULES", "oob_payload"]
