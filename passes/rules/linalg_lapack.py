"""Rules for the LAPACK reductions and tridiagonal solves of dialect/ops/linalg.py:
`tridiagonal_solve`, `tridiagonal`, `hessenberg`, `schur`, `ormqr`.

    %x = "jaxpr.tridiagonal_solve"(%dl, %d, %du, %b)
  ==>
    %dl2, %d2, %du2, %x0, %info = stablehlo.custom_call @lapack_sgtsv_ffi(%dl, %d, %du, %b)
    %x = stablehlo.select %info_ok, %x0, %nans

Each lowers, as JAX's CPU lowering does, to one LAPACK FFI custom call (gtsv, sytrd/hetrd,
gehrd, gees, ormqr/unmqr) through linalg.lapack_call; a batch whose `info` reports failure
becomes NaN. Only tridiagonal_solve is differentiable (JAX: _tridiagonal_solve_jvp_rule and
_tridiagonal_solve_transpose_rule: it is linear in b); every op takes leading batch axes.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect.dtype_rules import is_complex
from mjax.dialect.ops import linalg as L
from mjax.dialect.types import ShapedArray
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules import hlo as H
from mjax.passes.rules.batch_util import batch_rule, bdim_to_front, moveaxis
from mjax.passes.rules.linalg_ffi import (ffi_call, gpu_solver_prefix, info_ok, lapack_call,
                                         nan_unless, not_on_tpu, solver_call,
                                         tpu_linalg_here, uint8)
from mjax.passes.rules.linalg_gpu import tridiagonal_solve_small
from mjax.passes.rules.tables import TRANSPOSE, lowering


def _i32(v: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(v))


def _require_cpu(ctx, name: str, gpu_too: bool = False, traced_generic: bool = False) -> None:
    """Raises where `name`'s kernels do not run: LAPACK's on a CPU (`gpu_too`: and the GPU
    solvers on a GPU). For a TPU, JAX's error: it has no rule for these there."""
    if tpu_linalg_here() and traced_generic:
        # (JAX lowers these with lax ops on a TPU; mjax picks those while tracing)
        raise NotImplementedError(
            f"{name} reached the TPU lowering as one op: mjax computes it with lax ops "
            f"for a TPU, chosen while tracing; trace for the TPU (jit(f).trace(x).lower("
            f"lowering_platforms=('tpu',)) traces again for it)")
    if tpu_linalg_here():
        raise not_on_tpu(name)
    if ctx.backend not in ("xla", "cpu") or gpu_solver_prefix() and not gpu_too:
        where = "CPU (LAPACK) and GPU (cuSOLVER/cuSPARSE)" if gpu_too else "CPU (LAPACK)"
        raise NotImplementedError(f"{name} is only implemented on {where}, as in JAX")


# ==== lowering ===========================================================================
@lowering(L.TridiagonalSolveOp)
def _tridiagonal_solve_lower(ctx, dl, d, du, b, *, perturb_singular):
    _require_cpu(ctx, "tridiagonal_solve", gpu_too=True, traced_generic=True)
    aval = ctx.avals_in[3]
    batch = aval.shape[:-2]
    if 0 in aval.shape[-2:]:
        return [b]
    gpu = gpu_solver_prefix()
    if gpu and perturb_singular:      # (jaxlib's GPU kernel of the same method)
        return ffi_call(f"{gpu}_tridiagonal_solve_perturbed", [dl, d, du, b], [aval])
    if gpu and aval.shape[-2] >= 3:   # (cuSPARSE's gtsv2 wants 3 rows or more)
        return ffi_call(f"{gpu}sparse_gtsv2_ffi", [dl, d, du, b], [aval], aliases={3: 0})
    if gpu:       # (two rows or one: JAX solves those with lax ops too)
        return [tridiagonal_solve_small(dl, d, du, b)]
    if perturb_singular:
        # (jaxlib's own handler: LU with tiny pivots nudged, never NaN)
        out, = lapack_call("", [dl, d, du, b], [aval],
                           target="tridiagonal_solve_perturbed_ffi")
        return [out]
    *_, x, info = lapack_call("gtsv", [dl, d, du, b],
                              [*ctx.avals_in, ShapedArray(batch, np.int32)],
                              aliases={0: 0, 1: 1, 2: 2, 3: 3})
    return [nan_unless(info_ok(info), x)]


@lowering(L.TridiagonalOp)
def _tridiagonal_lower(ctx, a, *, lower):
    _require_cpu(ctx, "tridiagonal", gpu_too=True)
    aval = ctx.avals_in[0]
    outs = [*ctx.avals_out, ShapedArray(aval.shape[:-2], np.int32)]
    if gpu_solver_prefix():     # (one GPU sytrd for every dtype)
        *outs, info = solver_call("sytrd", [a], outs, aliases={0: 0},
                                  config={"lower": ir.BoolAttr.get(bool(lower))})
    else:
        routine = "hetrd" if is_complex(aval.dtype) else "sytrd"
        *outs, info = lapack_call(routine, [a], outs, aliases={0: 0},
                                  config={"uplo": "L" if lower else "U"})
    ok = info_ok(info)
    return [nan_unless(ok, o) for o in outs]


@lowering(L.HessenbergOp)
def _hessenberg_lower(ctx, a):
    _require_cpu(ctx, "hessenberg")
    aval = ctx.avals_in[0]
    n = aval.shape[-1]
    if n == 0:
        t = ctx.avals_out[1]
        return [a, H.constant(0, t.dtype, t.shape)]
    *outs, info = lapack_call("gehrd", [a],
                              [*ctx.avals_out, ShapedArray(aval.shape[:-2], np.int32)],
                              config={"low": _i32(1), "high": _i32(n)}, aliases={0: 0})
    ok = info_ok(info)
    return [nan_unless(ok, o) for o in outs]


# jaxlib.lapack.schur's ComputationMode and Sort values (LAPACK's 'V', 'N', 'N')
_SCHUR_VECTORS, _NO_SCHUR_VECTORS, _NO_SORT = ord("V"), ord("N"), ord("N")


@lowering(L.SchurOp)
def _schur_lower(ctx, a, *, compute_schur_vectors, sort_eig_vals):
    _require_cpu(ctx, "schur")
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not "
                                  "implemented.")
    aval = ctx.avals_in[0]
    if aval.shape[-1] == 0:
        return [a] * len(ctx.avals_out)
    batch = aval.shape[:-2]
    info = ShapedArray(batch, np.int32)
    w = ShapedArray(aval.shape[:-1], aval.dtype)
    eigs = [w] if is_complex(aval.dtype) else [w, w]
    mode = _SCHUR_VECTORS if compute_schur_vectors else _NO_SCHUR_VECTORS
    outs = lapack_call("gees", [a], [aval, aval, *eigs, info, info],
                       config={"mode": uint8(mode), "sort": uint8(_NO_SORT)}, aliases={0: 0})
    ok = info_ok(outs[-1])
    return [nan_unless(ok, o) for o in outs[:len(ctx.avals_out)]]


@lowering(L.OrmqrOp)
def _ormqr_lower(ctx, a, taus, c, *, left, transpose):
    _require_cpu(ctx, "ormqr", gpu_too=True, traced_generic=True)
    aval = ctx.avals_out[0]
    if 0 in aval.shape[-2:] or ctx.avals_in[1].shape[-1] == 0:
        return [c]
    config = {"left": ir.BoolAttr.get(bool(left)),
              "transpose": ir.BoolAttr.get(bool(transpose))}
    if gpu_solver_prefix():     # (one GPU ormqr for every dtype)
        return solver_call("ormqr", [a, taus, c], [aval], aliases={2: 0}, config=config)
    routine = "unmqr" if is_complex(aval.dtype) else "ormqr"
    return lapack_call(routine, [a, taus, c], [aval], aliases={2: 0}, config=config)


# ==== autodiff ===========================================================================
def _shape(x):
    return AD.aval(x).shape


def _pad_last(b, x, before=0, after=0, axis=-1):
    r = len(_shape(x))
    axis %= r
    cfg = [(0, 0, 0)] * r
    cfg[axis] = (before, after, 0)
    zero = b.constant(np.zeros((), AD.aval(x).dtype))
    return b.pad(x, zero, padding_config=tuple(cfg))


def _slice_last(b, x, lo, hi, axis=-1):
    shape = _shape(x)
    axis %= len(shape)
    start = [0] * len(shape)
    limit = list(shape)
    start[axis], limit[axis] = lo, hi
    return b.slice(x, start_indices=tuple(start), limit_indices=tuple(limit),
                   strides=(1,) * len(shape))


def _as_cols(b, v, shape):
    """v (..., m) broadcast over the columns of shape (..., m, n): v[..., :, None]."""
    return b.broadcast_in_dim(v, shape=shape, broadcast_dimensions=tuple(range(len(shape) - 1)))


def _tridiagonal_product(b, dl, d, du, x):
    """A x for the tridiagonal A of (dl, d, du); dl[0] and du[-1] do not count."""
    shape = _shape(x)
    m = shape[-2]
    y = b.mul(_as_cols(b, d, shape), x)
    if m > 1:
        below = _pad_last(b, _slice_last(b, x, 0, m - 1, -2), before=1, axis=-2)
        dl0 = _pad_last(b, _slice_last(b, dl, 1, m), before=1)
        above = _pad_last(b, _slice_last(b, x, 1, m, -2), after=1, axis=-2)
        du0 = _pad_last(b, _slice_last(b, du, 0, m - 1), after=1)
        y = b.add(y, b.mul(_as_cols(b, dl0, shape), below))
        y = b.add(y, b.mul(_as_cols(b, du0, shape), above))
    return y


@AD.jvp_rule(L.TridiagonalSolveOp)
def _tridiagonal_solve_jvp(b, primals, tangents, **params):
    # x = A^-1 rhs: x_dot = A^-1 (rhs_dot - A_dot x).
    dl, d, du, rhs = primals
    tdl, td, tdu, trhs = tangents
    ans = b.tridiagonal_solve(dl, d, du, rhs, **params)
    if all(t is None for t in (tdl, td, tdu)):
        if trhs is None:
            return [ans], [None]
        return [ans], [b.tridiagonal_solve(dl, d, du, trhs, **params)]
    tdl, td, tdu = (AD.instantiate(b, t, AD.aval(p)) for t, p in
                    zip((tdl, td, tdu), (dl, d, du)))
    r = b.neg(_tridiagonal_product(b, tdl, td, tdu, ans))
    if trhs is not None:
        r = AD.add_any(b, trhs, r)
    return [ans], [b.tridiagonal_solve(dl, d, du, r, **params)]


def _tridiagonal_solve_transpose(b, ct, dl, d, du, rhs, **params):
    if any(AD.is_linear(x) for x in (dl, d, du)):
        raise NotImplementedError("tridiagonal_solve is not linear in its diagonals: it "
                                  "can be transposed only with respect to b")
    m = _shape(d)[-1]
    # A^T has sub-diagonal du shifted down one place and super-diagonal dl shifted up.
    dl_t = _pad_last(b, _slice_last(b, du, 0, m - 1), before=1) if m else du
    du_t = _pad_last(b, _slice_last(b, dl, 1, m), after=1) if m else dl
    return [None, None, None, b.tridiagonal_solve(dl_t, d, du_t, ct, **params)]


TRANSPOSE[L.TridiagonalSolveOp] = _tridiagonal_solve_transpose

for _op, _name in ((L.TridiagonalOp, "tridiagonal"), (L.HessenbergOp, "hessenberg"),
                   (L.SchurOp, "schur"), (L.OrmqrOp, "ormqr")):
    AD.no_jvp(_op, f"{_name} has no derivative rule (as in JAX)")
    AD.no_transpose(_op, f"{_name} is not linear")


# ==== batching: the batch axis goes in front of the op's own batch axes ==================
def _front(op):
    def rule(b, args, dims, **params):
        xs = [bdim_to_front(b, x, d) for x, d in zip(args, dims)]
        outs = b.emit(op, *xs, **params)
        return outs, [0] * len(outs)
    return rule


for _op in (L.TridiagonalOp, L.HessenbergOp, L.SchurOp, L.OrmqrOp):
    batch_rule(_op)(_front(_op))


@batch_rule(L.TridiagonalSolveOp)
def _tridiagonal_solve_batch(b, args, dims, **params):
    # JAX: _tridiagonal_solve_batching_rule. With only b batched, the batch folds into its
    # columns: the diagonals stay unbroadcast.
    if any(d is not None for d in dims[:3]):
        return _front(L.TridiagonalSolveOp)(b, args, dims, **params)
    rhs, db = args[3], dims[3]
    r = len(_shape(rhs))
    y = moveaxis(b, rhs, db, r - 1)                    # (..., m, n, B)
    s = _shape(y)
    x = b.tridiagonal_solve(*args[:3], b.reshape(y, new_sizes=s[:-2] + (s[-2] * s[-1],)),
                            **params)
    return [b.reshape(x, new_sizes=s)], [r - 1]

