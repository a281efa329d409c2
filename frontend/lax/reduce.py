"""`lax.reduce` (monoid computations as reduce_* ops, others as a region), as in `jax.lax`;
plus `lax.reduce_xor`."""
from __future__ import annotations

import operator

import numpy as np

from mjax.core import Tracer, at_user_line, aval_of_value, bind
from mjax.dialect import op_class


def _monoid(computation):
    """The reduction kind of a recognized computation, else None."""
    from mjax import lax, numpy as jnp
    table = {"add": (lax.add, jnp.add, operator.add), "mul": (lax.mul, jnp.multiply, operator.mul),
             "max": (lax.max, jnp.maximum), "min": (lax.min, jnp.minimum),
             "and": (lax.and_, jnp.bitwise_and, jnp.logical_and, operator.and_),
             "or": (lax.or_, jnp.bitwise_or, jnp.logical_or, operator.or_),
             "xor": (lax.xor, jnp.bitwise_xor, jnp.logical_xor, operator.xor)}
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        fn = getattr(lax, name, None)
        if fn is not None:
            table[name[len("bitwise_"):]] += (fn,)
    for kind, fns in table.items():
        if any(computation is f for f in fns):
            return kind
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


_OPS = {"add": "reduce_sum", "mul": "reduce_prod", "max": "reduce_max", "min": "reduce_min",
        "and": "reduce_and", "or": "reduce_or", "xor": "reduce_xor"}


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
    from mjax import lax, tree_util
    if out_sharding is not None:
        from mjax.lax.sharding import reshard
        return reshard(reduce(operands, init_values, computation, dimensions),
                       out_sharding)
    leaves, tree = tree_util.tree_flatten(operands)
    inits, init_tree = tree_util.tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: "
                         f"{tree} vs. {init_tree}")
    if len(leaves) != len(inits):
        raise ValueError(f"Must have same total number of operands as init_values: "
                         f"{len(leaves)} vs. {len(inits)}")
    kind = _monoid(computation)
    if len(leaves) != 1 or kind is None or not _is_concrete_scalar(inits[0]):
        from mjax import jit
        from mjax.lax.region_reduce import reduce_with_region
        dims = tuple(operator.index(d) for d in dimensions)
        return reduce_with_region(
            "reduce", leaves, inits, tree, computation, {"dimensions": dims},
            lambda: jit(lambda o, i: reduce(o, i, computation, dims))(operands, init_values))
    x, init = leaves[0], inits[0]
    aval = aval_of_value(x)
    dims = tuple(sorted(operator.index(d) for d in dimensions))
    for d in dims:
        if not 0 <= d < aval.ndim:
            raise ValueError(at_user_line(f"reduce: dimensions {tuple(dimensions)} out of "
                                          f"range for operand of shape {aval.shape}"))
    if aval_of_value(init).shape != ():
        raise TypeError(at_user_line(f"reduce init_values must be scalars, got shape "
                                     f"{aval_of_value(init).shape}"))
    if aval.dtype == np.bool_ and kind in ("add", "mul"):
        kind = "or" if kind == "add" else "and"  # what add and mul compute on booleans
    out = bind(op_class(_OPS[kind]), x, axes=dims)
    if not _is_identity(init, kind, aval.dtype):
        combine = {"add": lax.add, "mul": lax.mul, "max": lax.max, "min": lax.min,
                   "and": lax.and_, "or": lax.or_, "xor": lax.xor}[kind]
        init = lax.convert_element_type(init, aval.dtype)
        out = combine(out, lax.broadcast_in_dim(init, aval_of_value(out).shape, ()))
    return tree_util.tree_unflatten(tree, [out])


def _is_concrete_scalar(v) -> bool:
    # A monoid reduction needs no region when its init value is known (identity or not).
    return not isinstance(v, Tracer) or v.aval.shape == ()


def reduce_xor(operand, axes):
    """Bitwise (or, for booleans, logical) xor over `axes`. JAX: lax.reduce_xor."""
    return bind(op_class("reduce_xor"), operand, axes=tuple(operator.index(a) for a in axes))


__all__ = ["reduce", "reduce_xor"]
