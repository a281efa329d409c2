"""jax._src.lax.linalg (JAX's linalg_test imports it as `lax_linalg`): mjax.lax.linalg's
functions. JAX's `_lu_python` (its unblocked LU, traced from Python) has no counterpart:
mjax has one LU, and the name raises NotImplementedError saying so."""
from mjax.lax.linalg import *  # noqa: F401,F403
from mjax.lax.linalg import (  # noqa: F401  (names `import *` would skip or JAX's tests use)
    cholesky, eig, eigh, geqrf, householder_product, lu, lu_pivots_to_permutation, ormqr,
    qr, schur, svd, symmetric_product, triangular_solve, tridiagonal, tridiagonal_solve)


def _lu_python(x):
    raise NotImplementedError(
        "jax._src.lax.linalg._lu_python (JAX's second, unblocked LU) has no mjax "
        "counterpart; use jax.lax.linalg.lu")
