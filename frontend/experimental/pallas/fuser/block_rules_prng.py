"""Fuser rules for the PRNG key ops: a key is never blocked (its BlockSpec has no block
shape; a key value is in the KEY memory space), and random_bits draws each block from
the key with the block's indices folded in, so blocks differ (a block is not the
corresponding block of the whole array's bits, as in JAX). mjax's keys cross traces as
their uint32 data, so its jaxprs also hold random_unwrap (JAX's do not): its operand is
a key like random_fold_in's; a key a fusion closes over is a constvar holding its data
that only random_wrap reads, which `closed_over_keys` makes a key value again. JAX:
block_spec.py's random_bits/wrap/fold_in rules."""
from __future__ import annotations

from mjax import random
from mjax.lax import prng
from mjax.tracing.primitive import op_primitives
from mjax.experimental.pallas.core import MemorySpace
from mjax.experimental.pallas.fuser.block_types import (EVAL_RULES, PULL_RULES,
                                                        BlockIndexTransform, block_size,
                                                        is_squeezed,
                                                        no_block_index_transform)

_P = op_primitives()
_BITS, _WRAP, _UNWRAP, _FOLD_IN = (_P[f"random_{n}_p"] for n in
                                   ("bits", "wrap", "unwrap", "fold_in"))


def _key_transform():
    return BlockIndexTransform(block_shape=None, memory_space=MemorySpace.KEY)


# (the kernel evaluates on key arrays, mjax.random's values, not on the jaxpr's key
# values)
def _bits_eval(ctx, key, *, bit_width, shape):
    block_shape = ctx.out_block_specs[0].block_shape
    for i in ctx.get_out_block_indices()[0]:
        # (each block index folded into the key: blocks get different bits)
        key = random.fold_in(key, i)
    block = tuple(block_size(b) for b in block_shape if not is_squeezed(b))
    return prng.random_bits(key, bit_width, block)


PULL_RULES[_BITS] = lambda ctx, transform, **_: [_key_transform()]
EVAL_RULES[_BITS] = _bits_eval
PULL_RULES[_WRAP] = lambda ctx, transform, **_: [BlockIndexTransform(block_shape=None)]
# (a key argument reaches the kernel function as the key, its jaxpr variable being the
# key's data)
EVAL_RULES[_WRAP] = lambda ctx, data, *, impl: data if isinstance(
    data, prng.PRNGKeyArray) else random.wrap_key_data(data, impl=impl)
PULL_RULES[_UNWRAP] = lambda ctx, transform, **_: [_key_transform()]
EVAL_RULES[_UNWRAP] = lambda ctx, key: random.key_data(key)
PULL_RULES[_FOLD_IN] = lambda ctx, transform, **_: [_key_transform(),
                                                     no_block_index_transform]
EVAL_RULES[_FOLD_IN] = lambda ctx, key, msg: prng.random_fold_in(key, msg)



def _body(eqn):
    for name in ("jaxpr", "call_jaxpr"):
        body = getattr(eqn.params.get(name), "jaxpr", None)
        if body is not None and len(body.invars) == len(eqn.invars):
            return body
    return None


def _key_impl(jaxpr, var):
    """The impl of the key `var` holds the data of, if all its uses are random_wrap's
    (directly or in the body of a call, a nested jit as jax.random.uniform's); else
    None."""
    if var in jaxpr.outvars:
        return None
    impls = set()
    for eqn in jaxpr.eqns:
        for k, v in enumerate(eqn.invars):
            if v is not var:
                continue
            body = _body(eqn)
            impls.add(eqn.params.get("impl") if eqn.primitive is _WRAP else
                      _key_impl(body, body.invars[k]) if body is not None else None)
    return impls.pop() if len(impls) == 1 else None


def closed_over_keys(jaxpr, values):
    """(values with each closed-over key's data made the key again, which of them are
    keys): a constvar only random_wrap reads is a key the function closed over (mjax's
    trace takes a key as its uint32 data; JAX's keeps the key)."""
    impls = [None if isinstance(x, prng.PRNGKeyArray) else _key_impl(jaxpr, v)
             for v, x in zip(jaxpr.constvars, values)]
    values = [x if impl is None else random.wrap_key_data(x, impl=impl)
              for x, impl in zip(values, impls)]
    return values, [impl is not None for impl in impls]
