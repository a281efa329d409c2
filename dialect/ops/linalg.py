"""Linear algebra and FFT: decompositions, triangular solves, Fourier transforms.

Every op acts on the trailing one or two axes and accepts any number of leading batch
axes (JAX's linalg primitives do the same). Shape rules are plain functions on shapes so
the verifier, the tracer and tests share them.
"""
from __future__ import annotations

import numpy as np

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.dtype_rules import complex_dtype, is_complex, real_dtype
from mjax.dialect.types import ShapedArray, short_dtype_name

# The element types the linalg ops take: JAX's primitives accept any float, half floats
# included; LAPACK's lowering refuses those (passes/rules/linalg_ffi.lapack_target, JAX's
# error) while XLA's TPU factorizations take them as they are.
LINALG_DTYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")
FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")
# eigh's algorithms (JAX's lax.linalg.EighImplementation values)
EIGH_ALGORITHMS = ("qr", "jacobi", "qdwh")
# svd's algorithms (JAX's lax.linalg.SvdAlgorithm values)
SVD_ALGORITHMS = ("default", "QR", "Jacobi", "polar", "divide_and_conquer")


# ---- shape and dtype rules ---------------------------------------------------------
def check_linalg_dtype(op: str, a: ShapedArray, what: str = "operand"):
    if np.dtype(a.dtype).name not in LINALG_DTYPES:
        raise TypeError(f"{op} does not accept dtype {short_dtype_name(a.dtype)} ({what} "
                        f"must be float16, bfloat16, float32, float64, complex64 or complex128)")


def matrix_shape(op: str, shape: tuple[int, ...], square: bool = False,
                 what: str = "operand") -> tuple[int, int]:
    """The trailing (rows, cols) of a (batch of) matrices; checks rank and squareness."""
    if len(shape) < 2:
        raise ValueError(f"{op} requires the {what} to have rank >= 2 (a matrix or a "
                         f"batch of matrices), got shape {shape}")
    m, n = shape[-2:]
    if square and m != n:
        raise ValueError(f"{op} requires square matrices, got {what} of shape {shape}")
    return m, n


def triangular_solve_shape(a: tuple, b: tuple, left_side: bool) -> tuple[int, ...]:
    """b's shape; a is (..., k, k) with k = b's rows (left_side) or columns (right side)."""
    op = "triangular_solve"
    k, _ = matrix_shape(op, a, square=True, what="a")
    rows, cols = matrix_shape(op, b, what="b")
    if a[:-2] != b[:-2]:
        raise ValueError(f"{op}: a and b must have equal batch dimensions, got shapes "
                         f"{a} and {b}")
    need = rows if left_side else cols
    if k != need:
        side = "rows" if left_side else "columns"
        raise ValueError(f"{op}: a of shape {a} needs b with {k} {side} "
                         f"(left_side={left_side}), got b of shape {b}")
    return b


def fft_shape(fft_type: str, shape: tuple[int, ...], fft_lengths: tuple[int, ...]):
    """Result shape of an FFT over the trailing len(fft_lengths) axes. JAX: fft_abstract_eval."""
    k = len(fft_lengths)
    if not 1 <= k <= 3:
        raise ValueError(f"fft: fft_lengths must have 1 to 3 entries, got {fft_lengths}")
    if len(shape) < k:
        raise ValueError(f"fft: operand of shape {shape} has fewer than {k} axes "
                         f"(fft_lengths={fft_lengths})")
    if any(n < 0 for n in fft_lengths):
        raise ValueError(f"fft: fft_lengths must be non-negative, got {fft_lengths}")
    trailing = shape[len(shape) - k:]
    if fft_type == "RFFT":
        if trailing != tuple(fft_lengths):
            raise ValueError(f"fft: RFFT needs trailing dimensions {fft_lengths} equal to "
                             f"fft_lengths, got operand shape {shape}")
        return shape[:-1] + (fft_lengths[-1] // 2 + 1,)
    if fft_type == "IRFFT":
        want = tuple(fft_lengths[:-1]) + (fft_lengths[-1] // 2 + 1,)
        if trailing != want:
            raise ValueError(f"fft: IRFFT of fft_lengths {fft_lengths} needs trailing "
                             f"dimensions {want}, got operand shape {shape}")
        return shape[:-1] + (fft_lengths[-1],)
    if trailing != tuple(fft_lengths):
        raise ValueError(f"fft: {fft_type} needs trailing dimensions equal to fft_lengths "
                         f"{fft_lengths}, got operand shape {shape}")
    return shape


# ---- factorizations --------------------------------------------------------------
class CholeskyOp(JaxprOp, name="cholesky"):
    """Lower Cholesky factor L of each Hermitian positive-definite matrix (A = L L^H);
    reads only the lower triangle; NaNs where the factorization fails.
    JAX: lax.linalg.cholesky_p."""

    @classmethod
    def infer(cls, a):
        check_linalg_dtype("cholesky", a)
        matrix_shape("cholesky", a.shape, square=True)
        return (a.strip_weak_type(),)


class TriangularSolveOp(JaxprOp, name="triangular_solve"):
    """Solves op(a) x = b (left_side) or x op(a) = b for x, with a triangular and op one
    of identity, transpose or conjugate transpose. JAX: lax.linalg.triangular_solve_p."""
    num_operands = 2
    attributes = {"left_side": A.Bool(default=False), "lower": A.Bool(default=False),
                  "transpose_a": A.Bool(default=False),
                  "conjugate_a": A.Bool(default=False),
                  "unit_diagonal": A.Bool(default=False)}

    @classmethod
    def infer(cls, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
        check_linalg_dtype("triangular_solve", a, "a")
        if a.dtype != b.dtype:
            raise TypeError(f"triangular_solve requires a and b of one dtype, got "
                            f"{short_dtype_name(a.dtype)} and {short_dtype_name(b.dtype)}")
        shape = triangular_solve_shape(a.shape, b.shape, left_side)
        return (ShapedArray(shape, b.dtype),)


class LuOp(JaxprOp, name="lu"):
    """LU decomposition with partial pivoting, P A = L U: returns the packed factors,
    the int32 row pivots (LAPACK's, 0-based) and the int32 row permutation.
    JAX: lax.linalg.lu_p."""

    @classmethod
    def infer(cls, a):
        check_linalg_dtype("lu", a)
        m, n = matrix_shape("lu", a.shape)
        batch = a.shape[:-2]
        return (a.strip_weak_type(), ShapedArray(batch + (min(m, n),), np.int32),
                ShapedArray(batch + (m,), np.int32))


class GeqrfOp(JaxprOp, name="geqrf"):
    """Householder QR in LAPACK's packed form: R above the diagonal, the reflectors
    below, and their scale factors `taus`. JAX: lax.linalg.geqrf_p."""

    @classmethod
    def infer(cls, a):
        check_linalg_dtype("geqrf", a)
        m, n = matrix_shape("geqrf", a.shape)
        return (a.strip_weak_type(), ShapedArray(a.shape[:-2] + (min(m, n),), a.dtype))


class HouseholderProductOp(JaxprOp, name="householder_product"):
    """The orthogonal (unitary) product of the Householder reflectors stored below the
    diagonal of `a` with scale factors `taus` (LAPACK orgqr/ungqr).
    JAX: lax.linalg.householder_product_p."""
    num_operands = 2

    @classmethod
    def infer(cls, a, taus):
        op = "householder_product"
        check_linalg_dtype(op, a, "a")
        if taus.dtype != a.dtype:
            raise TypeError(f"{op} requires a and taus of one dtype, got "
                            f"{short_dtype_name(a.dtype)} and {short_dtype_name(taus.dtype)}")
        m, n = matrix_shape(op, a.shape, what="a")
        if m < n:
            raise ValueError(f"The first argument to householder_product must have at least "
                             f"as many rows as columns, got shape {a.shape}")
        if taus.ndim != a.ndim - 1 or taus.shape[:-1] != a.shape[:-2]:
            raise ValueError(f"{op}: taus of shape {taus.shape} must have a's batch "
                             f"dimensions {a.shape[:-2]} and one more axis")
        if taus.shape[-1] > min(m, n):
            raise ValueError("The second argument to householder_product must not have more "
                             "rows than the minimum of the first argument's rows and columns.")
        return (a.strip_weak_type(),)


class QrOp(JaxprOp, name="qr"):
    """QR decomposition A = Q R: Q (m, m) and R (m, n) with `full_matrices`, else Q
    (m, k) and R (k, n) with k = min(m, n). JAX: lax.linalg.qr_p."""
    attributes = {"full_matrices": A.Bool(default=True)}

    @classmethod
    def infer(cls, a, *, full_matrices):
        check_linalg_dtype("qr", a)
        m, n = matrix_shape("qr", a.shape)
        k = m if full_matrices else min(m, n)
        batch = a.shape[:-2]
        return (ShapedArray(batch + (m, k), a.dtype), ShapedArray(batch + (k, n), a.dtype))


class EighOp(JaxprOp, name="eigh"):
    """Eigenvectors (as columns) and real eigenvalues, ascending, of each Hermitian
    matrix, reading its `lower` (or upper) triangle. JAX: lax.linalg.eigh_p.
    `subset_by_index` (start, end): only the eigenvalues start..end-1 (in ascending order)
    and their vectors, d = end - start of them; `algorithm`: the EighImplementation's
    value ("qr", "jacobi", "qdwh") or None, which the lowering chooses by."""
    attributes = {"lower": A.Bool(default=True), "sort_eigenvalues": A.Bool(default=True),
                  "subset_by_index": A.Ints(default=None),
                  "algorithm": A.Str(default=None, choices=EIGH_ALGORITHMS)}

    @classmethod
    def infer(cls, a, *, lower, sort_eigenvalues, subset_by_index=None, algorithm=None):
        check_linalg_dtype("eigh", a)
        n, _ = matrix_shape("eigh", a.shape, square=True)
        d = n
        if subset_by_index is not None:
            if len(subset_by_index) != 2:
                raise ValueError(f"eigh: subset_by_index must be a pair (start, end), got "
                                 f"{subset_by_index}")
            d = subset_by_index[1] - subset_by_index[0]
            if d < 0:
                raise ValueError(f"eigh: subset_by_index {subset_by_index} is not a range")
        return (a.strip_weak_type().update(shape=a.shape[:-1] + (d,)),
                ShapedArray(a.shape[:-2] + (d,), real_dtype(a.dtype)))


class SvdOp(JaxprOp, name="svd"):
    """Singular values (descending), and with `compute_uv` U and V^H, so A = U S V^H.
    Results: s, then u, vt. JAX: lax.linalg.svd_p. `subset_by_index` (start, end): only
    the singular values start..end-1 (in descending order) and their vectors, min(k,
    end - start) of them, with full_matrices only as the whole range (0, k); `algorithm`:
    the SvdAlgorithm's value ("default", "QR", "Jacobi", "polar", "divide_and_conquer")
    or None, which the lowering chooses by."""
    attributes = {"full_matrices": A.Bool(default=True), "compute_uv": A.Bool(default=True),
                  "subset_by_index": A.Ints(default=None),
                  "algorithm": A.Str(default=None, choices=SVD_ALGORITHMS)}

    @classmethod
    def infer(cls, a, *, full_matrices, compute_uv, subset_by_index=None, algorithm=None):
        check_linalg_dtype("svd", a)
        m, n = matrix_shape("svd", a.shape)
        k = min(m, n)
        if subset_by_index is not None:     # (JAX's shape rule)
            if len(subset_by_index) != 2:
                raise ValueError(f"svd: subset_by_index must be a pair (start, end), got "
                                 f"{subset_by_index}")
            if full_matrices and tuple(subset_by_index) != (0, k):
                raise ValueError("full_matrices and subset_by_index cannot both be set")
            k = min(k, subset_by_index[1] - subset_by_index[0])
            if k < 0:
                raise ValueError(f"svd: subset_by_index {subset_by_index} is not a range")
        batch = a.shape[:-2]
        s = ShapedArray(batch + (k,), real_dtype(a.dtype))
        if not compute_uv:
            return (s,)
        ucols, vrows = (m, n) if full_matrices else (k, k)
        return (s, ShapedArray(batch + (m, ucols), a.dtype),
                ShapedArray(batch + (vrows, n), a.dtype))


class EigOp(JaxprOp, name="eig"):
    """Complex eigenvalues of a general square matrix, then the left and/or right
    eigenvectors (columns, unit norm) when asked. CPU only. JAX: lax.linalg.eig_p."""
    attributes = {"compute_left_eigenvectors": A.Bool(default=True),
                  "compute_right_eigenvectors": A.Bool(default=True)}

    @classmethod
    def infer(cls, a, *, compute_left_eigenvectors, compute_right_eigenvectors):
        check_linalg_dtype("eig", a)
        n, _ = matrix_shape("eig", a.shape, square=True)
        dtype = a.dtype if is_complex(a.dtype) else complex_dtype(a.dtype)
        outs = [ShapedArray(a.shape[:-2] + (n,), dtype)]
        outs += [ShapedArray(a.shape, dtype)] * (int(compute_left_eigenvectors)
                                                 + int(compute_right_eigenvectors))
        return tuple(outs)


def _same_dtype(op: str, first: ShapedArray, others, names):
    for x, name in zip(others, names):
        if x.dtype != first.dtype:
            raise TypeError(f"{op} requires operands of one dtype, got "
                            f"{short_dtype_name(first.dtype)} and {name} of dtype "
                            f"{short_dtype_name(x.dtype)}")


class TridiagonalSolveOp(JaxprOp, name="tridiagonal_solve"):
    """Solves A x = b for each tridiagonal A given by its sub-diagonal dl (dl[0] unused),
    diagonal d and super-diagonal du (du[-1] unused), with LU and partial pivoting
    (LAPACK gtsv); NaN where A is singular. JAX: lax.linalg.tridiagonal_solve_p."""
    num_operands = 4
    attributes = {"perturb_singular": A.Bool(default=False)}

    @classmethod
    def infer(cls, dl, d, du, b, *, perturb_singular):
        op = "tridiagonal_solve"
        for i, x in enumerate((dl, d, du, b)):
            check_linalg_dtype(op, x, f"operand {i}")
        _same_dtype(op, b, (dl, d, du), ("dl", "d", "du"))
        if b.ndim < 2:
            raise TypeError(f"Input 3 to {op} must have rank at least 2, but got "
                            f"shape={b.shape}")
        if not dl.shape == d.shape == du.shape:
            raise TypeError(f"{op} requires that all diagonal arguments have the same "
                            f"shape, got {dl.shape}, {d.shape} and {du.shape}")
        if d.shape != b.shape[:-1]:
            raise TypeError(f"{op} requires that the leading ndim-1 dimensions of b equal "
                            f"the dimensions of the diagonal arguments, got b of shape "
                            f"{b.shape} and diagonals of shape {d.shape}")
        return (b.strip_weak_type(),)


class TridiagonalOp(JaxprOp, name="tridiagonal"):
    """Reduces each Hermitian matrix to real tridiagonal form Q^H A Q = T (LAPACK
    sytrd/hetrd), reading its `lower` (or upper) triangle: the packed result (T's
    diagonals and the reflectors), T's diagonal d and off-diagonal e, and the reflectors'
    scale factors taus. JAX: lax.linalg.tridiagonal_p."""
    attributes = {"lower": A.Bool(default=True)}

    @classmethod
    def infer(cls, a, *, lower):
        check_linalg_dtype("tridiagonal", a)
        n, m = matrix_shape("tridiagonal", a.shape)
        if n != m or n == 0:
            raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape "
                             f"{a.shape}.")
        batch, real = a.shape[:-2], real_dtype(a.dtype)
        return (a.strip_weak_type(), ShapedArray(batch + (n,), real),
                ShapedArray(batch + (n - 1,), real), ShapedArray(batch + (n - 1,), a.dtype))


class HessenbergOp(JaxprOp, name="hessenberg"):
    """Reduces each square matrix to upper Hessenberg form Q^H A Q = H (LAPACK gehrd): H
    on and above the first sub-diagonal, the reflectors below it, and their scale factors
    taus. JAX: lax.linalg.hessenberg_p."""

    @classmethod
    def infer(cls, a):
        check_linalg_dtype("hessenberg", a)
        n, m = matrix_shape("hessenberg", a.shape)
        if n != m:
            raise ValueError(f"Argument to Hessenberg reduction must have shape [..., n, n], "
                             f"got shape {a.shape}")
        return (a.strip_weak_type(), ShapedArray(a.shape[:-2] + (max(n - 1, 0),), a.dtype))


class SchurOp(JaxprOp, name="schur"):
    """Schur decomposition A = Q T Q^H (LAPACK gees): T (quasi-)upper triangular, real
    Schur form with 2x2 blocks for real input, and with `compute_schur_vectors` the
    unitary Q. CPU only. JAX: lax.linalg.schur_p."""
    attributes = {"compute_schur_vectors": A.Bool(default=True),
                  "sort_eig_vals": A.Bool(default=False)}

    @classmethod
    def infer(cls, a, *, compute_schur_vectors, sort_eig_vals):
        check_linalg_dtype("schur", a)
        n, m = matrix_shape("schur", a.shape)
        if n != m:
            raise ValueError(f"The input to schur must be a square matrix. Got shape "
                             f"{a.shape}.")
        a = a.strip_weak_type()
        return (a, a) if compute_schur_vectors else (a,)


class OrmqrOp(JaxprOp, name="ormqr"):
    """Q c, Q^H c, c Q or c Q^H (`left`, `transpose`) with Q the product of the
    Householder reflectors below the diagonal of a (m, k) scaled by taus, never formed
    (LAPACK ormqr/unmqr). JAX: lax.linalg.ormqr_p."""
    num_operands = 3
    attributes = {"left": A.Bool(default=True), "transpose": A.Bool(default=False)}

    @classmethod
    def infer(cls, a, taus, c, *, left, transpose):
        op = "ormqr"
        check_linalg_dtype(op, a, "a")
        _same_dtype(op, a, (taus, c), ("taus", "c"))
        m, n = matrix_shape(op, a.shape, what="a")
        rows, cols = matrix_shape(op, c.shape, what="c")
        if taus.ndim != a.ndim - 1 or taus.shape[:-1] != a.shape[:-2] or \
                c.shape[:-2] != a.shape[:-2]:
            raise ValueError(f"{op}: a, taus and c must have equal batch dimensions, got "
                             f"shapes {a.shape}, {taus.shape} and {c.shape}")
        if taus.shape[-1] > min(m, n):
            raise ValueError(f"{op}: taus of shape {taus.shape} has more reflectors than "
                             f"a of shape {a.shape} holds")
        if left and rows != m:
            raise ValueError(f"ormqr with left=True expects c to have the same number of rows "
                             f"as the Householder matrix a. Got a shape {a.shape} and c "
                             f"shape {c.shape}.")
        if not left and cols != m:
            raise ValueError(f"ormqr with left=False expects c to have the same number of "
                             f"columns as the Householder matrix a has rows. Got a shape "
                             f"{a.shape} and c shape {c.shape}.")
        return (c.strip_weak_type(),)


# ---- Fourier transforms ------------------------------------------------------------
class FftOp(JaxprOp, name="fft"):
    """Discrete Fourier transform over the trailing len(fft_lengths) axes: FFT and IFFT
    (complex to complex), RFFT (real to half-spectrum), IRFFT (half-spectrum to real).
    Unnormalized forward, 1/n inverse, as NumPy. JAX: lax.fft_p."""
    attributes = {"fft_type": A.Str(choices=FFT_TYPES), "fft_lengths": A.Ints()}

    @classmethod
    def infer(cls, x, *, fft_type, fft_lengths):
        name = np.dtype(x.dtype).name
        if fft_type == "RFFT":
            if name not in ("float32", "float64"):
                raise TypeError(f"fft: RFFT needs a float32 or float64 operand, got "
                                f"{short_dtype_name(x.dtype)}")
            dtype = complex_dtype(x.dtype)
        elif name not in ("complex64", "complex128"):
            raise TypeError(f"fft: {fft_type} needs a complex64 or complex128 operand, got "
                            f"{short_dtype_name(x.dtype)}")
        else:
            dtype = real_dtype(x.dtype) if fft_type == "IRFFT" else x.dtype
        return (ShapedArray(fft_shape(fft_type, x.shape, tuple(fft_lengths)), dtype),)


__all__ = [n for n in dir() if n.endswith("Op")]
