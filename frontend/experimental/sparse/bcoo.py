"""BCOO: batched coordinate sparse arrays, as JAX stores them. `data` has shape
batch_shape + (nse,) + dense_shape and `indices` batch_shape + (nse, n_sparse): each batch
element holds nse stored blocks, each at an index into the n_sparse sparse dimensions.
Repeated indices add up; an index out of bounds marks padding (dropped by todense).
Here: the class, fromdense/todense, the layout changes (update_layout, a flat form with
no batch or dense dimensions that the other ops use), sum_duplicates, sort_indices,
transpose and extract. Every op is built from lax/numpy ops (gather, scatter-add, sort,
vmap over batch dimensions), so jit, grad and vmap apply. JAX: jax.experimental.sparse.bcoo."""
from __future__ import annotations

import math

import numpy as _onp

from mjax import numpy as jnp
from mjax.base import tree_util
from mjax.experimental.sparse._base import (JAXSparse, batched, is_traced, ravel_keys,
                                            unravel_keys, vmapped_shape)


class BCOO(JAXSparse):
    """A batched-coordinate sparse array (JAX: jax.experimental.sparse.BCOO)."""

    def __init__(self, args, *, shape, indices_sorted: bool = False,
                 unique_indices: bool = False):
        data, indices = args
        self.data, self.indices = jnp.asarray(data), jnp.asarray(indices)
        self.shape = tuple(int(d) for d in shape)
        self.indices_sorted, self.unique_indices = indices_sorted, unique_indices
        _check(self)

    n_batch = property(lambda self: self.indices.ndim - 2)
    n_sparse = property(lambda self: self.indices.shape[-1])
    n_dense = property(lambda self: self.data.ndim - 1 - self.n_batch)
    nse = property(lambda self: self.indices.shape[-2])
    _info = property(lambda self: (self.shape, self.indices_sorted, self.unique_indices))

    def tree_flatten(self):
        return (self.data, self.indices), self._info + (self.indices.ndim,)

    @classmethod
    def tree_unflatten(cls, aux, children):
        m = object.__new__(cls)
        m.data, m.indices = children
        shape, m.indices_sorted, m.unique_indices, ndim = aux
        m.shape = vmapped_shape(shape, ndim, m.indices)
        return m

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=_onp.int32, n_dense: int = 0,
                  n_batch: int = 0) -> "BCOO":
        """The nonzero blocks of a dense array (nse: how many per batch element; needed
        under a trace)."""
        return bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense: int = 0,
                          n_batch: int = 0) -> "BCOO":
        """A BCOO of a SciPy sparse matrix's stored elements, in COO order."""
        coo = mat.tocoo()
        indices = _onp.column_stack((coo.row, coo.col)).astype(index_dtype or _onp.int32)
        out = cls((jnp.asarray(coo.data), jnp.asarray(indices)), shape=coo.shape)
        return bcoo_update_layout(out, n_batch=n_batch, n_dense=n_dense) \
            if n_batch or n_dense else out

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32", n_dense=0, n_batch=0,
               nse=0):
        """An all-zero BCOO of `nse` padding elements per batch element."""
        shape = tuple(shape)
        n_sparse = len(shape) - n_batch - n_dense
        if n_sparse < 0:
            raise ValueError(f"BCOO: n_batch={n_batch} + n_dense={n_dense} exceeds the "
                             f"{len(shape)} dimensions of shape {shape}")
        batch, sparse, dense = shape[:n_batch], shape[n_batch:n_batch + n_sparse], \
            shape[n_batch + n_sparse:]
        data = jnp.zeros(batch + (nse,) + dense, dtype or jnp.float32)
        indices = jnp.broadcast_to(jnp.array(sparse, index_dtype), batch + (nse, n_sparse))
        return cls((data, indices), shape=shape, indices_sorted=True, unique_indices=True)

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32", n_batch=0, n_dense=0):
        if n_batch or n_dense:
            return bcoo_update_layout(cls._eye(N, M, k, dtype=dtype,
                                               index_dtype=index_dtype),
                                      n_batch=n_batch, n_dense=n_dense)
        lo, hi = max(0, -k), min(N, M - k)
        rows = _onp.arange(lo, max(hi, lo))
        idx = _onp.stack([rows, rows + k], axis=1).astype(index_dtype)
        data = jnp.ones(len(rows), dtype or jnp.float32)
        return cls((data, jnp.asarray(idx.reshape(-1, 2))), shape=(N, M),
                   indices_sorted=True, unique_indices=True)

    def todense(self):
        """The dense array (zeros where nothing is stored)."""
        return bcoo_todense(self)

    def sum_duplicates(self, nse=None, remove_zeros=True):
        return bcoo_sum_duplicates(self, nse=nse)

    def sort_indices(self):
        return bcoo_sort_indices(self)

    def update_layout(self, *, n_batch=None, n_dense=None, on_inefficient="error"):
        return bcoo_update_layout(self, n_batch=n_batch, n_dense=n_dense,
                                  on_inefficient=on_inefficient)

    def transpose(self, axes=None):
        perm = tuple(range(self.ndim))[::-1] if axes is None else tuple(axes)
        return bcoo_transpose(self, permutation=perm)

    def astype(self, dtype):
        return BCOO((self.data.astype(dtype), self.indices), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)


def _check(m: BCOO):
    d, i = m.data, m.indices
    ok = i.ndim >= 2 and d.ndim >= i.ndim - 1
    if ok:
        nb = i.ndim - 2
        ok = (d.shape[nb] == i.shape[nb] and nb + i.shape[-1] + d.ndim - 1 - nb == len(m.shape)
              and all(a in (1, s) and b in (1, s) for a, b, s in
                      zip(d.shape[:nb], i.shape[:nb], m.shape[:nb]))
              and d.shape[nb + 1:] == m.shape[len(m.shape) - (d.ndim - 1 - nb):])
    if not ok:
        raise ValueError(f"BCOO: data of shape {d.shape} and indices of shape {i.shape} do "
                         f"not describe an array of shape {m.shape} (data: batch + (nse,) + "
                         f"dense dims; indices: batch + (nse, n_sparse))")
    if not jnp.issubdtype(i.dtype, jnp.integer):
        raise TypeError(f"BCOO: indices must have an integer dtype, got {i.dtype}")


tree_util.register_pytree_node(BCOO, BCOO.tree_flatten, BCOO.tree_unflatten)


def _dims(mat: BCOO):
    nb, ns = mat.n_batch, mat.n_sparse
    return mat.shape[:nb], mat.shape[nb:nb + ns], mat.shape[nb + ns:]


def bcoo_todense(mat: BCOO):
    """A BCOO array as a dense array. JAX: jax.experimental.sparse.bcoo_todense."""
    _, sparse, dense = _dims(mat)

    def one(data, idx):
        out = jnp.zeros(sparse + dense, mat.dtype)
        if not sparse:
            return data.sum(0).astype(mat.dtype)
        return out.at[tuple(idx[:, k] for k in range(len(sparse)))].add(data, mode="drop")
    return batched(one, mat.n_batch, mat.data, mat.indices)[0]


def bcoo_fromdense(mat, *, nse=None, n_batch: int = 0, n_dense: int = 0,
                   index_dtype=jnp.int32) -> BCOO:
    """The nonzero blocks of a dense array as a BCOO (padding: index = the sparse shape,
    data 0). JAX: jax.experimental.sparse.bcoo_fromdense."""
    mat = jnp.asarray(mat)
    n_sparse = mat.ndim - n_batch - n_dense
    if n_batch < 0 or n_dense < 0 or n_sparse < 0:
        raise ValueError(f"bcoo_fromdense: n_batch={n_batch}, n_dense={n_dense} do not fit "
                         f"an array of shape {mat.shape}")
    sparse = mat.shape[n_batch:n_batch + n_sparse]
    mask = mat != 0
    if n_dense:
        mask = mask.any(axis=tuple(range(mat.ndim - n_dense, mat.ndim)))
    if nse is None:
        if is_traced(mat):
            raise ValueError("bcoo_fromdense: nse must be given when the input is traced "
                             "(under jit, grad or vmap)")
        counts = _onp.asarray(mask).reshape(mat.shape[:n_batch] + (-1,)).sum(-1)
        nse = int(counts.max()) if counts.size else 0
    nse = int(nse)

    def one(m, a):
        if not sparse:
            return jnp.ones((nse, 0), index_dtype), jnp.broadcast_to(a, (nse,) + a.shape)
        where = jnp.nonzero(m, size=nse, fill_value=sparse)
        idx = jnp.stack(where, axis=-1).astype(index_dtype)
        data = a.at[where].get(mode="fill", fill_value=0)
        return idx, data
    idx, data = batched(one, n_batch, mask, mat)
    return BCOO((data, idx), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_extract(sparr: BCOO, arr, *, assume_unique=None) -> BCOO:
    """A BCOO with `sparr`'s indices and the values of dense `arr` there (zero at
    padding). JAX: jax.experimental.sparse.bcoo_extract."""
    arr = jnp.asarray(arr)
    if arr.shape != sparr.shape:
        raise ValueError(f"bcoo_extract: the dense array's shape {arr.shape} differs from "
                         f"the sparse array's {sparr.shape}")
    ns = sparr.n_sparse

    def one(idx, a):
        if not ns:
            return jnp.broadcast_to(a, idx.shape[:1] + a.shape)
        return a.at[tuple(idx[:, k] for k in range(ns))].get(mode="fill", fill_value=0)
    data = batched(one, sparr.n_batch, sparr.indices, arr)[0]
    return BCOO((data, jnp.broadcast_to(sparr.indices, data.shape[:sparr.n_batch] +
                                        sparr.indices.shape[sparr.n_batch:])),
                shape=sparr.shape, indices_sorted=sparr.indices_sorted,
                unique_indices=sparr.unique_indices)


def to_flat(mat: BCOO) -> BCOO:
    """The same array with n_batch = n_dense = 0: every batch element's and every dense
    block element's coordinates become index columns (nse grows by their count)."""
    if mat.n_batch == 0 and mat.n_dense == 0:
        return mat
    batch, sparse, dense = _dims(mat)
    nb, nd = mat.n_batch, mat.n_dense
    full = batch + (mat.nse,) + dense
    data = jnp.broadcast_to(mat.data, full)
    idx = jnp.broadcast_to(mat.indices.reshape(mat.indices.shape[:-1] + (1,) * nd +
                                               (len(sparse),)), full + (len(sparse),))
    cols = [jnp.broadcast_to(jnp.arange(s, dtype=mat.indices.dtype).reshape(
        (1,) * b + (s,) + (1,) * (len(full) - b - 1)), full)[..., None]
        for b, s in enumerate(batch)]
    cols.append(idx)
    cols += [jnp.broadcast_to(jnp.arange(s, dtype=mat.indices.dtype).reshape(
        (1,) * (nb + 1 + d) + (s,) + (1,) * (nd - d - 1)), full)[..., None]
        for d, s in enumerate(dense)]
    indices = jnp.concatenate(cols, axis=-1).reshape(-1, mat.ndim)
    return BCOO((data.reshape(-1), indices), shape=mat.shape)


def _max_nse(flat: BCOO, n_batch: int, n_dense: int) -> int:
    """A bound on the stored elements per batch element after a layout change of a
    traced array (the exact count needs its values)."""
    return max(1, min(flat.nse, math.prod(flat.shape[n_batch:flat.ndim - n_dense])))


def bcoo_update_layout(mat: BCOO, *, n_batch=None, n_dense=None,
                       on_inefficient="error") -> BCOO:
    """The same array with other numbers of batch and dense dimensions. JAX:
    jax.experimental.sparse.bcoo_update_layout."""
    n_batch = mat.n_batch if n_batch is None else n_batch
    n_dense = mat.n_dense if n_dense is None else n_dense
    if on_inefficient not in ("error", "warn", None):
        raise ValueError(f"bcoo_update_layout: on_inefficient={on_inefficient!r} is not "
                         f"one of 'error', 'warn', None")
    if (n_batch, n_dense) == (mat.n_batch, mat.n_dense):
        return mat
    flat = to_flat(mat)
    if n_batch == 0 and n_dense == 0:
        return flat
    nse = None if not is_traced(mat.data, mat.indices) else _max_nse(flat, n_batch, n_dense)
    return bcoo_fromdense(bcoo_todense(flat), nse=nse, n_batch=n_batch, n_dense=n_dense,
                          index_dtype=mat.indices.dtype)


def _dedupe_one(data, idx, shape, nse):
    key, _ = ravel_keys(idx, shape)
    perm = jnp.argsort(key, stable=True)
    ks = key[perm]
    first = jnp.concatenate([jnp.ones((1,), bool), ks[1:] != ks[:-1]]) if ks.shape[0] \
        else jnp.zeros((0,), bool)
    seg = jnp.cumsum(first) - 1
    valid = ks < math.prod(shape)
    picked = data[perm] * valid.reshape((-1,) + (1,) * (data.ndim - 1)).astype(data.dtype)
    out_data = jnp.zeros((nse,) + data.shape[1:], data.dtype).at[seg].add(picked, mode="drop")
    sentinel = jnp.array(math.prod(shape), key.dtype)
    out_key = jnp.full((nse,), sentinel).at[seg].min(ks, mode="drop")
    return out_data, unravel_keys(out_key, shape, idx.dtype)


def bcoo_sum_duplicates(mat: BCOO, nse=None) -> BCOO:
    """Repeated indices summed into one element each, sorted, padding last. JAX:
    jax.experimental.sparse.bcoo_sum_duplicates."""
    _, sparse, _ = _dims(mat)
    if nse is None:
        if is_traced(mat.data, mat.indices):
            nse = mat.nse
        else:
            idx = _onp.asarray(jnp.broadcast_to(mat.indices, mat.data.shape[:mat.n_batch]
                                                + mat.indices.shape[mat.n_batch:]))
            idx = idx.reshape((-1,) + idx.shape[-2:])
            ok = ((idx >= 0) & (idx < _onp.array(sparse, idx.dtype))).all(-1)
            nse = max([len(_onp.unique(b[k], axis=0)) for b, k in zip(idx, ok)] or [0])
    data, idx = batched(lambda d, i: _dedupe_one(d, i, sparse, nse), mat.n_batch,
                        mat.data, mat.indices)
    return BCOO((data, idx), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_sort_indices(mat: BCOO) -> BCOO:
    """The stored elements in row-major order of their indices. JAX:
    jax.experimental.sparse.bcoo_sort_indices."""
    _, sparse, _ = _dims(mat)

    def one(d, i):
        perm = jnp.argsort(ravel_keys(i, sparse)[0], stable=True)
        return d[perm], i[perm]
    data, idx = batched(one, mat.n_batch, mat.data, mat.indices)
    return BCOO((data, idx), shape=mat.shape, indices_sorted=True,
                unique_indices=mat.unique_indices)


def bcoo_transpose(mat: BCOO, *, permutation) -> BCOO:
    """lax.transpose of a BCOO array: batch, sparse and dense dimensions each permute
    among themselves (others go through the flat layout). JAX:
    jax.experimental.sparse.bcoo_transpose."""
    perm = tuple(int(p) for p in permutation)
    if sorted(perm) != list(range(mat.ndim)):
        raise ValueError(f"bcoo_transpose: permutation {perm} is not a permutation of "
                         f"range({mat.ndim})")
    nb, ns = mat.n_batch, mat.n_sparse
    bp, sp, dp = perm[:nb], perm[nb:nb + ns], perm[nb + ns:]
    if sorted(bp) != list(range(nb)) or sorted(sp) != list(range(nb, nb + ns)):
        return bcoo_transpose(to_flat(mat), permutation=perm)
    shape = tuple(mat.shape[p] for p in perm)
    data = mat.data.transpose(bp + (nb,) + tuple(p - ns + 1 for p in dp))
    indices = mat.indices.transpose(bp + (nb, nb + 1))
    indices = indices[..., [p - nb for p in sp]] if ns else indices
    return BCOO((data, indices), shape=shape)
