"""JAX's module jax.experimental.sparse.linalg: `spsolve` (here: the CSR matrix made dense
and solved by LU, differentiable) and `lobpcg_standard` (not built)."""
from __future__ import annotations

from mjax import numpy as jnp
from mjax.experimental.sparse.bcsr import BCSR


def spsolve(data, indices, indptr, b, tol=1e-6, reorder=1):
    """Solves A x = b for the square CSR matrix A = (data, indices, indptr). JAX:
    jax.experimental.sparse.linalg.spsolve (a cuSOLVER/SciPy sparse LU there)."""
    b = jnp.asarray(b)
    if b.ndim != 1:
        raise ValueError(f"spsolve: b must be 1-d, got shape {b.shape}")
    n = b.shape[0]
    a = BCSR((data, indices, indptr), shape=(n, n)).todense()
    return jnp.linalg.solve(a, b)


def lobpcg_standard(A, X, m=100, tol=None):
    """JAX: jax.experimental.sparse.linalg.lobpcg_standard."""
    raise NotImplementedError("sparse.linalg.lobpcg_standard: mjax has no LOBPCG "
                              "eigensolver yet")
