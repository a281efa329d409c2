"""The base class of `mjax.Array` and tracers: what an array is (shape, dtype, size...).

Its operators (`+ - * / ...`, comparisons, indexing, `.at`) and NumPy-style methods
(`.sum()`, `.reshape()`, ...) call `mjax.numpy`, which sits floors above this one: they
are installed onto `ArrayMethods` by mjax.numpy.array_operators when mjax.numpy is imported
(`install`), as JAX's jax.numpy sets its array methods. This is a registration point of
the floors (docs/design.md).
"""
from __future__ import annotations

import warnings

import numpy as np


def warn_array_as_dtype() -> None:
    warnings.warn("Implicit conversion of an array to a dtype is deprecated; rather than "
                  "dtype=arr use dtype=arr.dtype. In the future this will result in an "
                  "error.", DeprecationWarning, stacklevel=3)


def selects_all(idx) -> bool:
    """Whether idx is `...`, `()` or `(...,)`: an index that selects the whole array (JAX
    gives the array itself for it; so do mjax's arrays and key arrays)."""
    if idx is Ellipsis:
        return True
    return type(idx) is tuple and (not idx or (len(idx) == 1 and idx[0] is Ellipsis))


class ArrayMethods:
    """Mixin of Array and Tracer (both carry `aval`)."""

    __slots__ = ()

    def __setitem__(self, idx, value):
        raise TypeError("JAX arrays are immutable and do not support in-place item "
                        "assignment. Instead of x[idx] = y, use x = x.at[idx].set(y) or "
                        "another .at[] method: "
                        "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def weak_type(self):
        return self.aval.weak_type

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def itemsize(self):
        return np.dtype(self.dtype).itemsize

    @property
    def nbytes(self):
        return self.size * self.itemsize

    def tobytes(self, order="C"):
        return np.asarray(self).tobytes(order)


def install(cls: type, methods: dict) -> None:
    """Sets `methods` (name -> function or property) on `cls`: ArrayMethods, or one of
    its subclasses for methods only that class has."""
    for name, method in methods.items():
        setattr(cls, name, method)
