"""Array creation: zeros/ones/full/empty (and *_like), ranges (arange, linspace,
logspace, geomspace), eye/identity, tri/tril/triu, fromfunction."""
from __future__ import annotations

import builtins
import math
import operator

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.lax import key_ops
from mjax.vmap.batching import vmap
from mjax.tracing.core import Tracer
from mjax.dialect.shape_poly import is_symbolic_dim, max_dim
from mjax.dialect.types import KeyType, RefAval
from mjax.jit.jitted import jit
from mjax.lax.elementwise import layout_like
from mjax.lax.sharding import takes_out_sharding
from mjax.numpy.arguments import canonical_shape, check_arraylike, normalize_axis
from mjax.numpy.array_api import fused_when_eager, with_device_keyword
from mjax.numpy.concrete_values import concrete_array
from mjax.numpy.conversion import asarray, astype
from mjax.numpy.elementwise import log10, power, real, sign, where_xy
from mjax.numpy.promotion import broadcast_shapes, broadcast_to, result_type
from mjax.numpy.scalar_types import bool_
from mjax.numpy.shaping import concatenate, expand_dims, reshape


@takes_out_sharding
@with_device_keyword
def zeros(shape, dtype=None):
    if isinstance(dtype, KeyType):
        return key_ops.full_keys(dtype.impl, canonical_shape(shape), 0)
    return lax.full(canonical_shape(shape), 0, _dt.default_float() if dtype is None
                    else _dt.check_user_dtype(dtype, "zeros"))


@takes_out_sharding
@with_device_keyword
def ones(shape, dtype=None):
    if isinstance(dtype, KeyType):
        return key_ops.full_keys(dtype.impl, canonical_shape(shape), 1)
    return lax.full(canonical_shape(shape), 1, _dt.default_float() if dtype is None
                    else _dt.check_user_dtype(dtype, "ones"))


@takes_out_sharding
@with_device_keyword
def empty(shape, dtype=None):
    return zeros(shape, None if dtype is None else _dt.check_user_dtype(dtype, "empty"))


@takes_out_sharding
@with_device_keyword
def full(shape, fill_value, dtype=None):
    if dtype is not None:
        dtype = _dt.check_user_dtype(dtype, "full")
    if isinstance(dtype, KeyType):
        return key_ops.full_keys(dtype.impl, canonical_shape(shape), fill_value)
    if dtype is not None and _onp.ndim(fill_value) == 0:
        # lax.full converts as a cast does (a Python int out of the dtype's range wraps,
        # as in JAX; asarray would raise OverflowError).
        return lax.full(canonical_shape(shape), fill_value, dtype)
    return broadcast_to(asarray(fill_value, dtype=dtype), canonical_shape(shape))


def _like(name, a, fill_value, dtype, shape):
    """An array of a's shape and dtype (or the given ones) filled with fill_value. `a` may
    be duck-typed (a ShapeDtypeStruct, anything with a shape and a NumPy dtype) as JAX
    accepts; a weakly typed array gives a weakly typed result when no dtype is given."""
    dtype = None if dtype is None else _dt.check_user_dtype(dtype, name)
    if isinstance(dtype or getattr(a, "dtype", None), KeyType):
        return key_ops.full_keys((dtype or a.dtype).impl,
                                 _onp.shape(a) if shape is None else canonical_shape(shape),
                                 fill_value)
    # (a Ref is read by its type alone, as JAX's: no load of its contents)
    duck = isinstance(getattr(a, "dtype", None), _onp.dtype) and \
        isinstance(getattr(a, "shape", None), tuple) and (
            not hasattr(a, "__array__") or isinstance(getattr(a, "aval", None), RefAval))
    if not duck:
        a = asarray(a)
    shape = a.shape if shape is None else canonical_shape(shape)
    if _onp.ndim(fill_value) > 0:      # an array of fill values, broadcast (as JAX)
        return broadcast_to(asarray(fill_value, dtype=dtype or a.dtype), shape)
    if dtype is None and not duck and a.weak_type:
        return lax.full_like(a, fill_value, shape=shape)
    return lax.full(shape, fill_value, dtype or a.dtype, sharding=layout_like(a, shape))



@takes_out_sharding
@with_device_keyword
def zeros_like(a, dtype=None, shape=None):
    return _like("zeros_like", a, 0, dtype, shape)


@takes_out_sharding
@with_device_keyword
def ones_like(a, dtype=None, shape=None):
    return _like("ones_like", a, 1, dtype, shape)


@takes_out_sharding
@with_device_keyword
def full_like(a, fill_value, dtype=None, shape=None):
    return _like("full_like", a, fill_value, dtype, shape)


@with_device_keyword
def empty_like(prototype, dtype=None, shape=None):
    """zeros_like (XLA has no uninitialized memory). JAX: jnp.empty_like."""
    return zeros_like(prototype, dtype, shape)


@takes_out_sharding
@with_device_keyword
def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values; start/stop/step must be concrete (static shape)."""
    start, stop, step = (concrete_array(v, "arange's arguments determine its output shape "
                                           "and must be concrete") for v in (start, stop, step))
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    values = [_onp.asarray(v).item() if hasattr(v, "shape") else v for v in (start, stop, step)]
    if dtype is None:
        dtype = (_dt.default_float() if builtins.any(isinstance(v, float) for v in values)
                 else _dt.default_int())
    dtype = _dt.check_user_dtype(dtype, "arange")
    if builtins.any(map(is_symbolic_dim, values)):
        n = _symbolic_count(*values)
    else:
        n = builtins.max(0, int(math.ceil((values[1] - values[0]) / values[2])))
    if values[0] == 0 and values[2] == 1:
        return lax.iota(dtype, n)
    base = lax.iota(dtype, n)
    return lax.add(lax.mul(base, lax.full_like(base, values[2])),
                   lax.full_like(base, values[0]))


def _symbolic_count(start, stop, step):
    """How many values arange gives when start or stop is a symbolic dimension (integer
    steps): an expression, clamped at 0 with max_dim."""
    step = operator.index(step)
    if step == 0:
        raise ValueError("arange: step must not be zero")
    if step > 0:
        return max_dim((stop - start + step - 1) // step, 0)
    return max_dim((start - stop - step - 1) // -step, 0)


@fused_when_eager
@with_device_keyword
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    start, stop = asarray(start), asarray(stop)
    dtype = (_dt.to_inexact_dtype(result_type(start, stop)) if dtype is None
             else _dt.check_user_dtype(dtype, "linspace"))
    compute = _dt.to_inexact_dtype(dtype)
    start, stop = astype(start, compute), astype(stop, compute)
    shape = list(broadcast_shapes(start.shape, stop.shape))
    start, stop = broadcast_to(start, shape), broadcast_to(stop, shape)
    axis = len(shape) + axis + 1 if axis < 0 else axis
    ones_shape = shape[:axis] + [1] + shape[axis:]
    div = (num - 1) if endpoint else num
    if num > 1:
        step = (stop - start) / asarray(div, dtype=compute)
        # Each point interpolates the ends (start * (1 - t) + stop * t), as JAX does, so
        # the ends come out exactly and integer outputs floor the same values.
        real = _dt.finfo(compute).dtype
        iota_shape = [1] * len(ones_shape)
        iota_shape[axis] = div
        t = astype(lax.reshape(lax.iota(real, div), iota_shape) / asarray(div, real), compute)
        out = reshape(start, ones_shape) * (1 - t) + reshape(stop, ones_shape) * t
        if endpoint:
            out = concatenate([out, reshape(stop, ones_shape)], axis=axis)
    elif num == 1:
        step = asarray(_onp.nan if endpoint else stop - start, dtype=compute)
        out = reshape(start, ones_shape)
    else:
        step = full((), _onp.nan, compute)
        out = zeros(shape[:axis] + [0] + shape[axis:], dtype)
    if _dt.issubdtype(dtype, _onp.integer) and not _dt.issubdtype(out.dtype, _onp.integer):
        out = lax.floor(out)
    out = astype(out, dtype)
    return (out, step) if retstep else out


@fused_when_eager
@with_device_keyword
def eye(N, M=None, k=0, dtype=None):
    if any(isinstance(n, (int, _onp.integer)) and n < 0 for n in (N, M)):
        raise ValueError(f"negative dimensions are not allowed, got {N} and {M}")
    M = N if M is None else M
    dtype = _dt.default_float() if dtype is None else _dt.check_user_dtype(dtype, "eye")
    r = lax.broadcasted_iota(_dt.int32, (N, M), 0)
    c = lax.broadcasted_iota(_dt.int32, (N, M), 1)
    return astype(lax.eq(lax.add(r, _diagonal_offset(r, k)), c), dtype)


def _diagonal_offset(r, k):
    # A Python int stays a scalar operand (JAX's jaxpr: `add b 0:i32[]`), int32 as the
    # iota is, also under x64
    if type(k) is int:
        return lax.convert_element_type(k, _dt.int32, weak_type=True)
    return lax.full_like(r, k)


def identity(n, dtype=None):
    return eye(n, dtype=None if dtype is None else _dt.check_user_dtype(dtype, "identity"))


def tri(N, M=None, k=0, dtype=None):
    M = N if M is None else M
    dtype = None if dtype is None else _dt.check_user_dtype(dtype, "tri")
    r = lax.broadcasted_iota(_dt.int32, (N, M), 0)
    r = lax.add(r, _diagonal_offset(r, k))    # (before the column iota: JAX's order)
    c = lax.broadcasted_iota(_dt.int32, (N, M), 1)
    return astype(lax.ge(r, c), dtype or _dt.default_float())


def _matrix(name, m):
    # (JAX's: no NumPy broadcasting of a vector to a matrix; no lists)
    check_arraylike(name, m)
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError(f"Argument to jax.numpy.{name} must be at least 2D")
    return m


def tril(m, k=0):
    m = _matrix("tril", m)
    mask = tri(*m.shape[-2:], k=k, dtype=bool_)
    return where_xy(mask, m, zeros_like(m))


def triu(m, k=0):
    m = _matrix("triu", m)
    mask = tri(*m.shape[-2:], k=k - 1, dtype=bool_)
    return where_xy(mask, zeros_like(m), m)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function vmapped over the index grid of `shape` (it sees scalar indices, as in JAX).
    JAX: jnp.fromfunction."""
    shape = tuple(operator.index(d) for d in shape)
    for i in range(len(shape) - 1, -1, -1):
        function = vmap(function, in_axes=tuple(0 if j == i else None
                                                  for j in range(len(shape))))
    return function(*(lax.iota(dtype, n) for n in shape), **kwargs)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop). JAX: jnp.logspace."""
    start, stop = asarray(start), asarray(stop)
    computation = result_type(start, stop, float)
    lin = linspace(start, stop, num, endpoint=endpoint, dtype=computation, axis=axis)
    out = power(asarray(base, computation), lin)
    return out if dtype is None else out.astype(dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Numbers spaced evenly on a log scale between start and stop: JAX's formula, sign(start)
    times the logspace of the log10 magnitudes relative to it (a zero or a change of sign
    gives NaN; no endpoint is set exactly). JAX: jnp.geomspace."""
    num, axis = operator.index(num), operator.index(axis)
    return _geomspace_jit(start, stop, num, endpoint, dtype, axis)


def _geomspace(start, stop, num, endpoint, dtype, axis):
    # (jitted with start and stop traced, Python scalars too, as JAX's _geomspace: folded
    # as constants, XLA rounded the log10s and the power otherwise, in the last bit)
    if dtype is None:
        dtype = _dt.to_inexact_dtype(result_type(start, stop))
    else:
        dtype = _dt.check_user_dtype(dtype, "geomspace")
    computation = _dt.to_inexact_dtype(dtype)
    start, stop = asarray(start).astype(computation), asarray(stop).astype(computation)
    s = sign(start)
    out = s * logspace(log10(start / s), log10(stop / s), num, endpoint=endpoint, base=10.0,
                       dtype=computation, axis=0)
    ax = normalize_axis(axis, out.ndim)
    if ax:
        out = lax.transpose(out, (*range(1, ax + 1), 0, *range(ax + 1, out.ndim)))
    return lax.convert_element_type(out, dtype)


_geomspace_jit = jit(_geomspace, static_argnums=(2, 3, 4, 5))
