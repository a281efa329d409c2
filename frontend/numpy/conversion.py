"""Conversion to arrays: `asarray`, `array`, `astype`, `copy`, `from_dlpack`."""
from __future__ import annotations

import builtins
import functools

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.lax import prng as _prng
from mjax.tracing.core import _state as _trace_state, bind
from mjax.dialect import op_class
from mjax.arrays.dlpack import from_dlpack as _from_dlpack
from mjax.lax.sharding import takes_out_sharding
from mjax.numpy.arguments import is_array
from mjax.numpy.array_api import fused_when_eager, with_device_keyword


def from_dlpack(x, /, *, device=None, copy=None):
    """JAX: jnp.from_dlpack (see mjax.dlpack)."""
    return _from_dlpack(x, device=device, copy=copy)


def _check_order(order) -> None:
    if order is not None and order != "K":      # (JAX's: arrays have no memory order)
        raise NotImplementedError("Only implemented for order='K'")


@takes_out_sharding
@with_device_keyword
def asarray(a, dtype=None, order=None, *, copy=None):
    """Array from an array, scalar, NumPy array or (nested) list/tuple."""
    _check_order(order)
    if is_array(a) or isinstance(a, lax._LiteralArray):  # (a literal keeps its weak type)
        return a if dtype is None else astype(a, dtype)
    if isinstance(a, _prng.PRNGKeyArray) or isinstance(a, (list, tuple)) and a and \
            _prng.any_keys(a):
        return _prng.asarray_keys(a, dtype)
    if isinstance(a, (list, tuple)):
        leaves = _nested_leaves(a)
        if a and builtins.any(is_array(v) for v in leaves):
            # (as JAX: each element converted to the strongly typed result dtype, then
            # stacked; `jnp.array([x, 1])` of a weak x is not weak)
            dtype = (_dt.result_type(*leaves) if dtype is None
                     else _dt.check_user_dtype(dtype, "asarray"))
            return lax.concatenate([lax.expand_dims(asarray(v, dtype), (0,)) for v in a], 0)
    if hasattr(a, "__jax_array__"):
        return asarray(a.__jax_array__(), dtype)
    if _dt.is_python_scalar(a) and dtype is None:
        _dt.aval_of_value(a)  # (an int out of the default int's range: OverflowError, as JAX)
        return lax.convert_element_type(a, _dt.python_scalar_dtype(a),
                                        weak_type=not isinstance(a, bool))
    if a is None:
        raise ValueError("None is not a valid value for jnp.array")   # (JAX's error)
    value = _onp.asarray(a, dtype=dtype)
    if value.dtype == object:
        raise TypeError(f"mjax.numpy.asarray: cannot convert {a!r} to an array")
    _dt.check_numpy_value(value)
    target = (_dt.canonicalize_dtype(value.dtype) if dtype is None
              else _dt.check_user_dtype(dtype, "asarray"))
    return lax.convert_element_type(value, target)


def _nested_leaves(a) -> list:
    # (Not through NumPy: an object array would call a tracer's __array__.)
    out = []
    for v in a:
        out.extend(_nested_leaves(v) if isinstance(v, (list, tuple)) else [v])
    return out


@takes_out_sharding
@with_device_keyword
def array(object, dtype=None, *, copy=True, order="K", ndmin=0):  # noqa: A002
    _check_order(order)
    if dtype is not None:
        dtype = _dt.check_user_dtype(dtype, "array")
    out = asarray(object, dtype)
    if copy and out is object:    # (a new buffer: donating one must not delete the other)
        out = globals()["copy"](out)
    if ndmin > out.ndim:
        out = lax.broadcast_to_rank(out, ndmin)
    return out


@with_device_keyword
def astype(x, dtype, /, *, copy=False):
    return lax.convert_element_type(x, _dt.check_user_dtype(dtype, "astype"))


def copy(a, order=None):
    return bind(op_class("copy"), asarray(a))


_NUMBERS = (int, float, complex, _onp.number, _onp.bool_)


def fused_values(fn, inexact_direct=False):
    """fused_when_eager for a function of array values only (a ufunc): eagerly, Python
    and NumPy numbers among its positional arguments become arguments of the program,
    as of JAX's jitted ufuncs, not constants XLA would fold with its own arithmetic
    (log2(13) and log10(7) came out an ulp off JAX's). inexact_direct: arrays of inexact
    dtypes only (no conversion to fuse with the op) are fn's, op by op."""
    fused = fused_when_eager(fn)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if inexact_direct and builtins.all(
                not isinstance(a, _NUMBERS) and _dt.is_inexact(getattr(a, "dtype", None))
                for a in args):
            return fn(*args, **kwargs)
        if not _trace_state.stack and builtins.any(isinstance(a, _NUMBERS) for a in args):
            args = tuple(asarray(a) if isinstance(a, _NUMBERS) else a for a in args)
        return fused(*args, **kwargs)
    return call
