"""NaN-ignoring reductions (`nansum`, `nanmax`, `nanargmin`, `nancumsum`, ...).

Each replaces NaNs with the reduction's identity and reduces with the ordinary function;
integer and bool arrays have no NaNs and go straight through. JAX: jax.numpy.nan*.
"""
from __future__ import annotations

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy import reductions
from mjax.numpy.arguments import check_where, no_out
from mjax.numpy.conversion import asarray, astype
from mjax.numpy.creation import full_like
from mjax.numpy.elementwise import isnan, logical_not, sqrt, where_xy
from mjax.numpy.reductions import (argmax, argmin, cumprod, cumsum, mean, prod,
                                   traced_number)
from mjax.numpy.scalar_types import inf, nan


def _has_nans(a):
    return _dt.is_inexact(a.dtype)


def _fill_nan(a, value):
    return where_xy(isnan(a), full_like(a, value), a) if _has_nans(a) else a


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Sum, treating NaN as 0. JAX: jax.numpy.nansum."""
    where = check_where("nansum", where)
    a = asarray(a)
    return reductions.sum(_fill_nan(a, 0), axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                   initial=initial, where=where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product, treating NaN as 1. JAX: jax.numpy.nanprod."""
    where = check_where("nanprod", where)
    a = asarray(a)
    return prod(_fill_nan(a, 1), axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                    initial=initial, where=where)


def _nan_extremum(name, reduce, fill):
    def f(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        where = check_where(name, where)
        a = asarray(a)
        if not _has_nans(a):
            return reduce(a, axis=axis, out=out, keepdims=keepdims, initial=initial,
                          where=where)
        res = reduce(_fill_nan(a, fill), axis=axis, keepdims=keepdims, initial=initial,
                     where=where)
        if initial is not None:   # (initial stands for the slice's missing values, as JAX)
            return res
        # A slice of nothing but NaNs stays NaN.
        all_nan = reductions.all(isnan(a), axis=axis, keepdims=keepdims)
        return where_xy(all_nan, full_like(res, nan), res)
    f.__name__ = name
    f.__doc__ = f"{name[3:]} ignoring NaNs; all-NaN slices give NaN. JAX: jax.numpy.{name}."
    return f


nanmax = _nan_extremum("nanmax", reductions.max, -inf)
nanmin = _nan_extremum("nanmin", reductions.min, inf)


def _nan_arg(name, arg, fill):
    def f(a, axis=None, out=None, keepdims=None):
        keepdims = bool(keepdims)
        a = asarray(a)
        if not _has_nans(a):
            return arg(a, axis=axis, keepdims=keepdims)
        res = arg(_fill_nan(a, fill), axis=axis, keepdims=keepdims)
        all_nan = reductions.all(isnan(a), axis=axis, keepdims=keepdims)
        return where_xy(all_nan, full_like(res, -1), res)
    f.__name__ = name
    f.__doc__ = f"{name[3:]} ignoring NaNs; all-NaN slices give -1. JAX: jax.numpy.{name}."
    return f


nanargmax = _nan_arg("nanargmax", argmax, -inf)
nanargmin = _nan_arg("nanargmin", argmin, inf)


def _count(a, axis, keepdims, dtype):
    return reductions.sum(logical_not(isnan(a)), axis=axis, keepdims=keepdims, dtype=dtype)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """Mean of the non-NaN entries (NaN where there are none). JAX: jax.numpy.nanmean."""
    where = check_where("nanmean", where)
    a = asarray(a)
    if not _has_nans(a):
        return mean(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    dtype = dtype or a.dtype
    # (the mask is applied by each sum, which broadcasts it: combined with the NaN mask
    # first it would trip jax_numpy_rank_promotion='raise' on a lower-rank `where`)
    total = reductions.sum(_fill_nan(a, 0), axis=axis, dtype=dtype, keepdims=keepdims,
                           where=where)
    count = reductions.sum(logical_not(isnan(a)), axis=axis, keepdims=keepdims, dtype=dtype,
                           where=where)
    # (lax.div, as JAX: an integer `dtype` divides as integers, a bool one is refused)
    return lax.div(total, count)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):
    """Variance of the non-NaN entries (about `mean`, if given: the mean computed with
    keepdims=True), computed in float32 for half floats. JAX: jax.numpy.nanvar."""
    return _nanvar(a, axis, dtype, out, traced_number(ddof), keepdims,
                   check_where("nanvar", where), mean)


@fused_when_eager   # (one program, as JAX's jitted nanvar; ddof an argument of it)
def _nanvar(a, axis, dtype, out, ddof, keepdims, where, mean):
    no_out("nanvar", out)
    a = asarray(a)
    compute, result = reductions._var_dtypes(a.dtype, dtype)
    a = astype(a, compute)
    m = (nanmean(a, axis=axis, dtype=compute, keepdims=True, where=where) if mean is None
         else astype(asarray(mean), compute))
    d = where_xy(isnan(a), full_like(a, 0), a - m)  # (inf - inf stays NaN, as in JAX)
    total = reductions.sum(reductions._squared_magnitude(d), axis=axis, keepdims=keepdims,
                           where=where)
    count = reductions.sum(logical_not(isnan(a)), axis=axis, keepdims=keepdims,
                           where=where) - ddof
    # (a count of 0 or less divides by 1 inside the untaken branch: its gradient stays 0,
    # not 0 * inf)
    positive = count > 0
    total = where_xy(positive, total, full_like(total, nan))
    res = total / astype(where_xy(positive, count, full_like(count, 1)), total.dtype)
    return astype(res, result)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):
    """Standard deviation of the non-NaN entries. JAX: jax.numpy.nanstd."""
    return _nanstd(a, axis, dtype, out, traced_number(ddof), keepdims,
                   check_where("nanstd", where), mean)


@fused_when_eager
def _nanstd(a, axis, dtype, out, ddof, keepdims, where, mean):
    return sqrt(_nanvar(a, axis, dtype, out, ddof, keepdims, where, mean))


def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum, treating NaN as 0. JAX: jax.numpy.nancumsum."""
    return cumsum(_fill_nan(asarray(a), 0), axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product, treating NaN as 1. JAX: jax.numpy.nancumprod."""
    return cumprod(_fill_nan(asarray(a), 1), axis=axis, dtype=dtype)
