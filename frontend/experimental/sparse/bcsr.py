"""BCSR: batched compressed-sparse-row arrays. `data` batch + (nse,) + dense, `indices`
batch + (nse,) (column of each stored element), `indptr` batch + (rows + 1,) (where each
row's elements start). Built on BCOO: conversions sort by (row, column) and count rows
with searchsorted; the ops go through BCOO. JAX: jax.experimental.sparse.bcsr."""
from __future__ import annotations

import numpy as _onp

from mjax import numpy as jnp
from mjax.base import tree_util
from mjax.experimental.sparse._base import JAXSparse, batched, vmapped_shape
from mjax.experimental.sparse.bcoo import (BCOO, bcoo_extract, bcoo_fromdense,
                                           bcoo_sort_indices, bcoo_sum_duplicates,
                                           bcoo_todense, bcoo_update_layout)
from mjax.experimental.sparse.bcoo_ops import (bcoo_broadcast_in_dim, bcoo_concatenate,
                                               bcoo_dot_general)


def rows_to_indptr(rows, n_rows: int):
    """Sorted row numbers (padding: n_rows) as a row pointer of n_rows + 1 entries."""
    return jnp.searchsorted(rows, jnp.arange(n_rows + 1, dtype=rows.dtype),
                            side="left").astype(rows.dtype)


def indptr_to_rows(indptr, nse: int):
    """A row pointer as each stored element's row (past the last row: padding)."""
    return (jnp.searchsorted(indptr, jnp.arange(nse, dtype=indptr.dtype), side="right")
            - 1).astype(indptr.dtype)


class BCSR(JAXSparse):
    """A batched compressed-sparse-row array (JAX: jax.experimental.sparse.BCSR)."""

    def __init__(self, args, *, shape, indices_sorted: bool = False,
                 unique_indices: bool = False):
        data, indices, indptr = args
        self.data, self.indices, self.indptr = map(jnp.asarray, (data, indices, indptr))
        self.shape = tuple(int(d) for d in shape)
        self.indices_sorted, self.unique_indices = indices_sorted, unique_indices
        nb = self.indices.ndim - 1
        if self.indptr.ndim != nb + 1 or len(self.shape) < nb + 2 or \
                self.data.shape[nb] != self.indices.shape[nb] or \
                self.indptr.shape[-1] != self.shape[nb] + 1:
            raise ValueError(f"BCSR: data {self.data.shape}, indices {self.indices.shape} "
                             f"and indptr {self.indptr.shape} do not describe an array of "
                             f"shape {self.shape}")

    n_batch = property(lambda self: self.indices.ndim - 1)
    n_sparse = property(lambda self: 2)
    n_dense = property(lambda self: self.data.ndim - 1 - self.n_batch)
    nse = property(lambda self: self.indices.shape[-1])

    def tree_flatten(self):
        return (self.data, self.indices, self.indptr), \
            (self.shape, self.indices_sorted, self.unique_indices, self.indices.ndim)

    @classmethod
    def tree_unflatten(cls, aux, children):
        m = object.__new__(cls)
        m.data, m.indices, m.indptr = children
        shape, m.indices_sorted, m.unique_indices, ndim = aux
        m.shape = vmapped_shape(shape, ndim, m.indices)
        return m

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=_onp.int32, n_dense=0, n_batch=0):
        return bcsr_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_bcoo(cls, arr: BCOO) -> "BCSR":
        """A BCOO array with two sparse dimensions as BCSR."""
        if arr.n_sparse != 2:
            arr = bcoo_update_layout(arr, n_batch=arr.ndim - 2 - arr.n_dense)
        arr = bcoo_sort_indices(arr)
        n_rows = arr.shape[arr.n_batch]

        def one(i):
            return i[:, 1], rows_to_indptr(i[:, 0], n_rows)
        indices, indptr = batched(one, arr.n_batch, arr.indices)
        data = jnp.broadcast_to(arr.data, indices.shape[:arr.n_batch] +
                                arr.data.shape[arr.n_batch:])
        return cls((data, indices, indptr), shape=arr.shape, indices_sorted=True,
                   unique_indices=arr.unique_indices)

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense=0, n_batch=0):
        csr = mat.tocsr()
        it = index_dtype or _onp.int32
        return cls((jnp.asarray(csr.data), jnp.asarray(csr.indices.astype(it)),
                    jnp.asarray(csr.indptr.astype(it))), shape=csr.shape)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32", n_dense=0, n_batch=0, nse=0):
        return cls.from_bcoo(BCOO._empty(shape, dtype=dtype, index_dtype=index_dtype,
                                         n_dense=n_dense, n_batch=n_batch, nse=nse))

    @classmethod
    def _eye(cls, N, M, k, **kwds):
        return cls.from_bcoo(BCOO._eye(N, M, k, **kwds))

    def to_bcoo(self) -> BCOO:
        nb = self.n_batch

        def one(ind, ptr):
            return jnp.stack([indptr_to_rows(ptr, self.nse), ind.astype(ptr.dtype)], -1)
        indices = batched(one, nb, self.indices, self.indptr)[0]
        return BCOO((self.data, indices), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    def todense(self):
        return bcoo_todense(self.to_bcoo())

    def sum_duplicates(self, nse=None, remove_zeros=True):
        return bcsr_sum_duplicates(self, nse=nse)

    def transpose(self, *args, **kwargs):
        raise NotImplementedError("BCSR.transpose: not implemented in JAX either "
                                  "(use to_bcoo().transpose())")

    def __matmul__(self, other):
        return _matmul(self, other)

    def __rmatmul__(self, other):
        return _matmul(other, self)

    def __neg__(self):
        return BCSR((-self.data, self.indices, self.indptr), shape=self.shape)

    def __mul__(self, other):
        if jnp.ndim(other) == 0:
            return BCSR((self.data * other, self.indices, self.indptr), shape=self.shape)
        raise NotImplementedError("BCSR * array: mjax multiplies BCSR by scalars only "
                                  "(convert with to_bcoo())")

    __rmul__ = __mul__


tree_util.register_pytree_node(BCSR, BCSR.tree_flatten, BCSR.tree_unflatten)


def _as_bcoo(x):
    return x.to_bcoo() if isinstance(x, BCSR) else x


def _matmul(a, b):
    nd_a, nd_b = jnp.ndim(a) if not isinstance(a, JAXSparse) else a.ndim, \
        jnp.ndim(b) if not isinstance(b, JAXSparse) else b.ndim
    dn = (((nd_a - 1,), (0 if nd_b == 1 else nd_b - 2,)), ((), ()))
    return bcsr_dot_general(a, b, dimension_numbers=dn)


def bcsr_fromdense(mat, *, nse=None, n_batch=0, n_dense=0, index_dtype=jnp.int32) -> BCSR:
    """The nonzero blocks of a dense array as BCSR. JAX: jax.experimental.sparse.bcsr_fromdense."""
    mat = jnp.asarray(mat)
    if mat.ndim - n_batch - n_dense != 2:
        raise ValueError(f"bcsr_fromdense: BCSR needs 2 sparse dimensions; shape {mat.shape} "
                         f"with n_batch={n_batch}, n_dense={n_dense} has "
                         f"{mat.ndim - n_batch - n_dense}")
    return BCSR.from_bcoo(bcoo_fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                                         index_dtype=index_dtype))


def bcsr_todense(mat: BCSR):
    """JAX: jax.experimental.sparse.bcsr_todense."""
    return mat.todense()


def bcsr_dot_general(lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None, out_sharding=None):
    """dot_general with BCSR operands (through BCOO). JAX:
    jax.experimental.sparse.bcsr_dot_general."""
    out = bcoo_dot_general(_as_bcoo(lhs), _as_bcoo(rhs), dimension_numbers=dimension_numbers,
                           precision=precision, preferred_element_type=preferred_element_type)
    return BCSR.from_bcoo(out) if isinstance(out, BCOO) and out.ndim >= 2 else out


def bcsr_extract(indices, indptr, mat):
    """The values of dense `mat` at a BCSR's stored positions. JAX:
    jax.experimental.sparse.bcsr_extract."""
    mat = jnp.asarray(mat)
    nb = jnp.ndim(indices) - 1
    like = BCSR((jnp.zeros(jnp.shape(indices) + mat.shape[nb + 2:], mat.dtype), indices,
                 indptr), shape=mat.shape)
    return bcoo_extract(like.to_bcoo(), mat).data


def bcsr_sum_duplicates(mat: BCSR, nse=None) -> BCSR:
    """JAX: jax.experimental.sparse.bcsr_sum_duplicates."""
    return BCSR.from_bcoo(bcoo_sum_duplicates(mat.to_bcoo(), nse=nse))


def bcsr_broadcast_in_dim(mat: BCSR, *, shape, broadcast_dimensions, sharding=None) -> BCSR:
    """JAX: jax.experimental.sparse.bcsr_broadcast_in_dim."""
    return BCSR.from_bcoo(bcoo_broadcast_in_dim(mat.to_bcoo(), shape=shape,
                                                broadcast_dimensions=broadcast_dimensions))


def bcsr_concatenate(operands, *, dimension: int) -> BCSR:
    """JAX: jax.experimental.sparse.bcsr_concatenate."""
    return BCSR.from_bcoo(bcoo_concatenate([m.to_bcoo() for m in operands],
                                           dimension=dimension))
