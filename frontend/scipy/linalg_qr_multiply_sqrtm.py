"""`mjax.scipy.linalg`'s qr_multiply (Householder reflectors applied, never formed) and
sqrtm (complex Schur form), as JAX 0.10.2's."""
from __future__ import annotations

from mjax import lax
from mjax import numpy as jnp
from mjax.lax import linalg as lax_linalg


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False,
                overwrite_c=False):
    """(Q c or c Q, r) for a = Q r, Q applied from geqrf's reflectors.
    JAX: jax.scipy.linalg.qr_multiply."""
    del overwrite_a, overwrite_c
    a, c = jnp._promote("qr_multiply", jnp.asarray(a), jnp.asarray(c), inexact=True,
                        broadcast=False)
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    if pivoting:
        raise NotImplementedError("mjax.scipy.linalg.qr_multiply: pivoting=True is not "
                                  "implemented (no geqp3)")
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape "
                         f"{tuple(a.shape)} so Q has {k} columns, but c has {c.shape[-2]} "
                         f"rows (expected {k}).")
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has shape "
                         f"{tuple(a.shape)} so Q has {m} rows, but c has {c.shape[-1]} "
                         f"columns (expected {m}).")
    batch = jnp.broadcast_shapes(a.shape[:-2], c.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    c = jnp.broadcast_to(c, batch + c.shape[-2:])
    r, taus = lax_linalg.geqrf(a)
    if m > n and mode == "left":
        c = jnp.concatenate([c, jnp.zeros(c.shape[:-2] + (m - k,) + c.shape[-1:], c.dtype)],
                            axis=-2)
    if conjugate:
        c = jnp.swapaxes(c, -1, -2)
    out = lax_linalg.ormqr(r, taus, c, left=(mode == "left") != conjugate,
                           transpose=conjugate)
    if conjugate:
        out = jnp.swapaxes(out, -1, -2)
    if mode == "right":
        out = out[..., :k]
    if onedim:
        out = out.ravel()
    return out, jnp.triu(r[..., :k, :])


def _sqrtm_upper(t):
    """The upper-triangular square root of the upper-triangular t, column by column."""
    n = t.shape[-1]
    d = jnp.sqrt(jnp.diagonal(t))
    u = jnp.diag(d)
    for j in range(n):
        for i in range(j - 1, -1, -1):
            s = jnp.dot(u[i, i + 1:j], u[i + 1:j, j]) if j > i + 1 else jnp.zeros((), t.dtype)
            u = u.at[i, j].set(jnp.where(t[i, j] == s, 0, (t[i, j] - s) / (d[i] + d[j])))
    return u


def sqrtm(A, blocksize=1):
    """The principal square root of A, from its complex Schur form (complex result).
    JAX: jax.scipy.linalg.sqrtm."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    a = jnp.asarray(A)
    if not jnp.issubdtype(a.dtype, jnp.complexfloating):
        (a,) = jnp._promote("sqrtm", a, inexact=True, broadcast=False)
        a = a.astype(jnp.result_type(a.dtype, jnp.complex64))
    t, z = lax_linalg.schur(a)
    hi = lax.Precision.HIGHEST
    return jnp.matmul(jnp.matmul(z, _sqrtm_upper(t), precision=hi), jnp.conj(z).T,
                      precision=hi)
