"""BCOO ops beyond the layout: dot_general (sparse @ dense, dense @ sparse, sparse @
sparse), elementwise products, reductions, slicing, broadcasting, concatenation,
reshapes, gather and convolution. The contractions work on the flat layout (no batch or
dense dimensions): gather the dense operand at the stored indices, multiply, scatter-add
into the result; the rest move index columns. JAX: jax.experimental.sparse.bcoo."""
from __future__ import annotations

import math

import numpy as _onp

from mjax import lax
from mjax import numpy as jnp
from mjax.experimental.sparse._base import is_traced, ravel_keys, unravel_keys
from mjax.experimental.sparse.bcoo import (BCOO, bcoo_extract, bcoo_fromdense, bcoo_todense,
                                           to_flat)


def _dense_to_bcoo(out, nse_bound, *like):
    """A dense result back as a BCOO (exact nse for concrete values, else a bound)."""
    nse = max(1, min(int(nse_bound), out.size)) if is_traced(out, *like) else None
    return bcoo_fromdense(out, nse=nse)


def _valid_flat(flat: BCOO):
    """The flat array with padding elements' data set to zero, and their validity."""
    _, ok = ravel_keys(flat.indices, flat.shape)
    return flat.data * ok.astype(flat.dtype), ok


def _sparse_dense(flat: BCOO, rhs, dn, out_dtype):
    (lc, rc), (lb, rb) = dn
    lfree = [d for d in range(flat.ndim) if d not in lc and d not in lb]
    rfree = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    rhs_t = rhs.transpose(tuple(rb) + tuple(rc) + tuple(rfree))
    idx = flat.indices
    picked_dims = tuple(lb) + tuple(lc)
    if picked_dims:
        gathered = rhs_t.at[tuple(idx[:, d] for d in picked_dims)].get(
            mode="fill", fill_value=0)
    else:
        gathered = jnp.broadcast_to(rhs_t, (flat.nse,) + rhs_t.shape)
    contrib = (flat.data.reshape((-1,) + (1,) * (gathered.ndim - 1)) * gathered)
    contrib = contrib.astype(out_dtype)
    out_shape = tuple(flat.shape[d] for d in tuple(lb) + tuple(lfree)) + \
        tuple(rhs.shape[d] for d in rfree)
    placed = tuple(lb) + tuple(lfree)
    if not placed:
        return contrib.sum(0)
    return jnp.zeros(out_shape, out_dtype).at[tuple(idx[:, d] for d in placed)].add(
        contrib, mode="drop")


def _sparse_sparse(a: BCOO, b: BCOO, dn, dtype) -> BCOO:
    """Every pair of stored elements whose contracting and batch indices agree gives one
    product at (batch, lhs free, rhs free); the other pairs become padding (JAX's result
    has nse_a * nse_b elements too)."""
    (lc, rc), (lb, rb) = dn
    lfree = [d for d in range(a.ndim) if d not in lc and d not in lb]
    rfree = [d for d in range(b.ndim) if d not in rc and d not in rb]
    _, ok_a = ravel_keys(a.indices, a.shape)
    _, ok_b = ravel_keys(b.indices, b.shape)
    match = ok_a[:, None] & ok_b[None, :]
    for i, j in zip(tuple(lc) + tuple(lb), tuple(rc) + tuple(rb)):
        match = match & (a.indices[:, i][:, None] == b.indices[:, j][None, :])
    data = (a.data[:, None] * b.data[None, :]).astype(dtype) * match.astype(dtype)
    n = a.nse * b.nse
    cols = [jnp.broadcast_to(a.indices[:, d][:, None], (a.nse, b.nse)) for d in
            tuple(lb) + tuple(lfree)]
    cols += [jnp.broadcast_to(b.indices[:, d][None, :], (a.nse, b.nse)) for d in rfree]
    shape = tuple(a.shape[d] for d in tuple(lb) + tuple(lfree)) + \
        tuple(b.shape[d] for d in rfree)
    if not cols:
        return BCOO((data.reshape(n), jnp.zeros((n, 0), a.indices.dtype)), shape=())
    idx = jnp.stack(cols, axis=-1)
    idx = jnp.where(match[..., None], idx, jnp.array(list(shape), idx.dtype))
    return BCOO((data.reshape(n), idx.reshape(n, len(shape))), shape=shape)


def _check_dn(lshape, rshape, dn):
    (lc, rc), (lb, rb) = dn
    if len(lc) != len(rc) or len(lb) != len(rb) or \
            any(lshape[a] != rshape[b] for a, b in zip(tuple(lc) + tuple(lb),
                                                      tuple(rc) + tuple(rb))):
        raise TypeError(f"bcoo_dot_general: shapes {tuple(lshape)} and {tuple(rshape)} do "
                        f"not match for dimension_numbers {dn}")


def bcoo_dot_general(lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None, out_sharding=None):
    """lax.dot_general with a BCOO operand (either or both): dense result, or a BCOO when
    both are sparse. JAX: jax.experimental.sparse.bcoo_dot_general."""
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    ls, rs = isinstance(lhs, BCOO), isinstance(rhs, BCOO)
    if not ls and not rs:
        return lax.dot_general(lhs, rhs, dn, precision=precision,
                               preferred_element_type=preferred_element_type)
    lhs = lhs if ls else jnp.asarray(lhs)
    rhs = rhs if rs else jnp.asarray(rhs)
    _check_dn(lhs.shape, rhs.shape, dn)
    dtype = preferred_element_type or jnp.result_type(lhs.dtype, rhs.dtype)
    if ls:
        if not rs:
            return _sparse_dense(to_flat(lhs), rhs, dn, dtype)
        return _sparse_sparse(to_flat(lhs), to_flat(rhs), dn, dtype)
    swapped = ((dn[0][1], dn[0][0]), (dn[1][1], dn[1][0]))
    out = _sparse_dense(to_flat(rhs), lhs, swapped, dtype)
    nb = len(lb)
    n_rfree = rhs.ndim - len(rc) - len(rb)
    n_lfree = out.ndim - nb - n_rfree
    return out.transpose(tuple(range(nb)) + tuple(range(nb + n_rfree, out.ndim)) +
                         tuple(range(nb, nb + n_rfree))) if n_lfree or n_rfree else out


def bcoo_dot_general_sampled(A, B, indices, *, dimension_numbers):
    """dot_general(A, B) at the given BCOO indices only (the data of the result). JAX:
    jax.experimental.sparse.bcoo_dot_general_sampled."""
    out = lax.dot_general(A, B, dimension_numbers)
    indices = jnp.asarray(indices)
    n_batch = indices.ndim - 2
    n_dense = out.ndim - n_batch - indices.shape[-1]
    like = BCOO((jnp.zeros(indices.shape[:-1] + out.shape[out.ndim - n_dense:], out.dtype),
                 indices), shape=out.shape)
    return bcoo_extract(like, out).data


def bcoo_multiply_sparse(lhs: BCOO, rhs: BCOO) -> BCOO:
    """The elementwise product of two BCOO arrays of one shape (stored where lhs stores).
    JAX: jax.experimental.sparse.bcoo_multiply_sparse."""
    if lhs.shape != rhs.shape:
        lhs, rhs = _broadcast_pair(lhs, rhs)
    fa, fb = to_flat(lhs), to_flat(rhs)
    if fa.nse * fb.nse * max(1, lhs.ndim) >= lhs.size:     # (the dense form is smaller)
        other = bcoo_extract(lhs, bcoo_todense(rhs))
        return BCOO((lhs.data * other.data, other.indices), shape=lhs.shape)
    # rhs's value at each of lhs's stored elements: the sum of rhs's matching elements
    _, ok_b = ravel_keys(fb.indices, fb.shape)
    match = (fa.indices[:, None, :] == fb.indices[None, :, :]).all(-1) & ok_b[None, :]
    vals = (match.astype(fb.dtype) * fb.data[None, :]).sum(1)
    data, idx = _full_batch(lhs)
    full = lhs.shape[:lhs.n_batch] + (lhs.nse,) + lhs.shape[lhs.ndim - lhs.n_dense:]
    data = jnp.broadcast_to(data, full)
    return BCOO((data * vals.reshape(full).astype(data.dtype), idx), shape=lhs.shape)


def bcoo_multiply_dense(sp_mat: BCOO, v) -> BCOO:
    """A BCOO array times a dense array (broadcast to its shape), stored where it stores.
    JAX: jax.experimental.sparse.bcoo_multiply_dense."""
    v = jnp.asarray(v)
    if v.ndim == 0:
        return BCOO((sp_mat.data * v, sp_mat.indices), shape=sp_mat.shape,
                    indices_sorted=sp_mat.indices_sorted,
                    unique_indices=sp_mat.unique_indices)
    shape = jnp.broadcast_shapes(sp_mat.shape, v.shape)
    if shape != sp_mat.shape:
        sp_mat = bcoo_broadcast_in_dim(sp_mat, shape=shape, broadcast_dimensions=tuple(
            range(len(shape) - sp_mat.ndim, len(shape))))
    other = bcoo_extract(sp_mat, jnp.broadcast_to(v, shape))
    return BCOO((sp_mat.data * other.data, other.indices), shape=shape)


def _broadcast_pair(a: BCOO, b: BCOO):
    shape = jnp.broadcast_shapes(a.shape, b.shape)
    out = []
    for m in (a, b):
        out.append(m if m.shape == shape else bcoo_broadcast_in_dim(
            m, shape=shape, broadcast_dimensions=tuple(range(len(shape) - m.ndim,
                                                             len(shape)))))
    return out


def bcoo_add(a: BCOO, b: BCOO) -> BCOO:
    """The sum of two BCOO arrays: their stored elements side by side."""
    if a.shape != b.shape:
        a, b = _broadcast_pair(a, b)
    if (a.n_batch, a.n_dense) != (b.n_batch, b.n_dense):
        a, b = to_flat(a), to_flat(b)
    nb = a.n_batch
    batch = jnp.broadcast_shapes(a.data.shape[:nb], a.indices.shape[:nb],
                                 b.data.shape[:nb], b.indices.shape[:nb])

    def full(x):
        return jnp.broadcast_to(x, batch + x.shape[nb:])
    data = jnp.concatenate([full(a.data), full(b.data).astype(a.dtype)], axis=nb)
    idx = jnp.concatenate([full(a.indices), full(b.indices).astype(a.indices.dtype)], axis=nb)
    dtype = jnp.result_type(a.dtype, b.dtype)
    return BCOO((data.astype(dtype), idx), shape=a.shape)


def _full_batch(mat: BCOO):
    """data and indices with their batch dimensions broadcast to the array's."""
    nb = mat.n_batch
    batch = tuple(mat.shape[:nb])
    return (jnp.broadcast_to(mat.data, batch + mat.data.shape[nb:]),
            jnp.broadcast_to(mat.indices, batch + mat.indices.shape[nb:]))


def _merge_batch_into_nse(x, axis: int, nb: int):
    """Batch dimension `axis` of x moved next to the nse dimension (at nb) and merged."""
    x = jnp.moveaxis(x, axis, nb - 1)
    return x.reshape(x.shape[:nb - 1] + (x.shape[nb - 1] * x.shape[nb],) + x.shape[nb + 1:])


def bcoo_reduce_sum(mat: BCOO, *, axes) -> BCOO:
    """The sum over `axes`, as a BCOO of the same kinds of dimensions: summed dense
    dimensions sum the data, summed sparse ones drop index columns, summed batch ones join
    the stored elements. JAX: jax.experimental.sparse.bcoo_reduce_sum."""
    axes = sorted({int(a) % mat.ndim if mat.ndim else int(a) for a in axes})
    nb, ns = mat.n_batch, mat.n_sparse
    sparse = mat.shape[nb:nb + ns]
    data, idx = _full_batch(mat)
    ok = jnp.ones(idx.shape[:-1], bool)
    for k, size in enumerate(sparse):
        ok = ok & (idx[..., k] >= 0) & (idx[..., k] < size)
    data = data * ok.reshape(ok.shape + (1,) * mat.n_dense).astype(data.dtype)
    if ns:
        idx = jnp.where(ok[..., None], idx, jnp.array(list(sparse), idx.dtype))
    dense_axes = tuple(nb + 1 + a - nb - ns for a in axes if a >= nb + ns)
    if dense_axes:
        data = data.sum(axis=dense_axes)
    kept = [k for k in range(ns) if nb + k not in axes]
    if len(kept) != ns:
        idx = idx[..., _onp.asarray(kept, _onp.int32)]
    for b in sorted((a for a in axes if a < nb), reverse=True):
        data, idx = _merge_batch_into_nse(data, b, nb), _merge_batch_into_nse(idx, b, nb)
        nb -= 1
    shape = tuple(s for d, s in enumerate(mat.shape) if d not in axes)
    return BCOO((data, idx), shape=shape)


def bcoo_slice(mat: BCOO, *, start_indices, limit_indices, strides=None) -> BCOO:
    """lax.slice of a BCOO array (stored elements outside become padding). JAX:
    jax.experimental.sparse.bcoo_slice."""
    n = mat.ndim
    start, limit = [int(s) for s in start_indices], [int(s) for s in limit_indices]
    strides = [1] * n if strides is None else [int(s) for s in strides]
    if not (len(start) == len(limit) == len(strides) == n) or any(
            not 0 <= s <= l <= d or st < 1
            for s, l, d, st in zip(start, limit, mat.shape, strides)):
        raise ValueError(f"bcoo_slice: start {start}, limit {limit}, strides {strides} do "
                         f"not fit shape {mat.shape}")
    nb, ns = mat.n_batch, mat.n_sparse
    shape = tuple(max(0, -(-(l - s) // st)) for s, l, st in zip(start, limit, strides))
    sl = [slice(s, l, st) for s, l, st in zip(start, limit, strides)]
    batch = mat.data.shape[:nb] if nb else ()
    full_batch = tuple(mat.shape[:nb])
    data = jnp.broadcast_to(mat.data, full_batch + mat.data.shape[nb:])
    idx = jnp.broadcast_to(mat.indices, full_batch + mat.indices.shape[nb:])
    del batch
    data = data[tuple(sl[:nb]) + (slice(None),) + tuple(sl[nb + ns:])]
    idx = idx[tuple(sl[:nb])]
    return _shift_sparse(BCOO((data, idx), shape=shape[:nb] + mat.shape[nb:nb + ns] +
                              shape[nb + ns:]), start[nb:nb + ns], strides[nb:nb + ns],
                         shape[nb:nb + ns])


def _shift_sparse(mat: BCOO, start, strides, sizes) -> BCOO:
    """Sparse index columns moved by -start, divided by strides, out of [0, size) (or off
    the stride) made padding."""
    nb = mat.n_batch
    idx = mat.indices
    ok = jnp.ones(idx.shape[:-1], bool)
    cols = []
    for k, (s, st, size) in enumerate(zip(start, strides, sizes)):
        rel = idx[..., k] - s
        ok = ok & (rel >= 0) & (rel < size * st) & (rel % st == 0)
        cols.append(rel // st)
    sizes_arr = jnp.array(list(sizes), idx.dtype) if sizes else None
    new_idx = jnp.where(ok[..., None], jnp.stack(cols, axis=-1), sizes_arr) if cols else idx
    mask = ok.reshape(ok.shape + (1,) * mat.n_dense).astype(mat.dtype)
    data = mat.data * mask
    shape = mat.shape[:nb] + tuple(sizes) + mat.shape[nb + len(sizes):]
    return BCOO((data, new_idx.astype(idx.dtype)), shape=shape)


def bcoo_dynamic_slice(mat: BCOO, start_indices, slice_sizes) -> BCOO:
    """lax.dynamic_slice of a BCOO array (starts clamped as lax clamps them). JAX:
    jax.experimental.sparse.bcoo_dynamic_slice."""
    n = mat.ndim
    sizes = [int(s) for s in slice_sizes]
    if len(start_indices) != n or len(sizes) != n or any(
            not 0 <= s <= d for s, d in zip(sizes, mat.shape)):
        raise ValueError(f"bcoo_dynamic_slice: {len(start_indices)} starts and sizes "
                         f"{sizes} do not fit shape {mat.shape}")
    starts = [jnp.clip(jnp.asarray(s).astype(mat.indices.dtype), 0, d - z)
              for s, d, z in zip(start_indices, mat.shape, sizes)]
    nb, ns = mat.n_batch, mat.n_sparse
    full_batch = tuple(mat.shape[:nb])
    data = jnp.broadcast_to(mat.data, full_batch + mat.data.shape[nb:])
    idx = jnp.broadcast_to(mat.indices, full_batch + mat.indices.shape[nb:])
    zero = jnp.zeros((), mat.indices.dtype)
    data = lax.dynamic_slice(data, starts[:nb] + [zero] + starts[nb + ns:],
                             sizes[:nb] + [mat.nse] + sizes[nb + ns:])
    idx = lax.dynamic_slice(idx, starts[:nb] + [zero, zero], sizes[:nb] + [mat.nse, ns])
    part = BCOO((data, idx), shape=tuple(sizes[:nb]) + mat.shape[nb:nb + ns] +
                tuple(sizes[nb + ns:]))
    return _shift_sparse(part, starts[nb:nb + ns], [1] * ns, sizes[nb:nb + ns])


def bcoo_broadcast_in_dim(mat: BCOO, *, shape, broadcast_dimensions, sharding=None) -> BCOO:
    """lax.broadcast_in_dim of a BCOO array (the result in the flat layout; expanded
    dimensions repeat the stored elements). JAX:
    jax.experimental.sparse.bcoo_broadcast_in_dim."""
    shape, bd = tuple(int(s) for s in shape), tuple(int(d) for d in broadcast_dimensions)
    if len(bd) != mat.ndim or any(mat.shape[i] not in (1, shape[d])
                                  for i, d in enumerate(bd)):
        raise ValueError(f"bcoo_broadcast_in_dim: cannot broadcast shape {mat.shape} to "
                         f"{shape} along dimensions {bd}")
    flat = to_flat(mat)
    data, ok = _valid_flat(flat)
    cols = {d: flat.indices[:, i] for i, d in enumerate(bd)}
    idx = jnp.stack([cols.get(d, jnp.zeros_like(ok, flat.indices.dtype))
                     for d in range(len(shape))], axis=1) if shape else \
        jnp.zeros((flat.nse, 0), flat.indices.dtype)
    for d, s in enumerate(shape):
        if d in cols and mat.shape[bd.index(d)] == s:
            continue
        if s == 1:
            continue
        n = idx.shape[0]
        rep = jnp.arange(s, dtype=idx.dtype)
        idx = jnp.broadcast_to(idx[:, None, :], (n, s, idx.shape[1]))
        idx = idx.at[:, :, d].set(jnp.broadcast_to(rep, (n, s))).reshape(n * s, -1)
        data = jnp.repeat(data, s)
        ok = jnp.repeat(ok, s)
    full = jnp.array(list(shape), idx.dtype) if shape else None
    idx = jnp.where(ok[:, None], idx, full) if shape else idx
    return BCOO((data, idx), shape=shape)


def bcoo_concatenate(operands, *, dimension: int) -> BCOO:
    """lax.concatenate of BCOO arrays (flat layout result). JAX:
    jax.experimental.sparse.bcoo_concatenate."""
    if not operands:
        raise ValueError("bcoo_concatenate: no operands")
    layouts = {(m.n_batch, m.n_dense, m.ndim) for m in operands}
    if len(layouts) == 1 and operands[0].ndim and \
            int(dimension) < operands[0].ndim - operands[0].n_dense:
        return _concatenate_same_layout(operands, int(dimension))
    operands = [to_flat(m) for m in operands]
    ref = operands[0].shape
    dim = int(dimension)
    if any(m.ndim != len(ref) or m.shape[:dim] + m.shape[dim + 1:] !=
           ref[:dim] + ref[dim + 1:] for m in operands):
        raise TypeError(f"bcoo_concatenate: shapes {[m.shape for m in operands]} do not "
                        f"match outside dimension {dim}")
    total = sum(m.shape[dim] for m in operands)
    shape = ref[:dim] + (total,) + ref[dim + 1:]
    datas, idxs, offset = [], [], 0
    for m in operands:
        data, ok = _valid_flat(m)
        idx = m.indices.at[:, dim].add(offset)
        idxs.append(jnp.where(ok[:, None], idx, jnp.array(list(shape), idx.dtype)))
        datas.append(data)
        offset += m.shape[dim]
    dtype = jnp.result_type(*[d.dtype for d in datas])
    return BCOO((jnp.concatenate([d.astype(dtype) for d in datas]),
                 jnp.concatenate(idxs)), shape=shape)


def _pad_nse(mat: BCOO, nse: int):
    """data and indices (full batch) with padding elements added up to nse."""
    data, idx = _full_batch(mat)
    nb, extra = mat.n_batch, nse - mat.nse
    if extra == 0:
        return data, idx
    sparse = jnp.array(list(mat.shape[nb:nb + mat.n_sparse]), idx.dtype)
    pad_idx = jnp.broadcast_to(sparse, idx.shape[:nb] + (extra, mat.n_sparse))
    pad = jnp.zeros(data.shape[:nb] + (extra,) + data.shape[nb + 1:], data.dtype)
    return (jnp.concatenate([data, pad], axis=nb),
            jnp.concatenate([idx, pad_idx], axis=nb))


def _concatenate_same_layout(operands, dim: int) -> BCOO:
    """Concatenation along a batch dimension (the stored elements padded to one nse) or a
    sparse one (the stored elements side by side, that index column offset)."""
    ref = operands[0]
    nb = ref.n_batch
    if any(m.shape[:dim] + m.shape[dim + 1:] != ref.shape[:dim] + ref.shape[dim + 1:]
           for m in operands):
        raise TypeError(f"bcoo_concatenate: shapes {[m.shape for m in operands]} do not "
                        f"match outside dimension {dim}")
    total = sum(m.shape[dim] for m in operands)
    shape = ref.shape[:dim] + (total,) + ref.shape[dim + 1:]
    dtype = jnp.result_type(*[m.dtype for m in operands])
    if dim < nb:
        nse = max(m.nse for m in operands)
        parts = [_pad_nse(m, nse) for m in operands]
        return BCOO((jnp.concatenate([d.astype(dtype) for d, _ in parts], axis=dim),
                     jnp.concatenate([i for _, i in parts], axis=dim)), shape=shape)
    datas, idxs, offset, col = [], [], 0, dim - nb
    for m in operands:
        data, idx = _full_batch(m)
        ok = (idx[..., col] >= 0) & (idx[..., col] < m.shape[dim])
        moved = jnp.where(ok, idx[..., col] + offset, total)
        idxs.append(idx.at[..., col].set(moved))
        datas.append(data.astype(dtype))
        offset += m.shape[dim]
    return BCOO((jnp.concatenate(datas, axis=nb), jnp.concatenate(idxs, axis=nb)),
                shape=shape)


def bcoo_reshape(mat: BCOO, *, new_sizes, dimensions=None, sharding=None) -> BCOO:
    """lax.reshape of a BCOO array (flat layout result). JAX:
    jax.experimental.sparse.bcoo_reshape."""
    new_sizes = tuple(int(s) for s in new_sizes)
    if math.prod(new_sizes) != mat.size:
        raise TypeError(f"bcoo_reshape: cannot reshape {mat.shape} to {new_sizes}")
    if dimensions is not None:
        mat = bcoo_transpose_any(mat, tuple(dimensions))
    flat = to_flat(mat)
    key, _ = ravel_keys(flat.indices, flat.shape)
    return BCOO((flat.data, unravel_keys(key, new_sizes, flat.indices.dtype)),
                shape=new_sizes)


def bcoo_transpose_any(mat: BCOO, perm) -> BCOO:
    flat = to_flat(mat)
    return BCOO((flat.data, flat.indices[:, list(perm)] if perm else flat.indices),
                shape=tuple(mat.shape[p] for p in perm))


def bcoo_squeeze(arr: BCOO, *, dimensions) -> BCOO:
    """lax.squeeze of a BCOO array. JAX: jax.experimental.sparse.bcoo_squeeze."""
    dims = {int(d) % arr.ndim for d in dimensions}
    if any(arr.shape[d] != 1 for d in dims):
        raise ValueError(f"bcoo_squeeze: dimensions {sorted(dims)} of shape {arr.shape} "
                         f"are not all of size 1")
    return bcoo_reshape(arr, new_sizes=tuple(s for d, s in enumerate(arr.shape)
                                             if d not in dims))


def bcoo_rev(operand: BCOO, dimensions) -> BCOO:
    """lax.rev of a BCOO array. JAX: jax.experimental.sparse.bcoo_rev."""
    flat = to_flat(operand)
    _, ok = ravel_keys(flat.indices, flat.shape)
    idx = flat.indices
    for d in dimensions:
        idx = idx.at[:, d].set(operand.shape[d] - 1 - idx[:, d])
    idx = jnp.where(ok[:, None], idx, jnp.array(list(operand.shape), idx.dtype))
    return BCOO((flat.data, idx), shape=operand.shape)


def bcoo_gather(operand: BCOO, start_indices, dimension_numbers, slice_sizes, *,
                unique_indices=False, indices_are_sorted=False, mode=None,
                fill_value=None) -> BCOO:
    """lax.gather of a BCOO array (through its dense form; a BCOO result). JAX:
    jax.experimental.sparse.bcoo_gather."""
    out = lax.gather(bcoo_todense(operand), start_indices, dimension_numbers, slice_sizes,
                     unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                     mode=mode, fill_value=fill_value)
    return _dense_to_bcoo(out, out.size, operand.data, start_indices)


def bcoo_conv_general_dilated(lhs, rhs, *, window_strides, padding, lhs_dilation=None,
                              rhs_dilation=None, dimension_numbers=None,
                              feature_group_count=1, batch_group_count=1, precision=None,
                              preferred_element_type=None, out_sharding=None) -> BCOO:
    """lax.conv_general_dilated with BCOO operands (computed densely; a BCOO result).
    JAX: jax.experimental.sparse.bcoo_conv_general_dilated."""
    dense = [bcoo_todense(x) if isinstance(x, BCOO) else jnp.asarray(x) for x in (lhs, rhs)]
    out = lax.conv_general_dilated(*dense, window_strides, padding, lhs_dilation=lhs_dilation,
                                   rhs_dilation=rhs_dilation,
                                   dimension_numbers=dimension_numbers,
                                   feature_group_count=feature_group_count,
                                   batch_group_count=batch_group_count, precision=precision,
                                   preferred_element_type=preferred_element_type)
    return _dense_to_bcoo(out, out.size, *dense)
