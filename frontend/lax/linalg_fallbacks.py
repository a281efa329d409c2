"""Pure-lax forms of linalg functions whose own ops lower to LAPACK (CPU) or the GPU
solvers, for platforms with neither (IREE): JAX's generic lowerings of tridiagonal_solve
(a Thomas sweep, no pivoting) and ormqr (the Householder reflectors applied one by
one)."""
from __future__ import annotations

import numpy as np

from mjax.specs import dtypes
from mjax.tracing.core import aval_of_value
from mjax.lax.control_flow import fori_loop, scan
from mjax.lax.elementwise import (broadcasted_iota, conj, div, eq, full, gt, mul, select,
                                  sub)
from mjax.lax.indexing import dynamic_index_in_dim
from mjax.lax.reduce import reduce_sum
from mjax.lax.shapes import concatenate, expand_dims, slice_in_dim, transpose


def _move(x, src: int, dst: int):
    n = aval_of_value(x).ndim
    perm = list(range(n))
    perm.insert(dst % n, perm.pop(src % n))
    return transpose(x, tuple(perm))


def _col(v):
    """v (...) as (..., 1): one value per row of a right-hand side."""
    return expand_dims(v, (aval_of_value(v).ndim,))


def tridiagonal_solve_thomas(dl, d, du, b):
    """x with A x = b by the Thomas algorithm: forward elimination, back substitution,
    no pivoting (sound for diagonally dominant or positive definite A, as JAX's generic
    lowering). Leading batch axes; b is (..., m, n)."""
    m = aval_of_value(d).shape[-1]
    if m == 0:
        return b
    dl, d, du = (_move(v, -1, 0) for v in (dl, d, du))       # (m, ...)
    b = _move(b, -2, 0)                                        # (m, ..., n)
    first = lambda v: slice_in_dim(v, 0, 1, 1, 0)[0]  # noqa: E731
    cp0 = div(first(du), first(d))
    dp0 = div(first(b), _col(first(d)))
    if m == 1:
        return _move(expand_dims(dp0, (0,)), 0, -2)

    def eliminate(carry, row):
        cp, dp = carry
        lo, dia, up, rhs = row
        pivot = sub(dia, mul(lo, cp))
        cp = div(up, pivot)
        dp = div(sub(rhs, mul(_col(lo), dp)), _col(pivot))
        return (cp, dp), (cp, dp)

    rest = lambda v: slice_in_dim(v, 1, m, 1, 0)  # noqa: E731
    (_, last), (cps, dps) = scan(eliminate, (cp0, dp0), (rest(dl), rest(d), rest(du), rest(b)))
    cps = concatenate([expand_dims(cp0, (0,)), cps], 0)
    dps = concatenate([expand_dims(dp0, (0,)), dps], 0)

    def substitute(x_next, row):
        cp, dp = row
        x = sub(dp, mul(_col(cp), x_next))
        return x, x

    head = lambda v: slice_in_dim(v, 0, m - 1, 1, 0)  # noqa: E731
    _, xs = scan(substitute, last, (head(cps), head(dps)), reverse=True)
    x = concatenate([xs, expand_dims(last, (0,))], 0)
    return _move(x, 0, -2)


def ormqr_reflectors(a, taus, c, *, left: bool, transpose: bool):
    """Q c, Q^H c, c Q or c Q^H with Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^H (v_i: 1 at
    i, a's column i below it), applying each H_i (or H_i^H) to c in turn."""
    shape = aval_of_value(a).shape
    k = aval_of_value(taus).shape[-1]
    dt = aval_of_value(c).dtype
    cplx = dtypes.issubdtype(dt, np.complexfloating)
    rows = broadcasted_iota(np.int32, shape, len(shape) - 2)
    cols = broadcasted_iota(np.int32, shape, len(shape) - 1)
    v_all = select(gt(rows, cols), a, select(eq(rows, cols), full(shape, 1, dt),
                                             full(shape, 0, dt)))     # (..., m, n)
    if cplx and transpose:
        taus = conj(taus)
    reverse = left != transpose     # Q c and c Q^H apply H_k first
    r = aval_of_value(c).ndim

    def apply(i, c):
        j = k - 1 - i if reverse else i
        v = dynamic_index_in_dim(v_all, j, len(shape) - 1, keepdims=False)   # (..., m)
        tau = expand_dims(dynamic_index_in_dim(taus, j, len(shape) - 2, keepdims=False),
                          (r - 2, r - 1))
        vh = conj(v) if cplx else v
        if left:        # c - tau v (v^H c)
            w = reduce_sum(mul(expand_dims(vh, (r - 1,)), c), (r - 2,))
            update = mul(expand_dims(v, (r - 1,)), expand_dims(w, (r - 2,)))
        else:           # c - tau (c v) v^H
            w = reduce_sum(mul(c, expand_dims(v, (r - 2,))), (r - 1,))
            update = mul(expand_dims(w, (r - 1,)), expand_dims(vh, (r - 2,)))
        return sub(c, mul(tau, update))

    return fori_loop(0, k, apply, c)
