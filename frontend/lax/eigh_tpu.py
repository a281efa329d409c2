"""JAX's TPU eigh of matrices larger than XLA's Jacobi solver takes (256): the QDWH-based
spectral divide and conquer of Nakatsukasa and Higham (2013) that JAX's TPU lowering of
eigh runs (jax/_src/tpu/linalg/eigh.py, through `mlir.lower_fun`).

The algorithm: a Hermitian block H is split at the median of its diagonal s by the
polar factor U of H - s I (QDWH, with the block's true size traced): (I - U)/2 projects
on the eigenvectors below s, (I + U)/2 on those above, and a subspace iteration (QR)
turns the smaller projector into an isometry V, so that V^H H V holds the eigenvalues on
one side. The recursion is a loop over an explicit stack of (offset, size) blocks kept in
one N x N workspace, each block handled by a branch for a static padded size (JAX's
buckets N, N/1.98 rounded up to 32, ..., 256); blocks of at most 256 are diagonalized by
the platform's eigh (XLA's Jacobi `Eigh` on a TPU, which leaves the eigenvalues in
place), nearly diagonal or negligible blocks are taken as diagonal. Every matmul runs at
HIGHEST precision (JAX's matmul precision 'float32' around it).

eigh stays one op (`jaxpr.eigh`, with its JVP and batching rules) until lowered for a
TPU; its lowering rule (passes/rules/linalg_tpu.py) expands it into `eigh_tpu` lowered
for a TPU (registered in linalg_tpu.py). Run on the CPU, where LAPACK's eigh sorts its
eigenvalues, the algorithm is right only for blocks whose padding (zero eigenvalues)
sorts after the block's own: negative definite matrices, or termination_size=1.
"""
from __future__ import annotations

import functools

import numpy as np

from mjax.specs import dtypes
from mjax.tracing import registration
from mjax.tracing.core import aval_of_value
from mjax.lax.control_flow import cond, map as lax_map, switch, while_loop
from mjax.lax import elementwise as E
from mjax.lax.elementwise import (add, as_array, broadcasted_iota, conj, convert_element_type,
                                  eq, full, mul, select, sub)
from mjax.lax.indexing import (GatherDimensionNumbers, dynamic_index_in_dim, dynamic_slice,
                               dynamic_update_index_in_dim, dynamic_update_slice, gather)
from mjax.lax.linalg import _mT, eigh, qr
from mjax.lax.reduce import argmin, reduce_sum
from mjax.lax.sorting import sort, sort_key_val
from mjax.lax.shapes import broadcast_in_dim, concatenate, expand_dims, pad, reshape, slice
from mjax.lax.linalg_tpu import (_H, _eye, _frobenius, _mm, _qdwh_tpu, _take, _take_columns,
                                 lowered_for_tpu, mask_to)
from mjax.passes.rules.linalg_tpu import register_expansion

TERMINATION_SIZE = 256      # (XLA's TPU Jacobi eigh takes the blocks up to this size)


def _i32(v):
    return convert_element_type(v, np.int32)


def _is_complex(x) -> bool:
    return dtypes.issubdtype(aval_of_value(x).dtype, np.complexfloating)


def _real(x):
    return E.real(x) if _is_complex(x) else x


def _padded_slice(x, starts, sizes, static_sizes, fill=0):
    """The static_sizes window of x at (traced) starts, x[starts : starts + sizes] in its
    corner and `fill` elsewhere (x is padded first, so the window never moves back)."""
    zero = full((), 0, aval_of_value(x).dtype)
    x = pad(x, zero, tuple((0, s, 0) for s in static_sizes))
    window = dynamic_slice(x, [_i32(s) for s in starts], static_sizes)
    return mask_to(window, sizes, fill)


def _padded_update(x, update, starts, sizes):
    """x with update[:sizes] written at (traced) starts; the rest of the padded update
    leaves x as it was."""
    shape = aval_of_value(x).shape
    ushape = aval_of_value(update).shape
    zero = full((), 0, aval_of_value(x).dtype)
    x = pad(x, zero, tuple((0, s, 0) for s in ushape))
    starts = [_i32(s) for s in starts]
    under = dynamic_slice(x, starts, ushape)
    x = dynamic_update_slice(x, mask_to(update, sizes, under), starts)
    return slice(x, (0,) * len(shape), shape)


def _diag_of(x):
    """x's diagonal (jnp.diag of a matrix: a gather)."""
    n = aval_of_value(x).shape[0]
    idx = broadcasted_iota(np.int32, (n,), 0)
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0, 1),
                                start_index_map=(0, 1))
    both = expand_dims(idx, (1,))
    return gather(x, concatenate([both, both], 1), dn, (1, 1))


def _diag_matrix(v):
    """The matrix with v on its diagonal (jnp.diag of a vector)."""
    n = aval_of_value(v).shape[0]
    on = eq(broadcasted_iota(np.int32, (n, n), 0), broadcasted_iota(np.int32, (n, n), 1))
    return select(on, broadcast_in_dim(v, (n, n), (0,)),
                  full((n, n), 0, aval_of_value(v).dtype))


def _column_norms(p):
    """The Euclidean norm of each row of p (jnp.linalg.norm(p, axis=1); p is Hermitian:
    its columns' norms)."""
    return E.sqrt(reduce_sum(_real(mul(p, conj(p) if _is_complex(p) else p)), (1,)))


def _argsort(v):
    """A stable ascending argsort, NaNs last (jnp.argsort)."""
    n = aval_of_value(v).shape[0]
    _, order = sort_key_val(v, broadcasted_iota(np.int32, (n,), 0), 0, True)
    return order


def _nanmedian(v):
    """The median of v's non-NaN entries, the mean of the two middle ones for an even
    count (jnp.nanmedian: its quantile 0.5 by 'midpoint')."""
    dt = aval_of_value(v).dtype
    nan = E.ne(v, v)
    v = sort(select(nan, full(aval_of_value(v).shape, np.nan, dt), v), 0)
    count = reduce_sum(convert_element_type(E.not_(E.ne(v, v)), dt), (0,))
    last = sub(count, full((), 1, dt))
    q = mul(full((), 0.5, dt), last)
    zero = full((), 0, dt)
    low = _i32(E.max(zero, E.min(E.floor(q), last)))
    high = _i32(E.max(zero, E.min(E.ceil(q), last)))
    lo = dynamic_index_in_dim(v, low, 0, keepdims=False)
    hi = dynamic_index_in_dim(v, high, 0, keepdims=False)
    return mul(add(lo, hi), full((), 0.5, dt))


def _projector_subspace(p, h, n, rank, swap, max_iterations=2):
    """(V1, V2): isometries onto the range of the rank-`rank` Hermitian projector p
    (p = V1 V1^H) and onto its complement, by a subspace iteration started from p's
    `rank` largest columns, run until V2^H h V1 is negligible (swapped if `swap`)."""
    big_n = aval_of_value(p).shape[0]
    dt = aval_of_value(p).dtype
    real = dtypes.finfo(dt).dtype
    norms = mask_to(E.neg(_column_norms(p)), (n,), np.nan)
    x = mask_to(_take_columns(p, _argsort(norms)), (n, rank))
    thresh = mul(full((), 10.0 * float(dtypes.finfo(dt).eps), real), _frobenius(h))

    def orthonormalize(x):
        q, _ = qr(x, full_matrices=True)
        v1 = mask_to(q, (n, rank))
        v2 = _padded_slice(q, (0, rank), (n, sub(n, rank)), (big_n, big_n))
        return v1, v2, _frobenius(_mm(_mm(_H(v2), h), v1))

    def more(state):
        _, _, j, error = state
        return E.and_(E.lt(j, np.int32(max_iterations)), E.gt(error, thresh))

    def step(state):
        v1, _, j, _ = state
        v1, v2, error = orthonormalize(_mm(p, v1))
        return v1, v2, add(j, np.int32(1)), error

    v1, v2, error = orthonormalize(x)
    v1, v2, _, _ = while_loop(more, step, (v1, v2, full((), 1, np.int32), error))
    return (v2, v1) if swap else (v1, v2)


def _split_spectrum(h, n, split_point, v0):
    """(H_minus, V_minus, H_plus, V_plus, rank): h's eigenspaces below and above
    split_point, as the blocks V^H h V and the isometries v0 V; rank: H_minus's size."""
    big_n = aval_of_value(h).shape[0]
    dt = aval_of_value(h).dtype
    real = aval_of_value(split_point).dtype
    shift = convert_element_type(mul(split_point, _eye(big_n, real)), dt)
    u, _, _, _ = _qdwh_tpu(sub(h, shift), 10, None, n, n)
    eye = mask_to(_eye(big_n, dt), (n, n))
    p_minus = mul(full((), -0.5, dt), sub(u, eye))
    diag = select(eq(broadcasted_iota(np.int32, (big_n, big_n), 0),
                     broadcasted_iota(np.int32, (big_n, big_n), 1)),
                  _real(p_minus), full((big_n, big_n), 0, dtypes.finfo(dt).dtype))
    rank_minus = _i32(E.round(reduce_sum(diag, (0, 1)), E.RoundingMethod.TO_NEAREST_EVEN))
    p_plus = mul(full((), 0.5, dt), add(u, eye))
    rank_plus = sub(_i32(n), rank_minus)
    # (the subspace iteration on the projector of smaller rank: its QR is the cheaper)
    v_minus, v_plus = cond(
        E.lt(rank_plus, rank_minus),
        lambda: _projector_subspace(p_plus, h, n, rank_plus, True),
        lambda: _projector_subspace(p_minus, h, n, rank_minus, False))
    h_minus = _mm(_mm(_H(v_minus), h), v_minus)
    h_plus = _mm(_mm(_H(v_plus), h), v_plus)
    return h_minus, _mm(v0, v_minus), h_plus, _mm(v0, v_plus), rank_minus


def _round_up(i, n):
    return ((i + n - 1) // n) * n


def _buckets(big_n: int, termination_size: int) -> list:
    """The static block sizes the loop's branches work at: the base case's, then N and
    N/1.98, halving, rounded up to 32 (a block slightly over half never falls back to
    N's branch), as JAX's."""
    cutoff = min(big_n, termination_size)
    sizes = [cutoff]
    if big_n > termination_size:
        sizes.append(big_n)
        i = int(big_n / 1.98)
        while i > cutoff:
            sizes.append(_round_up(i, 32))
            i //= 2
    return sizes


def _eigh_work(h, termination_size: int, subset_by_index=None):
    """(the eigenvalues, unsorted, in h's dtype; the eigenvectors): the divide and conquer
    loop over a stack of blocks in an N x N workspace. With `subset_by_index` (start,
    end), a split's half whose eigenvalues' places [offset, offset + size) miss the range
    is left as it is, not pushed (JAX's should_update_range)."""
    big_n = aval_of_value(h).shape[0]
    dt = aval_of_value(h).dtype
    n = full((), big_n, np.int32)
    real = dtypes.finfo(dt).dtype
    eps = full((), float(dtypes.finfo(dt).eps), real)
    h0_norm = _frobenius(mask_to(h, (n, n)))
    # the stack of (offset, size): N + 1 slots, its height
    stack = (full((big_n + 1,), 0, np.int32), full((big_n + 1,), 0, np.int32),
             full((), 0, np.int32))

    def push(stack, offset, size):
        offsets, sizes, top = stack
        return (dynamic_update_index_in_dim(offsets, _i32(offset), top, 0),
                dynamic_update_index_in_dim(sizes, _i32(size), top, 0),
                add(top, np.int32(1)))

    stack = push(stack, full((), 0, np.int32), n)

    def base_case(size, offset, b, stack, blocks, vectors):
        block = mask_to(_padded_slice(blocks, (offset, 0), (b, b), (size, size)), (b, b))
        v = _padded_slice(vectors, (0, offset), (n, b), (big_n, size))
        vecs, vals = eigh(block, sort_eigenvalues=False)
        vecs = _mm(v, mask_to(vecs, (b, b)))
        vals = convert_element_type(mask_to(vals, (b,)), dt)
        blocks = _padded_update(blocks, expand_dims(vals, (1,)), (offset, 0), (b, 1))
        vectors = _padded_update(vectors, vecs, (0, offset), (n, b))
        return stack, blocks, vectors

    def recursive_case(size, offset, b, stack, blocks, vectors):
        block = _padded_slice(blocks, (offset, 0), (b, b), (size, size))

        def diagonal(stack, blocks, vectors):
            blocks = _padded_update(blocks, expand_dims(_diag_of(block), (1,)), (offset, 0),
                                    (b, 1))
            return stack, blocks, vectors

        def split(stack, blocks, vectors):
            v = _padded_slice(vectors, (0, offset), (n, b), (big_n, size))
            median = _nanmedian(mask_to(_diag_of(_real(block)), (b,), np.nan))
            h_minus, v_minus, h_plus, v_plus, rank = _split_spectrum(block, b, median, v)
            state = (stack, blocks, vectors)
            state = _if_in_subset(offset, add(offset, rank), state, (
                push(stack, offset, rank),
                _padded_update(blocks, h_minus, (offset, 0), (rank, rank)),
                _padded_update(vectors, v_minus, (0, offset), (n, rank))))
            stack, blocks, vectors = state
            rest, at = sub(b, rank), add(offset, rank)
            return _if_in_subset(at, add(offset, b), state, (
                push(stack, at, rest),
                _padded_update(blocks, h_plus, (at, 0), (rest, rest)),
                _padded_update(vectors, v_plus, (0, at), (n, rest))))

        # a nearly diagonal block, or one that is noise beside the input, is done
        # (clusters of eigenvalues, rank deficiency: Nakatsukasa and Higham, 5.2)
        norm = _frobenius(block)
        off_diagonal = _frobenius(sub(block, _diag_matrix(
            convert_element_type(_diag_of(_real(block)), dt))))
        done = E.or_(E.le(off_diagonal, mul(mul(full((), 5, real), eps), norm)),
                     E.lt(norm, mul(eps, h0_norm)))
        return cond(done, diagonal, split, stack, blocks, vectors)

    def _if_in_subset(start, end, old, new):
        """`new` where [start, end) meets the subset's range (always without one)."""
        if subset_by_index is None:
            return new
        lo, hi = subset_by_index
        meets = E.and_(E.lt(start, np.int32(hi)), E.gt(end, np.int32(lo)))
        return cond(meets, lambda: new, lambda: old)

    sizes = _buckets(big_n, termination_size)
    branches = [functools.partial(base_case, sizes[0])]
    branches += [functools.partial(recursive_case, s) for s in sizes[1:]]
    bucket_table = as_array(np.asarray(sizes, np.int32))

    def more(state):
        return E.ne(state[0][2], np.int32(0))

    def body(state):
        (offsets, blocksizes, top), blocks, vectors = state
        top = sub(top, np.int32(1))
        offset = dynamic_index_in_dim(offsets, top, 0, keepdims=False)
        b = dynamic_index_in_dim(blocksizes, top, 0, keepdims=False)
        # the smallest bucket that holds the block
        fits = select(E.lt(bucket_table, b),
                      full((len(sizes),), np.iinfo(np.int32).max, np.int32), bucket_table)
        choice = argmin(fits, 0, np.int32)
        return switch(choice, branches, offset, b, (offsets, blocksizes, top), blocks,
                      vectors)

    _, blocks, vectors = while_loop(more, body, (stack, h, _eye(big_n, dt)))
    return reshape(slice(blocks, (0, 0), (big_n, 1)), (big_n,)), vectors


def _check_subset(subset_by_index, big_n: int):
    """JAX's checks of subset_by_index (jax._src.tpu.linalg.eigh.eigh), its errors."""
    if len(subset_by_index) != 2:
        raise ValueError("subset_by_index must be a tuple of size 2.")
    if subset_by_index[0] >= subset_by_index[1]:
        raise ValueError("Got empty index range in subset_by_index.")
    if subset_by_index[0] < 0:
        raise ValueError("Indices in subset_by_index must be non-negative.")
    if subset_by_index[1] > big_n:
        raise ValueError("Index in subset_by_index[1] exceeds matrix size.")


def eigh_qdwh(h, *, sort_eigenvalues: bool = True, termination_size: int = TERMINATION_SIZE,
              subset_by_index=None):
    """(eigenvalues, eigenvectors) of one Hermitian matrix (its lower triangle taken as
    given: the caller reflects it) by JAX's TPU divide and conquer; blocks of at most
    `termination_size` go to the platform's eigh. With `subset_by_index` (start, end),
    the eigenvalues start..end-1 in ascending order and their vectors (sorted and sliced,
    as JAX's, whenever a subset is given). JAX: jax._src.tpu.linalg.eigh.eigh."""
    big_n = aval_of_value(h).shape[-1]
    if subset_by_index is not None:
        subset_by_index = tuple(int(i) for i in subset_by_index)
        _check_subset(subset_by_index, big_n)
    some = subset_by_index is not None
    if big_n <= termination_size:
        vecs, vals = eigh(h, lower=True, sort_eigenvalues=sort_eigenvalues or some,
                          symmetrize_input=False)
        if some:
            lo, hi = subset_by_index
            vals = slice(vals, (lo,), (hi,))
            vecs = slice(vecs, (0, lo), (big_n, hi))
        return vals, vecs
    vals, vecs = _eigh_work(h, int(termination_size), subset_by_index)
    vals = mask_to(_real(vals), (big_n,), np.nan)
    if sort_eigenvalues or some:
        order = _argsort(vals)
        if some:
            order = slice(order, (subset_by_index[0],), (subset_by_index[1],))
        vals, vecs = _take(vals, order), _take_columns(vecs, order)
    return vals, vecs


def _reflect(x, lower: bool):
    """The Hermitian matrix x's `lower` (else upper) triangle stands for."""
    n = aval_of_value(x).shape[-1]
    rows, cols = (broadcasted_iota(np.int32, (n, n), d) for d in (0, 1))
    keep = E.le(cols, rows) if lower else E.ge(cols, rows)
    if not _is_complex(x):
        return select(keep, x, _mT(x))
    re = E.real(x)
    re = select(keep, re, _mT(re))
    strict = E.lt(cols, rows) if lower else E.gt(cols, rows)
    im = E.imag(x)
    im = select(strict, im, full((n, n), 0, aval_of_value(im).dtype))
    im = select(keep, im, E.neg(_mT(im)))
    return E.complex(re, im)


def _eigh_tpu_one(x, *, lower: bool, sort_eigenvalues: bool, termination_size: int,
                  subset_by_index=None):
    if aval_of_value(x).ndim > 2:       # (batch axes: a loop over them, as JAX's lax.map)
        return lax_map(functools.partial(_eigh_tpu_one, lower=lower,
                                         sort_eigenvalues=sort_eigenvalues,
                                         termination_size=termination_size,
                                         subset_by_index=subset_by_index), x)
    vals, vecs = eigh_qdwh(_reflect(x, lower), sort_eigenvalues=sort_eigenvalues,
                           termination_size=termination_size,
                           subset_by_index=subset_by_index)
    return vecs, vals


def eigh_tpu(x, *, lower: bool = True, sort_eigenvalues: bool = True,
             termination_size: int = TERMINATION_SIZE, subset_by_index=None):
    """(eigenvectors, eigenvalues) of `x` (leading batch axes looped over): the eigh op's
    TPU lowering for matrices larger than `termination_size`, or with a subset_by_index
    other than the whole range."""
    if subset_by_index is not None:
        subset_by_index = tuple(int(i) for i in subset_by_index)
    return _eigh_tpu_one(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                         termination_size=int(termination_size),
                         subset_by_index=subset_by_index)


@functools.lru_cache(maxsize=None)
def eigh_tpu_jit(lower: bool, sort_eigenvalues: bool,
                 termination_size: int = TERMINATION_SIZE, subset_by_index=None):
    return registration.JIT(functools.partial(eigh_tpu, lower=lower,
                                              sort_eigenvalues=sort_eigenvalues,
                                              termination_size=termination_size,
                                              subset_by_index=subset_by_index))


def _eigh_tpu_lowered(aval, lower: bool, sort_eigenvalues: bool, subset_by_index=None):
    """eigh_tpu of an operand of type `aval`, lowered for a TPU: what the eigh op expands
    into there past 256 or with a subset (JAX: lower_fun(_eigh_qdwh_impl))."""
    subset = None if subset_by_index is None else tuple(int(i) for i in subset_by_index)
    return lowered_for_tpu(eigh_tpu_jit(bool(lower), bool(sort_eigenvalues),
                                        TERMINATION_SIZE, subset), aval)


register_expansion("eigh", _eigh_tpu_lowered)

__all__ = ["TERMINATION_SIZE", "eigh_qdwh", "eigh_tpu", "eigh_tpu_jit"]
