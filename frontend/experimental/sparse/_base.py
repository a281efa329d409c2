"""The base of mjax's sparse arrays: `JAXSparse` (what every format shares), the warning
and error classes JAX's sparse module names, and `batched`, which runs a function of one
batch element over the leading batch dimensions of its arguments (flattened, vmapped).
JAX: jax.experimental.sparse._base / util."""
from __future__ import annotations

import math

from mjax import numpy as jnp
from mjax.vmap.batching import vmap
from mjax.tracing.tracer import Tracer


class SparseEfficiencyError(ValueError):
    """An operation would make a sparse array's storage much larger."""


class SparseEfficiencyWarning(UserWarning):
    """An operation makes a sparse array's storage larger."""


class CuSparseEfficiencyWarning(SparseEfficiencyWarning):
    """(JAX's cuSPARSE fallback warning; mjax has no cuSPARSE path.)"""


class JAXSparse:
    """What all sparse formats share: `shape`, `dtype`, `ndim`, `size`, `nse`,
    `todense`, `.T` and the arithmetic operators (each format gives the ops).
    JAX: jax.experimental.sparse.JAXSparse."""

    data: object
    shape: tuple
    __array_ufunc__ = None     # (NumPy operators defer to ours: ndarray @ sparse)
    __array_priority__ = 100

    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        name = type(self).__name__
        try:
            extra = "".join(f", {k}={getattr(self, k)}" for k in ("n_batch", "n_dense")
                            if getattr(self, k, 0))
            return f"{name}({self.dtype.name}{list(self.shape)}, nse={self.nse}{extra})"
        except Exception:  # (a pytree of placeholders, as tree_util builds them)
            return f"{name}(<invalid>)"

    @property
    def T(self):
        return self.transpose()

    def block_until_ready(self):
        for leaf in self.tree_flatten()[0]:
            leaf.block_until_ready()
        return self


def is_traced(*xs) -> bool:
    """Whether any of `xs` is a tracer (so its values cannot be read on the host)."""
    return any(isinstance(x, Tracer) for x in xs)


def batched(fn, n_batch: int, *args):
    """fn(*one_batch_element_of_args) over the leading `n_batch` dimensions of each of
    `args` (size-1 dimensions broadcast), returning a tuple of results with those
    dimensions in front."""
    if n_batch == 0:
        out = fn(*args)
        return out if isinstance(out, tuple) else (out,)
    shape = tuple(max(d) for d in zip(*(a.shape[:n_batch] for a in args)))
    size = math.prod(shape)
    flat = [jnp.broadcast_to(a, shape + a.shape[n_batch:]).reshape((size,) + a.shape[n_batch:])
            for a in args]
    out = vmap(lambda *xs: fn(*xs))(*flat)
    out = out if isinstance(out, tuple) else (out,)
    return tuple(o.reshape(shape + o.shape[1:]) for o in out)


def ravel_keys(idx, shape):
    """(nse, k) multi-indices into `shape` as one int per element; an element out of
    bounds in any dimension gets prod(shape) (sorts last). Returns (keys, in_bounds)."""
    ok = jnp.ones(idx.shape[:1], bool)
    key = jnp.zeros(idx.shape[:1], idx.dtype)
    for k, s in enumerate(shape):
        col = idx[:, k]
        ok = ok & (col >= 0) & (col < s)
        key = key * s + col
    return jnp.where(ok, key, math.prod(shape)), ok


def unravel_keys(key, shape, dtype):
    """ravel_keys' inverse: the sentinel prod(shape) becomes `shape` (out of bounds)."""
    sentinel = key >= math.prod(shape)
    cols, rest = [], key
    for s in reversed(shape):
        cols.append(rest % s if s else rest)
        rest = rest // s if s else rest
    cols = cols[::-1]
    out = [jnp.where(sentinel, s, c) for c, s in zip(cols, shape)]
    if not out:
        return jnp.zeros(key.shape + (0,), dtype)
    return jnp.stack(out, axis=-1).astype(dtype)


def vmapped_shape(shape, ndim: int, indices) -> tuple:
    """A sparse array's shape when its leaves come back with other ranks than they were
    flattened with: vmap (which maps the leaves of pytrees) takes or adds leading batch
    dimensions (in_axes/out_axes 0). Leaves that are not arrays (axis specs) keep it."""
    got = getattr(indices, "ndim", None)
    if not isinstance(got, int) or got == ndim or not hasattr(indices, "shape"):
        return shape
    if got < ndim:
        return tuple(shape[ndim - got:])
    return tuple(indices.shape[:got - ndim]) + tuple(shape)
