"""Reductions: sum, prod, max, min, all, any, mean, var, std, average, argmax/argmin,
the cumulative ones (cumsum, cumprod, cumulative_sum/prod), count_nonzero, ptp, and the
whole-array comparisons (allclose, array_equal, array_equiv)."""
from __future__ import annotations

import builtins
import math
import operator

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.numpy.arguments import (AxisError, check_arraylike, check_where, index_axis, no_out,
                                  normalize_axes, normalize_axis)
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.conversion import asarray, astype
from mjax.numpy.creation import full, full_like, ones, zeros
from mjax.numpy.elementwise import (add, conj, equal, isclose, isnan, logical_and, logical_or,
                                    maximum, minimum, multiply, not_equal, real, sqrt, subtract,
                                    where_xy)
from mjax.numpy.promotion import broadcast_shapes, broadcast_to, jit_arguments, result_type
from mjax.numpy.scalar_types import bool_
from mjax.numpy.shaping import concatenate, ravel, reshape, transpose
from mjax.dialect.shape_poly import is_symbolic_dim
from mjax.tracing.core import _state as trace_state


_HALF = (_onp.dtype(_onp.float16), _onp.dtype(_dt.bfloat16))


def _reduction_axes(axis, ndim):
    """A reduction's axis argument as a tuple in [0, ndim): JAX's ValueError for an
    axis named twice (an out-of-range one is an AxisError: a ValueError and IndexError)."""
    if ndim == 0 and axis is not None:
        for a in ((axis,) if _onp.ndim(axis) == 0 else axis):
            # (JAX's canonicalize_axis: a 0-d array has no axis 0 either)
            raise AxisError(f"axis {a} is out of bounds for array of dimension 0")
    axes = normalize_axes(axis, ndim)
    if len(set(axes)) != len(axes):
        shown = tuple(axis) if isinstance(axis, (list, tuple)) else axis
        raise ValueError(f"duplicate value in 'axis': {shown}")
    return axes


def accumulation_dtype(dtype) -> _onp.dtype:
    """The dtype a reduction producing `dtype` computes in: float32 for float16 and
    bfloat16 (whose sums of many terms lose most digits, and whose counts overflow),
    `dtype` itself otherwise. JAX: jnp's reductions upcast half floats for computation."""
    dtype = _onp.dtype(dtype)
    return _onp.dtype(_onp.float32) if dtype in _HALF else dtype


def _reduction(name, lax_fn, *, bool_fn=None, upcast_small_int=False, identity=None,
               upcast_half=False):
    # JAX's order: cast to the computation dtype (a half float result computes in float32
    # unless `dtype` is given), mask, reduce, apply `initial`, cast to the result dtype.
    def f(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
          promote_integers=True):
        if out is not None:
            raise NotImplementedError(f"mjax.numpy.{name}: the `out` argument is not supported "
                                      f"(arrays are immutable)")
        check_arraylike(name, a)
        where = check_where(name, where)
        a = asarray(a)
        axes = _reduction_axes(axis, a.ndim)
        if upcast_small_int and a.dtype == _onp.bool_:
            a = lax.convert_element_type(a, _dt.default_int())  # (sum, prod: numbers)
        if dtype is not None:
            result = _dt.check_user_dtype(dtype, name)
        elif upcast_small_int and promote_integers and (
                _dt.issubdtype(a.dtype, _onp.integer)
                and a.dtype.itemsize < _dt.default_int().itemsize):
            result = (_dt.default_int() if not _dt.issubdtype(a.dtype, _onp.unsignedinteger)
                      else _dt.canonicalize_dtype(_dt.uint64))
        else:
            result = a.dtype
        upcast = upcast_half and dtype is None
        a = lax.convert_element_type(a, accumulation_dtype(result) if upcast else result)
        if where is not None:
            if identity is None and initial is None:
                raise ValueError(f"reduction operation {name} does not have an identity, so "
                                 f"to use a where mask one has to specify 'initial'")
            # (masked elements are the identity; initial is applied once, below: max and
            # min have no identity and take initial, which they absorb)
            a = _where_identity(a, where, initial if identity is None else identity(a.dtype))
        if name in ("max", "min") and builtins.any(a.shape[i] == 0 for i in axes) \
                and initial is None:   # (bool arrays too, as JAX)
            raise ValueError(f"zero-size array to reduction operation {name} which has "
                             f"no identity")
        res = bool_fn(a, axes) if a.dtype == _onp.bool_ and bool_fn is not None else \
            lax_fn(a, axes)
        if initial is not None:
            # (initial takes the computation dtype, as in JAX: an integer sum with
            # initial=3.25 adds 3)
            init = lax.convert_element_type(initial, a.dtype)
            if init.shape != ():
                raise ValueError(f"initial value must be a scalar. Got array of shape "
                                 f"{init.shape}")
            res = {"sum": add, "prod": multiply, "max": maximum, "min": minimum}[name](
                init, res)
        if keepdims:
            res = lax.expand_dims(res, axes)
        return lax.convert_element_type(res, result)
    f.__name__ = name
    f.__doc__ = f"NumPy's {name} reduction. JAX: jax.numpy.{name}."
    return f


def _where_identity(a, where_, value):
    return where_xy(where_, a, full_like(a, value))


sum = fused_when_eager(_reduction("sum", lax.reduce_sum, bool_fn=lax.reduce_or,  # noqa: A001
                                  upcast_small_int=True, identity=lambda d: 0,
                                  upcast_half=True))
prod = fused_when_eager(_reduction("prod", lax.reduce_prod, bool_fn=lax.reduce_and,
                                   upcast_small_int=True, identity=lambda d: 1,
                                   upcast_half=True))
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
        where = check_where(name, where)
        a = asarray(a)
        a = a if a.dtype == _onp.bool_ else astype(a, bool_)
        axes = _reduction_axes(axis, a.ndim)  # (of a: a broadcasting `where` adds none)
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
    no_out("mean", out)
    check_arraylike("mean", a)
    where = check_where("mean", where)
    a = asarray(a)
    axes = _reduction_axes(axis, a.ndim)
    result = _dt.to_inexact_dtype(a.dtype) if dtype is None else _dt.check_user_dtype(
        dtype, "mean")
    # (the sum and the division run in float32 for a half float result, unless `dtype`
    # is given: float16 cannot even count past 65504)
    compute = accumulation_dtype(result) if dtype is None else result
    count = _count(a, axes, keepdims, where, compute)  # (JAX's order: count, then sum)
    total = sum(a, axis=axes, dtype=compute, keepdims=keepdims, where=where)
    return lax.convert_element_type(lax.div(total, count), result)


def _count(a, axes, keepdims, where, dtype):
    """How many elements of `a` a reduction over `axes` takes in (those where `where` is
    True), as `dtype`, shaped as the reduction's result."""
    if where is not None:
        return sum(broadcast_to(where, a.shape), axis=axes, keepdims=keepdims, dtype=dtype)
    n = math.prod(a.shape[i] for i in axes)
    if is_symbolic_dim(n):
        return lax.convert_element_type(n, dtype)
    # (a scalar constant, which the division broadcasts: a literal, as JAX stages it)
    return _onp.asarray(n, dtype=dtype)[()]


_mean = mean   # (var's `mean` argument hides the function)


def _var_dtypes(a_dtype, dtype):
    """(computation dtype, result dtype) of var and nanvar: the result is `dtype`, else
    the real inexact dtype of `a`; the computation upcasts half floats either way."""
    if dtype is None:
        result = _dt.to_inexact_dtype(a_dtype)
        compute = result
        if _dt.issubdtype(result, _onp.complexfloating):
            result = _onp.dtype(_onp.finfo(result).dtype)
        return accumulation_dtype(compute), result
    dtype = _dt.check_user_dtype(dtype, "var")
    if _dt.issubdtype(a_dtype, _onp.complexfloating) and \
            not _dt.issubdtype(dtype, _onp.complexfloating):
        raise ValueError("jax.numpy.var does not yet support real dtype parameters when "
                         "computing the variance of an array of complex values.")
    return accumulation_dtype(dtype), dtype


def _squared_magnitude(d):
    return real(d * conj(d)) if _dt.issubdtype(d.dtype, _onp.complexfloating) else \
        lax.square(d)


def traced_number(x):
    """A Python number that JAX's jitted function takes as a traced argument (var's
    ddof): eagerly a NumPy scalar array, so the fused program takes it as an argument as
    JAX's does; a constant would be folded (XLA turns a division by a constant into a
    multiplication by its reciprocal, rounding otherwise than JAX's eager division)."""
    if type(x) in (int, float) and not trace_state.stack:
        return _onp.asarray(x)
    return x


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    return _var(a, axis, dtype, out, traced_number(_correction(ddof, correction)), keepdims,
                where=check_where("var", where), mean=mean)


@fused_when_eager
def _var(a, axis, dtype, out, ddof, keepdims, *, where=None, mean=None):
    (ddof,) = jit_arguments(ddof)   # (a traced argument in JAX)
    no_out("var", out)
    check_arraylike("var", a)
    a = asarray(a)
    axes = _reduction_axes(axis, a.ndim)
    compute, result = _var_dtypes(a.dtype, dtype)
    a = lax.convert_element_type(a, compute)
    if where is not None:
        where = broadcast_to(asarray(where), a.shape)
    # (`mean` is the caller's precomputed mean, kept dims, as in JAX)
    m = (_mean(a, axes, compute, keepdims=True, where=where) if mean is None
         else lax.convert_element_type(asarray(mean), compute))
    sq = _squared_magnitude(a - m)
    # (only the selected elements count, in the mean, the sum and the normalizer)
    normalizer = _count(a, axes, keepdims, where, sq.dtype) - lax.convert_element_type(
        ddof, sq.dtype)
    total = sum(sq, axis=axes, dtype=sq.dtype, keepdims=keepdims, where=where)
    res = lax.convert_element_type(lax.div(total, normalizer), result)
    # (no degrees of freedom left: NaN, as JAX)
    return where_xy(normalizer > 0, res, _onp.nan)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    return _std(a, axis, dtype, out, traced_number(_correction(ddof, correction)), keepdims,
                where=check_where("std", where), mean=mean)


@fused_when_eager
def _std(a, axis, dtype, out, ddof, keepdims, *, where=None, mean=None):
    check_arraylike("std", a)
    return sqrt(_var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean))


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
            if a.size == 0:   # (JAX checks this first, whatever the dtype)
                raise ValueError(f"attempt to get {name} of an empty sequence")
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
    # (no half float upcast here, as in JAX: a running sum keeps its operand's dtype)
    def f(a, axis=None, dtype=None, out=None):
        no_out(name, out)
        a = asarray(a)
        if axis is None:
            a, axis = ravel(a), 0
        axis = normalize_axis(axis, a.ndim)
        if dtype is None:
            result = _dt.default_int() if upcast and a.dtype == _onp.bool_ else a.dtype
            compute = result  # (JAX keeps small ints as they are)
        elif _onp.dtype(dtype) == _onp.bool_:
            # A boolean result accumulates the truth values as integers.
            result, compute = _onp.dtype(_onp.bool_), _dt.default_int()
            a = a if a.dtype == _onp.bool_ else not_equal(a, 0)
        else:
            result = compute = _dt.check_user_dtype(dtype, name)
        res = lax_fn(lax.convert_element_type(a, compute), axis)
        return lax.convert_element_type(res, result)
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


def _cumulative_axis(x, axis, what):
    """cumulative_sum/prod's axis: JAX's errors for a scalar, and for no axis on more than
    one dimension."""
    if x.ndim == 0:
        raise ValueError(f"The input must be non-scalar to take a cumulative {what}, however "
                         f"a scalar value or scalar array was given.")
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"The input array has rank {x.ndim}, however axis was not set "
                             f"to an explicit value. The axis argument is only optional for "
                             f"one-dimensional arrays.")
        return 0
    return axis


@fused_when_eager
def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    x = asarray(x)
    axis = _cumulative_axis(x, axis, "sum")
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
    axis = _cumulative_axis(x, axis, "product")
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
    # (inexact as JAX's promote_dtypes_inexact: no promotion with a Python float, which
    # jax_numpy_dtype_promotion='strict' would refuse)
    if weights is None:
        a = a.astype(_dt.to_inexact_dtype(a.dtype))
        avg = mean(a, axis=axis, keepdims=keepdims)
        total = full((), math.prod(a.shape[d] for d in axes), avg.dtype)
    else:
        weights = asarray(weights)
        dtype = _dt.to_inexact_dtype(result_type(a, weights))
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
