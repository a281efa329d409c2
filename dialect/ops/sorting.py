"""Partial sorting: `jaxpr.top_k` (full sorts are `jaxpr.sort`, in reductions.py)."""
from __future__ import annotations

import numpy as np

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.dtype_rules import check_dtype
from mjax.dialect.types import ShapedArray


def top_k_shape(shape: tuple[int, ...], k: int, axis: int) -> tuple[int, ...]:
    """The shape of top_k's results. JAX: _top_k_abstract_eval."""
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if not shape:
        raise TypeError(f"top_k operand must have >= 1 dimension, got {shape}")
    if not 0 <= axis < len(shape):
        raise ValueError(f"axis argument out of range: axis={axis} for operand.shape={shape}")
    if shape[axis] < k:
        raise ValueError(f"k argument to top_k must be no larger than size along axis; got "
                         f"k={k} with shape={list(shape)} and axis={axis}")
    return shape[:axis] + (k,) + shape[axis + 1:]


class TopKOp(JaxprOp, name="top_k"):
    """The k largest entries along `axis` and their int32 indices, largest first (ties:
    the lower index first). JAX: lax.top_k_p."""
    attributes = {"k": A.Dim(), "axis": A.Int()}

    @classmethod
    def infer(cls, x, *, k, axis):
        check_dtype("top_k", x, "bool", "int", "float")
        shape = top_k_shape(x.shape, k, axis)
        return ShapedArray(shape, x.dtype), ShapedArray(shape, np.dtype(np.int32))


__all__ = [n for n in dir() if n.endswith("Op")]
