"""`ShapeDtypeStruct`: an abstract array (shape, dtype, weak type, sharding, the mesh axes
it varies along in a shard_map body, whether it is a ref; no data), usable where jit,
eval_shape, the callbacks and pallas_call take arrays. JAX: jax.ShapeDtypeStruct."""
from __future__ import annotations

import math

import numpy as np

from mjax.dialect import ShapedArray
from mjax.dialect.types import KeyType, RefAval
from mjax.dialect.shape_poly import as_dim
from mjax.specs.manual_axis_type import ManualAxisType
from mjax.specs.dtypes import aval_of_value


class ShapeDtypeStruct:
    """An abstract array: shape and dtype, no data. Usable as a jit/eval_shape argument."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding", "manual_axis_type", "is_ref")

    def __init__(self, shape, dtype, *, sharding=None, weak_type=False,
                 manual_axis_type=None, is_ref=False):
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be specified.")
        if manual_axis_type is not None and not isinstance(manual_axis_type,
                                                           ManualAxisType):
            raise TypeError(f"`manual_axis_type` argument passed to ShapeDtypeStruct "
                            f"should be of type `jax.sharding.ManualAxisType`. Got type "
                            f"{type(manual_axis_type)}")
        self.shape = tuple(shape)
        self.dtype = dtype if isinstance(dtype, KeyType) else np.dtype(dtype)
        self.weak_type = weak_type
        self.sharding = sharding
        self.manual_axis_type = manual_axis_type
        self.is_ref = is_ref

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
        return (RefAval if self.is_ref else ShapedArray)(shape, self.dtype, self.weak_type)

    def update(self, **kwargs) -> "ShapeDtypeStruct":
        """A copy with the given fields replaced (shape, dtype, sharding, weak_type,
        manual_axis_type, is_ref)."""
        fields = {k: getattr(self, k) for k in self.__slots__}
        unknown = set(kwargs) - set(fields)
        if unknown:
            raise TypeError(f"ShapeDtypeStruct.update() got unexpected keyword arguments "
                            f"{sorted(unknown)}")
        fields.update(kwargs)
        return ShapeDtypeStruct(fields.pop("shape"), fields.pop("dtype"), **fields)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)  # (a dimension expression for symbolic shapes)

    def __repr__(self):
        name = str(self.dtype) if isinstance(self.dtype, KeyType) else self.dtype.name
        extra = (f", sharding={self.sharding}" if self.sharding is not None else "") + (
            ", weak_type=True" if self.weak_type else "") + (
            f", manual_axis_type={self.manual_axis_type}"
            if self.manual_axis_type is not None else "") + (
            ", is_ref=True" if self.is_ref else "")
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={name}{extra})"

    def __eq__(self, other):
        # (as JAX's: the weak type, the sharding, the varying axes and refness count)
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self.sharding == other.sharding
                and self.manual_axis_type == other.manual_axis_type
                and self.is_ref == other.is_ref)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type, self.is_ref))
