"""Fuser rules for stack and unstack (`jnp.stack` / `jnp.unstack` trace to them): a block
of the stacked array holds the whole stacked axis, so each operand's block is that block
without the axis, at the same block indices. JAX: block_spec.py's stack and unstack
rules."""
from __future__ import annotations

from mjax import lax
from mjax.experimental.pallas.core import Blocked, BlockSpec, Element
from mjax.experimental.pallas.fuser.block_types import (EVAL_RULES, PULL_RULES,
                                                        PUSH_RULES, block_size,
                                                        is_squeezed,
                                                        no_block_index_transform)


def _drop(t, i):
    return tuple(t[:i]) + tuple(t[i + 1:])


def _insert(t, i, x):
    return tuple(t[:i]) + (x,) + tuple(t[i:])


def _block_axis(block_shape, axis):
    """`axis` of the whole array as an axis of its block (squeezed dims are absent)."""
    return axis - sum(is_squeezed(b) for b in tuple(block_shape)[:axis])


def _stack_pull(ctx, transform, *, axis):
    shape = tuple(transform.block_shape)
    if any(isinstance(b, Element) for b in shape):
        raise NotImplementedError("Stack with Element indexing is not yet supported.")
    b = 1 if is_squeezed(shape[axis]) else block_size(shape[axis])
    n = len(ctx.avals_in)
    if b != n:
        raise NotImplementedError(
            f"Stacking only supported when the block size along the stack axis equals "
            f"the number of inputs. Got block_dim={b}, expected {n}.")

    def index(*idxs):
        return _drop(tuple(transform.block_index_transform(*idxs)), axis)
    child = transform.replace(block_shape=_drop(shape, axis), block_index_transform=index)
    return [child] * n


def _stack_eval(ctx, *args, axis):
    shape = ctx.out_block_specs[0].block_shape
    if is_squeezed(shape[axis]):     # (one operand, its block is the stacked block)
        return args[0]
    return lax.stack(args, axis=_block_axis(shape, axis))


def _unstack_pull(ctx, transforms, *, axis):
    given = [t for t in transforms if t is not no_block_index_transform]
    if not given:
        return [no_block_index_transform]
    first = given[0]

    def index(*idxs):
        return _insert(tuple(first.block_index_transform(*idxs)), axis, 0)
    return [first.replace(block_shape=_insert(tuple(first.block_shape), axis,
                                              Blocked(len(transforms))),
                          block_index_transform=index)]


def _unstack_eval(ctx, x, *, axis):
    return lax.unstack(x, axis=_block_axis(ctx.in_block_specs[0].block_shape, axis))


def _stack_push(ctx, *specs, axis):
    def index_map(*args):
        indices = [s.index_map(*args) for s in specs]
        if not all(a is b for idx in indices for a, b in zip(indices[0], idx)):
            raise ValueError("Cannot statically prove that all input blocks to stack are "
                             "the same.")
        return _insert(tuple(indices[0]), axis, 0)
    return BlockSpec(_insert(tuple(specs[0].block_shape), axis, len(specs)), index_map)


def _unstack_push(ctx, spec, *, axis):
    aval = ctx.avals_in[0]
    n = aval.shape[axis]
    d = spec.block_shape[axis]
    if is_squeezed(d) or isinstance(d, Element) or block_size(d) != n:
        raise NotImplementedError(f"unstack not supported yet: block_shape="
                                  f"{spec.block_shape}, aval_in={aval}, axis={axis}")

    def index_map(*args):
        return _drop(tuple(spec.index_map(*args)), axis)
    return [BlockSpec(_drop(tuple(spec.block_shape), axis), index_map)] * n


PULL_RULES[lax.stack_p] = _stack_pull
EVAL_RULES[lax.stack_p] = _stack_eval
PUSH_RULES[lax.stack_p] = _stack_push
PULL_RULES[lax.unstack_p] = _unstack_pull
EVAL_RULES[lax.unstack_p] = _unstack_eval
PUSH_RULES[lax.unstack_p] = _unstack_push
