"""Checks and normal forms of jax.numpy's arguments: what counts as an array, axes,
shapes, and the `out=` that immutable arrays cannot honour."""
from __future__ import annotations

import operator

import numpy as _onp

from mjax.tracing.core import at_user_line, Tracer
from mjax.numpy.concrete_values import concrete_int, concrete_or_error
from mjax.dialect.shape_poly import is_symbolic_dim

AxisError = _onp.exceptions.AxisError  # (a ValueError and an IndexError)


def is_array(x):
    """Whether x is an mjax array or a tracer (not a list, scalar or NumPy array)."""
    return isinstance(x, Tracer) or hasattr(x, "_buf")


def check_arraylike(fname, *args):
    """JAX's TypeError for a list or tuple given where jax.numpy wants arrays
    (`jnp.sum([1, 2])`; only jnp.array/asarray convert sequences)."""
    for i, a in enumerate(args):
        if isinstance(a, (list, tuple)):
            raise TypeError(at_user_line(f"{fname} requires ndarray or scalar arguments, "
                                         f"got {type(a)} at position {i}."))


def canonical_shape(shape):
    """A shape argument (an int or a sequence of them) as a tuple of ints; JAX's
    TypeError for anything else (a traced dimension among them)."""
    if is_symbolic_dim(shape):
        return (shape,)
    scalar = not isinstance(shape, (tuple, list)) and (
        getattr(shape, "ndim", None) == 0 or _onp.ndim(shape) == 0)
    try:
        if scalar:
            return (operator.index(shape),)     # (a traced int JAX knows works too)
        # (operator.index, as JAX: 1.5 is refused, not truncated)
        return tuple(d if is_symbolic_dim(d) else operator.index(d) for d in shape)
    except TypeError:
        raise invalid_shape_error((shape,) if scalar else shape) from None


def invalid_shape_error(shape) -> TypeError:
    """JAX's error for a shape argument that is not a sequence of concrete integers."""
    msg = f"Shapes must be 1D sequences of concrete values of integer type, got {shape}."
    if any(isinstance(d, Tracer) for d in (shape if isinstance(shape, (tuple, list))
                                           else ())):
        msg += ("\nIf using `jit`, try using `static_argnums` or applying `jit` to "
                "smaller subfunctions.")
    return TypeError(msg)


def normalize_axis(axis, ndim):
    """axis in [0, ndim) (negative ones count from the end)."""
    if not -ndim <= axis < max(ndim, 1):
        # NumPy's AxisError is a ValueError and an IndexError: JAX raises either,
        # depending on the function.
        raise AxisError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else 0


def normalize_axes(axis, ndim):
    """An axis argument (None: all, an int or a sequence; static) as a tuple in [0, ndim)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, _onp.integer)) or _onp.ndim(axis) == 0:
        axis = (axis,)
    return tuple(normalize_axis(concrete_int(a, "an axis argument must be static"), ndim)
                 for a in axis)


def no_out(name, out):
    """Refuses NumPy's `out=` (mjax arrays are immutable)."""
    if out is not None:
        raise NotImplementedError(f"mjax.numpy.{name}: the `out` argument is not supported "
                                  f"(arrays are immutable)")


def check_where(name, where):
    """A reduction's `where=`: None or a boolean array, else JAX's ValueError (a mask of
    integers is not read as truth values)."""
    if where is None:
        return None
    check_arraylike(name, where)
    dtype = _onp.result_type(where) if not hasattr(where, "dtype") else where.dtype
    if dtype != _onp.bool_:
        raise ValueError(at_user_line(f"jnp.{name}: where must be None or a boolean array; "
                                      f"got where.dtype={_onp.dtype(dtype)!r}."))
    return where


def concrete(x, fname, why):
    """x's value as a NumPy array; a traced x is an error naming jax.numpy.<fname> and why."""
    return concrete_or_error(x, f"jax.numpy.{fname}: {why}")


def index_axis(axis, ndim):
    """normalize_axis for any integer-like axis, its error located at the user's line."""
    axis = operator.index(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise AxisError(at_user_line(f"axis {axis} is out of bounds for array of dimension "
                                      f"{ndim}"))
    return axis % ndim if ndim else 0
