"""Constructors and helpers shared by the formats: `empty`, `eye`, `random_bcoo`,
`todense`. JAX: jax.experimental.sparse.api / random."""
from __future__ import annotations

import math
import operator

from mjax.specs import dtypes
from mjax import numpy as jnp
from mjax import random
from mjax.vmap.batching import vmap
from mjax.experimental.sparse._base import JAXSparse
from mjax.experimental.sparse.bcoo import BCOO, bcoo_sort_indices
from mjax.experimental.sparse.bcsr import BCSR
from mjax.experimental.sparse.coo_csr import COO, CSC, CSR

_FORMATS = {"bcoo": BCOO, "bcsr": BCSR, "coo": COO, "csr": CSR, "csc": CSC}


def _format(name: str):
    if name not in _FORMATS:
        raise ValueError(f"sparse_format={name!r} is not one of {sorted(_FORMATS)}")
    return _FORMATS[name]


def empty(shape, dtype=None, index_dtype="int32", sparse_format: str = "bcoo", **kwds):
    """An all-zero sparse array of `shape`. JAX: jax.experimental.sparse.empty."""
    return _format(sparse_format)._empty(shape, dtype=dtype, index_dtype=index_dtype, **kwds)


def eye(N: int, M: int | None = None, k: int = 0, dtype=None, index_dtype="int32",
        sparse_format: str = "bcoo", **kwds):
    """The sparse identity (ones on diagonal k). JAX: jax.experimental.sparse.eye."""
    return _format(sparse_format)._eye(int(N), int(N if M is None else M), int(k),
                                       dtype=dtype, index_dtype=index_dtype, **kwds)


def todense(arr):
    """A sparse array as a dense one (anything else as it is). JAX:
    jax.experimental.sparse.todense."""
    return arr.todense() if isinstance(arr, JAXSparse) else arr


def random_bcoo(key, shape, *, dtype=jnp.float64, indices_dtype=None, nse=0.2,
                n_batch: int = 0, n_dense: int = 0, unique_indices: bool = True,
                sorted_indices: bool = False, generator=random.uniform, **kwds) -> BCOO:
    """A BCOO array with random indices (nse of them per batch element, or that fraction of
    the sparse size) and `generator`'s values. JAX: jax.experimental.sparse.random_bcoo."""
    shape = tuple(operator.index(s) for s in shape)
    n_batch, n_dense = operator.index(n_batch), operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > len(shape):
        raise ValueError(f"random_bcoo: invalid n_batch={n_batch}, n_dense={n_dense} for "
                         f"shape={shape}")
    n_sparse = len(shape) - n_batch - n_dense
    batch, sparse = shape[:n_batch], shape[n_batch:n_batch + n_sparse]
    dense = shape[n_batch + n_sparse:]
    sparse_size = math.prod(sparse)
    if not 0 <= nse < sparse_size:
        raise ValueError(f"random_bcoo: nse={nse}, expected to be between 0 and "
                         f"{sparse_size}")
    count = int(math.ceil(nse * sparse_size)) if 0 < nse < 1 else operator.index(nse)
    indices_dtype = indices_dtype or dtypes.default_int()
    keys = random.split(key, math.prod(batch) + 1)

    def one(k):
        if not sparse:
            return jnp.zeros((count, 0), indices_dtype)
        flat = random.choice(k, sparse_size, shape=(count,), replace=not unique_indices)
        return jnp.stack(jnp.unravel_index(flat.astype(indices_dtype), sparse), axis=-1)
    indices = vmap(one)(keys[1:]).reshape(batch + (count, n_sparse)).astype(indices_dtype)
    data = generator(keys[0], shape=batch + (count,) + dense, dtype=dtype, **kwds)
    mat = BCOO((data, indices), shape=shape, unique_indices=unique_indices)
    return bcoo_sort_indices(mat) if sorted_indices else mat
