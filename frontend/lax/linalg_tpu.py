"""JAX's TPU algorithms built from lax ops: the QDWH polar decomposition (`qdwh`, JAX's
jax/_src/tpu/linalg/qdwh.py, public as mjax.lax.linalg.qdwh on every platform) and the
QDWH-based SVD that JAX's TPU lowering of svd runs (jax/_src/tpu/linalg/svd.py).

JAX lowers svd for a TPU with `mlir.lower_fun`: svd stays one primitive through jvp,
vmap and transpose, and its algorithm is expanded only when lowering. mjax does the same:
`jaxpr.svd` keeps its rules (passes/rules/linalg.py), and its TPU lowering rule
(passes/rules/linalg_tpu.py) asks this module, through the expansion registered below,
for `svd_tpu` lowered for a TPU, whose StableHLO it copies in the op's place.

The SVD: a QDWH polar decomposition a = u h (its weighted Halley steps in two fori_loops
over tables of coefficients, the QR form for the first, ill-conditioned ones, then
Halley's method in a while loop until converged), then the eigendecomposition of h by
XLA's Jacobi `Eigh`, sorted descending. Every matmul runs at HIGHEST precision (JAX's
matmul precision 'float32' around it).
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from mjax.specs import dtypes
from mjax.tracing import registration
from mjax.tracing.core import aval_of_value
from mjax.lax.control_flow import fori_loop, while_loop
from mjax.lax.dot import dot_general
from mjax.lax.precision import Precision
from mjax.lax import elementwise as E
from mjax.lax.elementwise import (add, as_array, broadcasted_iota, conj, convert_element_type,
                                  div, eq, full, mul, rsqrt, select, sub)
from mjax.lax.indexing import (GatherDimensionNumbers, dynamic_index_in_dim,
                               dynamic_slice_in_dim, dynamic_update_slice_in_dim, gather)
from mjax.lax.linalg import (_float_operands, _mT, cholesky, eigh, qr,  # (cycle of two:
                             triangular_solve)                          # linalg re-exports qdwh)
from mjax.lax.reduce import reduce_and, reduce_max, reduce_sum
from mjax.lax.sorting import sort_key_val
from mjax.lax.shapes import broadcast_to, concatenate, expand_dims, pad, rev, slice
from mjax.tracing.lowering import lowering_for_platform
from mjax.passes.rules.linalg_tpu import register_expansion
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct


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


# ---- JAX's TPU SVD (jax/_src/tpu/linalg/svd.py) -------------------------------------------
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


def mask_to(x, dims, alternative=0):
    """x where every index i along axis k is below dims[k] (a traced or static size;
    None: the whole axis), `alternative` (a scalar or an array of x's shape) elsewhere:
    the padded-matrix masks of JAX's TPU QDWH and eigh."""
    shape = aval_of_value(x).shape
    keep = None
    for axis, d in enumerate(dims):
        if d is not None:
            below = E.lt(broadcasted_iota(np.int32, shape, axis),
                         convert_element_type(d, np.int32))
            keep = below if keep is None else E.and_(keep, below)
    if keep is None:
        return x
    dt = aval_of_value(x).dtype
    if isinstance(alternative, (int, float, complex, np.number)):
        alternative = full(shape, alternative, dt)
    return select(keep, x, alternative)


def _halley_qr_step(u, params, dt, m=None, n=None):
    """u <- e u + (a - e)/sqrt(c) Q1 Q2^H, [Q1; Q2] the thin QR of [sqrt(c) u; I]. With
    traced sizes (m, n), u is an m x n matrix padded with zeros: Q1 and Q2 are masked."""
    scaled_gap, sqrt_c, e = params
    big_m, big_n = aval_of_value(u).shape
    # [sqrt(c) u; I] as JAX builds it: padded with zero rows, then I written in below
    y = pad(mul(sqrt_c, u), full((), 0, dt), ((0, big_n, 0), (0, 0, 0)))
    y = dynamic_update_slice_in_dim(y, _eye(big_n, dt), big_m if m is None else m, 0)
    q, _ = qr(y, full_matrices=False)
    q1 = slice(q, (0, 0), (big_m, big_n))
    if m is None:
        q2 = _H(dynamic_slice_in_dim(q, big_m, big_n, 0))
    else:
        q1 = mask_to(q1, (m, n))
        q2 = _H(mask_to(dynamic_slice_in_dim(q, m, big_n, 0), (n, n)))
    return add(mul(e, u), mul(scaled_gap, _mm(q1, q2)))


def _halley_cholesky_step(u, params, dt, n=None):
    """u <- e u + (a - e) u (c u^H u + I)^-1, through the Cholesky factor y y^H (with a
    traced size n, the padded corner of c u^H u + I is I's)."""
    gap, c, e = params
    big_n = aval_of_value(u).shape[1]
    x = add(mul(c, _mm(_H(u), u)), _eye(big_n, dt))
    if n is not None:
        x = mask_to(x, (n, n), _eye(big_n, dt))
    y = cholesky(x, symmetrize_input=False)
    z = _conj_if_complex(triangular_solve(y, _mT(u), left_side=True, lower=True,
                                          conjugate_a=True))
    z = _H(triangular_solve(y, z, left_side=True, lower=True, transpose_a=True,
                            conjugate_a=True))
    return add(mul(e, u), mul(gap, z))


def _qdwh_tpu(x, max_iterations: int = 10, eps: float | None = None, m=None, n=None):
    """(u, h, iterations, converged): JAX's QDWH of one matrix, M >= N (lax.linalg.qdwh,
    which its TPU SVD runs; jax/_src/tpu/linalg/qdwh.py). With traced sizes (m, n) (its
    TPU eigh's), only x[:m, :n] counts: x is masked to it and so is every step."""
    if m is not None:
        x = mask_to(x, (m, n))
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

    def iterate(u, coefs, step, test_convergence, sizes):
        if not coefs:
            return u, full((), True, np.bool_)
        table = convert_element_type(as_array(np.asarray(coefs, real)), dt)

        def body(k, state):
            u, _ = state
            row = dynamic_index_in_dim(table, k, 0, keepdims=False)
            params = [dynamic_index_in_dim(row, i, 0, keepdims=False) for i in range(3)]
            new = step(u, params, dt, *sizes)
            going = (E.gt(_frobenius(sub(new, u)), tol_norm) if test_convergence
                     else full((), True, np.bool_))
            return new, going
        return fori_loop(0, len(coefs), body, (u, full((), True, np.bool_)))

    u, _ = iterate(u, qr_form, _halley_qr_step, False, () if m is None else (m, n))
    u, not_converged = iterate(u, cholesky_form, _halley_cholesky_step, True,
                               () if m is None else (n,))
    halley = (3 - 1 / 3, 3.0, 1 / 3)     # as l -> 1, (a, b, c) -> (3, 1, 3)

    def more(state):
        k, _, going = state
        return E.and_(going, E.lt(k, np.int32(max_iterations)))

    def halley_step(state):
        k, u, _ = state
        new = _halley_cholesky_step(u, [convert_element_type(v, dt) for v in halley], dt,
                                    n)
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


def _svd_tall_and_square_tpu(a, compute_uv: bool, subset_by_index=None):
    """JAX's TPU SVD of one matrix with M >= N: polar decomposition a = u_p h, then
    h = v diag(s) v^H by eigh (of the eigenvalues `subset_by_index` only, in eigh's
    ascending numbering), singular values in descending order."""
    dt = aval_of_value(a).dtype
    n = aval_of_value(a).shape[1]
    u_p, h, _, _ = _qdwh_tpu(a, 10)
    v, s = eigh(h, sort_eigenvalues=False, subset_by_index=subset_by_index)
    d = aval_of_value(s).shape[0]      # (n, or the subset's size)
    s = E.max(s, full((), 0, aval_of_value(s).dtype))
    iota = broadcasted_iota(np.int32, (d,), 0)     # a stable descending argsort
    _, order = sort_key_val(rev(s, (0,)), rev(iota, (0,)), 0, True)
    order = rev(order, (0,))
    s_out = _take(s, order)
    if not compute_uv:
        return s_out
    v_out = _take_columns(v, order)
    u_out = _mm(u_p, v_out)
    eps = float(dtypes.finfo(dt).eps)
    last = dynamic_index_in_dim(s_out, d - 1, 0, keepdims=False)
    first = dynamic_index_in_dim(s_out, 0, 0, keepdims=False)
    rank_deficient = E.le(last, mul(convert_element_type(n * eps, aval_of_value(s).dtype),
                                    first))

    def correct(state):         # re-orthonormalize u (Nakatsukasa and Higham 2013, 5.5)
        u, _ = state
        q, r = qr(u, full_matrices=False)
        diag_r = reduce_sum(mul(r, _eye(d, dt)), (0,))
        if dtypes.issubdtype(dt, np.complexfloating):
            diag_r = E.real(diag_r)
        signs = select(E.ge(diag_r, full((), 0, aval_of_value(diag_r).dtype)),
                       full((d,), 1, np.int32), full((d,), -1, np.int32))
        diag = select(eq(broadcasted_iota(np.int32, (d, d), 0),
                         broadcasted_iota(np.int32, (d, d), 1)),
                      broadcast_to(expand_dims(signs, (0,)), (d, d)),
                      full((d, d), 0, np.int32))
        return (dot_general(q, diag, (((1,), (0,)), ((), ())), precision=Precision.HIGHEST,
                            preferred_element_type=dt), full((), False, np.bool_))
    u_out, _ = while_loop(lambda state: state[1], correct, (u_out, rank_deficient))
    return u_out, s_out, v_out


def _eigh_subset(subset_by_index, m: int, n: int, full_matrices: bool):
    """The eigh subset JAX's TPU SVD asks for singular values `subset_by_index` (numbered
    from the largest), after its checks, their errors JAX's."""
    if subset_by_index is None:
        return None
    if len(subset_by_index) != 2:
        raise ValueError("subset_by_index must be a tuple of size 2.")
    start, end = (operator.index(i) for i in subset_by_index)
    if start >= end:
        raise ValueError("Got empty index range in subset_by_index.")
    if start < 0:
        raise ValueError("Indices in subset_by_index must be non-negative.")
    rank = min(m, n)
    if end > rank:
        raise ValueError("Index in subset_by_index[1] exceeds matrix size.")
    if full_matrices and (start, end) != (0, rank):
        raise ValueError("full_matrices and subset_by_index cannot be both be set.")
    return (rank - end, rank - start)


def _svd_tpu_one(a, *, full_matrices: bool, compute_uv: bool, subset_by_index=None):
    """JAX's TPU SVD of one matrix (jax/_src/tpu/linalg/svd.py svd)."""
    m, n = aval_of_value(a).shape
    subset = _eigh_subset(subset_by_index, m, n, full_matrices)
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
        return _svd_tall_and_square_tpu(a, False, subset)
    u, s, v = _svd_tall_and_square_tpu(a, True, subset)
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


def svd_tpu(x, *, full_matrices: bool, compute_uv: bool, subset_by_index=None):
    """JAX's TPU SVD of `x` (leading batch axes vmapped, as JAX's): (u, s, vh), or s;
    `subset_by_index`: of the singular values, the largest first."""
    subset = None if subset_by_index is None else tuple(subset_by_index)
    return _svd_tpu_batched(bool(full_matrices), bool(compute_uv), subset,
                            aval_of_value(x).ndim - 2)(x)


@functools.lru_cache(maxsize=None)
def _svd_tpu_batched(full_matrices: bool, compute_uv: bool, subset_by_index,
                     batch_axes: int):
    # (one function per setting, kept: traces are cached by the function)
    fn = functools.partial(_svd_tpu_one, full_matrices=full_matrices, compute_uv=compute_uv,
                           subset_by_index=subset_by_index)
    for _ in range(batch_axes):    # batch axes: vmapped, as JAX's
        fn = registration.VMAP(fn)
    return fn


@functools.lru_cache(maxsize=None)
def _svd_tpu_jit(full_matrices: bool, compute_uv: bool, subset_by_index=None):
    return registration.JIT(functools.partial(svd_tpu, full_matrices=full_matrices,
                                              compute_uv=compute_uv,
                                              subset_by_index=subset_by_index))


def lowered_for_tpu(jitted, aval):
    """`jitted` traced for an operand of type `aval` and lowered for a TPU: the StableHLO
    module an op's TPU lowering copies in its place (JAX: mlir.lower_fun), and the values
    of the arrays it captured (its trailing arguments)."""
    with lowering_for_platform("tpu"):
        traced = jitted.trace(ShapeDtypeStruct(aval.shape, aval.dtype))
        module = traced.lower().compiler_ir()
    return module, [np.asarray(c) for c in traced.jaxpr.consts]


def _svd_tpu_lowered(aval, full_matrices: bool, compute_uv: bool, subset_by_index=None):
    """svd_tpu of an operand of type `aval`, lowered for a TPU (JAX: lower_fun(_svd_tpu))."""
    return lowered_for_tpu(_svd_tpu_jit(full_matrices, compute_uv, subset_by_index), aval)


register_expansion("svd", _svd_tpu_lowered)

__all__ = ["lowered_for_tpu", "mask_to", "qdwh", "svd_tpu"]
