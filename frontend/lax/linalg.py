"""`mjax.lax.linalg`: one function per linear-algebra primitive, as `jax.lax.linalg`.

Each works on the trailing two axes with any leading batch axes. The `jnp.linalg` and
`mjax.scipy.linalg` functions are built on these.
"""
from __future__ import annotations

import enum
import functools

import numpy as np

from mjax import dtypes, registration
from mjax.core import aval_of_value, bind
from mjax.dialect.ops import linalg as L
from mjax.lax.control_flow import fori_loop, while_loop
from mjax.lax.dot import dot_general
from mjax.lax.precision import Precision
from mjax.lax import elementwise as E
from mjax.lax.elementwise import (add, as_array, broadcasted_iota, conj, convert_element_type,
                                  div, eq, full, ge, iota, mul, neg, rsqrt, select, sub)
from mjax.lax.indexing import (GatherDimensionNumbers, dynamic_index_in_dim,
                               dynamic_slice_in_dim, dynamic_update_index_in_dim,
                               dynamic_update_slice_in_dim, gather)
from mjax.lax.linalg_fallbacks import ormqr_reflectors, tridiagonal_solve_thomas
from mjax.lax.platform import current_platform, lapack_available, solver_kernels_available
from mjax.lax.reduce import reduce_and, reduce_max, reduce_sum
from mjax.lax.sorting import sort_key_val
from mjax.lax.shapes import (broadcast_to, concatenate, expand_dims, pad, rev, slice,
                             slice_in_dim, transpose)

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
        perm = select(eq(idx, np.int32(i)), pp, select(at_p, pi, perm))
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


class EigImplementation(enum.Enum):
    """The kernel `eig` runs. JAX: lax.linalg.EigImplementation (mjax: LAPACK on a CPU;
    on a GPU the default choice only)."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """The kernel `eigh` runs. JAX: lax.linalg.EighImplementation (mjax: QR, i.e. LAPACK
    syevd/heevd, only, as JAX on CPU)."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """The algorithm `svd` runs. JAX: lax.linalg.SvdAlgorithm (mjax: divide and conquer,
    LAPACK gesdd, only)."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def _member(enum_cls, value, fn: str, arg: str):
    """`value` as a member of `enum_cls` (None stays None; a member's value, such as
    "qr", names it); anything else is a ValueError."""
    if value is None or isinstance(value, enum_cls):
        return value
    try:
        return enum_cls(value)
    except (ValueError, TypeError):
        raise ValueError(f"mjax.lax.linalg.{fn}: {arg} must be None or a "
                         f"jax.lax.linalg.{enum_cls.__name__}, got {value!r}") from None


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index=None, implementation=None):
    """(eigenvectors as columns, ascending real eigenvalues). JAX: lax.linalg.eigh.
    `implementation`: None or EighImplementation.QR (LAPACK); JACOBI and QDWH raise
    NotImplementedError, as JAX does on CPU. For a TPU: None, QDWH or JACOBI, all XLA's
    Jacobi `Eigh` up to 256x256 (JAX's QDWH divide and conquer beyond is not in mjax);
    QR raises, as in JAX."""
    implementation = _member(EighImplementation, implementation, "eigh", "implementation")
    if _tpu_linalg():       # (JAX's TPU default: QDWH, which is XLA's Jacobi up to 256)
        n = aval_of_value(x).shape[-1]
        if implementation is EighImplementation.QR:
            raise NotImplementedError("QR algorithm is not supported on TPU")
        if implementation is EighImplementation.JACOBI and n > TPU_JACOBI_MAX:
            raise NotImplementedError(
                f"mjax.lax.linalg.eigh(implementation=JACOBI) of a {n}x{n} matrix for a "
                f"TPU: mjax calls XLA's Jacobi eigensolver up to {TPU_JACOBI_MAX}x"
                f"{TPU_JACOBI_MAX} only")
    elif implementation is EighImplementation.QDWH:
        raise NotImplementedError("QDWH implementation is only supported on TPU")
    elif implementation is EighImplementation.JACOBI:
        raise NotImplementedError("Jacobi implementation is not supported on CPU (mjax "
                                  "computes eigh with LAPACK only)")
    if subset_by_index is not None and tuple(subset_by_index) != (0, x.shape[-1]):
        raise NotImplementedError("mjax.lax.linalg.eigh: subset_by_index is not implemented")
    if symmetrize_input:
        x = symmetrize(x)
    return tuple(_bind(L.EighOp, x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues)))


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):
    """(u, s, vh) or s. JAX: lax.linalg.svd. `algorithm`: None, SvdAlgorithm.DEFAULT or
    DIVIDE_AND_CONQUER (LAPACK gesdd). For a TPU: JAX's QDWH-based SVD (POLAR, the
    DEFAULT there), traced here (see _svd_tpu_one)."""
    if subset_by_index is not None:
        raise NotImplementedError("mjax.lax.linalg.svd: subset_by_index is not implemented")
    algorithm = _member(SvdAlgorithm, algorithm, "svd", "algorithm")
    if _tpu_linalg():
        if algorithm not in (None, SvdAlgorithm.DEFAULT, SvdAlgorithm.POLAR):
            raise NotImplementedError("Only the POLAR (which is also DEFAULT on TPU) SVD "
                                      "algorithm is supported on TPU.")
    elif algorithm in (SvdAlgorithm.JACOBI, SvdAlgorithm.POLAR):
        raise NotImplementedError("The SVD Jacobi and Polar algorithms are not implemented "
                                  "on CPU.")
    if algorithm is SvdAlgorithm.QR:
        raise NotImplementedError("mjax.lax.linalg.svd: algorithm=SvdAlgorithm.QR (LAPACK "
                                  "gesvd) is not implemented; DEFAULT and "
                                  "DIVIDE_AND_CONQUER (gesdd) are")
    if _tpu_linalg() and 0 not in aval_of_value(x).shape[-2:]:
        return _svd_tpu_dispatch(x, bool(full_matrices), bool(compute_uv), algorithm)
    outs = _bind(L.SvdOp, x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    if not compute_uv:
        return outs
    s, u, vt = outs
    return u, s, vt


def _svd_tpu_dispatch(x, full_matrices: bool, compute_uv: bool, algorithm):
    """svd for a TPU: JAX's QDWH-based algorithm (POLAR, the TPU's DEFAULT)."""
    n = min(aval_of_value(x).shape[-2:])
    if n > TPU_JACOBI_MAX:
        raise NotImplementedError(
            f"svd of a matrix with {n} columns and rows or more for a TPU: JAX's TPU SVD "
            f"diagonalizes an {n}x{n} matrix with its QDWH spectral divide and conquer "
            f"eigh, which mjax does not implement (it takes up to {TPU_JACOBI_MAX})")
    name = np.dtype(aval_of_value(x).dtype).name
    if name in _HALF:
        x = convert_element_type(x, np.float32)
    outs = _svd_tpu(x, full_matrices=full_matrices, compute_uv=compute_uv)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    if name in _HALF:
        outs = [convert_element_type(o, np.dtype(name)) if o.dtype == np.float32 else o
                for o in outs]
    return tuple(outs) if compute_uv else outs[0]


def eig(x, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, enable_eigvec_derivs: bool = False,
        implementation=None, use_magma=None):
    """[w, (vl), (vr)] of a general square matrix (CPU: LAPACK; GPU: cuSOLVER geev, or
    jaxlib's hybrid kernel for left eigenvectors, as JAX's default). JAX:
    lax.linalg.eig. `implementation`: None, or on a CPU EigImplementation.LAPACK."""
    implementation = _member(EigImplementation, implementation, "eig", "implementation")
    if implementation is not None and lapack_available():
        if implementation is not EigImplementation.LAPACK:
            raise ValueError("Only the lapack implementation is supported on CPU.")
    elif implementation is not None:
        raise NotImplementedError(
            f"lax.linalg.eig(implementation={implementation}) on {current_platform()}: "
            f"mjax picks the kernel as JAX's default does (cuSOLVER geev; the hybrid "
            f"kernel when left eigenvectors are asked)")
    outs = _bind(L.EigOp, x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                compute_right_eigenvectors=bool(compute_right_eigenvectors))
    return list(outs) if isinstance(outs, (list, tuple)) else [outs]


def _float_operands(fn: str, xs, complex_ok: bool = True):
    """JAX's dtype check of a linalg primitive's operands (floating, or complex too)."""
    for i, x in enumerate(xs):
        dt = aval_of_value(x).dtype
        ok = dtypes.issubdtype(dt, np.floating) or (
            complex_ok and dtypes.issubdtype(dt, np.complexfloating))
        if not ok:
            kinds = "floating, complexfloating" if complex_ok else "floating"
            raise TypeError(f"{fn} does not accept dtype {np.dtype(dt).name} at position "
                            f"{i}. Accepted dtypes at position {i} are subtypes of {kinds}.")
    names = [np.dtype(aval_of_value(x).dtype).name for x in xs]
    if len(set(names)) > 1:
        raise TypeError(f"lax.{fn} requires arguments to have the same dtypes, got "
                        f"{', '.join(names)}.")


def _cpu_only(fn: str, gpu_too: bool = False):
    """Raises where `fn`'s kernels do not run: LAPACK's on a CPU (`gpu_too`: and the GPU
    solvers on a GPU)."""
    if _tpu_linalg():       # (JAX's error: it has no TPU rule for these)
        raise NotImplementedError(f"MLIR translation rule for primitive '{fn}' not found "
                                  f"for platform tpu")
    if not (solver_kernels_available() if gpu_too else lapack_available()):
        where = "CPU (LAPACK) and GPU (cuSOLVER)" if gpu_too else "CPU (LAPACK)"
        raise NotImplementedError(f"mjax.lax.linalg.{fn} is only implemented on {where}, "
                                  f"as in JAX; this process compiles for "
                                  f"{current_platform()}")


def _check_shapes(op, args, **params):
    """Runs op's shape rule on args first, so its ValueErrors reach the user as such (as
    in JAX) rather than as the TypeError binding reports for any rule's failure."""
    op.infer(*[aval_of_value(a).strip_weak_type() for a in args], **params)


def tridiagonal_solve(dl, d, du, b, *, perturb_singular: bool = False):
    """x with A x = b, A tridiagonal with sub-diagonal dl (dl[..., 0] unused), diagonal d
    and super-diagonal du (du[..., -1] unused); b is (..., m, n). NaN where A is singular,
    unless `perturb_singular` nudges tiny pivots. CPU (LAPACK gtsv). JAX:
    lax.linalg.tridiagonal_solve."""
    args = [as_array(x) for x in (dl, d, du, b)]
    _float_operands("tridiagonal_solve", args)
    _check_shapes(L.TridiagonalSolveOp, args, perturb_singular=False)
    if not solver_kernels_available():    # JAX's generic lowering: a Thomas sweep
        if perturb_singular:
            raise NotImplementedError("perturb_singular=True is not supported on this "
                                      f"platform ({current_platform()}).")
        return tridiagonal_solve_thomas(*args)
    return _bind(L.TridiagonalSolveOp, *args, perturb_singular=bool(perturb_singular))


def tridiagonal(a, *, lower: bool = True):
    """[arr, d, e, taus]: each Hermitian matrix reduced to real tridiagonal form Q^H a Q,
    reading its `lower` (or upper) triangle: arr holds the tridiagonal band and the
    Householder reflectors, d the diagonal, e the off-diagonal, taus the reflectors'
    scale factors. CPU (LAPACK sytrd/hetrd). JAX: lax.linalg.tridiagonal."""
    a = as_array(a)
    _float_operands("tridiagonal", [a])
    _cpu_only("tridiagonal", gpu_too=True)
    _check_shapes(L.TridiagonalOp, [a], lower=True)
    return list(_bind(L.TridiagonalOp, a, lower=bool(lower)))


def hessenberg(a):
    """[a, taus]: each square matrix reduced to upper Hessenberg form Q^H a Q, packed with
    the Householder reflectors below the first sub-diagonal; taus their scale factors.
    CPU (LAPACK gehrd). JAX: lax.linalg.hessenberg."""
    a = as_array(a)
    _float_operands("hessenberg", [a])
    _cpu_only("hessenberg")
    _check_shapes(L.HessenbergOp, [a])
    return list(_bind(L.HessenbergOp, a))


def schur(x, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable=None):
    """[t, q] (or [t]) with x = q t q^H, t upper (quasi-)triangular: the real Schur form
    for real x. CPU (LAPACK gees). `select_callable` is unused, as in JAX; sorting is not
    implemented (as in JAX). JAX: lax.linalg.schur."""
    x = as_array(x)
    _float_operands("schur", [x])
    _cpu_only("schur")
    _check_shapes(L.SchurOp, [x], compute_schur_vectors=True, sort_eig_vals=False)
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not "
                                  "implemented.")
    outs = _bind(L.SchurOp, x, compute_schur_vectors=bool(compute_schur_vectors),
                 sort_eig_vals=False)
    return list(outs) if isinstance(outs, (list, tuple)) else [outs]


def ormqr(a, taus, c, *, left: bool = True, transpose: bool = False):
    """Q c, Q^H c (`transpose`), c Q or c Q^H (not `left`), Q the product of the
    Householder reflectors of geqrf's packed `a` and `taus`, never formed. CPU (LAPACK
    ormqr/unmqr). JAX: lax.linalg.ormqr."""
    args = [as_array(x) for x in (a, taus, c)]
    _float_operands("ormqr", args)
    _check_shapes(L.OrmqrOp, args, left=bool(left), transpose=bool(transpose))
    if not solver_kernels_available():    # JAX's generic lowering: one reflector at a time
        return ormqr_reflectors(*args, left=bool(left), transpose=bool(transpose))
    return _bind(L.OrmqrOp, *args, left=bool(left), transpose=bool(transpose))


def _tril(x, k: int = 0):
    shape = aval_of_value(x).shape
    n = len(shape)
    keep = ge(add(broadcasted_iota(np.int32, shape, n - 2), np.int32(k)),
              broadcasted_iota(np.int32, shape, n - 1))
    return select(keep, x, full(shape, 0, aval_of_value(x).dtype))


def _check_rank(fn: str, x, i: int, rank: int, exact: bool = False):
    shape = aval_of_value(x).shape
    if (len(shape) != rank) if exact else (len(shape) < rank):
        how = "a rank of exactly" if exact else "rank at least"
        raise TypeError(f"Input {i} to {fn} must have {how} {rank}, but got "
                        f"shape={shape}")


def symmetric_product(a_matrix, c_matrix, *, alpha: float = 1., beta: float = 0.,
                      symmetrize_output: bool = False):
    """alpha a a^T + beta c for a (..., m, n) and symmetric c (..., m, m); only the lower
    triangle is promised unless `symmetrize_output` mirrors it into the upper one. JAX:
    lax.linalg.symmetric_product."""
    a, c = as_array(a_matrix), as_array(c_matrix)
    _float_operands("symmetric_product", [a, c], complex_ok=False)
    _check_rank("symmetric_product", a, 0, 2)
    _check_rank("symmetric_product", c, 1, 2)
    sa, sc = aval_of_value(a).shape, aval_of_value(c).shape
    if sa[-2] != sc[-1] or sc[-2] != sc[-1] or sa[:-2] != sc[:-2]:
        raise ValueError(f"symmetric_update expects a rectangular matrix of shape (m, n) "
                         f"and a square matrix of shape (n, n). Got shapes {sa} and {sc}.")
    dt = aval_of_value(c).dtype
    batch = tuple(range(len(sa) - 2))
    r = len(sa)
    aat = dot_general(a, a, (((r - 1,), (r - 1,)), (batch, batch)),
                      precision=Precision.HIGHEST)
    out = add(mul(convert_element_type(alpha, dt, weak_type=True), aat),
              mul(convert_element_type(beta, dt, weak_type=True), c))
    if symmetrize_output:
        out = add(_tril(out), _mT(_tril(out, -1)))
    return out


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of r^T r + w w^T, from the upper factor r, by n Givens
    rotations (O(n^2)). JAX: lax.linalg.cholesky_update."""
    r, w = as_array(r_matrix), as_array(w_vector)
    _float_operands("cholesky_update", [r, w], complex_ok=False)
    _check_rank("cholesky_update", r, 0, 2, exact=True)
    _check_rank("cholesky_update", w, 1, 1, exact=True)
    sr, sw = aval_of_value(r).shape, aval_of_value(w).shape
    if sr[0] != sr[1] or sw[0] != sr[1]:
        raise ValueError(f"Rank-1 update to Cholesky decomposition takes a square matrix "
                         f"and a vector of the same size as input. Got shapes {sr} and "
                         f"{sw} instead")
    dt = aval_of_value(r).dtype
    one, zero = full((), 1, dt), full((), 0, dt)

    def rotate(k, carry):
        rm, z = carry
        row = dynamic_index_in_dim(rm, k, 0, keepdims=False)
        x = dynamic_index_in_dim(row, k, 0, keepdims=False)
        y = dynamic_index_in_dim(z, k, 0, keepdims=False)
        # c, s with [c -s; s c] [x; y] = [rho; 0], scaled against overflow (BLAS drotg);
        # y == 0 is the identity rotation (no division by a zero scale).
        noop = eq(y, zero)
        scale = select(noop, one, E.max(E.abs(x), E.abs(y)))
        xs, ys = div(x, scale), div(y, scale)
        rh = rsqrt(select(noop, one, add(mul(xs, xs), mul(ys, ys))))
        c = select(noop, one, mul(xs, rh))
        s = select(noop, zero, neg(mul(ys, rh)))
        new_row = sub(mul(c, row), mul(s, z))
        z = add(mul(c, z), mul(s, row))
        return dynamic_update_index_in_dim(rm, new_row, k, 0), z

    return fori_loop(0, sr[0], rotate, (r, w))[0]


# ---- QDWH polar decomposition (Nakatsukasa, Bai and Gygi 2010) ---------------------------
def _H(x):
    t = _mT(x)
    return conj(t) if dtypes.issubdtype(aval_of_value(x).dtype, np.complexfloating) else t


def _mm(x, y):
    return dot_general(x, y, (((1,), (0,)), ((), ())), precision=Precision.HIGHEST)


def _eye(n: int, dt):
    return convert_element_type(eq(broadcasted_iota(np.int32, (n, n), 0),
                                   broadcasted_iota(np.int32, (n, n), 1)), dt)


def qdwh(x, *, is_hermitian: bool = False, max_iterations=None, eps=None,
         dynamic_shape=None):
    """(u, h, num_iters, is_converged): the polar decomposition x = u h of a full-rank
    (M, N) matrix, M >= N, by the QR-based dynamically weighted Halley iteration, then a
    Newton-Schulz refinement. `dynamic_shape` (m, n): only x[:m, :n] counts (static
    sizes only in mjax). `is_hermitian` is unused, as in JAX. JAX: lax.linalg.qdwh."""
    x = as_array(x)
    if not isinstance(is_hermitian, (bool, np.bool_)):
        raise TypeError("The `is_hermitian` argument must be statically specified to use "
                        "`qdwh` within JAX transformations.")
    max_iterations = 10 if max_iterations is None else max_iterations
    if not isinstance(max_iterations, (int, np.integer)):
        raise TypeError("The `max_iterations` argument must be statically specified to "
                        "use `qdwh` within JAX transformations.")
    _float_operands("qdwh", [x])
    shape = aval_of_value(x).shape
    if len(shape) != 2:
        raise ValueError(f"qdwh takes one matrix (no batch axes), got shape {shape}")
    big_m, big_n = shape
    if big_m < big_n:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    if dynamic_shape is not None:
        try:
            m, n = (int(v) for v in dynamic_shape)
        except TypeError:
            raise NotImplementedError("mjax.lax.linalg.qdwh: dynamic_shape must hold "
                                      "static sizes") from None
        if (m, n) != (big_m, big_n):
            u, h, it, ok = qdwh(slice(x, (0, 0), (m, n)), is_hermitian=is_hermitian,
                                max_iterations=max_iterations, eps=eps)
            return (pad(u, full((), 0, u.dtype), ((0, big_m - m, 0), (0, big_n - n, 0))),
                    pad(h, full((), 0, h.dtype), ((0, big_n - n, 0), (0, big_n - n, 0))),
                    it, ok)
    eps = float(dtypes.finfo(aval_of_value(x).dtype).eps) if eps is None else float(eps)
    key = (int(max_iterations), eps)
    run = _QDWH_JITS.get(key)
    if run is None:     # one jit per static setting, as JAX's jit(qdwh, static_argnames)
        run = _QDWH_JITS[key] = registration.JIT(
            functools.partial(_qdwh_tpu, max_iterations=int(max_iterations), eps=eps))
    return run(x)


_QDWH_JITS: dict = {}


# ---- JAX's TPU SVD (jax/_src/tpu/linalg/svd.py and qdwh.py) --------------------------------
# For a TPU, JAX lowers svd to lax ops: a QDWH polar decomposition a = u h (its weighted
# Halley steps in two fori_loops over tables of coefficients, the QR form for the first,
# ill-conditioned ones, then Halley's method in a while loop until converged), then the
# eigendecomposition of h by XLA's Jacobi `Eigh`, sorted descending. Every matmul runs at
# HIGHEST precision (JAX's matmul precision 'float32' around it). mjax traces the same
# program where svd is called, when tracing for a TPU; its derivative is then that of the
# algorithm's ops (forward mode only: its loops have no reverse-mode derivative), where
# JAX keeps svd's own rule.
TPU_JACOBI_MAX = 256     # XLA's Jacobi Eigh serves JAX's TPU eigh up to this size


def _tpu_linalg() -> bool:
    """Whether this trace is for a TPU, where linalg takes JAX's TPU algorithms."""
    return current_platform() == "tpu"


def _conj_if_complex(x):
    return conj(x) if dtypes.issubdtype(aval_of_value(x).dtype, np.complexfloating) else x


def _frobenius(x):
    """sqrt(sum(re(x conj(x)))): jnp.linalg.norm(x) of a matrix."""
    sq = mul(x, _conj_if_complex(x))
    if dtypes.issubdtype(aval_of_value(x).dtype, np.complexfloating):
        sq = E.real(sq)
    return E.sqrt(reduce_sum(sq, (0, 1)))


def _qdwh_coefficients(eps: float, max_iterations: int):
    """The weights of the dynamically weighted Halley steps, split as JAX splits them:
    (a - e) / sqrt(c), sqrt(c), e for the QR form (c > 100), a - e, c, e for the Cholesky
    form, with e = b / c; l bounds the iterate's smallest singular value from below."""
    qr_form, cholesky_form = [], []
    l, tol_l, k = eps, 10.0 * eps / 2.0, 0
    while l + tol_l < 1 and k < max_iterations:
        k += 1
        l2 = l * l
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** (1 / 2)
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        l = l * (a + b * l2) / (1 + c * l2)
        e = b / c
        if c > 100:
            qr_form.append(((a - e) / c ** (1 / 2), c ** (1 / 2), e))
        else:
            cholesky_form.append((a - e, c, e))
    return qr_form, cholesky_form, tol_l


def _halley_qr_step(u, params, dt):
    """u <- e u + (a - e)/sqrt(c) Q1 Q2^H, [Q1; Q2] the thin QR of [sqrt(c) u; I]."""
    scaled_gap, sqrt_c, e = params
    big_m, big_n = aval_of_value(u).shape
    # [sqrt(c) u; I] as JAX builds it: padded with zero rows, then I written in below
    y = pad(mul(sqrt_c, u), full((), 0, dt), ((0, big_n, 0), (0, 0, 0)))
    y = dynamic_update_slice_in_dim(y, _eye(big_n, dt), big_m, 0)
    q, _ = qr(y, full_matrices=False)
    q1 = slice(q, (0, 0), (big_m, big_n))
    q2 = _H(dynamic_slice_in_dim(q, big_m, big_n, 0))
    return add(mul(e, u), mul(scaled_gap, _mm(q1, q2)))


def _halley_cholesky_step(u, params, dt):
    """u <- e u + (a - e) u (c u^H u + I)^-1, through the Cholesky factor y y^H."""
    gap, c, e = params
    big_n = aval_of_value(u).shape[1]
    x = add(mul(c, _mm(_H(u), u)), _eye(big_n, dt))
    y = cholesky(x, symmetrize_input=False)
    z = _conj_if_complex(triangular_solve(y, _mT(u), left_side=True, lower=True,
                                          conjugate_a=True))
    z = _H(triangular_solve(y, z, left_side=True, lower=True, transpose_a=True,
                            conjugate_a=True))
    return add(mul(e, u), mul(gap, z))


def _qdwh_tpu(x, max_iterations: int = 10, eps: float | None = None):
    """(u, h, iterations, converged): JAX's QDWH of one matrix, M >= N (lax.linalg.qdwh,
    which its TPU SVD runs; jax/_src/tpu/linalg/qdwh.py)."""
    dt = aval_of_value(x).dtype
    real = dtypes.finfo(dt).dtype
    eps = float(dtypes.finfo(dt).eps) if eps is None else eps
    mag = E.abs(x)
    one_norm = reduce_max(reduce_sum(mag, (0,)), (0,))
    inf_norm = reduce_max(reduce_sum(mag, (1,)), (0,))
    alpha_inverse = mul(rsqrt(one_norm), rsqrt(inf_norm))
    alpha_inverse = select(eq(one_norm, full((), 0, real)), full((), 1, real), alpha_inverse)
    u = mul(x, convert_element_type(alpha_inverse, dt))
    qr_form, cholesky_form, tol_l = _qdwh_coefficients(eps, max_iterations)
    tol_norm = E.cbrt(full((), tol_l, real))

    def iterate(u, coefs, step, test_convergence):
        if not coefs:
            return u, full((), True, np.bool_)
        table = convert_element_type(as_array(np.asarray(coefs, real)), dt)

        def body(k, state):
            u, _ = state
            row = dynamic_index_in_dim(table, k, 0, keepdims=False)
            params = [dynamic_index_in_dim(row, i, 0, keepdims=False) for i in range(3)]
            new = step(u, params, dt)
            going = (E.gt(_frobenius(sub(new, u)), tol_norm) if test_convergence
                     else full((), True, np.bool_))
            return new, going
        return fori_loop(0, len(coefs), body, (u, full((), True, np.bool_)))

    u, _ = iterate(u, qr_form, _halley_qr_step, False)
    u, not_converged = iterate(u, cholesky_form, _halley_cholesky_step, True)
    halley = (3 - 1 / 3, 3.0, 1 / 3)     # as l -> 1, (a, b, c) -> (3, 1, 3)

    def more(state):
        k, _, going = state
        return E.and_(going, E.lt(k, np.int32(max_iterations)))

    def halley_step(state):
        k, u, _ = state
        new = _halley_cholesky_step(u, [convert_element_type(v, dt) for v in halley], dt)
        return add(k, np.int32(1)), new, E.gt(_frobenius(sub(new, u)), tol_norm)

    start = full((), len(qr_form) + len(cholesky_form), np.int32)
    iterations, u, not_converged = while_loop(more, halley_step, (start, u, not_converged))
    half, three_halves = (convert_element_type(v, dt) for v in (0.5, 1.5))
    u = sub(mul(three_halves, u), _mm(mul(half, u), _mm(_H(u), u)))    # Newton-Schulz
    h = _mm(_H(u), x)
    h = div(add(h, _H(h)), convert_element_type(2, dt))
    return u, h, iterations, E.not_(not_converged)


def _take_columns(x, idx):
    """x[..., idx] for a matrix x and an index vector (a gather, as jnp indexing)."""
    rows = aval_of_value(x).shape[0]
    dn = GatherDimensionNumbers(offset_dims=(0,), collapsed_slice_dims=(1,),
                                start_index_map=(1,))
    return gather(x, expand_dims(idx, (1,)), dn, (rows, 1))


def _take(v, idx):
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
                                start_index_map=(0,))
    return gather(v, expand_dims(idx, (1,)), dn, (1,))


def _svd_tall_and_square_tpu(a, compute_uv: bool):
    """JAX's TPU SVD of one matrix with M >= N: polar decomposition a = u_p h, then
    h = v diag(s) v^H by eigh, singular values in descending order."""
    dt = aval_of_value(a).dtype
    n = aval_of_value(a).shape[1]
    u_p, h, _, _ = _qdwh_tpu(a, 10)
    v, s = eigh(h, sort_eigenvalues=False)
    s = E.max(s, full((), 0, aval_of_value(s).dtype))
    iota = broadcasted_iota(np.int32, (n,), 0)     # a stable descending argsort
    _, order = sort_key_val(rev(s, (0,)), rev(iota, (0,)), 0, True)
    order = rev(order, (0,))
    s_out = _take(s, order)
    if not compute_uv:
        return s_out
    v_out = _take_columns(v, order)
    u_out = _mm(u_p, v_out)
    eps = float(dtypes.finfo(dt).eps)
    last = dynamic_index_in_dim(s_out, n - 1, 0, keepdims=False)
    first = dynamic_index_in_dim(s_out, 0, 0, keepdims=False)
    rank_deficient = E.le(last, mul(convert_element_type(n * eps, aval_of_value(s).dtype),
                                    first))

    def correct(state):         # re-orthonormalize u (Nakatsukasa and Higham 2013, 5.5)
        u, _ = state
        q, r = qr(u, full_matrices=False)
        diag_r = reduce_sum(mul(r, _eye(n, dt)), (0,))
        if dtypes.issubdtype(dt, np.complexfloating):
            diag_r = E.real(diag_r)
        signs = select(E.ge(diag_r, full((), 0, aval_of_value(diag_r).dtype)),
                       full((n,), 1, np.int32), full((n,), -1, np.int32))
        d = select(eq(broadcasted_iota(np.int32, (n, n), 0),
                      broadcasted_iota(np.int32, (n, n), 1)),
                   broadcast_to(expand_dims(signs, (0,)), (n, n)), full((n, n), 0, np.int32))
        return (dot_general(q, d, (((1,), (0,)), ((), ())), precision=Precision.HIGHEST,
                            preferred_element_type=dt), full((), False, np.bool_))
    u_out, _ = while_loop(lambda state: state[1], correct, (u_out, rank_deficient))
    return u_out, s_out, v_out


def _svd_tpu_one(a, *, full_matrices: bool, compute_uv: bool):
    """JAX's TPU SVD of one matrix (jax/_src/tpu/linalg/svd.py svd)."""
    m, n = aval_of_value(a).shape
    flip = m < n
    if flip:
        a, (m, n) = _H(a), (n, m)
    q = u_null = None
    if full_matrices and m > n:
        q_full, a_full = qr(a, full_matrices=True)
        q, u_null = slice(q_full, (0, 0), (m, n)), slice(q_full, (0, n), (m, m))
        a = slice(a_full, (0, 0), (n, n))
    elif m > 1.15 * n:
        q, a = qr(a, full_matrices=False)
    if not compute_uv:
        return _svd_tall_and_square_tpu(a, False)
    u, s, v = _svd_tall_and_square_tpu(a, True)
    if q is not None:
        u = _mm(q, u)
    if u_null is not None:
        u = concatenate([u, u_null], 1)
    dt = aval_of_value(a).dtype
    finite = (E.and_(E.is_finite(E.real(a)), E.is_finite(E.imag(a)))
              if dtypes.issubdtype(dt, np.complexfloating) else E.is_finite(a))
    finite = reduce_and(finite, (0, 1))

    def poison(state):          # NaN results for a non-finite input
        _, u, s, v = state
        return (full((), True, np.bool_), full(aval_of_value(u).shape, np.nan, dt),
                full(aval_of_value(s).shape, np.nan, aval_of_value(s).dtype),
                full(aval_of_value(v).shape, np.nan, dt))
    _, u, s, v = while_loop(lambda state: E.not_(state[0]), poison, (finite, u, s, v))
    return (v, s, _H(u)) if flip else (u, s, _H(v))


def _svd_tpu(x, *, full_matrices: bool, compute_uv: bool):
    fn = functools.partial(_svd_tpu_one, full_matrices=full_matrices, compute_uv=compute_uv)
    for _ in aval_of_value(x).shape[:-2]:    # batch axes: vmapped, as JAX's
        fn = registration.VMAP(fn)
    return fn(x)


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
