"""`mjax.experimental.sparse`: the part of JAX's sparse arrays libraries use so far: a
`BCOO` matrix (no batch or dense dimensions) built from a dense array or a SciPy sparse
matrix, turned back into a dense array, and multiplied by a dense array (`sparse @ dense`,
as numpyro's CAR distribution does). The rest of JAX's module (BCSR, sparsify, the
sparse primitives) is listed in docs/api_coverage.md. JAX: jax.experimental.sparse."""
from __future__ import annotations

import math

import numpy as _onp

from mjax import numpy as jnp
from mjax import tree_util

__all__ = ["BCOO", "todense"]


class BCOO:
    """A sparse array: `data` (nse,) holds the values at `indices` (nse, ndim); other
    elements are zero. Repeated indices add up. JAX: jax.experimental.sparse.BCOO (here
    without batch or dense dimensions)."""

    def __init__(self, args, *, shape, indices_sorted: bool = False,
                 unique_indices: bool = False):
        data, indices = args
        self.data, self.indices = jnp.asarray(data), jnp.asarray(indices)
        self.shape = tuple(int(d) for d in shape)
        self.indices_sorted, self.unique_indices = indices_sorted, unique_indices
        if self.indices.ndim != 2 or self.indices.shape[1] != len(self.shape) or \
                self.data.shape != self.indices.shape[:1]:
            raise ValueError(f"BCOO: data of shape {self.data.shape} and indices of shape "
                             f"{self.indices.shape} do not describe an array of shape "
                             f"{self.shape} (mjax: no batch or dense dimensions)")

    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    nse = property(lambda self: self.indices.shape[0])

    def __repr__(self):
        return f"BCOO({self.dtype.name}{list(self.shape)}, nse={self.nse})"

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=_onp.int32, n_dense: int = 0,
                  n_batch: int = 0) -> "BCOO":
        """The nonzero elements of a concrete dense array (nse: how many to keep, padded
        as JAX pads: zeros at an out-of-bounds index, which todense and @ drop)."""
        _only_plain("fromdense", n_dense, n_batch)
        host = _onp.asarray(mat)
        where = _onp.argwhere(host != 0)
        found = len(where)
        if nse is not None:
            padding = _onp.broadcast_to(_onp.array(host.shape, where.dtype),
                                        (max(nse - found, 0), host.ndim))
            where = _onp.concatenate([where[:nse], padding])
        data = jnp.asarray(mat)[tuple(_onp.minimum(where, _onp.maximum(
            _onp.array(host.shape) - 1, 0)).T)]
        if nse is not None and nse > found:
            data = data.at[found:].set(0)
        return cls((data, jnp.asarray(where.astype(index_dtype))), shape=host.shape,
                   indices_sorted=True, unique_indices=nse is None)

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense: int = 0,
                          n_batch: int = 0) -> "BCOO":
        """A BCOO of a SciPy sparse matrix's stored elements, in COO order."""
        _only_plain("from_scipy_sparse", n_dense, n_batch)
        coo = mat.tocoo()
        indices = _onp.column_stack((coo.row, coo.col)).astype(index_dtype or _onp.int32)
        return cls((jnp.asarray(coo.data), jnp.asarray(indices)), shape=coo.shape)

    def todense(self):
        """The dense array (zeros where no element is stored)."""
        out = jnp.zeros(self.shape, self.dtype)
        return out.at[tuple(self.indices[:, d] for d in range(self.ndim))].add(
            self.data, mode="drop")

    def __matmul__(self, other):
        """sparse (n, k) @ dense (k, ...) -> dense (n, ...): each stored element adds its
        value times a row of `other` to a row of the result (out-of-bounds ones: nothing)."""
        other = jnp.asarray(other)
        if self.ndim != 2 or other.ndim < 1 or other.shape[0] != self.shape[1]:
            raise TypeError(f"BCOO @ dense: shapes {self.shape} and {other.shape} do not "
                            f"match (mjax: a 2-d sparse matrix on the left)")
        rows, cols = self.indices[:, 0], self.indices[:, 1]
        scale = self.data.reshape((-1,) + (1,) * (other.ndim - 1))
        dtype = jnp.result_type(self.dtype, other.dtype)
        out = jnp.zeros((self.shape[0],) + other.shape[1:], dtype)
        picked = jnp.take(other, cols, axis=0, mode="fill", fill_value=0)
        return out.at[rows].add((scale * picked).astype(dtype), mode="drop")


def _only_plain(name: str, n_dense: int, n_batch: int):
    if n_dense or n_batch:
        raise NotImplementedError(f"BCOO.{name}: mjax's BCOO has no batch or dense "
                                  f"dimensions (n_batch={n_batch}, n_dense={n_dense})")


def todense(arr):
    """A sparse array as a dense one (a dense array as it is). JAX:
    jax.experimental.sparse.todense."""
    return arr.todense() if isinstance(arr, BCOO) else jnp.asarray(arr)


def _unflatten(aux, children) -> BCOO:
    # (children may be tracers, or anything a prefix tree holds: no checks)
    m = object.__new__(BCOO)
    m.data, m.indices = children
    m.shape, m.indices_sorted, m.unique_indices = aux
    return m


tree_util.register_pytree_node(
    BCOO, lambda m: ((m.data, m.indices), (m.shape, m.indices_sorted, m.unique_indices)),
    _unflatten)
