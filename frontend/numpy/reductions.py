"""Reductions: sum, prod, max, min, all, any, mean, var, std, average, argmax/argmin,
the cumulative ones (cumsum, cumprod, cumulative_sum/prod), count_nonzero, ptp, and the
whole-array comparisons (allclose, array_equal, array_equiv)."""
from __future__ import annotations

import builtins
import math
import operator

import numpy as _onp

from mjax import dtypes as _dt, lax
from mjax.numpy.arguments import (check_arraylike, index_axis, no_out, normalize_axes,
                                  normalize_axis)
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.conversion import asarray, astype
from mjax.numpy.creation import full, full_like, ones, zeros
from mjax.numpy.elementwise import (add, conj, equal, isclose, isnan, logical_and, logical_or,
                                    maximum, minimum, multiply, not_equal, real, sqrt, subtract,
                                    where_xy)
from mjax.numpy.promotion import broadcast_shapes, broadcast_to, result_type
from mjax.numpy.scalar_types import bool_
from mjax.numpy.shaping import concatenate, ravel, reshape, transpose
from mjax.dialect.shape_poly import is_symbolic_dim


def _reduction(name, lax_fn, *, bool_fn=None, upcast_small_int=False, identity=None):
    def f(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
          promote_integers=True):
        if out is not None:
            raise NotImplementedError(f"mjax.numpy.{name}: the `out` argument is not supported "
                                      f"(arrays are immutable)")
        check_arraylike(name, a)
        a = asarray(a)
        axes = normalize_axes(axis, a.ndim)
        if dtype is not None:
            a = astype(a, dtype)
        elif upcast_small_int and promote_integers and (a.dtype == _onp.bool_ or (
                _dt.issubdtype(a.dtype, _onp.integer)
                and a.dtype.itemsize < _dt.default_int().itemsize)):
            a = astype(a, _dt.default_int() if not _dt.issubdtype(a.dtype, _onp.unsignedinteger)
                       else _dt.canonicalize_dtype(_dt.uint64))
        if where is not None:
            if identity is None and initial is None:
                raise ValueError(f"reduction operation {name} does not have an identity, so "
                                 f"to use a where mask one has to specify 'initial'")
            # (masked elements are the identity; initial is applied once, below: max and
            # min have no identity and take initial, which they absorb)
            a = _where_identity(a, where, initial if identity is None else identity(a.dtype))
        if a.dtype == _onp.bool_ and bool_fn is not None:
            res = bool_fn(a, axes)
        else:
            if name in ("max", "min") and builtins.any(a.shape[i] == 0 for i in axes) \
                    and initial is None:
                raise ValueError(f"zero-size array to reduction operation {name} which has "
                                 f"no identity")
            res = lax_fn(a, axes)
        if initial is not None:
            # (initial takes the reduced array's dtype, as in JAX: an integer sum with
            # initial=3.25 adds 3)
            init = lax.convert_element_type(initial, a.dtype)
            if init.shape != ():
                raise ValueError(f"mjax.numpy.{name}: initial value must be a scalar, got "
                                 f"an array of shape {init.shape}")
            res = {"sum": add, "prod": multiply, "max": maximum, "min": minimum}[name](
                init, res)
        if keepdims:
            res = lax.expand_dims(res, axes)
        return res
    f.__name__ = name
    f.__doc__ = f"NumPy's {name} reduction. JAX: jax.numpy.{name}."
    return f


def _where_identity(a, where_, value):
    return where_xy(where_, a, full_like(a, value))


sum = fused_when_eager(_reduction("sum", lax.reduce_sum, upcast_small_int=True,  # noqa: A001
                                  identity=lambda d: 0))
prod = fused_when_eager(_reduction("prod", lax.reduce_prod, upcast_small_int=True,
                                   identity=lambda d: 1))
_max = _reduction("max", lax.reduce_max, bool_fn=lax.reduce_or)
_min = _reduction("min", lax.reduce_min, bool_fn=lax.reduce_and)


# (max and min take no dtype: JAX's positional order is axis, out, keepdims)
@fused_when_eager
def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """NumPy's max reduction. JAX: jax.numpy.max."""
    return _max(a, axis, None, out, keepdims, initial, where)


@fused_when_eager
def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """NumPy's min reduction. JAX: jax.numpy.min."""
    return _min(a, axis, None, out, keepdims, initial, where)


amax, amin = max, min


def _truth_reduction(name, lax_fn, identity: bool):
    def f(a, axis=None, out=None, keepdims=False, *, where=None):
        check_arraylike(name, a)
        a = asarray(a)
        a = a if a.dtype == _onp.bool_ else astype(a, bool_)
        axes = normalize_axes(axis, a.ndim)  # (of a: a broadcasting `where` adds none)
        if where is not None:
            a = _where_identity(a, where, identity)
        res = lax_fn(a, axes)
        return lax.expand_dims(res, axes) if keepdims else res
    f.__name__ = name
    f.__doc__ = f"NumPy's {name}: truth of every/any element. JAX: jax.numpy.{name}."
    return f


all = fused_when_eager(_truth_reduction("all", lax.reduce_and, True))  # noqa: A001
any = fused_when_eager(_truth_reduction("any", lax.reduce_or, False))  # noqa: A001


@fused_when_eager
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    check_arraylike("mean", a)
    a = asarray(a)
    axes = normalize_axes(axis, a.ndim)
    if dtype is None:
        dtype = _dt.to_inexact_dtype(a.dtype)
    if where is None:
        n = math.prod(a.shape[i] for i in axes)
        if is_symbolic_dim(n):   # (JAX's order: the count's value first, then the sum)
            count = lax.convert_element_type(n, dtype)
            return lax.div(sum(astype(a, dtype), axis=axes, keepdims=keepdims), count)
        total = sum(astype(a, dtype), axis=axes, keepdims=keepdims)
        return lax.div(total, lax.full_like(total, n))
    total = sum(astype(a, dtype), axis=axes, keepdims=keepdims, where=where)
    count = sum(broadcast_to(where, a.shape), axis=axes, keepdims=keepdims, dtype=dtype)
    return total / count


_mean = mean   # (var's `mean` argument hides the function)


@fused_when_eager
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    ddof = _correction(ddof, correction)
    check_arraylike("var", a)
    a = asarray(a)
    axes = normalize_axes(axis, a.ndim)
    if where is not None:
        where = broadcast_to(asarray(where), a.shape)
    # (`mean` is the caller's precomputed mean, kept dims, as in JAX)
    m = _mean(a, axes, dtype, keepdims=True, where=where) if mean is None else asarray(mean)
    d = a - m
    sq = real(d * conj(d)) if _dt.issubdtype(d.dtype, _onp.complexfloating) else d * d
    if where is None:
        n = math.prod(a.shape[i] for i in axes)
        return sum(sq, axis=axes, keepdims=keepdims) / builtins.max(n - ddof, 0)
    # (only the selected elements count, in the mean, the sum and the normalizer)
    total = sum(sq, axis=axes, keepdims=keepdims, where=where)
    count = sum(where, axis=axes, keepdims=keepdims, dtype=total.dtype)
    return total / (count - ddof)


@fused_when_eager
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    check_arraylike("std", a)
    return sqrt(var(a, axis, dtype, ddof=_correction(ddof, correction), keepdims=keepdims,
                    where=where, mean=mean))


def _correction(ddof, correction):
    # The array API's name for ddof; giving both is ambiguous, as JAX says.
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def _arg(name, lax_fn):
    def f(a, axis=None, out=None, keepdims=None):
        keepdims = bool(keepdims)
        a = asarray(a)
        if axis is None:
            res = lax_fn(ravel(a), 0, _dt.default_int())
            return reshape(res, (1,) * a.ndim) if keepdims else res
        ax = normalize_axis(axis, a.ndim)
        if a.shape[ax] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        res = lax_fn(a, ax, _dt.default_int())
        return lax.expand_dims(res, (ax,)) if keepdims else res
    f.__name__ = name
    return f


argmax = fused_when_eager(_arg("argmax", lax.argmax))
argmin = fused_when_eager(_arg("argmin", lax.argmin))


def _cumulative(name, lax_fn, upcast=False):
    def f(a, axis=None, dtype=None, out=None):
        no_out(name, out)
        a = asarray(a)
        if axis is None:
            a, axis = ravel(a), 0
        if dtype is not None:
            a = astype(a, dtype)
        elif upcast and a.dtype == _onp.bool_:  # (JAX keeps small ints as they are)
            a = astype(a, _dt.default_int())
        return lax_fn(a, normalize_axis(axis, a.ndim))
    f.__name__ = name
    return f


cumsum = fused_when_eager(_cumulative("cumsum", lax.cumsum, True))
cumprod = fused_when_eager(_cumulative("cumprod", lax.cumprod, True))


@fused_when_eager
def count_nonzero(a, axis=None, keepdims=False):
    return sum(not_equal(a, 0), axis=axis, keepdims=keepdims, dtype=_dt.default_int())


def ptp(a, axis=None, out=None, keepdims=False):
    no_out("ptp", out)
    return subtract(max(a, axis=axis, keepdims=keepdims), min(a, axis=axis, keepdims=keepdims))


@fused_when_eager
def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    x = asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError("cumulative_sum: axis is required for arrays of rank > 1")
        axis = 0
    if dtype is None and (x.dtype == _onp.bool_ or (_dt.issubdtype(x.dtype, _onp.integer) and
                                                    x.dtype.itemsize < _dt.default_int().itemsize)):
        # Small integers widen as in sum (JAX's cumulative_sum; cumsum keeps the dtype).
        dtype = (_dt.canonicalize_dtype(_dt.uint64)
                 if _dt.issubdtype(x.dtype, _onp.unsignedinteger) else _dt.default_int())
    out = cumsum(x, axis, dtype)
    if include_initial:
        axis = normalize_axis(axis, out.ndim)
        zero_shape = out.shape[:axis] + (1,) + out.shape[axis + 1:]
        out = concatenate([zeros(zero_shape, out.dtype), out], axis)
    return out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return asarray(False)
    eq = equal(a1, a2)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return all(eq)


def array_equiv(a1, a2):
    """Whether a1 and a2 broadcast to each other and are equal. JAX: jnp.array_equiv."""
    a1, a2 = asarray(a1), asarray(a2)
    try:
        broadcast_shapes(a1.shape, a2.shape)
    except (ValueError, TypeError):
        return asarray(False)
    return all(a1 == a2)


@fused_when_eager
def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative product, optionally starting with 1. JAX: jnp.cumulative_prod."""
    x = asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"The input array has rank {x.ndim}, however axis was not set "
                             f"to an explicit value. The axis argument is only optional for "
                             f"one-dimensional arrays.")
        axis = 0
    axis = index_axis(axis, builtins.max(x.ndim, 1))
    out = cumprod(x, axis=axis, dtype=dtype)
    if include_initial:
        shape = list(out.shape)
        shape[axis] = 1
        out = concatenate([ones(shape, out.dtype), out], axis=axis)
    return out


@fused_when_eager
def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted average along axis; with returned=True also the sum of the weights.
    JAX: jnp.average."""
    a = asarray(a)
    axes = tuple(range(a.ndim)) if axis is None else tuple(
        operator.index(d) % a.ndim for d in ((axis,) if isinstance(axis, int) else axis))
    if weights is None:
        if not _dt.is_inexact(a.dtype):
            a = a.astype(_dt.default_float())
        avg = mean(a, axis=axis, keepdims=keepdims)
        total = full((), math.prod(a.shape[d] for d in axes), avg.dtype)
    else:
        weights = asarray(weights)
        dtype = result_type(a, weights)
        if not _dt.is_inexact(dtype):
            dtype = result_type(dtype, float)
        a, weights = a.astype(dtype), weights.astype(dtype)
        if a.shape != weights.shape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights "
                                 "differ.")
            if weights.shape != tuple(a.shape[d] for d in axes):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            # weights' dims follow `axes`; put them in increasing order, then broadcast.
            weights = lax.broadcast_in_dim(transpose(weights, tuple(_onp.argsort(axes))),
                                           a.shape, tuple(sorted(axes)))
        total = sum(weights, axis=axis, keepdims=keepdims)
        avg = sum(a * weights, axis=axis, keepdims=keepdims) / total
    if returned:
        return avg, broadcast_to(total, avg.shape)
    return avg
