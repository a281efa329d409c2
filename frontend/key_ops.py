"""Ops on key arrays: lax's structural ops applied to a key array's uint32 data.

A key array (mjax.prng.PRNGKeyArray) of shape S holds uint32 data of shape S + K, K the
key shape of its implementation (threefry2x32: (2,)). An op that only moves, copies or
selects elements (reshape, broadcast, slice, concatenate, gather, select, ...) means the
same op on the data with K appended: its shape attributes get K's sizes, its dimension
attributes K's trailing dims. core.bind sends any op with a key operand here
(registration.BIND_ON_KEYS); ops that compute on values raise JAX's TypeError.
JAX: the physical rules of its extended dtypes.
"""
from __future__ import annotations

import numpy as np

from mjax import registration
from mjax.core import aval_of_value, bind
from mjax.dtypes import pytype_aval_mappings
from mjax.dialect.ops import indexing as I, random as R, structural as S
from mjax.dialect.ops.elementwise import EqOp, NeOp
from mjax.dialect.types import KeyType, ShapedArray
from mjax.prng import PRNGKeyArray, same_impl

registration.KEY_ARRAY_TYPES.add(PRNGKeyArray)
# (aval_of_value(key array): its logical shape and key dtype, as jax.typeof gives)
pytype_aval_mappings[PRNGKeyArray] = lambda k: ShapedArray(k.shape, k.dtype)

# op class -> rule(op class, key shape, args, params) -> the result's data (uint32)
_RULES: dict = {}


def _rule(*opclasses):
    def register(fn):
        for op in opclasses:
            _RULES[op] = fn
        return fn
    return register


def _data(x):
    return x._base if isinstance(x, PRNGKeyArray) else x


def _trailing(start: int, ks) -> tuple[int, ...]:
    return tuple(range(start, start + len(ks)))


@registration.BIND_ON_KEYS.fill
def bind_on_keys(opcls, args, params):
    keys = [a for a in args if isinstance(a, PRNGKeyArray)]
    if opcls in (EqOp, NeOp) and len(keys) == 2:
        return keys[0] == keys[1] if opcls is EqOp else keys[0] != keys[1]
    rule = _RULES.get(opcls)
    if rule is None:
        dts = ", ".join(str(aval_of_value(a).dtype) for a in args)
        raise TypeError(f"{opcls.primitive} does not accept dtype{'s' if len(args) > 1 else ''}"
                        f" {dts}.")
    impl = same_impl(keys if opcls is not S.SelectNOp else args[1:], opcls.primitive)
    out = rule(opcls, R.KEY_SHAPES[impl], args, params)
    if isinstance(out, list):   # (several results: unstack)
        return [PRNGKeyArray(impl, o) for o in out]
    return PRNGKeyArray(impl, out)


def full_keys(impl: str, shape, fill_value) -> PRNGKeyArray:
    """Keys whose data is all `fill_value` (jnp.zeros_like / full_like of a key array)."""
    shape = tuple(shape) + R.KEY_SHAPES[impl]
    return PRNGKeyArray(impl, bind(S.BroadcastInDimOp, np.uint32(fill_value), shape=shape,
                                   broadcast_dimensions=()))


@_rule(S.ConvertElementTypeOp)
def _convert(op, ks, args, params):
    (x,) = args
    if not (isinstance(params["new_dtype"], KeyType) and params["new_dtype"].impl == x.impl):
        raise TypeError(f"cannot convert a key array of dtype {x.dtype} to "
                        f"{params['new_dtype']}; use jax.random.key_data for its uint32 data")
    return x._base


@_rule(S.CopyOp)
def _copy(op, ks, args, params):
    return bind(S.CopyOp, args[0]._base)


@_rule(S.BroadcastInDimOp)
def _broadcast_in_dim(op, ks, args, params):
    shape = tuple(params["shape"])
    return bind(S.BroadcastInDimOp, args[0]._base, shape=shape + ks,
                broadcast_dimensions=tuple(params["broadcast_dimensions"])
                + _trailing(len(shape), ks))


@_rule(S.ReshapeOp)
def _reshape(op, ks, args, params):
    x, dims = args[0], params.get("dimensions")
    return bind(S.ReshapeOp, x._base, new_sizes=tuple(params["new_sizes"]) + ks,
                dimensions=None if dims is None else tuple(dims) + _trailing(x.ndim, ks))


@_rule(S.SqueezeOp, S.ExpandDimsOp, S.RevOp)
def _same_dims(op, ks, args, params):
    # (dimensions index the leading, logical dims, which the data shares)
    return bind(op, args[0]._base, **params)


@_rule(S.TransposeOp)
def _transpose(op, ks, args, params):
    perm = tuple(params["permutation"])
    return bind(S.TransposeOp, args[0]._base, permutation=perm + _trailing(len(perm), ks))


@_rule(S.ConcatenateOp)
def _concatenate(op, ks, args, params):
    return bind(S.ConcatenateOp, *[_data(a) for a in args], **params)


@_rule(S.StackOp, S.UnstackOp, S.SplitOp)
def _stack(op, ks, args, params):
    # (the axis is one of the leading, logical dims, which the data shares)
    out = bind(op, *[_data(a) for a in args], **params)
    return out if op is S.StackOp or isinstance(out, list) else [out]


@_rule(S.SliceOp)
def _slice(op, ks, args, params):
    strides = params.get("strides")
    return bind(S.SliceOp, args[0]._base,
                start_indices=tuple(params["start_indices"]) + (0,) * len(ks),
                limit_indices=tuple(params["limit_indices"]) + ks,
                strides=None if strides is None else tuple(strides) + (1,) * len(ks))


def _zero_starts(starts, ks):
    zero = np.zeros((), aval_of_value(starts[0]).dtype) if starts else np.int32(0)
    return list(starts) + [zero] * len(ks)


@_rule(I.DynamicSliceOp)
def _dynamic_slice(op, ks, args, params):
    x, *starts = args
    return bind(I.DynamicSliceOp, x._base, *_zero_starts(starts, ks),
                slice_sizes=tuple(params["slice_sizes"]) + ks)


@_rule(I.DynamicUpdateSliceOp)
def _dynamic_update_slice(op, ks, args, params):
    x, update, *starts = args
    return bind(I.DynamicUpdateSliceOp, _data(x), _data(update), *_zero_starts(starts, ks))


@_rule(S.SelectNOp)
def _select_n(op, ks, args, params):
    which, *cases = args
    data = [_data(c) for c in cases]
    w = aval_of_value(which)
    if w.ndim:   # (a per-element choice picks whole keys: broadcast over each key's data)
        shape = aval_of_value(data[0]).shape
        which = bind(S.BroadcastInDimOp, which, shape=shape,
                     broadcast_dimensions=tuple(range(w.ndim)))
    return bind(S.SelectNOp, which, *data)


@_rule(I.GatherOp)
def _gather(op, ks, args, params):
    x, indices = args
    dn = dict(params["dimension_numbers"])
    out_rank = aval_of_value(indices).ndim - 1 + len(dn["offset_dims"])
    dn["offset_dims"] = tuple(dn["offset_dims"]) + _trailing(out_rank, ks)
    return bind(I.GatherOp, x._base, indices, **{
        **params, "dimension_numbers": dn,
        "slice_sizes": tuple(params["slice_sizes"]) + ks, "fill_value": None})


@_rule(I.ScatterOp)
def _scatter(op, ks, args, params):
    x, indices, updates = args
    dn = dict(params["dimension_numbers"])
    rank = aval_of_value(updates).ndim
    dn["update_window_dims"] = tuple(dn["update_window_dims"]) + _trailing(rank, ks)
    return bind(I.ScatterOp, _data(x), indices, _data(updates),
                **{**params, "dimension_numbers": dn})
