"""`mjax.lax.linalg`: one function per linear-algebra primitive, as `jax.lax.linalg`.

Each works on the trailing two axes with any leading batch axes. The `jnp.linalg` and
`mjax.scipy.linalg` functions are built on these.
"""
from __future__ import annotations

import enum

import numpy as np

from mjax.specs import dtypes
from mjax.tracing import registration
from mjax.tracing.core import aval_of_value, bind
from mjax.dialect.ops import linalg as L
from mjax.lax.control_flow import cond
from mjax.lax.dot import dot_general
from mjax.lax.precision import Precision, precision_attr
from mjax.lax import elementwise as E
from mjax.lax.elementwise import (add, as_array, broadcasted_iota, conj, convert_element_type,
                                  div, eq, full, ge, iota, mul, neg, select, sub)
from mjax.lax.indexing import dynamic_update_index_in_dim
from mjax.lax.linalg_fallbacks import ormqr_reflectors, tridiagonal_solve_thomas
from mjax.lax.platform import current_platform, lapack_available, solver_kernels_available
from mjax.lax.reduce import reduce_sum
from mjax.lax.shapes import broadcast_to, expand_dims, slice_in_dim, squeeze, transpose
from mjax.passes import default_precision as DP
from mjax.passes.rules.tables import platform_rules
from mjax.tracing.tracer import Tracer

def _tpu_linalg() -> bool:
    """Whether this trace is for a TPU, where linalg takes JAX's TPU algorithms."""
    return platform_rules(current_platform()).tpu_linalg


def _bind(op, *args, **params):
    """bind, noting the default matmul precision for the op's rules. Half floats go to the
    op as they are, as in JAX: XLA's TPU factorizations take them, and LAPACK's lowering
    (CPU) raises JAX's NotImplementedError for them (passes/rules/linalg_ffi.py)."""
    return _record_default(op, bind(op, *args, **params))


def _record_default(op, outs):
    """`outs`; where `op`'s rules make dots with no precision and the op was staged while
    jax_default_matmul_precision is set, the value is recorded on the op for them (JAX's
    rules read it when they run; mjax's run in the passes: passes/default_precision.py)."""
    if op in DP.READERS:
        first = outs[0] if isinstance(outs, (list, tuple)) else outs
        default = precision_attr(None)
        if default is not None and isinstance(first, Tracer):
            owner = first.value.owner
            DP.record(getattr(owner, "operation", owner), default)
    return outs


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
    """Solves op(a) x = b (left_side) or x op(a) = b; b with one axis less than a is a
    (batch of) vector(s). JAX: lax.linalg.triangular_solve."""
    singleton = np.ndim(b) == np.ndim(a) - 1
    if singleton:
        b = expand_dims(b, (-1 if left_side else -2,))
    out = _bind(L.TriangularSolveOp, a, b, left_side=bool(left_side), lower=bool(lower),
                transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                unit_diagonal=bool(unit_diagonal))
    if singleton:
        axis = aval_of_value(out).ndim - (1 if left_side else 2)    # out[..., 0] or [..., 0, :]
        out = squeeze(slice_in_dim(out, 0, 1, 1, axis), (axis,))
    return out


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
    """The kernel `eigh` runs. JAX: lax.linalg.EighImplementation (on the CPU QR, i.e.
    LAPACK syevd/heevd, only, as JAX; for a TPU JACOBI and QDWH, as JAX)."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """The algorithm `svd` runs. JAX: lax.linalg.SvdAlgorithm (on the CPU DEFAULT and
    DIVIDE_AND_CONQUER, LAPACK gesdd, and QR, gesvd, as JAX; for a TPU POLAR, the
    DEFAULT there)."""
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
    The op carries `implementation` (as its `algorithm`) and `subset_by_index`, and its
    lowering chooses by them, as JAX's: on the CPU LAPACK, where JACOBI, QDWH and a
    subset_by_index other than the whole range raise NotImplementedError (JAX's); for a
    TPU, JACOBI is XLA's Jacobi `Eigh` of any size, None and QDWH JAX's QDWH divide and
    conquer (expanded when lowered: eigh_tpu.py; XLA's Jacobi `Eigh` itself up to 256
    without a subset), which takes subset_by_index; QR raises there."""
    implementation = _member(EighImplementation, implementation, "eigh", "implementation")
    if subset_by_index is not None:
        subset_by_index = tuple(int(i) for i in subset_by_index)
    if symmetrize_input:
        x = symmetrize(x)
    return tuple(_bind(L.EighOp, x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                       subset_by_index=subset_by_index,
                       algorithm=None if implementation is None else implementation.value))


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):
    """(u, s, vh) or s. JAX: lax.linalg.svd. The op carries `algorithm` and
    `subset_by_index`, and its lowering chooses by them, as JAX's: on the CPU LAPACK's
    gesdd (None, DEFAULT, DIVIDE_AND_CONQUER) or gesvd (QR), where JACOBI, POLAR and a
    subset_by_index other than the whole range raise NotImplementedError (JAX's); for a
    TPU JAX's QDWH-based SVD (None, DEFAULT, POLAR; the others raise), expanded when the
    op is lowered (linalg_tpu.svd_tpu), which takes subset_by_index (the largest singular
    values first: (0, 2) asks for the two largest). svd keeps its own derivative and
    batching rules, as JAX's."""
    algorithm = _member(SvdAlgorithm, algorithm, "svd", "algorithm")
    if subset_by_index is not None:
        subset_by_index = tuple(int(i) for i in subset_by_index)
    outs = _bind(L.SvdOp, x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                 subset_by_index=subset_by_index,
                 algorithm=None if algorithm is None else algorithm.value)
    if not compute_uv:
        return outs
    s, u, vt = outs
    return u, s, vt


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
                                      "platform.")     # (JAX's words)
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
    global _CHOLESKY_UPDATE_JIT
    if _CHOLESKY_UPDATE_JIT is None:    # (one program, as JAX's primitive runs, eager too)
        _CHOLESKY_UPDATE_JIT = registration.JIT(_cholesky_update_rotations)
    return _CHOLESKY_UPDATE_JIT(r, w)


_CHOLESKY_UPDATE_JIT = None


def _cholesky_update_rotations(r, w):
    """cholesky_update's Givens rotations, unrolled."""
    n = aval_of_value(r).shape[0]
    dt = aval_of_value(r).dtype

    def rotation(x, y):     # c, s with [c -s; s c] [x; y] = [rho; 0], scaled (BLAS drotg)
        big = select(E.gt(E.abs(x), E.abs(y)), E.abs(x), E.abs(y))
        xs, ys = div(x, big), div(y, big)
        rh = div(full((), 1, dt), E.sqrt(add(mul(xs, xs), mul(ys, ys))))
        return mul(xs, rh), mul(neg(ys), rh)

    # One rotation per row, unrolled, y == 0 the identity (a cond, as JAX's: the same
    # program, so that half floats, computed in float32 between roundings, round alike)
    for k in range(n):
        row = squeeze(slice_in_dim(r, k, k + 1, 1, 0), (0,))
        x = squeeze(slice_in_dim(row, k, k + 1, 1, 0), (0,))
        y = squeeze(slice_in_dim(w, k, k + 1, 1, 0), (0,))
        c, s = cond(eq(y, full((), 0, dt)),
                    lambda x, y: (full((), 1, dt), full((), 0, dt)), rotation, x, y)
        new_row = sub(mul(c, row), mul(s, w))
        w = add(mul(c, w), mul(s, row))
        r = dynamic_update_index_in_dim(r, new_row, k, 0)
    return r


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
    dt = np.dtype(aval_of_value(x).dtype)
    if name == "RFFT" and dt.name not in ("float32", "float64"):
        raise ValueError(f"RFFT input must be float32 or float64, got {dt.name}")  # (JAX's)
    return _bind(L.FftOp, x, fft_type=name, fft_lengths=tuple(int(n) for n in fft_lengths))


# (JAX's QDWH and TPU SVD, built from the functions above: linalg_tpu imports this module)
from mjax.lax.linalg_tpu import qdwh  # noqa: E402
