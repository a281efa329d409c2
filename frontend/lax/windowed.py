"""`lax.reduce_window`, as in `jax.lax`.

A monoid computation binds `reduce_window_sum/max/min` (padding and dilation holes count as
the monoid's identity); an init value other than the identity starts every window's
reduction, as XLA computes it. Any other computation (or several operands) is traced into
the body of a `jaxpr.reduce_window`.
"""
from __future__ import annotations

import operator

import numpy as np

from mjax.tracing import registration
from mjax.base import trace_trees, tree_util
from mjax.tracing.core import Tracer, at_user_line, aval_of_value, bind
from mjax.dialect.ops.convolution import dilate_dim
from mjax.dialect.ops.region_reductions import ReduceWindowOp
from mjax.dialect.ops.windowed import (ReduceWindowMaxOp, ReduceWindowMinOp,
                                       ReduceWindowSumOp, reduce_window_shape)
from mjax.lax.convolution import _dilate_dim, _stride_dim, padtype_to_pads
from mjax.lax.reduce import monoid
from mjax.lax.region_reduce import reduce_with_region


def _monoid(computation):
    """'add', 'max', 'min' for the computations mjax recognizes (lax.reduce's table),
    else None."""
    kind = monoid(computation)
    return kind if kind in ("add", "max", "min") else None


def _identity(kind, dtype):
    dtype = np.dtype(dtype)
    if kind == "add":
        return dtype.type(0)
    if dtype == np.bool_:
        return np.bool_(kind == "min")
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return dtype.type(info.min if kind == "max" else info.max)
    return dtype.type(-np.inf if kind == "max" else np.inf)


def _is_identity(init, kind, dtype) -> bool:
    if isinstance(init, Tracer):
        return False
    try:
        value = np.asarray(init)
    except Exception:  # a device array that cannot be read while tracing
        return False
    if value.shape != ():
        return False
    return bool(value.astype(dtype) == _identity(kind, dtype))


def _ints(name, values, n):
    out = tuple(operator.index(v) for v in values)
    if len(out) != n:
        raise TypeError(at_user_line(f"reduce_window got the wrong number of {name} for "
                                     f"operand of rank {n}: got {name} {out}"))
    return out


def _window_params(shape, window_dimensions, window_strides, padding, base_dilation,
                   window_dilation):
    n = len(shape)
    window_dimensions = _ints("window_dimensions", window_dimensions, n)
    window_strides = (1,) * n if window_strides is None else _ints(
        "window_strides", window_strides, n)
    base_dilation = (1,) * n if base_dilation is None else _ints(
        "base_dilation", base_dilation, n)
    window_dilation = (1,) * n if window_dilation is None else _ints(
        "window_dilation", window_dilation, n)
    if isinstance(padding, str):
        window = [dilate_dim(w, d) for w, d in zip(window_dimensions, window_dilation)]
        padding = padtype_to_pads(shape, window, window_strides, padding)
    padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    params = dict(window_dimensions=window_dimensions, window_strides=window_strides,
                  padding=padding, base_dilation=base_dilation,
                  window_dilation=window_dilation)
    try:
        reduce_window_shape("reduce_window", tuple(shape), **params)
    except TypeError as e:
        raise TypeError(at_user_line(str(e))) from None
    return params


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """Reduction over padded, strided, dilated windows. JAX: lax.reduce_window."""
    leaves, tree = trace_trees.tree_flatten(operand)
    inits, init_tree = trace_trees.tree_flatten(init_value)
    if tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: "
                         f"{tree} vs. {init_tree}")
    if not leaves:
        raise ValueError("reduce_window must have at least one operand.")
    if len(leaves) != len(inits):
        raise ValueError(f"Must have same total number of operands as init_values: "
                         f"{len(leaves)} vs. {len(inits)}")
    kind = _monoid(computation)
    x, init = leaves[0], inits[0]
    aval = aval_of_value(x)
    params = _window_params(aval.shape, window_dimensions, window_strides, padding,
                            base_dilation, window_dilation)
    # As JAX: a monoid's own windowed reduction only from its identity, known when
    # tracing; any other init value starts each window of a reduce_window over the
    # computation's region (XLA applies it as it does JAX's).
    if len(leaves) != 1 or kind is None or not _is_identity(init, kind, aval.dtype):
        return reduce_with_region(
            ReduceWindowOp, leaves, inits, tree, computation, params,
            lambda: registration.JIT(lambda o, i: reduce_window(o, i, computation, **_kw(params)))(
                operand, init_value))
    # (the identity: reduce_window_sum/max/min start from it)
    op = {"add": ReduceWindowSumOp, "max": ReduceWindowMaxOp, "min": ReduceWindowMinOp}[kind]
    return tree_util.tree_unflatten(tree, [bind(op, x, **params)])


def _kw(params):
    return dict(window_dimensions=params["window_dimensions"],
                window_strides=params["window_strides"], padding=params["padding"],
                base_dilation=params["base_dilation"],
                window_dilation=params["window_dilation"])


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """The result shape of a windowed reduction, for any integer sizes (-1 and 0 included:
    a window larger than its padded dimension gives 0). JAX: lax.reduce_window_shape_tuple."""
    def dilated(shape, dilation):
        if not all(r > 0 for r in dilation):
            raise TypeError(f"All dilations must be positive, got {dilation}.")
        dilation = (1,) * (len(shape) - len(dilation)) + tuple(dilation)
        return tuple(_dilate_dim(d, r) for d, r in zip(shape, dilation))

    if base_dilation is not None:
        operand_shape = dilated(operand_shape, base_dilation)
    if window_dilation is not None:
        window_dimensions = dilated(window_dimensions, window_dilation)
    return tuple(_stride_dim(d + lo + hi, w, s) for d, (lo, hi), w, s in
                 zip(operand_shape, padding, window_dimensions, window_strides))


__all__ = ["reduce_window", "reduce_window_shape_tuple"]
