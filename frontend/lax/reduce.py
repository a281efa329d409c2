"""Reductions, as in `jax.lax`: reduce_sum/prod/max/min/and/or/xor, argmax/argmin and the
cumulative ops (one function per primitive), and `lax.reduce` (a monoid computation as
one of those ops, any other as a region)."""
from __future__ import annotations

import builtins
import operator

import numpy as np

from mjax.specs import dtypes
from mjax.tracing import registration
from mjax.base import trace_trees, tree_util
from mjax.config import config
from mjax.tracing.core import Tracer, at_user_line, aval_of_value, bind
from mjax.dialect.ops.reductions import (ArgMaxOp, ArgMinOp, CumlogsumexpOp, CummaxOp,
                                         CumminOp, CumprodOp, CumsumOp, ReduceAndOp,
                                         ReduceMaxOp, ReduceMinOp, ReduceOrOp, ReduceProdOp,
                                         ReduceSumOp, ReduceXorOp)
from mjax.dialect.ops.region_reductions import ReduceOp
from mjax.lax import elementwise as E
from mjax.lax.region_reduce import reduce_with_region
from mjax.lax.sharding import apply_out_sharding, reshard


_HALF = (np.dtype(np.float16), np.dtype(dtypes.bfloat16))


# ---- one function per primitive ------------------------------------------------------------
def reduce_sum(operand, axes, *, out_sharding=None):
    """Sum over `axes`. JAX: lax.reduce_sum."""
    axes = tuple(int(a) for a in axes)
    if not config.read("jax_allow_f16_reductions"):
        aval = aval_of_value(operand)
        if aval.dtype in _HALF and builtins.any(aval.shape[a] != 1 for a in axes):
            raise ValueError(f"reduce_sum on operand {aval.str_short()} is not allowed "
                             f"when jax_allow_f16_reductions=False.")
    out = bind(ReduceSumOp, operand, axes=axes)
    return apply_out_sharding(out, out_sharding)


def reduce_prod(operand, axes, *, out_sharding=None):
    """Product over `axes`. JAX: lax.reduce_prod."""
    out = bind(ReduceProdOp, operand, axes=tuple(int(a) for a in axes))
    return apply_out_sharding(out, out_sharding)


def reduce_max(operand, axes, *, out_sharding=None):
    """Maximum over `axes`. JAX: lax.reduce_max."""
    out = bind(ReduceMaxOp, operand, axes=tuple(int(a) for a in axes))
    return apply_out_sharding(out, out_sharding)


def reduce_min(operand, axes, *, out_sharding=None):
    """Minimum over `axes`. JAX: lax.reduce_min."""
    out = bind(ReduceMinOp, operand, axes=tuple(int(a) for a in axes))
    return apply_out_sharding(out, out_sharding)


def reduce_and(operand, axes, *, out_sharding=None):
    """Logical/bitwise and over `axes`. JAX: lax.reduce_and."""
    out = bind(ReduceAndOp, operand, axes=tuple(int(a) for a in axes))
    return apply_out_sharding(out, out_sharding)


def reduce_or(operand, axes, *, out_sharding=None):
    """Logical/bitwise or over `axes`. JAX: lax.reduce_or."""
    out = bind(ReduceOrOp, operand, axes=tuple(int(a) for a in axes))
    return apply_out_sharding(out, out_sharding)


def reduce_xor(operand, axes):
    """Bitwise (or, for booleans, logical) xor over `axes`. JAX: lax.reduce_xor."""
    return bind(ReduceXorOp, operand, axes=tuple(operator.index(a) for a in axes))


def argmax(operand, axis: int, index_dtype):
    """Index of the maximum along `axis`. JAX: lax.argmax."""
    return bind(ArgMaxOp, operand, axes=(int(axis),),
                index_dtype=dtypes.canonicalize_dtype(index_dtype))


def argmin(operand, axis: int, index_dtype):
    """Index of the minimum along `axis`. JAX: lax.argmin."""
    return bind(ArgMinOp, operand, axes=(int(axis),),
                index_dtype=dtypes.canonicalize_dtype(index_dtype))


def _cumulative_axis(operand, axis) -> int:
    aval = aval_of_value(operand)
    rank = builtins.max(aval.ndim, 1)
    if not -rank <= int(axis) < rank:
        raise ValueError(f"axis {axis} is out of bounds for array of shape {aval.shape}")
    return int(axis) % rank


def cumsum(operand, axis: int = 0, reverse: bool = False):
    """Cumulative sum along `axis`. JAX: lax.cumsum."""
    return bind(CumsumOp, operand, axis=_cumulative_axis(operand, axis),
                reverse=bool(reverse))


def cumprod(operand, axis: int = 0, reverse: bool = False):
    """Cumulative product along `axis`. JAX: lax.cumprod."""
    return bind(CumprodOp, operand, axis=_cumulative_axis(operand, axis),
                reverse=bool(reverse))


def cummax(operand, axis: int = 0, reverse: bool = False):
    """Cumulative maximum along `axis`. JAX: lax.cummax."""
    return bind(CummaxOp, operand, axis=_cumulative_axis(operand, axis),
                reverse=bool(reverse))


def cummin(operand, axis: int = 0, reverse: bool = False):
    """Cumulative minimum along `axis`. JAX: lax.cummin."""
    return bind(CumminOp, operand, axis=_cumulative_axis(operand, axis),
                reverse=bool(reverse))


def cumlogsumexp(operand, axis: int = 0, reverse: bool = False):
    """Cumulative log-sum-exp along `axis`. JAX: lax.cumlogsumexp."""
    return bind(CumlogsumexpOp, operand, axis=_cumulative_axis(operand, axis),
                reverse=bool(reverse))


# ---- lax.reduce ----------------------------------------------------------------------------
# The computations `lax.reduce` / `lax.reduce_window` recognize as monoids (-> their kind):
# lax's own here; the numpy floor registers its ufuncs (jnp.add, ...) with
# `register_monoid`, a registration point of the floors (docs/design.md).
MONOIDS: dict = {}


def register_monoid(computation, kind: str) -> None:
    """Makes `computation` reduce as the monoid `kind` ('add', 'mul', 'max', 'min', 'and',
    'or', 'xor')."""
    MONOIDS[computation] = kind


for _fn, _kind in ((E.add, "add"), (operator.add, "add"), (E.mul, "mul"),
                   (operator.mul, "mul"), (E.max, "max"), (E.min, "min"), (E.and_, "and"),
                   (operator.and_, "and"), (E.or_, "or"), (operator.or_, "or"),
                   (E.xor, "xor"), (operator.xor, "xor")):
    register_monoid(_fn, _kind)


def monoid(computation):
    """The reduction kind of a recognized computation, else None."""
    try:
        return MONOIDS.get(computation)
    except TypeError:   # (an unhashable callable)
        return None


def _identity(kind, dtype):
    dtype = np.dtype(dtype)
    if kind in ("add", "or", "xor"):
        return dtype.type(0)
    if kind == "mul":
        return dtype.type(1)
    if kind == "and":
        return np.bool_(True) if dtype == np.bool_ else np.array(-1).astype(dtype)[()]
    if dtype == np.bool_:
        return np.bool_(kind == "min")
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return dtype.type(info.min if kind == "max" else info.max)
    return dtype.type(-np.inf if kind == "max" else np.inf)


_OPS = {"add": ReduceSumOp, "mul": ReduceProdOp, "max": ReduceMaxOp, "min": ReduceMinOp,
        "and": ReduceAndOp, "or": ReduceOrOp, "xor": ReduceXorOp}


def _is_identity(init, kind, dtype) -> bool:
    if isinstance(init, Tracer):
        return False
    try:
        value = np.asarray(init)
    except Exception:  # an array that cannot be read while tracing
        return False
    return value.shape == () and bool(value.astype(dtype) == _identity(kind, dtype))


def reduce(operands, init_values, computation, dimensions, out_sharding=None):
    """Reduces `dimensions` of the operand(s) with `computation`, starting from
    init_values. JAX: lax.reduce.

    A monoid computation (lax.add/mul/max/min/bitwise ops and their jax.numpy twins) over
    one operand binds reduce_sum/prod/max/...; any other computation (or several operands)
    is traced into the body of a jaxpr.reduce."""
    if out_sharding is not None:
        return reshard(reduce(operands, init_values, computation, dimensions),
                       out_sharding)
    leaves, tree = trace_trees.tree_flatten(operands)
    inits, init_tree = trace_trees.tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: "
                         f"{tree} vs. {init_tree}")
    if len(leaves) != len(inits):
        raise ValueError(f"Must have same total number of operands as init_values: "
                         f"{len(leaves)} vs. {len(inits)}")
    kind = monoid(computation)
    if len(leaves) == 1 and aval_of_value(leaves[0]).dtype == np.bool_:
        kind = {"add": "or", "mul": "and"}.get(kind, kind)   # (what they compute on bools)
    # As JAX: a monoid's own reduction only from its identity, known when tracing; any
    # other init value (or a traced one) starts a reduce over the computation's region, which
    # XLA applies as it does JAX's (on a TPU, once per partial reduction).
    if len(leaves) != 1 or kind is None or \
            not _is_identity(inits[0], kind, aval_of_value(leaves[0]).dtype):
        dims = tuple(operator.index(d) for d in dimensions)
        return reduce_with_region(
            ReduceOp, leaves, inits, tree, computation, {"dimensions": dims},
            lambda: registration.JIT(lambda o, i: reduce(o, i, computation, dims))(
                operands, init_values))
    x = leaves[0]
    aval = aval_of_value(x)
    dims = tuple(sorted(operator.index(d) for d in dimensions))
    for d in dims:
        if not 0 <= d < aval.ndim:
            raise ValueError(at_user_line(f"reduce: dimensions {tuple(dimensions)} out of "
                                          f"range for operand of shape {aval.shape}"))
    out = bind(_OPS[kind], x, axes=dims)   # (from the identity, the init value given)
    return tree_util.tree_unflatten(tree, [out])
