"""GPU lowerings whose solver calls differ from LAPACK's in more than their names: `svd`
and `eig` (which routine applies, what comes back, what is left to do in StableHLO
afterwards), and the small tridiagonal solves cuSPARSE leaves out. passes/rules/linalg.py
and linalg_lapack.py call them when lowering for a GPU (linalg_ffi.gpu_solver_prefix);
JAX's GPU lowering makes the same choices.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.dtype_rules import is_complex
from mjax.dialect.types import ShapedArray, aval_of
from mjax.passes.rules import hlo as H
from mjax.passes.rules.linalg_ffi import (conj, ffi_call, gpu_solver_prefix, info_ok,
                                         nan_unless, slice_matrix, solver_call)


def svd_gpu(a, aval, s_aval, u_aval, vt_aval, full_matrices, compute_uv, algorithm=None):
    """(s, u, vt, info) from the GPU solvers, as JAX picks them by the op's `algorithm`
    (_resolve_gpu_svd_implementation): JACOBI gesvdj, POLAR gesvdp, QR gesvd (on the
    transpose when m < n, since gesvd wants m >= n), DIVIDE_AND_CONQUER gesdd on ROCm
    only; DEFAULT (None) Jacobi up to 1024x1024, gesvd beyond. gesvdj and gesvdp return
    V, not V^H; gesvdj has no economy mode below 33 rows or columns, where the full
    factors are sliced."""
    batch = aval.shape[:-2]
    m, n = aval.shape[-2:]
    k = min(m, n)
    info = ShapedArray(batch, np.int32)
    flags = {"compute_uv": ir.BoolAttr.get(bool(compute_uv))}
    prefix = gpu_solver_prefix()
    if algorithm in (None, "default"):
        routine = "gesvdj" if m <= 1024 and n <= 1024 else "gesvd"
    elif algorithm == "divide_and_conquer":
        if prefix != "hip":
            raise NotImplementedError(
                "Divide-and-conquer SVD (SvdAlgorithm.DIVIDE_AND_CONQUER) is only "
                "supported on AMD (ROCm) GPUs, not on NVIDIA CUDA.")
        routine = "gesdd"
    else:
        routine = {"QR": "gesvd", "Jacobi": "gesvdj", "polar": "gesvdp"}[algorithm]
    if routine in ("gesvdj", "gesvdp"):
        econ = not full_matrices and (routine == "gesvdp" or (m > 32 and n > 32))
        u_full = ShapedArray(batch + (m, k if econ else m), aval.dtype)
        v_full = ShapedArray(batch + (n, k if econ else n), aval.dtype)
        _, s, u, v, ok = solver_call(routine, [a], [aval, s_aval, u_full, v_full, info],
                                     aliases={0: 0},
                                     config={**flags, "full_matrices": ir.BoolAttr.get(
                                         not econ)})
        if not compute_uv:
            return s, None, None, ok
        nb = len(batch)
        vt = hlo.transpose(v, list(range(nb)) + [nb + 1, nb])
        if is_complex(aval.dtype):
            vt = conj(vt)
        if not full_matrices and not econ:
            u, vt = slice_matrix(u, (None, k)), slice_matrix(vt, (k, None))
        return s, u, vt, ok
    if routine == "gesdd":      # (the handler takes gesvd's options, never transposed)
        if not compute_uv:
            u_aval = vt_aval = ShapedArray((), aval.dtype)
        _, s, u, vt, ok = solver_call(
            "gesdd", [a], [aval, s_aval, u_aval, vt_aval, info], aliases={0: 0},
            config={**flags, "full_matrices": ir.BoolAttr.get(bool(full_matrices)),
                    "transposed": ir.BoolAttr.get(False)})
        return s, u, vt, ok
    if not compute_uv:      # (gesvd takes scalar placeholders for U and V^H)
        u_aval = vt_aval = ShapedArray((), aval.dtype)
    transposed = m < n
    outs = [aval, s_aval, vt_aval, u_aval, info] if transposed else \
        [aval, s_aval, u_aval, vt_aval, info]
    _, s, x, y, ok = solver_call(
        "gesvd", [a], outs, aliases={0: 0}, column_major=not transposed,
        config={**flags, "full_matrices": ir.BoolAttr.get(bool(full_matrices)),
                "transposed": ir.BoolAttr.get(transposed)})
    u, vt = (y, x) if transposed else (x, y)
    return s, u, vt, ok


def eig_gpu(ctx, a, left: bool, right: bool):
    """eig on a GPU, as JAX's: cuSOLVER's geev for right eigenvectors only, else jaxlib's
    hybrid kernel (LAPACK on the host, or MAGMA)."""
    aval = ctx.avals_in[0]
    batch, n = aval.shape[:-2], aval.shape[-1]
    w_aval = ctx.avals_out[0]
    info = ShapedArray(batch, np.int32)
    real = not is_complex(aval.dtype)
    flags = {"left": ir.BoolAttr.get(left), "right": ir.BoolAttr.get(right)}
    if not left:
        packed = ShapedArray(aval.shape, aval.dtype)
        _, w, vl, vr, ok = solver_call("geev", [a], [aval, w_aval, packed, packed, info],
                                       config=flags)
        if real and right:
            vr = _unpack_conjugate_pairs(w, vr)
    else:
        vec = ShapedArray(aval.shape, w_aval.dtype)
        target = f"{gpu_solver_prefix()}hybrid_eig_{'real' if real else 'comp'}"
        flags["magma"] = ir.StringAttr.get("auto")
        if real:
            part = ShapedArray(batch + (n,), aval.dtype)
            wr, wi, vl, vr, ok = ffi_call(target, [a], [part, part, vec, vec, info],
                                          config=flags)
            w = hlo.complex(wr, wi)
        else:
            w, vl, vr, ok = ffi_call(target, [a], [w_aval, vec, vec, info], config=flags)
    ok = info_ok(ok)
    return [nan_unless(ok, v) for v, want in ((w, True), (vl, left), (vr, right)) if want]


def _unpack_conjugate_pairs(w: ir.Value, vr: ir.Value) -> ir.Value:
    """Complex eigenvectors from a real geev's packed columns: a conjugate pair (the
    eigenvalue with positive imaginary part first, as LAPACK orders them) shares columns
    j, j+1 as v_j = vr_j + i vr_(j+1) and v_(j+1) = vr_j - i vr_(j+1)."""
    va = aval_of(vr.type)
    nd, n = va.ndim, va.shape[-1]
    zero = H.constant(0, va.dtype)
    left = hlo.pad(_hlo_cols(vr, 1, n), zero, [0] * nd, [0] * (nd - 1) + [1], [0] * nd)
    right = hlo.pad(_hlo_cols(vr, 0, n - 1), zero, [0] * (nd - 1) + [1], [0] * nd,
                    [0] * nd)
    imag = hlo.imag(w)
    dims = list(range(nd - 2)) + [nd - 1]

    def where(direction):
        m = H.compare(imag, H.constant_like(imag, 0), direction)
        return hlo.broadcast_in_dim(H.ttype(va.shape, np.bool_), m, dims)
    first, second = where("GT"), where("LT")
    re = hlo.select(second, right, vr)
    im = hlo.select(first, left, hlo.select(second, hlo.negate(vr),
                                            H.constant(0, va.dtype, va.shape)))
    return hlo.complex(re, im)


def _hlo_cols(x: ir.Value, start: int, stop: int) -> ir.Value:
    shape = aval_of(x.type).shape
    return hlo.slice(x, [0] * (len(shape) - 1) + [start], list(shape[:-1]) + [stop],
                     [1] * len(shape))


def tridiagonal_solve_small(dl, d, du, b) -> ir.Value:
    """The solve of a 1x1 or 2x2 tridiagonal system by Cramer's rule, batched (cuSPARSE
    wants 3 rows or more). Singular systems give inf/nan, as a division does."""
    n = aval_of(d.type).shape[-1]
    nd = aval_of(b.type).ndim

    def col(x, i):        # x[..., i] broadcast over b's columns
        xa = aval_of(x.type)
        s = hlo.slice(x, [0] * (xa.ndim - 1) + [i], list(xa.shape[:-1]) + [i + 1],
                      [1] * xa.ndim)
        return hlo.broadcast_in_dim(H.ttype(_rows(b, 1), xa.dtype), s,
                                    list(range(xa.ndim - 1)) + [nd - 2])

    def row(i):
        ba = aval_of(b.type)
        return hlo.slice(b, [0] * (nd - 2) + [i, 0], list(ba.shape[:-2]) + [i + 1,
                                                                            ba.shape[-1]],
                         [1] * nd)
    if n == 1:
        return hlo.divide(b, col(d, 0))
    d0, d1, u0, l1 = col(d, 0), col(d, 1), col(du, 0), col(dl, 1)
    det = hlo.subtract(hlo.multiply(d0, d1), hlo.multiply(u0, l1))
    b0, b1 = row(0), row(1)
    x0 = hlo.divide(hlo.subtract(hlo.multiply(d1, b0), hlo.multiply(u0, b1)), det)
    x1 = hlo.divide(hlo.subtract(hlo.multiply(d0, b1), hlo.multiply(l1, b0)), det)
    return hlo.concatenate([x0, x1], nd - 2)


def _rows(b, n):
    shape = aval_of(b.type).shape
    return tuple(shape[:-2]) + (n, shape[-1])
