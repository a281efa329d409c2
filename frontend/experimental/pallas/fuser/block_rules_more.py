"""Fuser rules for concatenate (blocks that fall within one operand, or a block holding
the whole concatenated dimension) and iota (made per block). JAX: block_spec.py's
concatenate and iota rules."""
from __future__ import annotations

import numpy as np

from mjax import lax
from mjax.numpy import where
from mjax.experimental.pallas.core import Element
from mjax.experimental.pallas.fuser.block_types import (EVAL_RULES, PULL_RULES,
                                                        block_size, is_squeezed)


def _concat_layout(block_shape, dimension, avals):
    """(block size along the dimension, whether a block spans it all, start and end
    block of each operand)."""
    if any(isinstance(d, Element) for d in block_shape):
        raise NotImplementedError("Concatenation with Element indexing is not yet "
                                  "supported.")
    b = 1 if is_squeezed(block_shape[dimension]) else block_size(block_shape[dimension])
    sizes = [a.shape[dimension] for a in avals]
    if b == sum(sizes):
        return b, True, None, None
    for a, n in zip(avals, sizes):
        if n % b:
            raise ValueError(
                f"Shape along concat dimension {dimension} must be divisible by the "
                f"block shape {block_shape[dimension]} for all children. Got shape "
                f"{a.shape}.")
    counts = [n // b for n in sizes]
    ends = np.cumsum(counts).astype(np.int32)
    return b, False, np.concatenate(([0], ends[:-1])).astype(np.int32), ends


def _concatenate_pull(ctx, transform, *, dimension):
    shape = tuple(transform.block_shape)
    _, whole, starts, ends = _concat_layout(shape, dimension, ctx.avals_in)
    if whole:
        return [transform.replace(block_shape=shape[:dimension] + (a.shape[dimension],)
                                  + shape[dimension + 1:]) for a in ctx.avals_in]

    def child(k):
        def index(*idxs):
            idx = tuple(transform.block_index_transform(*idxs))
            i = idx[dimension]
            inside = (starts[k] <= i) & (i < ends[k])
            # (a block outside this operand reads its nearest block; the eval rule
            # picks the operand the block is in)
            nearest = where(i < starts[k], 0, ends[k] - starts[k] - 1)
            return idx[:dimension] + (where(inside, i - starts[k], nearest),) + \
                idx[dimension + 1:]
        return transform.replace(block_index_transform=index)
    return [child(k) for k in range(len(ctx.avals_in))]


def _concatenate_eval(ctx, *args, dimension):
    shape = tuple(ctx.out_block_specs[0].block_shape)
    _, whole, starts, ends = _concat_layout(shape, dimension, ctx.avals_in)
    if whole:
        return lax.concatenate(args, dimension)
    i = ctx.get_out_block_indices()[0][dimension]
    which = 0
    for k in range(len(args)):
        which = lax.select((starts[k] <= i) & (i < ends[k]), np.int32(k),
                           np.int32(which) if isinstance(which, int) else which)
    return lax.select_n(which, *args)


def _iota_pull(ctx, transform, *, dimension, **params):
    if transform.block_shape[dimension] is None:
        raise ValueError(f"Cannot pull iota along dimension {dimension} with None block "
                         "size.")
    return []


def _iota_eval(ctx, *, dimension, shape, dtype, **params):
    spec = ctx.out_block_specs[0]
    idx = ctx.get_out_block_indices()[0]
    block = tuple(block_size(d) for d in spec.block_shape if not is_squeezed(d))
    dim = dimension - sum(is_squeezed(d) for d in spec.block_shape[:dimension])
    local = lax.broadcasted_iota(dtype, block, dim)
    return local + idx[dimension] * block_size(spec.block_shape[dimension])


PULL_RULES[lax.concatenate_p] = _concatenate_pull
EVAL_RULES[lax.concatenate_p] = _concatenate_eval
PULL_RULES[lax.iota_p] = _iota_pull
EVAL_RULES[lax.iota_p] = _iota_eval
