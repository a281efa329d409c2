"""More of `mjax.scipy.linalg`: the polar decomposition, the Frechet derivative of expm,
convolution matrices and the special matrices JAX also provides (pascal, invpascal,
hadamard, invhilbert). Decompositions mjax does not have (Schur, Hessenberg, and what is
built on them) raise NotImplementedError naming what is missing."""
from __future__ import annotations

import math
import operator

import numpy as _onp

from mjax import numpy as jnp


def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """a = u p (side="right") or p u ("left"), u unitary and p positive semidefinite,
    from the SVD (so every `method` gives the same factors). JAX: jax.scipy.linalg.polar."""
    if side not in ("right", "left"):
        raise ValueError(f"side={side!r} is not 'right' or 'left'")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"Unknown polar decomposition method {method}.")
    a = jnp.asarray(a)
    if a.ndim != 2:
        raise ValueError(f"The input `a` must be a 2-D array, got shape {a.shape}")
    from mjax.scipy.linalg import svd
    u_svd, s, vh = svd(a, full_matrices=False)
    unitary = u_svd @ vh
    if side == "right":
        posdef = (jnp.conj(vh).T * s) @ vh
    else:
        posdef = (u_svd * s) @ jnp.conj(u_svd).T
    return unitary, posdef


def expm_frechet(A, E, *, method=None, compute_expm=True):
    """The Frechet derivative of expm at A in direction E: the upper-right block of
    expm([[A, E], [0, A]]). JAX: jax.scipy.linalg.expm_frechet."""
    from mjax.scipy.linalg import expm
    A, E = jnp._promote("scipy.linalg.expm_frechet", A, E, inexact=True, broadcast=False)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2] or A.shape != E.shape:
        raise ValueError(f"expm_frechet: A and E must be square matrices of one shape, got "
                         f"{A.shape} and {E.shape}")
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"Unknown implementation {method}")
    n = A.shape[-1]
    zeros = jnp.zeros_like(A)
    big = jnp.concatenate([jnp.concatenate([A, E], -1), jnp.concatenate([zeros, A], -1)], -2)
    full = expm(big)
    frechet = full[..., :n, n:]
    return (full[..., :n, :n], frechet) if compute_expm else frechet


def convolution_matrix(a, n, mode="full"):
    """The matrix C with C @ v == convolve(a, v, mode) for v of length n.
    JAX: jax.scipy.linalg.convolution_matrix."""
    a = jnp.asarray(a)
    n = operator.index(n)
    if a.ndim != 1:
        raise ValueError("convolution_matrix expects a one-dimensional input array")
    if n <= 0:
        raise ValueError(f"n must be a positive integer, got {n}")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of ('full', 'same', 'valid'), got {mode!r}")
    m = a.shape[0]
    rows = m + n - 1
    # Column j is a shifted down by j: C[i, j] = a[i - j] where 0 <= i - j < m.
    k = _onp.arange(rows)[:, None] - _onp.arange(n)[None, :]
    inside = (k >= 0) & (k < m)
    full = jnp.where(jnp.asarray(inside), a[jnp.asarray(_onp.clip(k, 0, m - 1))],
                     jnp.zeros((), a.dtype))
    if mode == "full":
        return full
    if mode == "same":
        start = (min(n, m) - 1) // 2
        return full[start:start + max(m, n)]
    start = min(m, n) - 1
    return full[start:start + max(m, n) - min(m, n) + 1]


def _float_matrix(values):
    from mjax import dtypes
    return jnp.asarray(_onp.asarray(values, dtype=_onp.float64).astype(dtypes.default_float()))


def pascal(n, kind=None):
    """The n x n Pascal matrix: 'symmetric' (default), 'lower' or 'upper' (exact binomial
    coefficients, as floats). JAX: jax.scipy.linalg.pascal."""
    n = operator.index(n)
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"Expected kind to be one of 'symmetric', 'lower', or 'upper'; "
                         f"got {kind}")
    i, j = _onp.meshgrid(_onp.arange(n), _onp.arange(n), indexing="ij")
    if kind == "symmetric":
        vals = [[math.comb(int(a + b), int(a)) for a, b in zip(r1, r2)] for r1, r2 in zip(i, j)]
    else:
        vals = [[math.comb(int(a), int(b)) for a, b in zip(r1, r2)] for r1, r2 in zip(i, j)]
        if kind == "upper":
            vals = _onp.asarray(vals).T
    return _float_matrix(vals)


def invpascal(n, kind=None):
    """The inverse of pascal(n, kind). JAX: jax.scipy.linalg.invpascal."""
    n = operator.index(n)
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"Expected kind to be one of 'symmetric', 'lower', or 'upper'; "
                         f"got {kind}")
    # inv(lower) has entries (-1)^(i-j) C(i, j); inv(symmetric) = inv(upper) @ inv(lower).
    low = _onp.array([[(-1) ** (a - b) * math.comb(a, b) if a >= b else 0 for b in range(n)]
                      for a in range(n)], dtype=object)
    if kind == "lower":
        vals = low
    elif kind == "upper":
        vals = low.T
    else:
        vals = low.T.dot(low)
    return _float_matrix(vals.astype(_onp.float64))


def hadamard(n, dtype=int):
    """The n x n Sylvester Hadamard matrix, n a power of 2. JAX: jax.scipy.linalg.hadamard."""
    n = operator.index(n)
    if n < 1 or n & (n - 1):
        raise ValueError("n must be an positive integer, and n must be a power of 2")
    h = _onp.ones((1, 1), dtype=_onp.int64)
    while h.shape[0] < n:
        h = _onp.block([[h, h], [h, -h]])
    return jnp.asarray(h, dtype=dtype)


def invhilbert(n):
    """The inverse of the n x n Hilbert matrix (exact rationals, as floats).
    JAX: jax.scipy.linalg.invhilbert."""
    n = operator.index(n)
    vals = [[(-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1)
             * math.comb(n + j, n - i - 1) * math.comb(i + j, i) ** 2 for j in range(n)]
            for i in range(n)]
    return _float_matrix(_onp.asarray(vals, dtype=_onp.float64))


def _not_implemented(name, why):
    def f(*args, **kwargs):
        raise NotImplementedError(f"mjax.scipy.linalg.{name} is not implemented ({why})")
    f.__name__ = name
    f.__doc__ = f"Not implemented in mjax ({why}). JAX: jax.scipy.linalg.{name}."
    return f


schur = _not_implemented("schur", "no Schur decomposition")
rsf2csf = _not_implemented("rsf2csf", "no Schur decomposition")
sqrtm = _not_implemented("sqrtm", "needs the Schur decomposition")
funm = _not_implemented("funm", "needs the Schur decomposition")
hessenberg = _not_implemented("hessenberg", "no Hessenberg reduction")
solve_sylvester = _not_implemented("solve_sylvester", "needs the Schur decomposition")
eigh_tridiagonal = _not_implemented("eigh_tridiagonal", "no tridiagonal eigensolver")
qr_multiply = _not_implemented("qr_multiply", "no Householder-reflector QR")
fiedler_companion = _not_implemented("fiedler_companion", "not written yet")
