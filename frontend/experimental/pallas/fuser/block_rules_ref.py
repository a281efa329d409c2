"""Fuser rules for reads and writes of whole Refs (`ref[...]`, `ref[...] = v`) in a fused
function closing over Refs: the Ref is blocked as the value read or written, and the
kernel function reads or writes the block at the output's block indices of the whole
Ref (the one the function closes over, or a Ref argument); a read indexing dims by
integers (`ref[3]`) reads its block at those indices. Slicing reads and partial writes
are a NotImplementedError. JAX: block_spec.py's get and swap rules."""
from __future__ import annotations

from mjax import numpy as jnp
from mjax.experimental.pallas.core import Blocked, Squeezed, no_block_spec
from mjax.experimental.pallas.fuser.block_types import (EVAL_RULES, PULL_RULES,
                                                        block_size, is_squeezed,
                                                        no_block_index_transform)
from mjax.experimental.pallas.fuser.stateful import SWAP
from mjax.tracing.primitive import op_primitives

_GET = op_primitives()["ref_get_p"]


class IndexedSwap(ValueError, NotImplementedError):
    """A swap with index operands in a pulled function: JAX's swap rule gives them no
    block transforms (a ValueError from its strict zip)."""


class UnblockedWrite(NotImplementedError, AttributeError):
    """A swap whose old value is unused has no block: JAX's rule reads the missing
    block spec's block shape (an AttributeError)."""


def _check_sizes(ctx, what, params, allow_indexed=False):
    """Whole accesses only (with allow_indexed, dims an integer indexes too: ref[3])."""
    shape = tuple(ctx.avals_in[0].shape)
    squeezed = tuple(params.get("squeezed", ()))
    if (squeezed and not allow_indexed) or any(
            n != s for d, (n, s) in enumerate(zip(params.get("sizes", shape), shape))
            if d not in squeezed):
        raise NotImplementedError(f"{what} not supported yet (only whole-Ref reads and "
                                  "writes, ref[...], and reads indexing dims by integers, "
                                  "ref[3], are)")
    return squeezed


def _block_shape(transform, what):
    if not all(b is None or isinstance(b, (int, Blocked)) or is_squeezed(b)
               for b in transform.block_shape):
        raise NotImplementedError(f"{what} not supported yet: block shape "
                                  f"{transform.block_shape}")


def _get_pull(ctx, transform, **params):
    rest = [no_block_index_transform] * (len(ctx.avals_in) - 1)
    if transform.block_shape is None:
        return [transform] + rest
    squeezed = _check_sizes(ctx, "get", params, allow_indexed=True)
    _block_shape(transform, "get")
    if not squeezed:
        return [transform] + rest
    # (an integer-indexed dim is squeezed in the Ref's block, at the index the read
    # gives: the kernel function reads it from the equation's operand)
    shape = list(transform.block_shape)
    for d in squeezed:
        shape.insert(d, Squeezed())

    def index(*idxs):
        out = list(transform.block_index_transform(*idxs))
        for d in squeezed:
            out.insert(d, 0)
        return tuple(out)
    return [transform.replace(block_shape=tuple(shape), block_index_transform=index)] \
        + rest


def _swap_pull(ctx, transform, **params):
    # (as JAX's: the value and the Ref take the old value's block; the kernel function
    # refuses partial writes. JAX's rule gives no transform to index operands, which
    # its swap has for an integer index or a traced start: a ValueError there)
    if params.get("squeezed") or not all(ctx.literal_operands[2:]):
        raise IndexedSwap("swap not supported yet: a swap indexing a Ref by integers "
                          "(ref[3]) or at traced starts in a pulled function")
    return [transform, transform] + [no_block_index_transform] * (len(ctx.avals_in) - 2)


def _block_starts(block_shape, block_indices):
    """(start of each dim, the dims the block squeezes)."""
    starts, sizes, squeezed = [], [], []
    for d, (b, i) in enumerate(zip(block_shape, block_indices)):
        n = 1 if is_squeezed(b) else block_size(b)
        starts.append(jnp.asarray(i, jnp.int32) * n)
        sizes.append(n)
        if is_squeezed(b):
            squeezed.append(d)
    return starts, {"sizes": tuple(sizes), "squeezed": tuple(squeezed)}


def _whole_access(params, indices, shape) -> bool:
    return (tuple(params.get("sizes", shape)) == tuple(shape)
            and not params.get("squeezed")
            and all(getattr(i, "shape", ()) == () and _is_zero(i) for i in indices))


def _is_zero(i) -> bool:
    try:
        return int(i) == 0
    except Exception:      # (a traced index: not a whole access we can prove)
        return False


def _get_eval(ctx, ref, *idx, **params):
    spec = ctx.in_block_specs[0]
    if spec is no_block_spec or spec.block_shape is None:
        return _GET.bind(ref, *idx, **params)
    squeezed = tuple(params.get("squeezed", ()))
    if not all(_is_zero(i) for d, i in enumerate(idx) if d not in squeezed):
        raise NotImplementedError("get not supported yet (only whole-Ref reads, "
                                  "ref[...], and integer-indexed ones, ref[3], are)")
    out_shape = ctx.out_block_specs[0].block_shape
    starts, block = _block_starts(out_shape, ctx.get_out_block_indices()[0])
    for d in squeezed:      # (the dims the read indexes, at its indices)
        starts.insert(d, idx[d])
    sizes = list(block["sizes"])
    for d in squeezed:
        sizes.insert(d, 1)
    kept = [d for d in range(len(idx)) if d not in squeezed]
    out_squeezed = tuple(sorted(set(squeezed) | {kept[d] for d in block["squeezed"]}))
    return _GET.bind(ref, *starts, sizes=tuple(sizes), squeezed=out_squeezed)


def _swap_eval(ctx, ref, val, *idx, **params):
    if not _whole_access(params, idx, ctx.avals_in[0].shape):
        raise NotImplementedError("swap not supported yet (only whole-Ref writes, "
                                  "ref[...] = v, are)")
    spec = ctx.out_block_specs[0]
    if spec is no_block_spec or spec.block_shape is None:
        raise UnblockedWrite("pull_block_spec: a write to a Ref whose old value is "
                             "unused (`ref[...] = v`) has no block to write; read the "
                             "old value (jax.ref.swap) so it is blocked")
    starts, block = _block_starts(spec.block_shape, ctx.get_out_block_indices()[0])
    return SWAP.bind(ref, val, *starts, **block)


PULL_RULES[_GET] = _get_pull
EVAL_RULES[_GET] = _get_eval
PULL_RULES[SWAP] = _swap_pull
EVAL_RULES[SWAP] = _swap_eval
