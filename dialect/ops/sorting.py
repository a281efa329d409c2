"""Partial sorting: `jaxpr.top_k` (full sorts are `jaxpr.sort`, in reductions.py)."""
from __future__ import annotations

import numpy as np
from jaxlib import _jax

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


def approx_top_k_shape(shape: tuple[int, ...], *, k: int, reduction_dimension: int,
                       recall_target: float, aggregate_to_topk: bool,
                       reduction_input_size_override: int) -> tuple[int, ...]:
    """The shape of approx_top_k's results: k along the reduction dimension, or XLA's
    reduced size when the results are not aggregated. JAX: _approx_top_k_abstract_eval."""
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if not shape:
        raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {shape}")
    n = shape[reduction_dimension]
    if n < k:
        raise ValueError(f"k must be smaller than the size of reduction_dim {n}, got {k}")
    size = k if aggregate_to_topk else _jax.approx_top_k_reduction_output_size(
        n, len(shape), k, recall_target, aggregate_to_topk, reduction_input_size_override)[0]
    return shape[:reduction_dimension] + (size,) + shape[reduction_dimension + 1:]


class ApproxTopKOp(JaxprOp, name="approx_top_k"):
    """The (approximately) k largest (`is_max_k`) or smallest entries along
    `reduction_dimension` and their int32 indices, by XLA's ApproxTopK: traced where the
    platform computes it approximately (a TPU); elsewhere approx_max_k is an exact top_k,
    as XLA's fallback is. JAX: lax.approx_top_k_p."""
    attributes = {"k": A.Int(), "reduction_dimension": A.Int(), "recall_target": A.Float(),
                  "is_max_k": A.Bool(), "reduction_input_size_override": A.Int(),
                  "aggregate_to_topk": A.Bool()}

    @classmethod
    def infer(cls, x, *, k, reduction_dimension, recall_target, is_max_k,
              reduction_input_size_override, aggregate_to_topk):
        check_dtype("approx_top_k", x, "float")
        shape = approx_top_k_shape(
            x.shape, k=k, reduction_dimension=reduction_dimension,
            recall_target=recall_target, aggregate_to_topk=aggregate_to_topk,
            reduction_input_size_override=reduction_input_size_override)
        return ShapedArray(shape, x.dtype), ShapedArray(shape, np.dtype(np.int32))


__all__ = [n for n in dir() if n.endswith("Op")]
