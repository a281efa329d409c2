"""svd's lowering rule (dialect/ops/linalg.py SvdOp), by the op's `algorithm` and
`subset_by_index` as JAX's rules choose (jax/_src/lax/linalg.py _svd_cpu_gpu_lowering,
jax/_src/tpu/linalg/svd.py _svd_tpu_lowering_rule):

  CPU   a subset other than the whole range (0, min(m, n)) raises; an empty matrix is
        JAX's _empty_svd; None, DEFAULT and DIVIDE_AND_CONQUER call LAPACK's gesdd, QR
        its gesvd, JACOBI and POLAR raise.
  GPU   the same subset and empty cases; the solver by the algorithm (linalg_gpu.svd_gpu).
  TPU   anything but None, DEFAULT and POLAR raises; an empty matrix is _empty_svd; the
        rest expands into JAX's QDWH-based SVD, which takes the subset (linalg_tpu).

A batch whose `info` reports failure becomes NaN, as JAX's.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.dtype_rules import real_dtype
from mjax.dialect.ops import linalg as L
from mjax.dialect.types import ShapedArray
from mjax.passes.rules import hlo as H
from mjax.passes.rules.linalg_ffi import (gpu_solver_prefix, info_ok, lapack_call, nan_unless,
                                         partial_subset, tpu_linalg_here)
from mjax.passes.rules.linalg_gpu import svd_gpu
from mjax.passes.rules.linalg_tpu import svd_tpu
from mjax.passes.rules.tables import lowering

# JAX's SvdAlgorithm values (the op's `algorithm`) that LAPACK's divide and conquer runs
_GESDD = (None, "default", "divide_and_conquer")


def _empty_svd(ctx):
    """JAX's _empty_svd: no singular values; a full U or V^H is the identity, the rest
    empty."""
    aval = ctx.avals_in[0]
    outs = [H.constant(0, real_dtype(aval.dtype), ctx.avals_out[0].shape)]
    for o in ctx.avals_out[1:]:
        eye = np.broadcast_to(np.eye(*o.shape[-2:], dtype=o.dtype), o.shape)
        outs.append(hlo.constant(H.A.dense_elements(np.ascontiguousarray(eye))))
    return outs


@lowering(L.SvdOp)
def _svd_lower(ctx, a, *, full_matrices, compute_uv, subset_by_index=None, algorithm=None):
    aval = ctx.avals_in[0]
    batch = aval.shape[:-2]
    m, n = aval.shape[-2:]
    k = min(m, n)
    if tpu_linalg_here():     # (JAX: lower_fun of its QDWH-based SVD)
        if algorithm not in (None, "default", "polar"):
            raise NotImplementedError("Only the POLAR (which is also DEFAULT on TPU) SVD "
                                      "algorithm is supported on TPU.")
        if k == 0:
            return _empty_svd(ctx)
        return svd_tpu(ctx, a, full_matrices, compute_uv, subset_by_index)
    if partial_subset(subset_by_index, k):
        raise NotImplementedError("subset_by_index not implemented for CPU and GPU")
    if k == 0:
        return _empty_svd(ctx)
    if not gpu_solver_prefix() and algorithm not in _GESDD + ("QR",):
        raise NotImplementedError("The SVD Jacobi and Polar algorithms are not implemented "
                                  "on CPU.")
    ucols, vrows = (m, n) if full_matrices else (k, k)
    s_aval = ShapedArray(batch + (k,), real_dtype(aval.dtype))
    u_aval = ShapedArray(batch + (m, ucols), aval.dtype)
    vt_aval = ShapedArray(batch + (vrows, n), aval.dtype)
    if gpu_solver_prefix():
        s, u, vt, info = svd_gpu(a, aval, s_aval, u_aval, vt_aval, full_matrices,
                                  compute_uv, algorithm)
    else:
        mode = ("A" if full_matrices else "S") if compute_uv else "N"
        _, s, u, vt, info = lapack_call(
            "gesdd" if algorithm in _GESDD else "gesvd", [a],
            [aval, s_aval, u_aval, vt_aval, ShapedArray(batch, np.int32)],
            config={"mode": mode}, aliases={0: 0})
    ok = info_ok(info)
    outs = [nan_unless(ok, s)]
    if compute_uv:
        outs += [nan_unless(ok, u), nan_unless(ok, vt)]
    return outs
