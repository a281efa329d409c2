"""`mjax.numpy.linalg`: NumPy's linear algebra over mjax.lax.linalg's primitives.
JAX: jax.numpy.linalg.

Every function takes leading batch axes where NumPy (and JAX) do; decompositions return
JAX's named tuples (`QRResult`, `SVDResult`, `EighResult`, `SlogdetResult`, `EigResult`).
"""
from __future__ import annotations

import builtins
import operator
from typing import NamedTuple

import numpy as _onp

from mjax.ad import custom_jvp
from mjax.tracing.core import at_user_line
from mjax import lax
from mjax.lax import linalg as lax_linalg
from mjax.numpy import creation, elementwise, products, reductions
from mjax.numpy.arguments import normalize_axis
from mjax.numpy.conversion import array, asarray
from mjax.numpy.creation import arange, eye, full, ones, zeros
from mjax.numpy.elementwise import (conj, isnan, log, not_equal, power, sign, sqrt,
                                    where_xy)
from mjax.numpy.index_tricks import ix_
from mjax.numpy.indexing import take_along_axis
from mjax.numpy.promotion import broadcast_shapes, broadcast_to, promote
from mjax.numpy.repetition import tile
from mjax.numpy.reductions import count_nonzero, prod
from mjax.numpy.scalar_types import finfo, inf, int32, iscomplexobj
from mjax.numpy.shaping import (concatenate, expand_dims, flip, moveaxis, ravel, reshape,
                                squeeze, stack, swapaxes)
from mjax.numpy.sorting import argsort
from mjax.tracing.staging import jit_eagerly


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


def _inexact(fname, *xs):
    """Arrays promoted together to an inexact dtype (JAX: promote_dtypes_inexact)."""
    xs = [asarray(x) for x in xs]
    return promote(f"linalg.{fname}", *xs, inexact=True, broadcast=False)


def _square(fname, a):
    if fname in ("det", "inv", "slogdet") and (a.ndim < 2 or a.shape[-1] != a.shape[-2]):
        raise ValueError(f"Argument to {fname} must have shape [..., n, n], got {a.shape}")
    if a.ndim < 2:
        raise ValueError(at_user_line(f"mjax.numpy.linalg.{fname}: expected an array of rank "
                                      f">= 2 (a matrix or a stack of matrices), got shape "
                                      f"{a.shape}"))
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(at_user_line(f"mjax.numpy.linalg.{fname}: expected square matrices "
                                      f"in the last two axes, got shape {a.shape}"))


def _matrix(fname, a):
    if a.ndim < 2:
        raise ValueError(at_user_line(f"mjax.numpy.linalg.{fname}: expected an array of rank "
                                      f">= 2 (a matrix or a stack of matrices), got shape "
                                      f"{a.shape}"))


def _H(x):
    return conj(swapaxes(x, -1, -2))


def _real_dtype(dtype):
    return finfo(dtype).dtype


def _diag(x):
    return products.diagonal(x, axis1=-2, axis2=-1)


def matrix_transpose(x, /):
    """Swaps the last two axes."""
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError(at_user_line(f"matrix_transpose requires at least 2 dimensions; "
                                      f"got ndim={x.ndim}"))
    return swapaxes(x, -1, -2)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """Matrix product (same as jnp.matmul)."""
    return products.matmul(x1, x2, precision=precision,
                           preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None,
              out_sharding=None):
    """Tensor contraction over `axes` (same as jnp.tensordot)."""
    return products.tensordot(x1, x2, axes=axes, precision=precision,
                         preferred_element_type=preferred_element_type,
                         out_sharding=out_sharding)


def outer(x1, x2, /):
    """Outer product of two vectors."""
    x1, x2 = asarray(x1), asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={x1.ndim} x2.ndim={x2.ndim}")
    return products.outer(x1, x2)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """sum(conj(x1) * x2) over `axis`, broadcasting the rest."""
    return products.vecdot(x1, x2, axis=axis, precision=precision,
                           preferred_element_type=preferred_element_type)


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-vectors along `axis` (broadcasting the rest)."""
    x1, x2 = asarray(x1), asarray(x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they have x1.shape[axis]={x1.shape[axis]} and "
                         f"x2.shape[axis]={x2.shape[axis]}")
    a = moveaxis(x1, axis, -1)
    b = moveaxis(x2, axis, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return moveaxis(out, -1, axis)


def trace(x, /, *, offset=0, dtype=None):
    """Sum of the `offset` diagonal of the last two axes."""
    x = asarray(x)
    _matrix("trace", x)
    out = reductions.sum(products.diagonal(x, offset=offset, axis1=-2, axis2=-1), axis=-1,
                         dtype=dtype)
    return out


def diagonal(x, /, *, offset=0):
    """The `offset` diagonal of the last two axes."""
    x = asarray(x)
    _matrix("diagonal", x)
    return products.diagonal(x, offset=offset, axis1=-2, axis2=-1)


@jit_eagerly("a")
def cholesky(a, *, upper=False, symmetrize_input=True):
    """Cholesky factor L (or, with upper=True, L^H) of Hermitian positive-definite `a`;
    NaN where `a` is not positive definite."""
    (a,) = _inexact("cholesky", a)
    _square("cholesky", a)
    low = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return _H(low) if upper else low


@jit_eagerly("a")
def qr(a, mode="reduced"):
    """QR decomposition: mode 'reduced', 'complete', 'r' (R only) or 'raw' (LAPACK's
    packed Householder form, transposed as NumPy returns it, and the taus)."""
    (a,) = _inexact("qr", a)
    _matrix("qr", a)
    if mode == "raw":
        h, taus = lax_linalg.geqrf(a)
        return QRResult(swapaxes(h, -1, -2), taus)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(a, full_matrices=(mode == "complete"))
    return r if mode == "r" else QRResult(q, r)


@jit_eagerly("a")
def eigh(a, UPLO=None, symmetrize_input=True):
    """Eigenvalues (ascending) and eigenvectors (columns) of Hermitian matrices."""
    (a,) = _inexact("eigh", a)
    _square("eigh", a)
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    v, w = lax_linalg.eigh(a, lower=UPLO != "U", symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    """Eigenvalues (ascending) of Hermitian matrices."""
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


@jit_eagerly("a")
def eig(a):
    """Eigenvalues and right eigenvectors of general square matrices (CPU only)."""
    (a,) = _inexact("eig", a)
    _square("eig", a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


@jit_eagerly("a")
def eigvals(a):
    """Eigenvalues of general square matrices (CPU only)."""
    (a,) = _inexact("eigvals", a)
    _square("eigvals", a)
    return lax_linalg.eig(a, compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)[0]


@jit_eagerly("a")
def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """Singular value decomposition a = U diag(S) Vh, singular values descending."""
    (a,) = _inexact("svd", a)
    _matrix("svd", a)
    if hermitian:
        # JAX: from eigh; singular values are |eigenvalues|, sorted descending.
        if subset_by_index is None:
            w, v = eigh(a)
        else:   # (JAX hands the subset to lax's eigh, whose numbering is ascending)
            v, w = lax_linalg.eigh(a, subset_by_index=subset_by_index)
        s = elementwise.abs(w)
        order = flip(argsort(s, axis=-1), axis=-1)
        s = take_along_axis(s, order, axis=-1)
        if not compute_uv:
            return s
        sign = take_along_axis(elementwise.sign(w), order, axis=-1)
        u = take_along_axis(v, order[..., None, :], axis=-1)
        vh = _H(u * sign[..., None, :].astype(u.dtype))
        return SVDResult(u, s, vh)
    if not compute_uv:
        return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False,
                              subset_by_index=subset_by_index)
    return SVDResult(*lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=True,
                                     subset_by_index=subset_by_index))


def svdvals(x, /):
    """Singular values, descending."""
    return svd(x, compute_uv=False)


@jit_eagerly("a")
def slogdet(a, *, method=None):
    """(sign, log|det|) of square matrices, from an LU decomposition."""
    (a,) = _inexact("slogdet", a)
    _square("slogdet", a)
    if method == "qr":
        return _slogdet_qr(a)
    if method not in (None, "lu"):
        raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' "
                         f"(`None`), and 'qr'.")
    n = a.shape[-1]
    if n == 0:
        ones = creation.ones(a.shape[:-2], a.dtype)
        return SlogdetResult(ones, zeros(a.shape[:-2], _real_dtype(a.dtype)))
    lu, pivots, _ = lax_linalg.lu(a)
    d = _diag(lu)
    is_zero = reductions.any(d == 0, axis=-1)
    parity = count_nonzero(pivots != arange(n, dtype=pivots.dtype), axis=-1)
    if iscomplexobj(a):
        sign = prod(d / elementwise.abs(d).astype(d.dtype), axis=-1)
    else:
        sign = creation.ones((), a.dtype)
        parity = parity + count_nonzero(d < 0, axis=-1)
    sign = where_xy(is_zero, zeros((), a.dtype),
                     sign * (1 - 2 * (parity % 2)).astype(a.dtype))
    logdet = where_xy(is_zero, full((), -_onp.inf, _real_dtype(a.dtype)),
                       reductions.sum(log(elementwise.abs(d)), axis=-1))
    return SlogdetResult(sign, logdet)


def _slogdet_qr(a):
    """slogdet from a Householder QR: |det| from R's diagonal, each reflector with
    tau != 0 flips the sign. JAX: _slogdet_qr."""
    if iscomplexobj(a):
        raise NotImplementedError("slogdet method='qr' not implemented for complex inputs")
    n = a.shape[-1]
    if n == 0:
        return SlogdetResult(ones(a.shape[:-2], a.dtype), zeros(a.shape[:-2], a.dtype))
    h, taus = lax_linalg.geqrf(a)
    d = _diag(h)
    logdet = reductions.sum(log(elementwise.abs(d)), axis=-1)
    flips = prod(where_xy(taus[..., :n - 1] != 0, -1, 1), axis=-1).astype(a.dtype)
    return SlogdetResult(prod(sign(d), axis=-1) * flips, logdet)


@jit_eagerly("a")
def det(a):
    """Determinant of square matrices: closed forms for 2x2 and 3x3, else sign *
    exp(log|det|) from an LU decomposition, differentiated by the cofactor rule. JAX:
    jnp.linalg.det (the same formulas, so the same bits)."""
    (a,) = _inexact("det", a)
    _square("det", a)
    n = a.shape[-1]
    if n == 0:
        return ones(a.shape[:-2], a.dtype)
    if n == 2:
        return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    if n == 3:
        return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2]
                + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
                + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1]
                - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
                - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1]
                - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])
    return _det(a)


@custom_jvp
def _det(a):
    sgn, logdet = slogdet(a)
    return sgn * elementwise.exp(logdet).astype(sgn.dtype)


@_det.defjvp
def _det_jvp(primals, tangents):
    y, z = _cofactor_solve(primals[0], tangents[0])
    return y, products.trace(z, axis1=-1, axis2=-2)


def _cofactor_solve(a, b):
    """(det(a), adjugate(a) @ b), also for singular a (rank n-1: the LU's last pivot
    replaced by 1 / the product of the others; lower rank: zeros). JAX's
    _cofactor_solve, the derivative of det."""
    n = a.shape[-1]
    if n == 1:
        return a[..., 0, 0], b
    lu, pivots, permutation = lax_linalg.lu(a)
    batch = broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    x = broadcast_to(b, batch + b.shape[-2:])
    lu = broadcast_to(lu, batch + lu.shape[-2:])
    iota = expand_dims(arange(n, dtype=pivots.dtype), tuple(range(pivots.ndim - 1)))
    parity = count_nonzero(pivots != iota, axis=-1)
    sgn = asarray(-2 * (parity % 2) + 1, dtype=a.dtype)
    partial_det = reductions.cumprod(_diag(lu), axis=-1) * sgn[..., None]
    lu = lu.at[..., -1, -1].set(1.0 / partial_det[..., -2])
    permutation = broadcast_to(permutation, (*batch, n))
    iotas = ix_(*(arange(k, dtype=int32) for k in (*batch, 1)))
    d = ones(x.shape[:-1], x.dtype)
    d = lax_linalg.triangular_solve(lu, d, left_side=True, lower=False)
    d = reductions.any(elementwise.logical_or(isnan(d), elementwise.isinf(d)), axis=-1)
    d = tile(d[..., None, None], d.ndim * (1,) + x.shape[-2:])
    x = where_xy(d, creation.zeros_like(x), x)      # rank below n-1: zeros
    x = x[iotas[:-1] + (permutation, slice(None))]
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    x = concatenate((x[..., :-1, :] * partial_det[..., -1, None, None], x[..., -1:, :]),
                    axis=-2)
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    x = where_xy(d, creation.zeros_like(x), x)
    return partial_det[..., -1], x


def _lu_solve(lu, perm, b, trans=0):
    """Solves a x = b (trans 0), a^T x = b (1) or a^H x = b (2) for a = P^T L U, b (..., n, k)."""
    if trans == 0:
        pb = take_along_axis(b, broadcast_to(perm[..., :, None], perm.shape + b.shape[-1:]),
                                 axis=-2)
        y = lax_linalg.triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
        return lax_linalg.triangular_solve(lu, y, left_side=True, lower=False)
    conj = trans == 2
    y = lax_linalg.triangular_solve(lu, b, left_side=True, lower=False, transpose_a=True,
                                    conjugate_a=conj)
    x = lax_linalg.triangular_solve(lu, y, left_side=True, lower=True, transpose_a=True,
                                    conjugate_a=conj, unit_diagonal=True)
    inv_perm = argsort(perm, axis=-1)
    return take_along_axis(x, broadcast_to(inv_perm[..., :, None],
                                                   inv_perm.shape + x.shape[-1:]), axis=-2)


def _broadcast_batch(a, b, b_core: int):
    """a (..., n, n) and b (..., core) broadcast to one batch shape."""
    batch = broadcast_shapes(a.shape[:-2], b.shape[:b.ndim - b_core])
    return (broadcast_to(a, batch + a.shape[-2:]),
            broadcast_to(b, batch + b.shape[b.ndim - b_core:]))


@jit_eagerly("a", "b")
def solve(a, b):
    """Solves a x = b; b is a vector only when it is 1-D (NumPy 2 semantics)."""
    a, b = _inexact("solve", a, b)
    if a.ndim < 2:
        raise ValueError(f"left hand array must be at least two dimensional; got "
                         f"a.shape={a.shape}")
    _square("solve", a)
    if (b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]
            and a.shape[-1] != b.shape[-2]):
        raise ValueError(f"Invalid shapes for solve: {a.shape}, {b.shape}. Prior to JAX "
                         f"v0.5.0, this would have been treated as a batched 1-dimensional "
                         f"solve. To recover this behavior, use solve(a, b[..., None])"
                         f".squeeze(-1).")
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    if b.shape[-2] != a.shape[-1]:
        raise ValueError(at_user_line(f"mjax.numpy.linalg.solve: a of shape {a.shape} and b "
                                      f"of shape {b.shape if not vector else b.shape[:1]} "
                                      f"do not match"))
    a, b = _broadcast_batch(a, b, 2)
    if a.shape[-1] == 0:
        x = b
    else:
        lu, _, perm = lax_linalg.lu(a)
        x = _lu_solve(lu, perm, b)
    return x[..., 0] if vector else x


@jit_eagerly("a")
def inv(a):
    """Inverse of square matrices (via solve against the identity)."""
    (a,) = _inexact("inv", a)
    _square("inv", a)
    eye = broadcast_to(creation.eye(a.shape[-1], dtype=a.dtype), a.shape)
    return solve(a, eye)


@jit_eagerly("a", "b")
def tensorsolve(a, b, axes=None):
    """Solves tensordot(a, x, x.ndim) = b for x."""
    a, b = _inexact("tensorsolve", a, b)
    if axes is not None:
        a = moveaxis(a, axes, len(axes) * (a.ndim - 1,))
    out_shape = a.shape[b.ndim:]
    if a.shape[:b.ndim] != b.shape:
        raise ValueError(f"b.shape={b.shape} must match the leading dimensions of "
                         f"a.shape={a.shape}")
    rows = int(_onp.prod(b.shape))
    cols = int(_onp.prod(out_shape))
    if rows != cols:
        raise ValueError(f"tensorsolve requires prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim]); "
                         f"got a.shape={a.shape}, b.ndim={b.ndim}.")
    x = solve(reshape(a, (rows, cols)), ravel(b))
    return reshape(x, out_shape)


@jit_eagerly("a")
def tensorinv(a, ind=2):
    """The 'inverse' of an N-d array for tensordot over its first `ind` axes."""
    (a,) = _inexact("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got {ind=}")
    contract, batch = a.shape[:ind], a.shape[ind:]
    rows, cols = int(_onp.prod(contract)), int(_onp.prod(batch))
    if rows != cols:
        raise ValueError(f"tensorinv is only possible when the product of the first `ind` "
                         f"dimensions equals that of the remaining dimensions. got "
                         f"{a.shape=} with {ind=}.")
    return reshape(inv(reshape(a, (rows, cols))), batch + contract)


def _default_rtol(a):
    return max(a.shape[-2:]) * finfo(a.dtype).eps


@jit_eagerly("a", "rtol", "rcond")
def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """Moore-Penrose pseudo-inverse via the SVD; singular values below rtol * max(s) count
    as zero."""
    (a,) = _inexact("pinv", a)
    _matrix("pinv", a)
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return zeros(a.shape[:-2] + (n, m), a.dtype)
    # JAX's arithmetic: the SVD of conj(a), a divide by the kept singular values (the others
    # made infinite) and one matmul at HIGHEST precision; rtol 10 * max(m, n) * eps.
    a = conj(a)
    if rtol is None:
        rtol = 10. * builtins.max(m, n) * array(finfo(a.dtype).eps)
    rtol = asarray(rtol)
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    rtol = lax.expand_dims(rtol[..., None], tuple(range(s.ndim - rtol.ndim - 1)))
    s = where_xy(s > rtol * s[..., 0:1], s, _onp.inf).astype(u.dtype)
    out = products.matmul(swapaxes(vh, -1, -2), elementwise.divide(swapaxes(u, -1, -2),
                                                                   s[..., None]),
                          precision=lax.Precision.HIGHEST)
    return out.astype(a.dtype)


@jit_eagerly("M", "rtol", "tol")
def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):
    """Number of singular values above the tolerance (rtol * max(s), or an absolute tol)."""
    (M,) = _inexact("matrix_rank", M)
    if M.ndim < 2:
        return reductions.any(M != 0).astype(int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if tol is None:
        if rtol is None:
            rtol = _default_rtol(M)
        rtol = asarray(rtol)
        tol = (expand_dims(rtol, -1) if rtol.ndim else rtol) * reductions.max(s, axis=-1,
                                                                          keepdims=True)
    else:
        tol = asarray(tol)
        tol = expand_dims(tol, -1) if tol.ndim else tol
    return reductions.sum(s > tol, axis=-1)


@jit_eagerly("a", "b", "rcond")
def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """Least-squares solution of a x = b via the SVD: (x, residuals, rank, s)."""
    a, b = _inexact("lstsq", a, b)
    if a.shape[0] != b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim not in (1, 2):
        raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or "
                        f"two-dimensional")
    if a.shape[0] != b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    m, n = a.shape
    dtype = a.dtype
    if a.size == 0:
        s = zeros(0, dtype=_real_dtype(dtype))
        rank = array(0, dtype=int32)
        x = zeros((n, *b.shape[1:]), dtype=dtype)
    else:
        if rcond is None:
            rcond = finfo(dtype).eps * max(n, m)
        else:
            rcond = where_xy(rcond < 0, finfo(dtype).eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = (s > 0) & (s >= asarray(rcond, s.dtype) * s[0])
        rank = mask.sum()
        safe_s = where_xy(mask, s, 1).astype(dtype)
        s_inv = where_xy(mask, 1 / safe_s, 0)[:, None]
        uTb = products.matmul(_H(u), b)
        x = products.matmul(_H(vt), s_inv * uTb)
    # NumPy returns empty residuals in some cases; by default every case gets them (as JAX).
    if numpy_resid and (rank < n or m <= n):
        resid = asarray([], dtype=_real_dtype(dtype))
    else:
        resid = reductions.sum(elementwise.abs(b - products.matmul(a, x)) ** 2, axis=0)
    if vector:
        x = x[..., 0]
    return x, resid, rank, s


@jit_eagerly("a")
def matrix_power(a, n):
    """a raised to the integer power n (negative n inverts first), by repeated squaring."""
    a = asarray(a)
    if a.ndim < 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be at least "
                        f"two-dimensional")
    if a.shape[-2] != a.shape[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError(f"exponent must be an integer, got {n}") from e
    if n == 0:
        return broadcast_to(eye(a.shape[-2], dtype=a.dtype), a.shape)
    if n < 0:
        a = inv(a)
        n = -n
    if n == 3:      # (JAX's order for a cube: (a @ a) @ a)
        return products.matmul(products.matmul(a, a), a)
    result = None
    z = a
    while n:
        if n & 1:
            result = z if result is None else products.matmul(result, z)
        n >>= 1
        if n:
            z = products.matmul(z, z)
    return result


def multi_dot(arrays, *, precision=None):
    """Product of a chain of matrices (first may be a row vector, last a column vector)."""
    arrays = [asarray(x) for x in arrays]
    if len(arrays) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)="
                         f"{len(arrays)}")
    if not (arrays[0].ndim in (1, 2) and arrays[-1].ndim in (1, 2)
            and builtins.all(x.ndim == 2 for x in arrays[1:-1])):
        raise ValueError("multi_dot: input arrays must have one or two dimensions at either "
                         "end, and two dimensions in between")
    # The cheapest parenthesization (dynamic programming over the chain, as NumPy's and
    # JAX's multi_dot choose it): a 1-d end counts as a 1-row (1-column) matrix.
    dims = [1 if arrays[0].ndim == 1 else arrays[0].shape[0]] + \
        [x.shape[-1] if x.ndim == 2 else 1 for x in arrays]
    n = len(arrays)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i, j):
        if i == j:
            return arrays[i]
        k = split[i][j]
        return products.matmul(product(i, k), product(k + 1, j), precision=precision)
    return product(0, n - 1)


@jit_eagerly("x")
def cond(x, p=None):
    """Condition number in the `p` norm (2 by default: ratio of extreme singular values)."""
    (x,) = _inexact("cond", x)
    _matrix("cond", x)
    if p is None or p == 2:
        s = svd(x, compute_uv=False)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svd(x, compute_uv=False)
        r = s[..., -1] / s[..., 0]
    else:
        _square("cond", x)
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    # Singular matrices have infinite condition number (NaN from the inverse).
    return where_xy(isnan(r) & ~isnan(x).any(axis=(-2, -1)), inf, r)


def _abs(x):
    (x,) = promote("norm", x, inexact=True)
    return elementwise.abs(x)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    """p-norm over `axis` (all axes when None): ord in inf, -inf, 0, or any number."""
    x = asarray(x)
    a = _abs(x)
    if ord is None or ord == 2:
        return sqrt(reductions.sum(a * a, axis=axis, keepdims=keepdims))
    if ord == _onp.inf:
        return reductions.max(a, axis=axis, keepdims=keepdims)
    if ord == -_onp.inf:
        return reductions.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return reductions.sum(not_equal(a, 0), axis=axis, keepdims=keepdims, dtype=a.dtype)
    if ord == 1:
        return reductions.sum(a, axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    # (ord and 1/ord as constants of a's dtype, as JAX: a float16 power, not integer_pow)
    p = _onp.asarray(ord, a.dtype)
    return power(reductions.sum(power(a, p), axis=axis, keepdims=keepdims),
                 _onp.asarray(1.0 / p, a.dtype))


def matrix_norm(x, /, *, keepdims=False, ord="fro", axis=(-2, -1)):  # noqa: A002
    """Frobenius, nuclear, 1, -1, 2, -2, inf or -inf norm over the two axes `axis`."""
    x = asarray(x)
    r, c = (normalize_axis(a, x.ndim) for a in axis)
    if r == c:
        raise ValueError(f"mjax.numpy.linalg.norm: duplicate axes {axis}")
    a = _abs(x)
    if ord in (None, "fro", "f"):
        out = sqrt(reductions.sum(a * a, axis=(r, c), keepdims=True))
    elif ord in (1, -1):        # max/min over columns of the column sums
        red = reductions.max if ord == 1 else reductions.min
        out = red(reductions.sum(a, axis=r, keepdims=True), axis=c, keepdims=True)
    elif ord in (_onp.inf, -_onp.inf):   # max/min over rows of the row sums
        red = reductions.max if ord == _onp.inf else reductions.min
        out = red(reductions.sum(a, axis=c, keepdims=True), axis=r, keepdims=True)
    elif ord in (2, -2, "nuc"):
        (xi,) = _inexact("norm", x)
        y = moveaxis(xi, (r, c), (-2, -1))
        s = svd(y, compute_uv=False)
        s = reductions.sum(s, axis=-1) if ord == "nuc" else (s[..., 0] if ord == 2 else s[..., -1])
        out = expand_dims(s, (r, c) if r < c else (c, r))
    else:
        raise ValueError(f"Invalid order '{ord}' for matrix norm.")
    return out if keepdims else squeeze(out, (r, c))


@jit_eagerly("x")
def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """NumPy's norm: vector norm for one axis (or 1-d input), matrix norm for two."""
    x = asarray(x)
    if axis is None:
        if ord is None:
            return vector_norm(ravel(x), ord=2, keepdims=False) if not keepdims else \
                reshape(vector_norm(ravel(x)), (1,) * x.ndim)
        if x.ndim == 1:
            return vector_norm(x, ord=ord, keepdims=keepdims)
        if x.ndim == 2:
            return matrix_norm(x, ord=ord, keepdims=keepdims)
        raise ValueError(f"Improper number of axes for norm: axis={tuple(range(x.ndim))}. "
                         f"Pass one axis to compute a vector-norm, or two axes to compute a "
                         f"matrix-norm.")
    axes = (axis,) if isinstance(axis, (int, _onp.integer)) else tuple(axis)
    if len(axes) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axes, keepdims=keepdims)
    if len(axes) == 2:
        return matrix_norm(x, ord=ord, axis=axes, keepdims=keepdims)
    raise ValueError(f"Improper number of axes for norm: {axis=}. Pass one axis to compute "
                     f"a vector-norm, or two axes to compute a matrix-norm.")
