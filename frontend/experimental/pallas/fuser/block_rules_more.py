"""Fuser rules for concatenate (blocks that fall within one operand, or a block holding
the whole concatenated dimension), iota (made per block) and reshape (merging
consecutive dims, or splitting the lane dim into (sublanes, lanes)). JAX: block_spec.py's
concatenate, iota and reshape rules."""
from __future__ import annotations

import numpy as np

from mjax import lax
from mjax.numpy import where
from mjax.tracing.primitive import op_primitives
from mjax.experimental.pallas.core import Blocked, BlockSpec, Element, Squeezed
from mjax.experimental.pallas.fuser.block_types import (EVAL_RULES, PULL_RULES,
                                                        PUSH_RULES, block_size,
                                                        is_squeezed)


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


def _merged_groups(shape_in, shape_out):
    """Consecutive input dims whose products are the output dims (trailing output dims
    of size 1 aside), or None where the reshape is not such a merge."""
    groups, i = [], 0
    for d in shape_out:
        if i == len(shape_in):
            break
        group = [shape_in[i]]
        i += 1
        while np.prod(group) < d and i < len(shape_in):
            group.append(shape_in[i])
            i += 1
        if np.prod(group) != d:
            return None
        groups.append(group)
    if i != len(shape_in) or np.prod(shape_out[len(groups):]) != 1:
        return None
    return groups


def _unravel(idx, grid):
    out = []
    for g in reversed(grid[1:]):
        out.append(idx % g)
        idx = idx // g
    return (idx, *reversed(out))


def _reshape_pull(ctx, transform, *, dimensions, new_sizes, **params):
    if dimensions is not None:
        raise NotImplementedError("reshape with None dimensions not supported yet")
    shape_in, shape_out = ctx.avals_in[0].shape, ctx.avals_out[0].shape
    block_shape = tuple(transform.block_shape)
    groups = _merged_groups(shape_in, shape_out)
    if groups is not None:
        new_shape, grids = [], []
        for d, bd, group in zip(shape_out, block_shape, groups):
            bs = 1 if is_squeezed(bd) else block_size(bd)
            if len(group) == 1:
                grids.append((group[0] // bs,))
                new_shape.append(1 if bd is None else bd)
                continue
            if not isinstance(bd, (int, Blocked)):
                raise NotImplementedError("reshape merge must use `Blocked` block size")
            dims = []
            for md in reversed(group):      # (the block fills the innermost dims first)
                if bs % md == 0:
                    dims.append(md)
                    bs //= md
                elif md % bs == 0:
                    dims.append(bs)
                    bs = 1
                else:
                    raise NotImplementedError("unsupported reshape merge")
            dims.reverse()
            grid = tuple(np.int32(md // b) for md, b in zip(group, dims))
            if np.prod(grid) != -(-d // block_size(bd)):
                raise NotImplementedError("reshape merge must maintain grid size")
            new_shape.extend(dims)
            grids.append(grid)

        def index(*idxs):
            # (zip drops the indices of trailing size-1 output dims)
            out = ()
            for i, grid in zip(transform.block_index_transform(*idxs), grids):
                out += _unravel(i, grid) if len(grid) > 1 else (i,)
            return out
        return [transform.replace(block_shape=tuple(new_shape),
                                  block_index_transform=index)]
    n, lanes = (shape_out[-2], shape_out[-1]) if len(shape_out) >= 2 else (0, 0)
    if (tuple(shape_in[:-1]) == tuple(shape_out[:-2]) and n * lanes == shape_in[-1]
            and lanes % 128 == 0):      # ((..., n * l) -> (..., n, l))
        if not all(isinstance(b, (int, Blocked)) for b in block_shape[-2:]):
            raise NotImplementedError(f"reshape must use Blocked block sizes on sublanes "
                                      f"and lanes: {block_shape}")
        sub, lane = block_size(block_shape[-2]), block_size(block_shape[-1])
        if (sub * lane) % 128:
            raise NotImplementedError("reshape with non-128 aligned block size on lanes "
                                      "not supported yet")
        if lane != lanes:
            raise NotImplementedError(f"reshape with non-matching block size on lanes not "
                                      f"supported yet: {block_shape}")

        def split_index(*idxs):
            *idx, row, _ = transform.block_index_transform(*idxs)
            return (*idx, row)
        return [transform.replace(block_shape=(*block_shape[:-2], sub * lane),
                                  block_index_transform=split_index)]
    raise NotImplementedError(f"reshape not supported yet: {ctx.avals_in[0]}, "
                              f"{ctx.avals_out[0]}")


def _reshape_eval(ctx, x, **params):
    shape = tuple(block_size(b) for b in ctx.out_block_specs[0].block_shape)
    return lax.reshape(x, tuple(s for s in shape if s is not None))


def _reshape_push(ctx, spec, *, dimensions, new_sizes, **params):
    if dimensions is not None:
        raise NotImplementedError("reshape with None dimensions not supported yet")
    shape_in, shape_out = ctx.avals_in[0].shape, ctx.avals_out[0].shape
    n, lanes = (shape_out[-2], shape_out[-1]) if len(shape_out) >= 2 else (0, 0)
    if not (tuple(shape_in[:-1]) == tuple(shape_out[:-2]) and n * lanes == shape_in[-1]
            and lanes % 128 == 0):
        raise NotImplementedError(f"reshape not supported yet: {ctx.avals_in[0]}, "
                                  f"{ctx.avals_out[0]}")
    block_shape = tuple(spec.block_shape)
    if not isinstance(block_shape[-1], (int, Blocked)):
        raise NotImplementedError(f"reshape must use Blocked block size on lanes: "
                                  f"{block_shape}")
    b = block_size(block_shape[-1])
    if b % 128:
        raise NotImplementedError("reshape with non-128 aligned block size on lanes not "
                                  "supported yet")
    if b % lanes:
        raise NotImplementedError("reshape with non-divisible block size on lanes not "
                                  "supported yet")

    def index_map(*args):
        return (*spec.index_map(*args), 0)
    return BlockSpec((*block_shape[:-1], b // lanes, lanes), index_map)


def _concatenate_push(ctx, *specs, dimension):
    for spec, aval in zip(specs, ctx.avals_in):
        if block_size(spec.block_shape[dimension]) != aval.shape[dimension]:
            raise NotImplementedError(
                f"concatenate not supported yet: block shapes "
                f"{[s.block_shape for s in specs]} for operands {list(ctx.avals_in)}")

    def index_map(*args):
        indices = [s.index_map(*args) for s in specs]
        for idx in indices[1:]:
            if not all(a is b or (isinstance(a, int) and isinstance(b, int) and a == b)
                       for a, b in zip(indices[0], idx)):
                raise ValueError("Cannot statically prove that all input blocks to "
                                 "concatenate are the same.")
        # (every block holds the whole concatenated dimension: block 0 along it)
        return tuple(0 if d == dimension else i for d, i in enumerate(indices[0]))
    shape = list(specs[0].block_shape)
    shape[dimension] = sum(block_size(s.block_shape[dimension]) for s in specs)
    return BlockSpec(tuple(shape), index_map)


PUSH_RULES[lax.reshape_p] = _reshape_push
PUSH_RULES[lax.concatenate_p] = _concatenate_push
PULL_RULES[lax.reshape_p] = _reshape_pull
EVAL_RULES[lax.reshape_p] = _reshape_eval
PULL_RULES[lax.concatenate_p] = _concatenate_pull
EVAL_RULES[lax.concatenate_p] = _concatenate_eval
PULL_RULES[lax.iota_p] = _iota_pull
EVAL_RULES[lax.iota_p] = _iota_eval


# ---- tile, bitcast_convert_type --------------------------------------------------------
def _tile_pull(ctx, transform, *, reps):
    in_shape = ctx.avals_in[0].shape
    block_shape = tuple(transform.block_shape)
    # (as JAX's: pl.Squeezed() dims, not None)
    if not all(isinstance(b, (int, Squeezed)) for b in block_shape):
        raise NotImplementedError("tile with non-int block dimensions not supported yet")
    sizes = [1 if is_squeezed(b) else block_size(b) for b in block_shape]
    if not all(s % d == 0 or d % s == 0 for s, d in zip(sizes, in_shape)):
        raise NotImplementedError(
            f"Every block dimension must be either a multiple or factor of input. Got "
            f"block {block_shape} for input {in_shape}")

    def index(*idxs):
        # (a block at least the operand's size reads all of it; a smaller one reads
        # its block of the operand, which repeats every in_dim // size blocks)
        return tuple(0 if s >= d else i % (d // s) for i, s, d in
                     zip(transform.block_index_transform(*idxs), sizes, in_shape))
    new_shape = tuple(b if is_squeezed(b) else min(b, d)
                      for b, d in zip(block_shape, in_shape))
    return [transform.replace(block_shape=new_shape, block_index_transform=index)]


def _tile_eval(ctx, x, *, reps):
    block = tuple(block_size(b) for b in ctx.out_block_specs[0].block_shape
                  if not is_squeezed(b))
    if any(o % i for o, i in zip(block, x.shape)):
        raise NotImplementedError(f"Block size must be a multiple of the input size. Got "
                                  f"block {block=} but input {x.shape}.")
    return lax.tile(x, tuple(max(o // i, 1) for o, i in zip(block, x.shape)))


def _bitcast_pull(ctx, transform, *, new_dtype):
    old = np.dtype(ctx.avals_in[0].dtype)
    if old.itemsize != np.dtype(new_dtype).itemsize:
        raise NotImplementedError(
            f"bitcast_convert_type with different bitwidths not supported yet: "
            f"old_dtype={old}, new_dtype={np.dtype(new_dtype)}")
    return [transform]


_TILE = op_primitives()["tile_p"]      # (lax.tile_p is lax.tile's own Primitive)
PULL_RULES[_TILE] = _tile_pull
EVAL_RULES[_TILE] = _tile_eval
PULL_RULES[lax.bitcast_convert_type_p] = _bitcast_pull
EVAL_RULES[lax.bitcast_convert_type_p] = lambda ctx, x, *, new_dtype: \
    lax.bitcast_convert_type(x, new_dtype)

# (axis_index gives a scalar, which operands take unblocked: only its evaluation, as JAX)
_AXIS_INDEX = op_primitives()["axis_index_p"]
EVAL_RULES[_AXIS_INDEX] = lambda ctx, **params: _AXIS_INDEX.bind(**params)
