"""`mjax.lax.linalg`: one function per linear-algebra primitive, as `jax.lax.linalg`.

Each works on the trailing two axes with any leading batch axes. The `jnp.linalg` and
`mjax.scipy.linalg` functions are built on these.
"""
from __future__ import annotations

import numpy as np

from mjax import dtypes
from mjax.core import aval_of_value, bind
from mjax.dialect.ops import linalg as L
from mjax.lax.elementwise import (add, as_array, conj, convert_element_type, div, eq, full,
                                  iota, select)
from mjax.lax.reduce import reduce_sum
from mjax.lax.shapes import broadcast_to, expand_dims, slice_in_dim, transpose

_HALF = ("float16", "bfloat16")


def _bind(op, *args, **params):
    """bind, with half-precision floats computed in float32 and cast back: LAPACK and
    XLA's decompositions take only 32- and 64-bit types (JAX computes these too)."""
    names = [np.dtype(aval_of_value(x).dtype).name for x in args]
    half = next((n for n in names if n in _HALF), None)
    if half is None:
        return bind(op, *args, **params)
    args = [convert_element_type(x, np.float32) if n in _HALF else x
            for x, n in zip(args, names)]
    outs = bind(op, *args, **params)
    single = not isinstance(outs, (list, tuple))
    outs = [convert_element_type(o, np.dtype(half)) if o.dtype == np.float32 else o
            for o in ([outs] if single else outs)]
    return outs[0] if single else outs


def _mT(x):
    n = aval_of_value(x).ndim
    return transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def symmetrize(x):
    """(x + x^H) / 2. JAX: lax.linalg.symmetrize."""
    xt = _mT(x)
    if dtypes.issubdtype(aval_of_value(x).dtype, np.complexfloating):
        xt = conj(xt)
    return div(add(x, xt), convert_element_type(2, aval_of_value(x).dtype, weak_type=True))


def cholesky(x, *, symmetrize_input: bool = True):
    """Lower Cholesky factor of each Hermitian positive-definite matrix (NaN on failure).
    JAX: lax.linalg.cholesky."""
    if symmetrize_input:
        x = symmetrize(x)
    return _bind(L.CholeskyOp, x)


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
    """Solves op(a) x = b (left_side) or x op(a) = b. JAX: lax.linalg.triangular_solve."""
    return _bind(L.TriangularSolveOp, a, b, left_side=bool(left_side), lower=bool(lower),
                transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                unit_diagonal=bool(unit_diagonal))


def lu(x):
    """(lu, pivots, permutation) with P x = L U. JAX: lax.linalg.lu."""
    return tuple(_bind(L.LuOp, x))


def lu_pivots_to_permutation(pivots, permutation_size: int):
    """The permutation that applying row swaps `pivots` in order makes of
    range(permutation_size). JAX: lax.linalg.lu_pivots_to_permutation."""
    pivots = convert_element_type(as_array(pivots), np.int32)
    shape = aval_of_value(pivots).shape
    batch, k = shape[:-1], shape[-1]
    full_shape = batch + (permutation_size,)
    last = len(full_shape) - 1
    idx = broadcast_to(iota(np.int32, permutation_size), full_shape)
    perm = idx
    zeros = full(full_shape, 0, np.int32)

    def column(x, i):    # x[..., i:i + 1], broadcast over the last axis
        return broadcast_to(slice_in_dim(x, i, i + 1, 1, last), full_shape)
    for i in range(k):  # static and small: unrolled
        p, pi = column(pivots, i), column(perm, i)
        at_p = eq(idx, p)
        pp = broadcast_to(expand_dims(reduce_sum(select(at_p, perm, zeros), (last,)),
                                      (last,)), full_shape)
        perm = select(eq(idx, i), pp, select(at_p, pi, perm))
    return perm


def geqrf(x):
    """Householder QR in LAPACK's packed form: (a, taus). JAX: lax.linalg.geqrf."""
    return tuple(_bind(L.GeqrfOp, x))


def householder_product(a, taus):
    """The orthogonal product of the Householder reflectors in `a` scaled by `taus`.
    JAX: lax.linalg.householder_product."""
    return _bind(L.HouseholderProductOp, a, taus)


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None):
    """(q, r) with x = q r. JAX: lax.linalg.qr."""
    if pivoting:
        raise NotImplementedError("mjax.lax.linalg.qr: pivoting=True is not implemented")
    return tuple(_bind(L.QrOp, x, full_matrices=bool(full_matrices)))


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index=None, implementation=None):
    """(eigenvectors as columns, ascending real eigenvalues). JAX: lax.linalg.eigh.
    `implementation` (JAX's choice among QR/Jacobi/QDWH kernels) is accepted: the
    backend's one eigensolver serves all."""
    if subset_by_index is not None and tuple(subset_by_index) != (0, x.shape[-1]):
        raise NotImplementedError("mjax.lax.linalg.eigh: subset_by_index is not implemented")
    if symmetrize_input:
        x = symmetrize(x)
    return tuple(_bind(L.EighOp, x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues)))


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):
    """(u, s, vh) or s. JAX: lax.linalg.svd."""
    if subset_by_index is not None:
        raise NotImplementedError("mjax.lax.linalg.svd: subset_by_index is not implemented")
    if algorithm is not None:
        raise NotImplementedError("mjax.lax.linalg.svd: algorithm= is not implemented")
    outs = _bind(L.SvdOp, x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    if not compute_uv:
        return outs
    s, u, vt = outs
    return u, s, vt


def eig(x, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, enable_eigvec_derivs: bool = False,
        implementation=None, use_magma=None):
    """[w, (vl), (vr)] of a general square matrix (CPU only). JAX: lax.linalg.eig.
    `implementation` is accepted (one backend kernel)."""
    outs = _bind(L.EigOp, x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                compute_right_eigenvectors=bool(compute_right_eigenvectors))
    return list(outs) if isinstance(outs, (list, tuple)) else [outs]


class FftType:
    """The kind of transform `fft` computes. JAX: lax.FftType."""
    FFT = "FFT"
    IFFT = "IFFT"
    RFFT = "RFFT"
    IRFFT = "IRFFT"


def fft(x, fft_type, fft_lengths):
    """FFT over the trailing len(fft_lengths) axes. JAX: lax.fft."""
    name = getattr(fft_type, "name", fft_type)
    if isinstance(name, str):
        name = name.upper()
    if name not in L.FFT_TYPES:
        raise ValueError(f"mjax.lax.fft: unknown fft_type {fft_type!r}; expected one of "
                         f"{', '.join(L.FFT_TYPES)}")
    return _bind(L.FftOp, x, fft_type=name, fft_lengths=tuple(int(n) for n in fft_lengths))
