"""`mjax.scipy.linalg`: SciPy's linear algebra over mjax.lax.linalg's primitives.
JAX: jax.scipy.linalg.

As in JAX, `overwrite_*`, `check_finite` and `lapack_driver` are accepted and ignored
(they only tune SciPy's memory use and input checks); b is a vector only when 1-D.
"""
from __future__ import annotations

import numpy as _onp

from mjax import lax
from mjax import numpy as jnp
from mjax.lax import linalg as lax_linalg
from mjax.numpy import linalg as _np_linalg
from mjax.scipy.special_matrices import (_inexact, block_diag, circulant,  # noqa: F401
                                         companion, convolution_matrix, dft, fiedler,
                                         fiedler_companion, hadamard, hankel, helmert,
                                         hilbert, invhilbert, invpascal, leslie, pascal,
                                         toeplitz)
from mjax.scipy.linalg_qr_multiply_sqrtm import qr_multiply, sqrtm  # noqa: F401
from mjax.scipy.linalg_schur import funm, rsf2csf, solve_sylvester  # noqa: F401
from mjax.scipy.linalg_tridiagonal import eigh_tridiagonal  # noqa: F401
from mjax.tracing.staging import jit_eagerly


def _broadcast_solve_operands(fname, a, b):
    """(a, b as (..., n, k), whether b was a vector); batch axes broadcast together."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"jax.scipy.linalg.{fname}: a must be a square matrix (or a stack "
                         f"of them), got shape {a.shape}")
    vector = b.ndim == 1
    if not vector and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]:
        raise ValueError(f"jax.scipy.linalg.{fname}: batched 1D solves with b.ndim > 1 are "
                         f"not supported; use b[..., None] for shapes {a.shape} and {b.shape}")
    if vector:
        b = b[:, None]
    if b.shape[-2] != a.shape[-1]:
        raise ValueError(f"jax.scipy.linalg.{fname}: incompatible shapes a {a.shape} and "
                         f"b {b.shape if not vector else b.shape[:1]}")
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return (jnp.broadcast_to(a, batch + a.shape[-2:]),
            jnp.broadcast_to(b, batch + b.shape[-2:]), vector)


# ---- triangular and Cholesky solves ------------------------------------------------------
@jit_eagerly("a", "b")
def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
    """Solves a x = b (trans 0/'N'), a^T x = b (1/'T') or a^H x = b (2/'C'), a triangular."""
    a, b = _inexact("solve_triangular", a, b)
    if trans in (0, "N"):
        transpose_a, conjugate_a = False, False
    elif trans in (1, "T"):
        transpose_a, conjugate_a = True, False
    elif trans in (2, "C"):
        transpose_a, conjugate_a = True, True
    else:
        raise ValueError(f"Invalid 'trans' value {trans}")
    a, b, vector = _broadcast_solve_operands("solve_triangular", a, b)
    x = lax_linalg.triangular_solve(a, b, left_side=True, lower=lower,
                                    transpose_a=transpose_a, conjugate_a=conjugate_a,
                                    unit_diagonal=unit_diagonal)
    return x[..., 0] if vector else x


@jit_eagerly("a")
def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """Cholesky factor: upper U with a = U^H U by default, lower L with a = L L^H."""
    (a,) = _inexact("cholesky", a)
    # Reads only the named triangle (no symmetrization), as SciPy and JAX do.
    factor = lax_linalg.cholesky(a if lower else _H(a), symmetrize_input=False)
    return factor if lower else _H(factor)


def _H(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(Cholesky factor, lower) for cho_solve."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solves a x = b given cho_factor(a)."""
    c, lower = c_and_lower
    c, b = _inexact("cho_solve", c, b)
    c, b, vector = _broadcast_solve_operands("cho_solve", c, b)
    # a = L L^H: solve L y = b, then L^H x = y (with U = L^H for the upper factor).
    y = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower,
                                    transpose_a=not lower, conjugate_a=not lower)
    x = lax_linalg.triangular_solve(c, y, left_side=True, lower=lower,
                                    transpose_a=lower, conjugate_a=lower)
    return x[..., 0] if vector else x


# ---- LU ------------------------------------------------------------------------------------
@jit_eagerly("a")
def lu_factor(a, overwrite_a=False, check_finite=True):
    """(packed LU factors, 0-based row pivots) for lu_solve."""
    (a,) = _inexact("lu_factor", a)
    lu, pivots, _ = lax_linalg.lu(a)
    return lu, pivots


@jit_eagerly("lu_and_piv", "b")
def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solves a x = b (trans 0), a^T x = b (1) or a^H x = b (2) given lu_factor(a)."""
    lu, pivots = lu_and_piv
    lu, b = _inexact("lu_solve", lu, b)
    if trans not in (0, 1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    m = lu.shape[-1]
    perm = lax_linalg.lu_pivots_to_permutation(pivots, m)
    lu, b, vector = _broadcast_solve_operands("lu_solve", lu, b)
    perm = jnp.broadcast_to(perm, lu.shape[:-1])
    x = _np_linalg._lu_solve(lu, perm, b, trans)
    return x[..., 0] if vector else x


@jit_eagerly("a")
def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """(p, l, u) with a = p @ l @ u, or (p @ l, u) with permute_l=True."""
    (a,) = _inexact("lu", a)
    if a.ndim < 2:
        raise ValueError(f"jax.scipy.linalg.lu: expected a matrix, got shape {a.shape}")
    lu_, _, perm = lax_linalg.lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    l = jnp.tril(lu_[..., :, :k], -1) + jnp.eye(m, k, dtype=a.dtype)
    u = jnp.triu(lu_[..., :k, :])
    # a[perm] = l u, so a = p l u with p[perm[i], i] = 1.
    p = (perm[..., None, :] == jnp.arange(m, dtype=perm.dtype)[:, None]).astype(a.dtype)
    if permute_l:
        return jnp.matmul(p, l), u
    return p, l, u


# ---- other decompositions --------------------------------------------------------------------
def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         turbo=True, eigvals=None, type=1, check_finite=True):  # noqa: A002
    """Eigenvalues (ascending), and unless eigvals_only the eigenvectors, of Hermitian a."""
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    (a,) = _inexact("eigh", a)
    w, v = _np_linalg.eigh(a, UPLO="L" if lower else "U")
    return w if eigvals_only else (w, v)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """QR decomposition: mode 'full' (q, r), 'economic' (reduced q, r) or 'r' ((r,))."""
    if pivoting:
        raise NotImplementedError("mjax.scipy.linalg.qr: pivoting=True is not implemented")
    if mode in ("full", "r"):
        full = True
    elif mode == "economic":
        full = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (a,) = _inexact("qr", a)
    q, r = lax_linalg.qr(a, full_matrices=full)
    return (r,) if mode == "r" else (q, r)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """(u, s, vh) with a = u diag(s) vh, or s alone."""
    (a,) = _inexact("svd", a)
    out = _np_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def inv(a, overwrite_a=False, check_finite=True):
    """Inverse of square matrices."""
    return _np_linalg.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    """Determinant of square matrices."""
    return _np_linalg.det(a)


@jit_eagerly("a", "b")
def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):
    """Solves a x = b; assume_a='pos' uses a Cholesky factorization of a's `lower` (or
    upper) triangle, 'gen'/'sym'/'her' an LU factorization."""
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"Expected assume_a to be one of ['gen', 'sym', 'her', 'pos'], got "
                         f"{assume_a!r}")
    a, b = _inexact("solve", a, b)
    if assume_a != "pos":
        return _np_linalg.solve(a, b)
    return cho_solve(cho_factor(a, lower=lower), b)


# ---- matrix functions and constructors ---------------------------------------------------------
_PADE7 = (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0)
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
           33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)


class _PadeCoefficients:
    """b[k] * X for the Pade coefficients; complex X is scaled part by part, so the large
    coefficients stay real constants in the IR."""

    def __init__(self, values, dtype):
        self.values, self.complex = values, _onp.dtype(dtype).kind == "c"

    def __getitem__(self, k):
        return _Scale(self.values[k], self.complex)


class _Scale:
    def __init__(self, value, is_complex):
        self.value, self.is_complex = value, is_complex

    def __mul__(self, x):
        if not self.is_complex:
            return self.value * x
        return lax.complex(self.value * jnp.real(x), self.value * jnp.imag(x))


@jit_eagerly("A")
def expm(A, *, upper_triangular=False, max_squarings=16):
    """Matrix exponential by scaling and squaring with a Pade approximant (Higham 2005):
    degree 13 in double precision, 7 in single; NaN when more than `max_squarings`
    squarings would be needed."""
    (A,) = _inexact("expm", A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError("expected A to be a square matrix")
    if _onp.dtype(A.dtype).name not in ("float32", "float64", "complex64", "complex128"):
        raise TypeError(f"A.dtype={_onp.dtype(A.dtype).name} is not supported.")  # (JAX's)
    double = _onp.dtype(A.dtype) in (_onp.float64, _onp.complex128)
    maxnorm = 5.371920351148152 if double else 3.925724783138660
    norm1 = _np_linalg.norm(A, 1, axis=(-2, -1))
    n_squarings = jnp.maximum(0, jnp.floor(jnp.log2(norm1 / maxnorm)))
    scale = (2.0 ** n_squarings).astype(A.dtype)
    A = A / scale[..., None, None]
    n = A.shape[-1]
    eye = jnp.broadcast_to(jnp.eye(n, dtype=A.dtype), A.shape)
    A2 = jnp.matmul(A, A)
    A4 = jnp.matmul(A2, A2)
    A6 = jnp.matmul(A4, A2)
    if double:
        b = _PadeCoefficients(_PADE13, A.dtype)
        u_inner = jnp.matmul(A6, b[13] * A6 + b[11] * A4 + b[9] * A2)
        U = jnp.matmul(A, u_inner + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * eye)
        V = (jnp.matmul(A6, b[12] * A6 + b[10] * A4 + b[8] * A2)
             + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * eye)
    else:
        b = _PadeCoefficients(_PADE7, A.dtype)
        U = jnp.matmul(A, b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * eye)
        V = b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * eye
    P, Q = U + V, V - U
    if upper_triangular:
        R = solve_triangular(Q, P)
    else:
        R = _np_linalg.solve(Q, P)
    # Undo the scaling: square n_squarings times (a static bound, masked per matrix).
    for i in range(max_squarings):
        R = jnp.where((i < n_squarings)[..., None, None], jnp.matmul(R, R), R)
    # NaN built real then converted (nan + 0j for complex, as JAX's full_like(A, nan)).
    nan = jnp.full(R.shape, _onp.nan, jnp.finfo(R.dtype).dtype).astype(R.dtype)
    return jnp.where((n_squarings > max_squarings)[..., None, None], nan, R)


def _polar_one(a, side, method, eps, max_iterations):
    m, n = a.shape
    if method == "qdwh":
        if m >= n and side == "right":
            u, p = lax_linalg.qdwh(a, is_hermitian=False, eps=eps)[:2]
        elif m < n and side == "left":
            u, p = lax_linalg.qdwh(jnp.conj(a).T, is_hermitian=False, eps=eps)[:2]
            u, p = jnp.conj(u).T, jnp.conj(p).T
        else:
            raise NotImplementedError("method='qdwh' only supports mxn matrices where m < n "
                                      "where side='right' and m >= n side='left', got "
                                      f"{a.shape} with side={side!r}")
        return u, p
    if method != "svd":
        raise ValueError(f"Unknown polar decomposition method {method}.")
    u_svd, s, vh = svd(a, full_matrices=False)
    s = s.astype(u_svd.dtype)
    if side == "right":
        return u_svd @ vh, (jnp.conj(vh).T * s) @ vh
    return u_svd @ vh, (u_svd * s) @ jnp.conj(u_svd).T


def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """(u, p) with a = u p (side="right") or p u ("left"), u with orthonormal columns and
    p positive semidefinite, by QDWH (`method="qdwh"`, M >= N for "right", M < N for
    "left") or the SVD; batched over leading axes. JAX: jax.scipy.linalg.polar."""
    a = jnp.asarray(a)
    if a.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ("right", "left"):
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    sig = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    return jnp.vectorize(lambda x: _polar_one(x, side, method, eps, max_iterations),
                         signature=sig)(a)


def expm_frechet(A, E, *, method=None, compute_expm=True):
    """The Frechet derivative of expm at A in direction E: the upper-right block of
    expm([[A, E], [0, A]]). JAX: jax.scipy.linalg.expm_frechet."""
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


def schur(a, output="real"):
    """(t, z) with a = z t z^H: t quasi-upper-triangular (output="real") or triangular
    ("complex", computed in the complex dtype). CPU only, as in JAX. JAX:
    jax.scipy.linalg.schur."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got "
                         f"output={output!r}.")
    a = jnp.asarray(a)
    if output == "complex" and not jnp.issubdtype(a.dtype, jnp.complexfloating):
        a = a.astype(jnp.result_type(a.dtype, jnp.complex64))
    t, z = lax_linalg.schur(a)
    return t, z


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """h (and q with calc_q) with a = q h q^H, h upper Hessenberg. CPU only, as in JAX.
    JAX: jax.scipy.linalg.hessenberg."""
    del overwrite_a, check_finite
    a = jnp.asarray(a)
    n = a.shape[-1]
    if n == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    packed, taus = lax_linalg.hessenberg(a)
    h = jnp.triu(packed, -1)
    if not calc_q:
        return h
    # The reflectors act on rows and columns 1..n-1: q is 1 (+) their product.
    q = jnp.zeros_like(packed).at[..., 0, 0].set(1)
    if n > 1:
        q = q.at[..., 1:, 1:].set(lax_linalg.householder_product(packed[..., 1:, :-1], taus))
    return h, q
