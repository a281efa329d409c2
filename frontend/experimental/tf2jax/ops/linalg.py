"""Matrix ops of tf.linalg: inverse, determinants, Cholesky, solves, diagonals."""
from __future__ import annotations

import numpy as np

import mjax.numpy as jnp
from mjax.experimental.tf2jax.ops.registry import (UnsupportedOperationError, register,
                                                   shape_of, static_ints)
from mjax.scipy.linalg import solve_triangular


def _jnp():
    return jnp


def _adjoint(x):
    x = _jnp().swapaxes(x, -1, -2)
    return _jnp().conj(x) if np.issubdtype(np.dtype(x.dtype), np.complexfloating) else x


@register("MatrixInverse")
def _inverse(ctx, node, x):
    inv = _jnp().linalg.inv(_jnp().asarray(x))
    return _adjoint(inv) if node.attrs.get("adjoint") else inv


@register("MatrixDeterminant")
def _det(ctx, node, x):
    return _jnp().linalg.det(_jnp().asarray(x))


@register("LogMatrixDeterminant")
def _slogdet(ctx, node, x):
    sign, logabs = _jnp().linalg.slogdet(_jnp().asarray(x))
    return sign, logabs


@register("Cholesky")
def _cholesky(ctx, node, x):
    return _jnp().linalg.cholesky(_jnp().asarray(x))


@register("MatrixSolve")
def _solve(ctx, node, a, b):
    a = _jnp().asarray(a)
    return _jnp().linalg.solve(_adjoint(a) if node.attrs.get("adjoint") else a, b)


@register("MatrixTriangularSolve")
def _triangular_solve(ctx, node, a, b):
    return solve_triangular(_jnp().asarray(a), _jnp().asarray(b),
                            lower=bool(node.attrs.get("lower", True)),
                            trans=2 if node.attrs.get("adjoint") else 0)


def _main_diagonal_only(node, ctx, k):
    ks = static_ints(k, "the diagonal index k")
    if any(v != 0 for v in ks):
        raise UnsupportedOperationError(f"tf2jax: {node.op} with k={list(ks)} (node "
                                        f"'{node.name}' {ctx.where}): only the main "
                                        f"diagonal (k=0) is supported")


@register("MatrixDiagPartV3")
def _diag_part(ctx, node, x, k, padding):
    _main_diagonal_only(node, ctx, k)
    return _jnp().diagonal(_jnp().asarray(x), axis1=-2, axis2=-1)


@register("MatrixDiagV3")
def _diag(ctx, node, d, k, rows, cols, padding):
    _main_diagonal_only(node, ctx, k)
    jnp = _jnp()
    n = shape_of(d)[-1]
    r, c = (int(np.asarray(v)) for v in (rows, cols))
    if (r, c) not in ((-1, -1), (n, n)):
        raise UnsupportedOperationError(f"tf2jax: {node.op} with a {r}x{c} result (node "
                                        f"'{node.name}' {ctx.where}) is not supported")
    return jnp.asarray(d)[..., None] * jnp.eye(n, dtype=np.dtype(d.dtype))


@register("MatrixSetDiagV3")
def _set_diag(ctx, node, x, d, k):
    _main_diagonal_only(node, ctx, k)
    jnp = _jnp()
    r, c = shape_of(x)[-2:]
    mask = np.eye(r, c, dtype=bool)
    n = min(r, c)
    d = jnp.asarray(d)
    full = jnp.zeros(shape_of(x), np.dtype(x.dtype))
    full = full + jnp.pad(d[..., None] * jnp.eye(n, dtype=d.dtype),
                          [(0, 0)] * (d.ndim - 1) + [(0, r - n), (0, c - n)])
    return jnp.where(mask, full, x)
