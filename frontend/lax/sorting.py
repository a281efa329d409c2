"""Sorting, as in `jax.lax`: `sort` and `top_k` (one function per primitive),
`approx_max_k`/`approx_min_k` and `sort_key_val`."""
from __future__ import annotations

import operator

import numpy as np
from jaxlib import _jax

from mjax.tracing.core import at_user_line, aval_of_value, bind
from mjax.dialect.ops.reductions import SortOp
from mjax.dialect.ops.sorting import ApproxTopKOp, TopKOp
from mjax.lax.elementwise import neg
from mjax.lax.platform import current_platform
from mjax.passes.rules.tables import platform_rules
from mjax.dialect.shape_poly import is_symbolic_dim


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sorts one array or a sequence of arrays (by the first num_keys). JAX: lax.sort."""
    single = not isinstance(operand, (tuple, list))
    operands = [operand] if single else list(operand)
    if not 1 <= int(num_keys) <= len(operands):
        raise ValueError(f"num_keys={num_keys} must be between 1 and "
                         f"len(operand)={len(operands)}")
    rank = aval_of_value(operands[0]).ndim
    if rank == 0:
        raise ValueError("sort: operands must have rank >= 1, got shape ()")
    if not -rank <= int(dimension) < rank:
        raise ValueError(f"axis {dimension} is out of bounds for array of dimension {rank}")
    outs = bind(SortOp, *operands, dimension=int(dimension) % rank,
                is_stable=bool(is_stable), num_keys=int(num_keys))
    outs = outs if isinstance(outs, list) else [outs]
    return outs[0] if single else tuple(outs)


def _axis(axis, ndim, what="axis"):
    axis = operator.index(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(at_user_line(f"{what} argument out of range: {what}={axis} for "
                                      f"an operand of rank {ndim}"))
    return axis % ndim if ndim else axis


def top_k(operand, k, *, axis=-1):
    """The k largest entries along `axis` (largest first; ties: lower index first) and
    their int32 indices. JAX: lax.top_k."""
    k = k if is_symbolic_dim(k) else operator.index(k)
    if k < 0:
        raise ValueError(at_user_line(f"k argument to top_k must be nonnegative, got {k}"))
    aval = aval_of_value(operand)
    if np.issubdtype(aval.dtype, np.complexfloating):
        raise ValueError(at_user_line("top_k is not compatible with complex inputs."))
    if aval.ndim == 0:
        raise TypeError(at_user_line(f"top_k operand must have >= 1 dimension, got "
                                     f"{aval.shape}"))
    axis = _axis(axis, aval.ndim)
    if aval.shape[axis] < k:
        raise ValueError(at_user_line(
            f"k argument to top_k must be no larger than size along axis; got k={k} with "
            f"shape={list(aval.shape)} and axis={axis}"))
    values, indices = bind(TopKOp, operand, k=k, axis=axis)
    return [values, indices]  # a list, as JAX's


def _approx_k(operand, k, reduction_dimension, recall_target, reduction_input_size_override,
              aggregate_to_topk, is_max_k):
    aval = aval_of_value(operand)
    k = operator.index(k)
    if k <= 0:
        raise ValueError(at_user_line(f"k must be positive, got {k}"))
    if aval.ndim == 0:
        raise TypeError(at_user_line(f"approx_top_k operand must have >= 1 dimension, got "
                                     f"{aval.shape}"))
    dim = _axis(reduction_dimension, aval.ndim, "reduction_dimension")
    n = aval.shape[dim]
    if n < k:
        raise ValueError(at_user_line(f"k must be smaller than the size of reduction_dim "
                                      f"{n}, got {k}"))
    if not np.issubdtype(aval.dtype, np.floating) and "float" not in aval.dtype.name:
        raise ValueError(at_user_line("operand must be a floating type"))
    if platform_rules(current_platform()).approx_top_k:     # (XLA's approximate ApproxTopK)
        values, indices = bind(
            ApproxTopKOp, operand, k=k, reduction_dimension=dim,
            recall_target=float(recall_target), is_max_k=bool(is_max_k),
            reduction_input_size_override=int(reduction_input_size_override),
            aggregate_to_topk=bool(aggregate_to_topk))
        return [values, indices]
    size = k
    if not aggregate_to_topk:
        # The size of XLA's approximate (unaggregated) output; on CPU every kept entry is
        # exact, so this is an exact top-`size`.
        size = _jax.approx_top_k_reduction_output_size(
            n, aval.ndim, k, recall_target, aggregate_to_topk,
            reduction_input_size_override)[0]
    # XLA's CPU and GPU fallback is exact: a sort, sliced to the output size.
    if is_max_k:
        return top_k(operand, size, axis=dim)
    values, indices = top_k(neg(operand), size, axis=dim)
    return [neg(values), indices]


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The k largest entries along reduction_dimension and their indices (exact on CPU and
    GPU, as in JAX). JAX: lax.approx_max_k."""
    return _approx_k(operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The k smallest entries along reduction_dimension and their indices (exact on CPU
    and GPU, as in JAX). JAX: lax.approx_min_k."""
    return _approx_k(operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, False)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sorts keys along dimension and applies the same permutation to values.
    JAX: lax.sort_key_val."""
    k, v = sort((keys, values), dimension=dimension, is_stable=is_stable, num_keys=1)
    return k, v


__all__ = ["sort", "top_k", "approx_max_k", "approx_min_k", "sort_key_val"]
