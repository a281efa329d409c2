"""The 2-d formats COO (row, col), CSR (indices, indptr) and CSC (CSR of the transpose):
fromdense, todense, matvec, matmat and `@`, each through BCOO. JAX:
jax.experimental.sparse.coo / csr."""
from __future__ import annotations

import numpy as _onp

from mjax import numpy as jnp
from mjax.base import tree_util
from mjax.experimental.sparse._base import JAXSparse
from mjax.experimental.sparse.bcoo import BCOO, bcoo_fromdense, bcoo_todense
from mjax.experimental.sparse.bcoo_ops import bcoo_dot_general
from mjax.experimental.sparse.bcsr import BCSR


def _check2d(name, shape):
    if len(shape) != 2:
        raise ValueError(f"{name}: a 2-d array expected, got shape {tuple(shape)}")


class COO(JAXSparse):
    """A 2-d coordinate-format matrix (JAX: jax.experimental.sparse.COO)."""

    def __init__(self, args, *, shape, rows_sorted=False, cols_sorted=False):
        self.data, self.row, self.col = map(jnp.asarray, args)
        self.shape = tuple(int(s) for s in shape)
        self._rows_sorted, self._cols_sorted = rows_sorted, cols_sorted
        _check2d("COO", self.shape)

    nse = property(lambda self: self.data.size)

    def to_bcoo(self) -> BCOO:
        return BCOO((self.data, jnp.stack([self.row, self.col], axis=1)), shape=self.shape)

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=_onp.int32):
        return coo_fromdense(mat, nse=nse, index_dtype=index_dtype)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32"):
        _check2d("COO", shape)
        z = jnp.zeros(0, index_dtype)
        return cls((jnp.zeros(0, dtype or jnp.float32), z, z), shape=shape)

    @classmethod
    def _eye(cls, N, M, k, **kwds):
        b = BCOO._eye(N, M, k, **kwds)
        return cls((b.data, b.indices[:, 0], b.indices[:, 1]), shape=b.shape,
                   rows_sorted=True)

    def todense(self):
        return coo_todense(self)

    def transpose(self, axes=None):
        return COO((self.data, self.col, self.row), shape=self.shape[::-1])

    def tree_flatten(self):
        return (self.data, self.row, self.col), (self.shape, self._rows_sorted,
                                                 self._cols_sorted)

    @classmethod
    def tree_unflatten(cls, aux, children):
        m = object.__new__(cls)
        m.data, m.row, m.col = children
        m.shape, m._rows_sorted, m._cols_sorted = aux
        return m

    def __matmul__(self, other):
        other = jnp.asarray(other)
        return coo_matvec(self, other) if other.ndim == 1 else coo_matmat(self, other)

    def __rmatmul__(self, other):
        other = jnp.asarray(other)
        out = (coo_matvec(self, other, transpose=True) if other.ndim == 1 else
               coo_matmat(self, other.T, transpose=True).T)
        return out

    def __neg__(self):
        return COO((-self.data, self.row, self.col), shape=self.shape)

    def __mul__(self, other):
        if jnp.ndim(other) != 0:
            raise NotImplementedError("COO * array: scalars only (use BCOO)")
        return COO((self.data * other, self.row, self.col), shape=self.shape)

    __rmul__ = __mul__


class CSR(JAXSparse):
    """A 2-d compressed-sparse-row matrix (JAX: jax.experimental.sparse.CSR)."""

    def __init__(self, args, *, shape):
        self.data, self.indices, self.indptr = map(jnp.asarray, args)
        self.shape = tuple(int(s) for s in shape)
        _check2d(type(self).__name__, self.shape)

    nse = property(lambda self: self.data.size)

    def _bcsr(self) -> BCSR:
        return BCSR((self.data, self.indices, self.indptr), shape=self.shape)

    def to_bcoo(self) -> BCOO:
        return self._bcsr().to_bcoo()

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=_onp.int32):
        return csr_fromdense(mat, nse=nse, index_dtype=index_dtype)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32"):
        _check2d(cls.__name__, shape)
        rows = shape[0] if cls is CSR else shape[1]
        return cls((jnp.zeros(0, dtype or jnp.float32), jnp.zeros(0, index_dtype),
                    jnp.zeros(rows + 1, index_dtype)), shape=shape)

    @classmethod
    def _eye(cls, N, M, k, **kwds):
        b = BCSR._eye(N, M, k, **kwds) if cls is CSR else BCSR._eye(M, N, -k, **kwds)
        return cls((b.data, b.indices, b.indptr), shape=(N, M))

    def todense(self):
        return csr_todense(self)

    def transpose(self, axes=None):
        return CSC((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def tree_flatten(self):
        return (self.data, self.indices, self.indptr), (self.shape,)

    @classmethod
    def tree_unflatten(cls, aux, children):
        m = object.__new__(cls)
        m.data, m.indices, m.indptr = children
        m.shape, = aux
        return m

    def __matmul__(self, other):
        other = jnp.asarray(other)
        return csr_matvec(self, other) if other.ndim == 1 else csr_matmat(self, other)

    def __rmatmul__(self, other):
        other = jnp.asarray(other)
        return (csr_matvec(self, other, transpose=True) if other.ndim == 1 else
                csr_matmat(self, other.T, transpose=True).T)

    def __neg__(self):
        return type(self)((-self.data, self.indices, self.indptr), shape=self.shape)

    def __mul__(self, other):
        if jnp.ndim(other) != 0:
            raise NotImplementedError(f"{type(self).__name__} * array: scalars only")
        return type(self)((self.data * other, self.indices, self.indptr), shape=self.shape)

    __rmul__ = __mul__


class CSC(CSR):
    """A 2-d compressed-sparse-column matrix: the CSR arrays of its transpose (JAX:
    jax.experimental.sparse.CSC)."""

    def _bcsr(self) -> BCSR:
        return BCSR((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def to_bcoo(self) -> BCOO:
        return self._bcsr().to_bcoo().transpose()

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=_onp.int32):
        t = csr_fromdense(jnp.asarray(mat).T, nse=nse, index_dtype=index_dtype)
        return cls((t.data, t.indices, t.indptr), shape=t.shape[::-1])

    def todense(self):
        return bcoo_todense(self.to_bcoo())

    def transpose(self, axes=None):
        return CSR((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def __matmul__(self, other):
        return _dot(self.to_bcoo(), other)

    def __rmatmul__(self, other):
        return _dot(other, self.to_bcoo())


for _cls in (COO, CSR, CSC):
    tree_util.register_pytree_node(_cls, _cls.tree_flatten, _cls.tree_unflatten)


def _dot(a, b):
    nd_a = a.ndim if isinstance(a, JAXSparse) else jnp.ndim(a)
    nd_b = b.ndim if isinstance(b, JAXSparse) else jnp.ndim(b)
    return bcoo_dot_general(a, b, dimension_numbers=(((nd_a - 1,), (0 if nd_b == 1
                                                                    else nd_b - 2,)), ((), ())))


def _product(mat, v, transpose: bool):
    sp = mat.to_bcoo()
    if transpose:
        sp = sp.transpose()
    v = jnp.asarray(v)
    if v.ndim not in (1, 2) or v.shape[0] != sp.shape[1]:
        raise TypeError(f"sparse matvec/matmat: operand of shape {v.shape} does not match "
                        f"a matrix of shape {sp.shape}")
    return _dot(sp, v)


def coo_fromdense(mat, *, nse=None, index_dtype=jnp.int32) -> COO:
    """JAX: jax.experimental.sparse.coo_fromdense."""
    mat = jnp.asarray(mat)
    _check2d("coo_fromdense", mat.shape)
    b = bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype)
    return COO((b.data, b.indices[:, 0], b.indices[:, 1]), shape=mat.shape, rows_sorted=True)


def coo_todense(mat: COO):
    """JAX: jax.experimental.sparse.coo_todense."""
    return bcoo_todense(mat.to_bcoo())


def coo_matvec(mat: COO, v, transpose: bool = False):
    """JAX: jax.experimental.sparse.coo_matvec."""
    return _product(mat, v, transpose)


def coo_matmat(mat: COO, B, *, transpose: bool = False):
    """JAX: jax.experimental.sparse.coo_matmat."""
    return _product(mat, B, transpose)


def csr_fromdense(mat, *, nse=None, index_dtype=jnp.int32) -> CSR:
    """JAX: jax.experimental.sparse.csr_fromdense."""
    mat = jnp.asarray(mat)
    _check2d("csr_fromdense", mat.shape)
    b = BCSR.from_bcoo(bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype))
    return CSR((b.data, b.indices, b.indptr), shape=mat.shape)


def csr_todense(mat: CSR):
    """JAX: jax.experimental.sparse.csr_todense."""
    return bcoo_todense(mat.to_bcoo())


def csr_matvec(mat: CSR, v, transpose: bool = False):
    """JAX: jax.experimental.sparse.csr_matvec."""
    return _product(mat, v, transpose)


def csr_matmat(mat: CSR, B, *, transpose: bool = False):
    """JAX: jax.experimental.sparse.csr_matmat."""
    return _product(mat, B, transpose)
