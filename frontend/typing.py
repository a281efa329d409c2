"""JAX: jax.typing: annotations for JAX-style functions (ArrayLike, DTypeLike)."""
from __future__ import annotations

import typing
from typing import Any, Protocol, Union

import numpy as np

from mjax.specs.basearray import Array    # (jax.Array itself, as JAX's ArrayLike names it)


@typing.runtime_checkable
class SupportsDType(Protocol):
    """Anything with a `.dtype` (mjax.numpy.float32, an array, a ShapeDtypeStruct)."""

    @property
    def dtype(self, /) -> np.dtype: ...


# Scalars a JAX function accepts in place of an array.
_StaticScalar = Union[np.bool_, np.number, bool, int, float, complex]

ArrayLike = Union[Array, np.ndarray, _StaticScalar]
"""Type annotation for JAX array-like objects (an array, a NumPy array or a scalar)."""

DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]
"""Type annotation for what `np.dtype` takes and gives a JAX dtype ('float32',
np.int32, mjax.numpy.float32, ...)."""

__all__ = ["ArrayLike", "DTypeLike"]
