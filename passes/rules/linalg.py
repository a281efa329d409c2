"""Rules for the linalg family (dialect/ops/linalg.py): lowering, JVP, transpose, batching.

    %l = "jaxpr.cholesky"(%a) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  ==>
    %0 = stablehlo.cholesky %a, lower = true
    %l = stablehlo.select %lower_triangle, %0, %zeros

`fft` lowers to its StableHLO op; `cholesky` and `triangular_solve` to theirs on a GPU,
under IREE and for dtypes LAPACK lacks. The rest, and those two on a CPU, lower as
JAX's CPU lowering does to the LAPACK custom calls jaxlib's CPU client registers
(`lapack_<s|d|c|z><routine>_ffi`: typed FFI, column-major matrices, the routine's options
in `mhlo.backend_config`), and on a GPU to jaxlib's cuSOLVER/hipSOLVER calls as JAX's GPU
lowering does (linalg_ffi.py builds both; linalg_gpu.py has svd's and eig's GPU forms);
a batch whose `info` reports failure becomes NaN. Lowered for a TPU (`tpu_linalg_here`),
they emit what JAX's TPU lowering does: XLA's own LuDecomposition, Qr,
ProductOfElementaryHouseholderReflectors and Jacobi Eigh custom calls, StableHLO's
cholesky and triangular_solve, and JAX's error for eig, schur, hessenberg and tridiagonal;
svd expands into JAX's QDWH-based TPU algorithm there (linalg_tpu.py; svd's lowering
rule, by its algorithm and subset_by_index: linalg_svd.py).
JVP rules follow JAX's (jax/_src/lax/linalg.py, fft.py); every op takes leading batch
axes, so batching moves the batch axis to the front.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.dtype_rules import is_complex
from mjax.dialect.ops import linalg as L
from mjax.dialect.types import ShapedArray, aval_of
from mjax.passes.default_precision import rule_precision
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules import hlo as H
from mjax.passes.rules.batch_util import batch_rule, bdim_to_front, moveaxis
from mjax.passes.rules.linalg_ffi import (conj, gpu_solver_prefix, info_ok, lapack_call,
                                         lapack_target, nan_unless, not_on_tpu, partial_subset,
                                         slice_matrix, solver_call, tpu_linalg_here, uint8,
                                         xla_custom_call)
from mjax.passes.rules.linalg_gpu import eig_gpu
from mjax.passes.rules.linalg_tpu import eigh_tpu_rule
from mjax.passes.rules import linalg_svd  # noqa: F401  (svd's lowering rule)
from mjax.passes.rules.tables import TRANSPOSE, lowering, nan_checked, platform_rules


# ==== lowering helpers ==================================================================
def _triangle_mask(shape, k: int = 0, lower: bool = True) -> ir.Value:
    """Boolean mask of the (shifted) lower (col - row <= k) or upper (>= k) triangle."""
    rows = hlo.iota(H.ttype(shape, np.int32), len(shape) - 2)
    cols = hlo.iota(H.ttype(shape, np.int32), len(shape) - 1)
    diff = hlo.subtract(cols, rows)
    return H.compare(diff, H.constant(k, np.int32, shape), "LE" if lower else "GE")


def _keep_triangle(x: ir.Value, k: int = 0, lower: bool = True) -> ir.Value:
    aval = aval_of(x.type)
    return hlo.select(_triangle_mask(aval.shape, k, lower), x, H.constant_like(x, 0))


# ==== cholesky ==========================================================================
def _lapack_here(ctx, dtype) -> bool:
    """Whether the program is lowered for XLA on a CPU (jaxpr-to-stablehlo's
    `platform=cpu`, which jit passes there; not under IREE) and LAPACK has the dtype."""
    return (platform_rules().lapack
            and np.dtype(dtype).name in ("float32", "float64", "complex64", "complex128"))


@lowering(L.CholeskyOp)
def _cholesky_lower(ctx, a):
    aval = ctx.avals_in[0]
    if platform_rules().lapack:     # (a type LAPACK lacks raises JAX's error)
        lapack_target("potrf", aval.dtype)
    if _lapack_here(ctx, aval.dtype) and aval.shape[-1]:
        # On a CPU, LAPACK's potrf as JAX's lowering (XLA's own cholesky expands into a
        # loop many times slower); a batch it cannot factor becomes NaN.
        l, info = lapack_call("potrf", [a], [aval, ShapedArray(aval.shape[:-2], np.int32)],
                              aliases={0: 0}, config={"uplo": "L"})
        l = nan_unless(info_ok(info), l)
    else:
        l = hlo.cholesky(a, lower=True)
    # potrf and stablehlo.cholesky leave the other triangle as it was or unspecified: zero
    # it, as jnp does.
    return _keep_triangle(l, 0, lower=True)


# ==== triangular_solve ==================================================================
@lowering(L.TriangularSolveOp)
def _triangular_solve_lower(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a,
                            unit_diagonal):
    if conjugate_a and not transpose_a:
        a = hlo.real(a) if not is_complex(ctx.avals_in[0].dtype) else conj(a)
        conjugate_a = False
    if _lapack_here(ctx, ctx.avals_in[0].dtype) and all(ctx.avals_in[1].shape[-2:]):
        # On a CPU, BLAS's trsm as JAX's lowering (XLA's expansion is a loop).
        conjugated = conjugate_a and is_complex(ctx.avals_in[0].dtype)
        return lapack_call("trsm", [a, b], [ctx.avals_in[1]], aliases={1: 0}, config={
            "side": "L" if left_side else "R", "uplo": "L" if lower else "U",
            "trans_x": ("C" if conjugated else "T") if transpose_a else "N",
            "diag": "U" if unit_diagonal else "N"})[0]
    how = ("ADJOINT" if conjugate_a and is_complex(ctx.avals_in[0].dtype) else "TRANSPOSE"
           ) if transpose_a else "NO_TRANSPOSE"
    return hlo.triangular_solve(a, b, left_side, lower, unit_diagonal,
                                hlo.TransposeAttr.get(how))


# ==== lu ================================================================================
def _pivots_to_permutation(pivots: ir.Value, m: int) -> ir.Value:
    """The row permutation that applying LAPACK's row swaps (i <-> pivots[i], in order)
    makes of 0..m-1. A stablehlo.while over the swaps, each a masked select, so any batch
    shape works. JAX: lax.linalg.lu_pivots_to_permutation."""
    pa = aval_of(pivots.type)
    batch, k = pa.shape[:-1], pa.shape[-1]
    perm_t = H.ttype(batch + (m,), np.int32)
    i32 = H.ttype((), np.int32)
    perm0 = hlo.iota(perm_t, len(batch))
    start = H.constant(0, np.int32)
    loop = hlo.WhileOp([i32, perm_t], [start, perm0])
    cond = loop.regions[0].blocks.append(i32, perm_t)
    with ir.InsertionPoint(cond):
        hlo.return_([H.compare(cond.arguments[0], H.constant(k, np.int32), "LT")])
    body = loop.regions[1].blocks.append(i32, perm_t)
    with ir.InsertionPoint(body):
        i, perm = body.arguments
        zero = H.constant(0, np.int32)
        col = hlo.dynamic_slice(pivots, [zero] * len(batch) + [i], list(batch) + [1])
        p = hlo.broadcast_in_dim(perm_t, col, list(range(len(batch) + 1)))
        iota = hlo.iota(perm_t, len(batch))
        at_i = H.compare(iota, hlo.broadcast_in_dim(perm_t, i, []), "EQ")
        at_p = H.compare(iota, p, "EQ")
        zeros = H.constant(0, np.int32, batch + (m,))

        def pick(mask):  # perm[mask position], broadcast back over the row
            v = H.scalar_reduce([H.ttype(batch, np.int32)], [hlo.select(mask, perm, zeros)],
                                [zero], [len(batch)], lambda x, y: [hlo.add(x, y)])[0]
            return hlo.broadcast_in_dim(perm_t, v, list(range(len(batch))))
        perm_i, perm_p = pick(at_i), pick(at_p)
        new = hlo.select(at_i, perm_p, hlo.select(at_p, perm_i, perm))
        hlo.return_([hlo.add(i, H.constant(1, np.int32)), new])
    return loop.results[1]


@lowering(L.LuOp)
def _lu_lower(ctx, a):
    aval = ctx.avals_in[0]
    batch = aval.shape[:-2]
    m, n = aval.shape[-2:]
    out, piv_aval, perm_aval = ctx.avals_out
    if m == 0 or n == 0:
        return [a, H.constant(0, np.int32, piv_aval.shape),
                hlo.iota(H.ttype(perm_aval.shape, np.int32), len(batch))]
    if tpu_linalg_here():
        # XLA's TPU LU (JAX: _lu_tpu_lowering_rule): the factors, 0-based pivots and the
        # permutation, batch axes in front.
        return xla_custom_call("LuDecomposition", [a], [out, piv_aval, perm_aval],
                               api_version=2)
    call = solver_call if gpu_solver_prefix() else lapack_call
    lu, pivots, info = call("getrf", [a], [out, piv_aval, ShapedArray(batch, np.int32)],
                            aliases={0: 0})
    pivots = hlo.subtract(pivots, H.constant_like(pivots, 1))  # LAPACK counts from 1
    # info > 0 only says U is singular; the factors are still valid (as in JAX).
    lu = nan_unless(info_ok(info, "GE"), lu)
    return [lu, pivots, _pivots_to_permutation(pivots, m)]


# ==== geqrf / qr =========================================================================
@lowering(L.GeqrfOp)
def _geqrf_lower(ctx, a):
    aval = ctx.avals_in[0]
    if 0 in aval.shape[-2:]:
        return [a, H.constant(0, aval.dtype, ctx.avals_out[1].shape)]
    if tpu_linalg_here():     # XLA's Householder QR (JAX: _geqrf_lowering_rule)
        return xla_custom_call("Qr", [a], ctx.avals_out)
    call = solver_call if gpu_solver_prefix() else lapack_call
    return call("geqrf", [a], ctx.avals_out, aliases={0: 0})


@lowering(L.HouseholderProductOp)
def _householder_product_lower(ctx, a, taus):
    aval = ctx.avals_in[0]
    if 0 in aval.shape[-2:]:
        return a
    return _householder_product(a, taus, ctx.avals_out[0])


def _householder_product(a, taus, out_aval):
    """Q from geqrf's reflectors (LAPACK orgqr/ungqr; one GPU orgqr for every dtype; XLA's
    own on a TPU, JAX: _householder_product_lowering)."""
    if tpu_linalg_here():
        return xla_custom_call("ProductOfElementaryHouseholderReflectors", [a, taus],
                               [out_aval])[0]
    if gpu_solver_prefix():
        return solver_call("orgqr", [a, taus], [out_aval], aliases={0: 0})[0]
    routine = "ungqr" if is_complex(out_aval.dtype) else "orgqr"
    return lapack_call(routine, [a, taus], [out_aval], aliases={0: 0})[0]


@lowering(L.QrOp)
def _qr_lower(ctx, a, *, full_matrices):
    aval = ctx.avals_in[0]
    m, n = aval.shape[-2:]
    k = min(m, n)
    q_aval, r_aval = ctx.avals_out
    if k == 0:  # Q is the identity (or empty), R is empty or zeros
        eye = np.broadcast_to(np.eye(*q_aval.shape[-2:], dtype=aval.dtype), q_aval.shape)
        return [hlo.constant(H.A.dense_elements(np.ascontiguousarray(eye))),
                H.constant(0, aval.dtype, r_aval.shape)]
    if tpu_linalg_here():
        return _qr_tpu(a, aval, q_aval, r_aval, full_matrices)
    call = solver_call if gpu_solver_prefix() else lapack_call
    packed, taus = call("geqrf", [a], [aval, ShapedArray(aval.shape[:-2] + (k,), aval.dtype)],
                        aliases={0: 0})
    # orgqr/ungqr builds Q in place from the reflectors: give it a buffer of Q's shape.
    qcols = q_aval.shape[-1]
    if qcols > n:
        pad = [0] * (aval.ndim - 1) + [qcols - n]
        zero = H.constant(0, aval.dtype)
        qin = hlo.pad(packed, zero, [0] * aval.ndim, pad, [0] * aval.ndim)
    else:
        qin = slice_matrix(packed, (None, qcols))
    q = _householder_product(qin, taus, q_aval)
    r = _keep_triangle(slice_matrix(packed, (r_aval.shape[-2], None)), 0, lower=False)
    return [q, r]


def _qr_tpu(a, aval, q_aval, r_aval, full_matrices):
    """JAX's generic QR (jax/_src/lax/linalg.py _qr_lowering), which the TPU runs: XLA's
    Householder QR, Q built from its reflectors in a buffer of Q's shape, R its upper
    triangle."""
    m, n = aval.shape[-2:]
    k = min(m, n)
    taus_aval = ShapedArray(aval.shape[:-2] + (k,), aval.dtype)
    packed, taus = xla_custom_call("Qr", [a], [aval, taus_aval])
    if m < n:
        q = _householder_product(slice_matrix(packed, (m, m)), taus, q_aval)
    elif full_matrices:     # (padded even when m == n, as JAX's)
        pad = [0] * (aval.ndim - 1) + [m - n]
        qin = hlo.pad(packed, H.constant(0, aval.dtype), [0] * aval.ndim, pad,
                      [0] * aval.ndim)
        q = _householder_product(qin, taus, q_aval)
    else:
        q = _householder_product(packed, taus, q_aval)
        packed = slice_matrix(packed, (n, n))
    return [q, _keep_triangle(packed, 0, lower=False)]


# ==== eigh ===============================================================================
@lowering(L.EighOp)
def _eigh_lower(ctx, a, *, lower, sort_eigenvalues, subset_by_index=None, algorithm=None):
    aval = ctx.avals_in[0]
    batch = aval.shape[:-2]
    v_aval, w_aval = ctx.avals_out
    if tpu_linalg_here():
        if aval.shape[-1] == 0 and algorithm != "qr":
            return [a, H.constant(0, w_aval.dtype, w_aval.shape)]
        return eigh_tpu_rule(ctx, a, lower, sort_eigenvalues, subset_by_index, algorithm)
    # JAX's CPU and GPU rule (_eigh_cpu_gpu_lowering), its errors in its order
    if partial_subset(subset_by_index, aval.shape[-1]):
        raise NotImplementedError("subset_by_index not supported on CPU and GPU")
    if algorithm == "qdwh":
        raise NotImplementedError("QDWH implementation is only supported on TPU")
    if algorithm == "jacobi" and not gpu_solver_prefix():
        raise NotImplementedError("Jacobi implementation is not supported on CPU")
    if aval.shape[-1] == 0:
        return [a, H.constant(0, w_aval.dtype, w_aval.shape)]
    outs = [v_aval, w_aval, ShapedArray(batch, np.int32)]
    if gpu_solver_prefix():   # (the solver's algorithm: 0 its default, 1 QR, 2 Jacobi)
        v, w, info = solver_call("syevd", [a], outs, aliases={0: 0},
                                 config={"lower": ir.BoolAttr.get(bool(lower)),
                                         "algorithm": uint8(
                                             {None: 0, "qr": 1, "jacobi": 2}[algorithm])})
    else:
        routine = "heevd" if is_complex(aval.dtype) else "syevd"
        v, w, info = lapack_call(routine, [a], outs, aliases={0: 0},
                                 config={"mode": "V", "uplo": "L" if lower else "U"})
    ok = info_ok(info)
    # LAPACK returns eigenvalues in ascending order, which is what sort_eigenvalues asks.
    return [nan_unless(ok, v), nan_unless(ok, w)]


# ==== eig ================================================================================
@lowering(L.EigOp)
def _eig_lower(ctx, a, *, compute_left_eigenvectors, compute_right_eigenvectors):
    if tpu_linalg_here():
        raise not_on_tpu("eig")
    if ctx.backend not in ("xla", "cpu"):
        raise NotImplementedError("eig is only implemented on CPU (LAPACK geev) and GPU "
                                  "(cuSOLVER geev), as in JAX")
    if gpu_solver_prefix():
        return eig_gpu(ctx, a, compute_left_eigenvectors, compute_right_eigenvectors)
    aval = ctx.avals_in[0]
    batch = aval.shape[:-2]
    w_aval = ctx.avals_out[0]
    vec = ShapedArray(aval.shape, w_aval.dtype)
    info = ShapedArray(batch, np.int32)
    config = {"compute_left": "V" if compute_left_eigenvectors else "N",
              "compute_right": "V" if compute_right_eigenvectors else "N"}
    if is_complex(aval.dtype):
        w, vl, vr, info = lapack_call("geev", [a], [w_aval, vec, vec, info], config=config)
    else:
        parts = ShapedArray(batch + aval.shape[-1:], aval.dtype)
        wr, wi, vl, vr, info = lapack_call("geev", [a], [parts, parts, vec, vec, info],
                                           config=config)
        w = hlo.complex(wr, wi)
    ok = info_ok(info)
    outs = [nan_unless(ok, w)]
    if compute_left_eigenvectors:
        outs.append(nan_unless(ok, vl))
    if compute_right_eigenvectors:
        outs.append(nan_unless(ok, vr))
    return outs


# ==== fft ================================================================================
@lowering(L.FftOp)
def _fft_lower(ctx, x, *, fft_type, fft_lengths):
    out = ctx.avals_out[0]
    if 0 in ctx.avals_in[0].shape or 0 in out.shape:
        return H.constant(0, out.dtype, out.shape)
    return hlo.fft(x, hlo.FftTypeAttr.get(fft_type), list(fft_lengths),
                   results=[H.ttype(out.shape, out.dtype)])


# ==== matrix helpers for the JVP rules (jaxpr ops through the builder) ====================
def _shape(x):
    return AD.aval(x).shape


def _dtype(x):
    return AD.aval(x).dtype


def _const_like(b, x, array) -> ir.Value:
    """`array` (trailing dims) broadcast to x's shape, in x's dtype."""
    array = np.asarray(array, dtype=_dtype(x))
    shape = _shape(x)
    c = b.constant(array)
    if array.shape == shape:
        return c
    lead = len(shape) - array.ndim
    return b.broadcast_in_dim(c, shape=shape, broadcast_dimensions=tuple(
        range(lead, len(shape))))


def _scale(b, x, c):
    return b.mul(x, _const_like(b, x, np.full((), c)))


def _mT(b, x):
    perm = list(range(len(_shape(x))))
    perm[-2:] = perm[-1], perm[-2]
    return b.transpose(x, permutation=tuple(perm))


def _conj(b, x):
    return b.conj(x, input_dtype=_dtype(x)) if is_complex(_dtype(x)) else x


def _H(b, x):
    return _conj(b, _mT(b, x))


HIGHEST = ("HIGHEST", "HIGHEST")


def _matmul(b, x, y, precision=None):
    """Batched x @ y over the leading axes both share. `precision`: HIGHEST where JAX's
    rule asks it (its eigh, eig, lu, triangular_solve and svd rules, cholesky's last
    product; on a TPU the default multiplies in bfloat16 passes); None: the default
    recorded on the op whose rule this is (passes/default_precision.py)."""
    r = len(_shape(x))
    batch = tuple(range(r - 2))
    return b.dot_general(x, y, dimension_numbers=(((r - 1,), (r - 2,)), (batch, batch)),
                         precision=rule_precision(precision))


def _tri(b, x, k=0, lower=True):
    """tril(x, k) (lower) or triu(x, k) over the last two axes."""
    m, n = _shape(x)[-2:]
    keep = np.tri(m, n, k, dtype=bool) if lower else ~np.tri(m, n, k - 1, dtype=bool)
    mask = b.constant(keep)
    if keep.shape != _shape(x):
        mask = b.broadcast_in_dim(mask, shape=_shape(x), broadcast_dimensions=(
            len(_shape(x)) - 2, len(_shape(x)) - 1))
    return b.select_n(mask, AD.zeros_like(b, x), x)


def _eye_like(b, x, n=None, m=None):
    """The identity (m x n, default x's last two axes) broadcast over x's batch axes."""
    rows, cols = _shape(x)[-2:]
    m, n = m or rows, n or cols
    shape = _shape(x)[:-2] + (m, n)
    c = b.constant(np.eye(m, n, dtype=_dtype(x)))
    return b.broadcast_in_dim(c, shape=shape, broadcast_dimensions=(len(shape) - 2,
                                                                    len(shape) - 1))


def _slice_mat(b, x, rows, cols):
    """x[..., rows[0]:rows[1], cols[0]:cols[1]]."""
    shape = _shape(x)
    lo = (0,) * (len(shape) - 2) + (rows[0], cols[0])
    hi = shape[:-2] + (rows[1], cols[1])
    if lo == (0,) * len(shape) and hi == shape:
        return x
    return b.slice(x, start_indices=lo, limit_indices=hi, strides=(1,) * len(shape))


def _pad_mat(b, x, rows_after=0, cols_after=0, rows_before=0, cols_before=0):
    zero = b.constant(np.zeros((), _dtype(x)))
    cfg = [(0, 0, 0)] * (len(_shape(x)) - 2) + [(rows_before, rows_after, 0),
                                                 (cols_before, cols_after, 0)]
    return b.pad(x, zero, padding_config=tuple(cfg))


def _cast(b, x, dtype):
    return x if _dtype(x) == np.dtype(dtype) else b.convert_element_type(x, new_dtype=dtype)


def _bcast_rows(b, v, shape):
    """v (..., n) as a row vector broadcast to (..., m, n): v[..., None, :]."""
    r = len(shape)
    return b.broadcast_in_dim(v, shape=shape, broadcast_dimensions=tuple(range(r - 2)) + (r - 1,))


def _bcast_cols(b, v, shape):
    """v (..., m) as a column broadcast to (..., m, n): v[..., :, None]."""
    r = len(shape)
    return b.broadcast_in_dim(v, shape=shape, broadcast_dimensions=tuple(range(r - 1)))


def _diag(b, x):
    """The main diagonal of square matrices x (..., n, n) -> (..., n): x[..., i, i], a
    gather as JAX's _extract_diagonal (exact, and NaN-free where x holds infinities)."""
    shape = _shape(x)
    nb = len(shape) - 2
    n = min(shape[-2:])
    i = b.iota(dtype=np.int32, shape=(n, 1), dimension=0)
    idx = b.concatenate(i, i, dimension=1)
    dn = {"offset_dims": tuple(range(nb)), "collapsed_slice_dims": (nb, nb + 1),
          "start_index_map": (nb, nb + 1), "operand_batching_dims": (),
          "start_indices_batching_dims": ()}
    return b.gather(x, idx, dimension_numbers=dn, slice_sizes=shape[:-2] + (1, 1),
                    indices_are_sorted=False, unique_indices=False, mode="fill",
                    fill_value=None)


def _diag_matrix(b, v):
    """Square matrices with v (..., k) on their diagonals and zeros elsewhere:
    zeros.at[..., i, i].set(v), a scatter as JAX's _construct_diagonal."""
    shape = _shape(v)
    nb, k = len(shape) - 1, shape[-1]
    i = b.iota(dtype=np.int32, shape=(k, 1), dimension=0)
    dn = {"update_window_dims": tuple(range(nb)), "inserted_window_dims": (nb, nb + 1),
          "scatter_dims_to_operand_dims": (nb, nb + 1), "operand_batching_dims": (),
          "scatter_indices_batching_dims": ()}
    return b.scatter(AD.zeros(b, ShapedArray(shape + (k,), _dtype(v))),
                     b.concatenate(i, i, dimension=1), v, dimension_numbers=dn,
                     indices_are_sorted=False, unique_indices=False, mode="fill")


def _tsolve(b, a, rhs, **params):
    return b.triangular_solve(a, rhs, **{"left_side": False, "lower": False,
                                         "transpose_a": False, "conjugate_a": False,
                                         "unit_diagonal": False, **params})


# ==== JVP rules ==========================================================================
@AD.jvp_rule(L.CholeskyOp)
def _cholesky_jvp(b, primals, tangents):
    # JAX: _cholesky_jvp_rule (Murray 2016): L_dot = L phi(L^-1 A_dot L^-H), where phi
    # keeps the lower triangle and halves the diagonal.
    (a,), (t,) = primals, tangents
    lo = b.cholesky(a)
    if t is None:
        return [lo], [None]
    tmp = _tsolve(b, lo, t, left_side=False, transpose_a=True, conjugate_a=True, lower=True)
    inner = _tsolve(b, lo, tmp, left_side=True, lower=True)
    n = _shape(a)[-1]
    phi = b.mul(_tri(b, inner), _const_like(b, inner, 1 / (1 + np.eye(n))))
    return [lo], [_matmul(b, lo, phi, HIGHEST)]


@AD.jvp_rule(L.TriangularSolveOp)
def _triangular_solve_jvp(b, primals, tangents, **params):
    (a, rhs), (ta, tb) = primals, tangents
    ans = b.triangular_solve(a, rhs, **params)
    out = None
    if tb is not None:  # linear in b
        out = b.triangular_solve(a, tb, **params)
    if ta is not None:  # JAX: _triangular_solve_jvp_rule_a
        unit = params["unit_diagonal"]
        g = _tri(b, ta, -1 if unit else 0, lower=True) if params["lower"] else \
            _tri(b, ta, 1 if unit else 0, lower=False)
        g = b.neg(g)
        if params["transpose_a"]:
            g = _mT(b, g)
        if params["conjugate_a"]:
            g = _conj(b, g)
        m, n = _shape(rhs)[-2:]
        if params["left_side"]:
            d = (b.triangular_solve(a, _matmul(b, g, ans, HIGHEST), **params) if m > n
                 else _matmul(b, b.triangular_solve(a, g, **params), ans, HIGHEST))
        else:
            d = (b.triangular_solve(a, _matmul(b, ans, g, HIGHEST), **params) if m < n
                 else _matmul(b, ans, b.triangular_solve(a, g, **params), HIGHEST))
        out = AD.add_tangents(b, out, d)
    return [ans], [out]


def _triangular_solve_transpose(b, ct, a, rhs, **params):
    if AD.is_linear(a):
        raise NotImplementedError("triangular_solve is not linear in `a`: it cannot be "
                                  "transposed with respect to the triangular matrix")
    flipped = dict(params, transpose_a=not params["transpose_a"])
    return [None, b.triangular_solve(a, ct, **flipped)]


TRANSPOSE[L.TriangularSolveOp] = _triangular_solve_transpose


@AD.jvp_rule(L.LuOp)
def _lu_jvp(b, primals, tangents):
    # JAX: _lu_jvp_rule / _lu_jvp_inner (de Hoog, Anderssen, Lukas): with P A = L U,
    # L^-1 P A_dot U^-1 = L^-1 L_dot + U_dot U^-1 splits into strict lower and upper parts.
    (a,), (t,) = primals, tangents
    lu, pivots, perm = b.lu(a)
    if t is None:
        return [lu, pivots, perm], [None, None, None]
    m, n = _shape(a)[-2:]
    k = min(m, n)
    pa = _permute_rows(b, perm, t)
    l_ = _pad_mat(b, _tri(b, _slice_mat(b, lu, (0, m), (0, k)), -1), cols_after=m - k)
    l_ = b.add(l_, _eye_like(b, l_))
    u_ = _pad_mat(b, _tri(b, _slice_mat(b, lu, (0, k), (0, n)), 0, lower=False),
                  rows_after=n - k)
    if n > k:
        u_eye = _pad_mat(b, _eye_like(b, u_, n - k, n - k), rows_before=k, cols_before=k)
        u_ = b.add(u_, u_eye)
    la = _tsolve(b, l_, pa, left_side=True, lower=True, unit_diagonal=True)
    lau = _tsolve(b, u_, la, left_side=False, lower=False)
    l_dot = _matmul(b, l_, _tri(b, lau, -1), HIGHEST)
    u_dot = _matmul(b, _tri(b, lau, 0, lower=False), u_, HIGHEST)
    return [lu, pivots, perm], [b.add(l_dot, u_dot), None, None]


def _thin_qr_jvp(b, q, r, dx):
    # JAX: _thin_qr_jvp (m >= n; j-towns.github.io/papers/qr-derivative.pdf).
    dx_rinv = _tsolve(b, r, dx)
    qt_dx_rinv = _matmul(b, _H(b, q), dx_rinv)
    low = _tri(b, qt_dx_rinv, -1)
    do = b.sub(low, _H(b, low))
    if is_complex(_dtype(q)):  # the diagonal's imaginary part
        imag = b.sub(qt_dx_rinv, _cast(b, b.real(qt_dx_rinv), _dtype(q)))
        do = b.add(do, b.mul(_eye_like(b, imag), imag))
    dq = b.add(_matmul(b, q, b.sub(do, qt_dx_rinv)), dx_rinv)
    dr = _matmul(b, b.sub(qt_dx_rinv, do), r)
    return dq, dr


@AD.jvp_rule(L.QrOp)
def _qr_jvp(b, primals, tangents, *, full_matrices):
    # JAX: qr_jvp_rule.
    (x,), (dx,) = primals, tangents
    q, r = b.qr(x, full_matrices=full_matrices)
    if dx is None:
        return [q, r], [None, None]
    m, n = _shape(x)[-2:]
    if m < n:  # X = [X1 X2] = Q [R1 R2]: thin rule on X1, then dR2 = dQ^H X2 + Q^H dX2
        x2 = _slice_mat(b, x, (0, m), (m, n))
        dq, dr1 = _thin_qr_jvp(b, q, _slice_mat(b, r, (0, m), (0, m)),
                               _slice_mat(b, dx, (0, m), (0, m)))
        dr2 = b.add(_matmul(b, _H(b, dq), x2),
                    _matmul(b, _H(b, q), _slice_mat(b, dx, (0, m), (m, n))))
        return [q, r], [dq, b.concatenate(dr1, dr2, dimension=len(_shape(x)) - 1)]
    if full_matrices and m > n:
        raise NotImplementedError("mjax: the derivative of a complete QR decomposition of a "
                                  "tall matrix (mode='complete', m > n) is not implemented; "
                                  "use mode='reduced'")
    dq, dr = _thin_qr_jvp(b, q, r, dx)
    return [q, r], [dq, dr]


@AD.jvp_rule(L.EighOp)
def _eigh_jvp(b, primals, tangents, **params):
    # JAX: _eigh_jvp_rule (distinct eigenvalues): dw = diag(V^H dA V),
    # dV = V (F * V^H dA V) with F_ij = 1 / (w_j - w_i) off the diagonal.
    (a,), (t,) = primals, tangents
    if t is None:
        return list(b.eigh(a, **params)), [None, None]
    if partial_subset(params.get("subset_by_index"), _shape(a)[-1]):
        raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
    # (JAX's rule decomposes symmetrize(a), whatever symmetrize_input asked)
    v, w = b.eigh(b.div(b.add(a, _H(b, a)), _const_like(b, a, 2)), **params)
    shape = _shape(a)
    wc = _cast(b, w, _dtype(a))
    eye = _eye_like(b, a)
    diff = b.sub(b.add(eye, _bcast_rows(b, wc, shape)), _bcast_cols(b, wc, shape))
    f = b.sub(b.div(AD.full_like(b, diff, 1), diff), eye)
    vav = _matmul(b, _matmul(b, _H(b, v), t, HIGHEST), v, HIGHEST)
    dv = _matmul(b, v, b.mul(f, vav), HIGHEST)
    dw = _diag(b, b.real(vav) if is_complex(_dtype(a)) else vav)
    return [v, w], [dv, dw]


@AD.jvp_rule(L.SvdOp)
def _svd_jvp(b, primals, tangents, *, full_matrices, compute_uv, **params):
    # JAX: _svd_jvp_rule (the subset and algorithm forwarded to the reduced svd).
    (a,), (da,) = primals, tangents
    if da is None:
        outs = b.emit(L.SvdOp, a, full_matrices=full_matrices, compute_uv=compute_uv,
                      **params)
        return outs, [None] * len(outs)
    m, n = _shape(a)[-2:]
    s, u, vt = b.emit(L.SvdOp, a, full_matrices=False, compute_uv=True, **params)
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError("Singular value decomposition JVP not implemented for "
                                  "full matrices")
    dtype = _dtype(a)
    ut, v = _H(b, u), _H(b, vt)
    ds_mat = _matmul(b, _matmul(b, ut, da, HIGHEST), v, HIGHEST)
    ds = _diag(b, b.real(ds_mat) if is_complex(dtype) else ds_mat)
    if not compute_uv:
        return [s], [ds]
    k = _shape(s)[-1]
    kk = _shape(s)[:-1] + (k, k)
    s_row, s_col = _bcast_rows(b, s, kk), _bcast_cols(b, s, kk)
    s_diffs = b.mul(b.add(s_row, s_col), b.sub(s_row, s_col))
    eye_r = _eye_like(b, s_diffs)
    f = b.sub(b.div(AD.full_like(b, s_diffs, 1), b.add(s_diffs, eye_r)), eye_r)
    fc = _cast(b, f, dtype)
    s_rowc, s_colc = _cast(b, s_row, dtype), _cast(b, s_col, dtype)
    dss = b.mul(s_rowc, ds_mat)
    sds = b.mul(s_colc, ds_mat)
    s_zero = b.convert_element_type(b.eq(s, AD.zeros_like(b, s)), new_dtype=_dtype(s))
    s_inv = b.sub(b.div(AD.full_like(b, s, 1), b.add(s, s_zero)), s_zero)
    s_inv_mat = _diag_matrix(b, s_inv)
    dudv_diag = b.mul(_scale(b, b.sub(ds_mat, _H(b, ds_mat)), 0.5), _cast(b, s_inv_mat, dtype))
    du = _matmul(b, u, b.add(b.mul(fc, b.add(dss, _H(b, dss))), dudv_diag), HIGHEST)
    dv = _matmul(b, v, b.mul(fc, b.add(sds, _H(b, sds))), HIGHEST)
    if m > n:
        dav = _matmul(b, da, v, HIGHEST)
        extra = b.sub(dav, _matmul(b, u, _matmul(b, ut, dav, HIGHEST), HIGHEST))
        du = b.add(du, b.div(extra, _bcast_rows(b, _cast(b, s, dtype), _shape(extra))))
    if n > m:
        dahu = _matmul(b, _H(b, da), u, HIGHEST)
        extra = b.sub(dahu, _matmul(b, v, _matmul(b, vt, dahu, HIGHEST), HIGHEST))
        dv = b.add(dv, b.div(extra, _bcast_rows(b, _cast(b, s, dtype), _shape(extra))))
    return [s, u, vt], [ds, du, _H(b, dv)]


AD.no_jvp(L.GeqrfOp, "geqrf's Householder form has no derivative rule (as in JAX): "
                     "differentiate jnp.linalg.qr instead")
AD.no_jvp(L.HouseholderProductOp, "householder_product has no derivative rule (as in JAX): "
                                  "differentiate jnp.linalg.qr instead")


def _permute_rows(b, perm, x):
    """x[..., perm, :], a gather (JAX: a_dot[permutation]), exact at any precision (a
    one-hot matmul would round its operand to bfloat16 on a TPU)."""
    shape = _shape(x)
    nb = len(shape) - 2
    batch = tuple(range(nb))
    idx = b.reshape(perm, new_sizes=_shape(perm) + (1,))
    dn = {"offset_dims": (nb + 1,), "collapsed_slice_dims": (nb,), "start_index_map": (nb,),
          "operand_batching_dims": batch, "start_indices_batching_dims": batch}
    return b.gather(x, idx, dimension_numbers=dn, slice_sizes=(1,) * (nb + 1) + shape[-1:],
                    indices_are_sorted=False, unique_indices=False, mode="fill",
                    fill_value=None)


def _solve(b, a, rhs):
    """a^-1 rhs through an LU decomposition (P a = L U)."""
    lu, _, perm = b.lu(a)
    y = _tsolve(b, lu, _permute_rows(b, perm, rhs), left_side=True, lower=True,
                unit_diagonal=True)
    return _tsolve(b, lu, y, left_side=True, lower=False)


@AD.jvp_rule(L.EigOp)
def _eig_jvp(b, primals, tangents, *, compute_left_eigenvectors,
             compute_right_eigenvectors):
    # JAX: eig_jvp_rule. Eigenvalues only: dw_i = (V^-1 dA V)_ii with V the right
    # eigenvectors; eigenvector derivatives need assumptions JAX makes opt-in.
    (a,), (t,) = primals, tangents
    params = dict(compute_left_eigenvectors=compute_left_eigenvectors,
                  compute_right_eigenvectors=compute_right_eigenvectors)
    if t is None:
        outs = b.emit(L.EigOp, a, **params)
        return outs, [None] * len(outs)
    if compute_left_eigenvectors or compute_right_eigenvectors:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are not implemented in mjax (JAX "
            "makes them opt-in with enable_eigvec_derivs); differentiate "
            "jnp.linalg.eigvals, or use eigh for Hermitian matrices")
    w, vr = b.emit(L.EigOp, a, compute_left_eigenvectors=False,
                   compute_right_eigenvectors=True)
    da = _cast(b, t, _dtype(vr))
    dw = b.reduce_sum(b.mul(_solve(b, vr, da), _mT(b, vr)), axes=(len(_shape(vr)) - 1,))
    return [w], [dw]


for _op in (L.CholeskyOp, L.LuOp, L.GeqrfOp, L.HouseholderProductOp, L.QrOp, L.EighOp,
            L.SvdOp, L.EigOp):
    AD.no_transpose(_op, "not linear: a matrix factorization")


# ---- fft: linear; JAX: fft._fft_transpose_rule ---------------------------------------------
def _half_spectrum_mask(b, like, n_last: int, fft_lengths):
    """2 for the bins an RFFT stores once for two (all but DC and, for even n, Nyquist)."""
    mask = np.full(n_last, 2.0)
    mask[0] = 1.0
    if fft_lengths[-1] % 2 == 0:
        mask[-1] = 1.0
    return _const_like(b, like, mask)


def _fft_transpose(b, ct, x, *, fft_type, fft_lengths):
    size = float(np.prod(fft_lengths))
    if fft_type == "RFFT":
        mask = _half_spectrum_mask(b, ct, _shape(ct)[-1], fft_lengths)
        y = b.fft(b.div(_conj(b, ct), mask), fft_type="IRFFT", fft_lengths=fft_lengths)
        return [_scale(b, y, size)]
    if fft_type == "IRFFT":
        y = b.fft(ct, fft_type="RFFT", fft_lengths=fft_lengths)
        mask = _half_spectrum_mask(b, y, _shape(y)[-1], fft_lengths)
        return [_conj(b, _scale(b, b.mul(mask, y), 1 / size))]
    return [b.fft(ct, fft_type=fft_type, fft_lengths=fft_lengths)]


AD.deflinear(L.FftOp, _fft_transpose)


# ==== batching: every op takes leading batch axes ==========================================
def _register_batch(op):
    def rule(b, args, dims, **params):
        # The batch axis goes in front of the op's own leading batch axes; triangular_solve
        # needs both operands batched alike, so an unbatched one is broadcast.
        xs = [bdim_to_front(b, x, d) for x, d in zip(args, dims)]
        outs = b.emit(op, *xs, **params)
        return outs, [0] * len(outs)
    return rule


for _op in (L.CholeskyOp, L.LuOp, L.GeqrfOp, L.HouseholderProductOp, L.QrOp, L.EighOp,
            L.SvdOp, L.EigOp, L.FftOp):
    batch_rule(_op)(_register_batch(_op))


@batch_rule(L.TriangularSolveOp)
def _triangular_solve_batch(b, args, dims, **params):
    # JAX: _triangular_solve_batching_rule. With only b batched, the batch folds into b's
    # independent columns (left side) or rows (right side): a stays unbroadcast.
    (a, rhs), (da, db) = args, dims
    if da is not None:
        return _register_batch(L.TriangularSolveOp)(b, args, dims, **params)
    r = len(_shape(rhs))
    if params["left_side"]:
        y = moveaxis(b, rhs, db, r - 1)                # (..., m, n, B)
        flat = _shape(y)[:-3] + (_shape(y)[-3], _shape(y)[-2] * _shape(y)[-1])
        out_dim = r - 1
    else:
        y = moveaxis(b, rhs, db, r - 2)                # (..., m, B, n)
        flat = _shape(y)[:-3] + (_shape(y)[-3] * _shape(y)[-2], _shape(y)[-1])
        out_dim = r - 2
    x = b.triangular_solve(a, b.reshape(y, new_sizes=flat), **params)
    return [b.reshape(x, new_sizes=_shape(y))], [out_dim]


# ---- checkify -------------------------------------------------------------------------
nan_checked(L.FftOp)
