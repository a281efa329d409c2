"""`mjax.scipy.linalg.eigh_tridiagonal`, as JAX 0.10.2's: the eigenvalues of a symmetric
(Hermitian) tridiagonal matrix by parallel bisection on Sturm sequence counts, the
eigenvectors by inverse iteration from random starts (clusters of close eigenvalues
re-orthonormalized by QR after each step)."""
from __future__ import annotations

import numpy as _onp

from mjax import lax
from mjax import numpy as jnp
from mjax import random
from mjax.lax import linalg as lax_linalg
from mjax.numpy import linalg as _np_linalg
from mjax.tracing.staging import jit_eagerly

_SUPPORTED = (_onp.float32, _onp.float64, _onp.complex64, _onp.complex128)


def _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, x):
    """For each x, the number of eigenvalues below x: the negative pivots of the LDL^T
    factorization of T - x (pivots kept away from zero by pivmin)."""
    q = alpha[0] - x
    count = (q < 0).astype(_onp.int32)
    q = jnp.where(alpha[0] == x, alpha0_perturbation, q)

    def step(i, qc):
        q, count = qc
        q = alpha[i] - beta_sq[i - 1] / q - x
        small = q <= pivmin
        return jnp.where(small, jnp.minimum(q, -pivmin), q), jnp.where(small, count + 1, count)

    return lax.fori_loop(1, alpha.shape[0], step, (q, count))[1]


def _bisect(alpha, beta_abs, beta_sq, target, tol):
    """The eigenvalues of index `target` (ascending), bisected in parallel from a slightly
    widened Gershgorin interval until all brackets are below the tolerance."""
    n = alpha.shape[0]
    finfo = _onp.finfo(alpha.dtype)
    row_sum = jnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
    est_max = jnp.max(alpha + row_sum)
    est_min = jnp.min(alpha - row_sum)
    t_norm = jnp.maximum(jnp.abs(est_min), jnp.abs(est_max))
    one = _onp.ones([], alpha.dtype)
    safemin = _onp.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * jnp.maximum(1, jnp.max(beta_sq))
    alpha0_perturbation = jnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = jnp.maximum(tol, abs_tol)
    max_it = finfo.nmant + 1
    fudge = 2.1
    slack = jnp.array(n, alpha.dtype) * fudge * finfo.eps * t_norm
    shape = target.shape
    lower = jnp.broadcast_to(est_min - slack - 2 * fudge * pivmin, shape)
    upper = jnp.broadcast_to(est_max + slack + fudge * pivmin, shape)
    pivmin = jnp.broadcast_to(pivmin, shape)
    alpha0_perturbation = jnp.broadcast_to(alpha0_perturbation, shape)

    def cond(state):
        it, lower, _, upper = state
        return (it < max_it) & (abs_tol < jnp.max(upper - lower))

    def body(state):
        it, lower, mid, upper = state
        counts = _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
        lower = jnp.where(counts <= target, mid, lower)
        upper = jnp.where(counts > target, mid, upper)
        return it + 1, lower, 0.5 * (lower + upper), upper

    return lax.while_loop(cond, body, (0, lower, 0.5 * (upper + lower), upper))[2]


def _orthonormalize_clusters(v, starts, ends, num_clusters):
    """v (k, n) with each run of rows starts[c]:ends[c] replaced by an orthonormal basis
    of its span (by QR)."""
    k, n = v.shape
    rows = jnp.arange(k)

    def one(c, v):
        start, end = starts[c], ends[c]
        keep = (rows < end - start).astype(v.dtype)
        block = lax.dynamic_slice(jnp.concatenate([v, jnp.zeros_like(v)]), (start, 0), (k, n))
        q = _np_linalg.qr((block * keep[:, None]).T)[0]
        placed = lax.dynamic_update_slice(jnp.zeros((2 * k, n), v.dtype),
                                          q.T * keep[:, None], (start, 0))[:k]
        inside = (rows >= start) & (rows < end)
        return jnp.where(inside[:, None], placed, v)

    return lax.fori_loop(0, num_clusters, one, v)


def _eigenvectors(alpha, beta, eigvals, key):
    """Inverse iteration for all eigenvalues at once (at most 5 steps, until no vector's
    norm grows by 10%); rows of the result are the eigenvectors."""
    n, k = alpha.shape[0], eigvals.shape[0]
    dl = jnp.pad(jnp.conj(beta), (1, 0))
    du = jnp.pad(beta, (0, 1))
    # Eigenvalues closer than sqrt(eps) |T| form clusters whose vectors are re-orthonormalized.
    gaptol = jnp.sqrt(_onp.finfo(eigvals.dtype).eps) * jnp.maximum(jnp.abs(eigvals[0]),
                                                                    jnp.abs(eigvals[-1]))
    close = (eigvals[1:] - eigvals[:-1]) < gaptol
    left = jnp.pad(close, (1, 0), constant_values=False)
    right = jnp.pad(close, (0, 1), constant_values=False)
    size = k // 2 + 1
    starts = jnp.nonzero(~left & right, size=size)[0]
    ends = jnp.nonzero(left & ~right, size=size)[0] + 1
    num_clusters = jnp.sum(~left & right)

    dt = jnp.result_type(alpha.dtype, beta.dtype)
    v = random.normal(key, (k, n), dtype=_onp.finfo(dt).dtype).astype(dt)
    v = v / _np_linalg.norm(v, axis=-1, keepdims=True).astype(dt)
    diag = (alpha[None, :] - eigvals[:, None]).astype(dt)
    dl = jnp.broadcast_to(dl[None, :], (k, n)).astype(dt)
    du = jnp.broadcast_to(du[None, :], (k, n)).astype(dt)

    def step(state):
        it, v, norm, _ = state
        w = lax_linalg.tridiagonal_solve(dl, diag, du, v[:, :, None].astype(dt),
                                         perturb_singular=True)[..., 0]
        new_norm = _np_linalg.norm(w, axis=-1, keepdims=True)
        w = w / new_norm.astype(w.dtype)
        w = _orthonormalize_clusters(w, starts, ends, num_clusters)
        return it + 1, w, new_norm[:, 0], norm

    def growing(state):
        it, _, norm, old_norm = state
        return (it < 5) & jnp.any(norm >= 1.1 * old_norm)

    init = (0, v, jnp.ones(k, eigvals.dtype), jnp.zeros(k, eigvals.dtype))
    return lax.while_loop(growing, step, init)[1]


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None,
                     key=None):
    """The eigenvalues (ascending; select="i": those of index select_range[0]..[1]) of the
    symmetric tridiagonal matrix with diagonal d and off-diagonal e, and unless
    eigvals_only, the eigenvectors as columns (inverse iteration seeded by `key`, default
    jax.random.key(42)). JAX: jax.scipy.linalg.eigh_tridiagonal."""
    if not eigvals_only and key is None:
        key = random.key(42)
    alpha, beta = jnp.asarray(d), jnp.asarray(e)
    if alpha.dtype != beta.dtype:
        raise TypeError("diagonal and off-diagonal values must have same dtype, got "
                        f"{alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in _SUPPORTED or beta.dtype not in _SUPPORTED:
        raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                        f"jax.scipy.linalg.eigh_tridiagonal, got {alpha.dtype} and "
                        f"{beta.dtype}")
    n = alpha.shape[0]
    if n <= 1:
        vals = jnp.real(alpha)
        return vals if eigvals_only else (vals, jnp.eye(n, dtype=alpha.dtype))
    if jnp.issubdtype(alpha.dtype, jnp.complexfloating):
        alpha = jnp.real(alpha)
        beta_sq = jnp.real(beta * jnp.conj(beta))
        beta_abs = jnp.sqrt(beta_sq)
    else:
        beta_abs, beta_sq = jnp.abs(beta), jnp.square(beta)
    if select == "a":
        target = jnp.arange(n, dtype=_onp.int32)
    elif select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        target = jnp.arange(select_range[0], select_range[1] + 1, dtype=_onp.int32)
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    else:
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
    return _solve(alpha, beta, beta_abs, beta_sq, target, key, eigvals_only=eigvals_only,
                  tol=tol)


@jit_eagerly("alpha", "beta", "beta_abs", "beta_sq", "target", "key")
def _solve(alpha, beta, beta_abs, beta_sq, target, key, *, eigvals_only, tol):
    vals = _bisect(alpha, beta_abs, beta_sq, target, tol)
    if eigvals_only:
        return vals
    return vals, _eigenvectors(alpha, beta, vals, key).T
