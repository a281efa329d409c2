"""Ops on key arrays: lax's structural ops applied to a key array's uint32 data.

A key array (mjax.lax.prng.PRNGKeyArray) of shape S holds uint32 data of shape S + K, K the
key shape of its implementation (threefry2x32: (2,)). An op that only moves, copies or
selects elements (reshape, broadcast, slice, concatenate, gather, select, ...) means the
same op on the data with K appended; that rule per op is the KEY_DATA column of the rule
tables (passes/rules/random.py states them). core.bind sends any op with a key operand
here (registration.BIND_ON_KEYS), which applies the op's rule to the data; ops without
one raise JAX's TypeError. JAX: the physical rules of its extended dtypes.
"""
from __future__ import annotations

import numpy as np

from mjax.tracing import registration
from mjax.tracing.core import aval_of_value, bind
from mjax.specs.dtypes import pytype_aval_mappings
from mjax.dialect.ops import random as R, structural as S
from mjax.dialect.ops.elementwise import EqOp, NeOp
from mjax.dialect.types import ShapedArray
from mjax.passes.rules.tables import KEY_DATA
from mjax.lax.prng import PRNGKeyArray, same_impl

registration.KEY_ARRAY_TYPES.add(PRNGKeyArray)
# (aval_of_value(key array): its logical shape and key dtype, as jax.typeof gives)
pytype_aval_mappings[PRNGKeyArray] = lambda k: ShapedArray(k.shape, k.dtype)


def _data(x):
    return x._base if isinstance(x, PRNGKeyArray) else x


@registration.BIND_ON_KEYS.fill
def bind_on_keys(opcls, args, params):
    keys = [a for a in args if isinstance(a, PRNGKeyArray)]
    if opcls in (EqOp, NeOp) and len(keys) == 2:
        return keys[0] == keys[1] if opcls is EqOp else keys[0] != keys[1]
    rule = KEY_DATA.get(opcls)
    if rule is None:
        dts = ", ".join(str(aval_of_value(a).dtype) for a in args)
        raise TypeError(f"{opcls.primitive} does not accept dtype{'s' if len(args) > 1 else ''}"
                        f" {dts}.")
    impl = same_impl(keys if opcls is not S.SelectNOp else args[1:], opcls.primitive)
    out = rule(bind, opcls, R.KEY_SHAPES[impl], [_data(a) for a in args],
               [aval_of_value(a) for a in args], params)
    if isinstance(out, list):   # (several results: unstack)
        return [PRNGKeyArray(impl, o) for o in out]
    return PRNGKeyArray(impl, out)


def full_keys(impl: str, shape, fill_value) -> PRNGKeyArray:
    """Keys whose data is all `fill_value` (jnp.zeros / full / full_like of a key dtype):
    an integer (every data word), or a key array of `impl` broadcast to `shape`."""
    kshape = R.KEY_SHAPES[impl]
    shape = tuple(shape) + kshape
    if isinstance(fill_value, PRNGKeyArray):
        same_impl([fill_value, PRNGKeyArray(impl, np.zeros(kshape, np.uint32))], "full")
        data = fill_value._base
        if fill_value.ndim > len(shape) - len(kshape):
            raise ValueError(f"full: fill value of shape {fill_value.shape} does not "
                             f"broadcast to shape {shape[:len(shape) - len(kshape)]}")
        dims = tuple(range(len(shape) - data.ndim, len(shape)))
        return PRNGKeyArray(impl, bind(S.BroadcastInDimOp, data, shape=shape,
                                       broadcast_dimensions=dims))
    if np.ndim(fill_value):
        raise NotImplementedError("an array fill value (of integers) for an array of a key "
                                  "dtype; fill with a key array or a scalar")
    return PRNGKeyArray(impl, bind(S.BroadcastInDimOp, np.uint32(fill_value), shape=shape,
                                   broadcast_dimensions=()))
