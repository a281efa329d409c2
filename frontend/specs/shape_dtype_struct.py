"""`ShapeDtypeStruct`: an abstract array (shape, dtype, weak type, sharding; no data),
usable where jit, eval_shape and the callbacks take arrays. JAX: jax.ShapeDtypeStruct."""
from __future__ import annotations

import math

import numpy as np

from mjax.dialect import ShapedArray
from mjax.dialect.types import KeyType
from mjax.dialect.shape_poly import as_dim
from mjax.specs.dtypes import aval_of_value


class ShapeDtypeStruct:
    """An abstract array: shape and dtype, no data. Usable as a jit/eval_shape argument."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, *, weak_type=False, sharding=None):
        self.shape = tuple(shape)
        self.dtype = dtype if isinstance(dtype, KeyType) else np.dtype(dtype)
        self.weak_type = weak_type
        self.sharding = sharding

    @classmethod
    def like(cls, x) -> "ShapeDtypeStruct":
        """The shape, dtype and weak type of an array (or anything with an aval)."""
        aval = aval_of_value(x)
        return cls(aval.shape, aval.dtype, weak_type=aval.weak_type,
                   sharding=x.sharding if isinstance(x, ShapeDtypeStruct) else None)

    @property
    def aval(self):
        try:
            shape = tuple(map(as_dim, self.shape))
        except (TypeError, ValueError):
            raise TypeError(f"{self}: a shape holds integers and symbolic dimensions "
                            f"(mjax.export.symbolic_shape), got {self.shape}") from None
        return ShapedArray(shape, self.dtype, self.weak_type)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)  # (a dimension expression for symbolic shapes)

    def __repr__(self):
        name = str(self.dtype) if isinstance(self.dtype, KeyType) else self.dtype.name
        extra = (f", sharding={self.sharding}" if self.sharding is not None else "") + (
            ", weak_type=True" if self.weak_type else "")
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={name}{extra})"

    def __eq__(self, other):
        # (as JAX's: the weak type and the sharding count)
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self.sharding == other.sharding)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))
