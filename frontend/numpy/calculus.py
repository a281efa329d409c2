"""Differences and integrals: diff, ediff1d, gradient, trapezoid, unwrap."""
from __future__ import annotations

import builtins
import operator as _operator

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.numpy import elementwise, reductions
from mjax.lax.shapes import fresh
from mjax.numpy.arguments import check_arraylike, index_axis, normalize_axis
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.conversion import asarray
from mjax.numpy.elementwise import mod, not_equal, subtract, where_xy
from mjax.numpy.promotion import broadcast_to, promote, result_type
from mjax.numpy.reductions import cumsum
from mjax.numpy.shaping import concatenate, moveaxis, ndim, ravel, reshape


@fused_when_eager
def diff(a, n=1, axis=-1, prepend=None, append=None):
    check_arraylike("diff", a)
    a, n = asarray(a), _operator.index(n)
    # (JAX's checks in JAX's order; n=0 is the operand, a new value as JAX's jit makes)
    if n == 0:
        return fresh(a)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis(axis, a.ndim)
    parts = [a]
    if prepend is not None:
        parts.insert(0, broadcast_to(asarray(prepend), a.shape[:axis] + (1,) + a.shape[axis + 1:])
                     if asarray(prepend).ndim == 0 else asarray(prepend))
    if append is not None:
        parts.append(broadcast_to(asarray(append), a.shape[:axis] + (1,) + a.shape[axis + 1:])
                     if asarray(append).ndim == 0 else asarray(append))
    a = concatenate(parts, axis) if len(parts) > 1 else a
    for _ in range(n):
        m = a.shape[axis]
        if m == 0:      # (JAX: each further difference of an empty axis stays empty)
            a = subtract(a, a) if a.dtype != _onp.bool_ else not_equal(a, a)
            continue
        hi = lax.slice_in_dim(a, 1, m, 1, axis)
        lo = lax.slice_in_dim(a, 0, builtins.max(m - 1, 0), 1, axis)
        a = not_equal(hi, lo) if a.dtype == _onp.bool_ else subtract(hi, lo)
    return a


@fused_when_eager
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of y by the trapezoidal rule along axis. JAX: jnp.trapezoid."""
    y = asarray(y)
    if x is None:
        if not _dt.is_inexact(y.dtype):
            y = y.astype(_dt.default_float())
        d = asarray(dx)
        if d.ndim > 0:
            d = moveaxis(reshape(d, (1,) * (y.ndim - d.ndim) + d.shape), axis, -1)
    else:
        x = asarray(x)
        dtype = _dt.to_inexact_dtype(result_type(y, x))
        y, x = y.astype(dtype), x.astype(dtype)
        d = diff(x) if x.ndim == 1 else moveaxis(diff(x, axis=axis), axis, -1)
    y = moveaxis(y, index_axis(axis, y.ndim), -1)
    if d.ndim == 0 or d.shape[-1] == 1:
        # A constant spacing: dx * (sum(y) - (y[0] + y[-1]) / 2), JAX's order (its sum of
        # y, in float32 for half floats, cannot overflow where the pairwise sums would).
        d = d if d.ndim == 0 else d[..., 0]
        return d * (reductions.sum(y, axis=-1) - 0.5 * (y[..., 0] + y[..., -1]))
    return 0.5 * reductions.sum(d * (y[..., 1:] + y[..., :-1]), axis=-1)


@fused_when_eager(traced=range(1, 64))   # (the spacings: traced by JAX's jit)
def gradient(f, *varargs, axis=None, edge_order=None):
    """Second-order central differences inside, first-order at the edges. JAX: gradient."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not "
                                  "supported.")
    # (f and the spacings promoted together, as JAX: float64 coordinates widen f)
    f, *varargs = promote("gradient", f, *varargs, inexact=True, broadcast=False)
    axes = tuple(range(f.ndim)) if axis is None else (
        (index_axis(axis, f.ndim),) if isinstance(axis, int) else tuple(index_axis(a, f.ndim)
                                                                   for a in axis))
    if not varargs:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and len(axes) > 1 and ndim(varargs[0]) == 0:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError("Invalid number of spacing arguments")
    out = []
    for ax, h in zip(axes, spacings):
        n = f.shape[ax]
        if n < 2:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        sl = lambda a, b: lax.slice_in_dim(f, a, b, 1, ax)  # noqa: E731
        if ndim(h) == 0:
            inner = (sl(2, n) - sl(0, n - 2)) * 0.5 / h   # (JAX's order of rounding)
            first = (sl(1, 2) - sl(0, 1)) / h
            last = (sl(n - 1, n) - sl(n - 2, n - 1)) / h
        else:
            coords = h   # (promoted with f above)
            dxs = diff(coords)
            shape = [1] * f.ndim
            shape[ax] = n - 2
            a_, b_ = reshape(dxs[:-1], shape), reshape(dxs[1:], shape)
            # (JAX's weights of the three neighbours, rounded as JAX's)
            inner = (-b_ / (a_ * (a_ + b_)) * sl(0, n - 2) + (b_ - a_) / (a_ * b_) *
                     sl(1, n - 1) + a_ / (b_ * (a_ + b_)) * sl(2, n))
            first = (sl(1, 2) - sl(0, 1)) / dxs[0]
            last = (sl(n - 1, n) - sl(n - 2, n - 1)) / dxs[-1]
        out.append(concatenate([first, inner, last], axis=ax) if n > 2 else
                   concatenate([first, last], axis=ax))
    return out[0] if len(out) == 1 else out


def unwrap(p, discont=None, axis=-1, period=2 * _onp.pi):
    """p with jumps larger than discont (default period/2) replaced by their period
    complement, accumulated along axis. JAX: jnp.unwrap."""
    p = asarray(p)
    integral = _dt.issubdtype(p.dtype, _onp.integer) and isinstance(period, int)
    if not integral and not _dt.is_inexact(p.dtype):
        p = p.astype(_dt.default_float())
    axis = index_axis(axis, p.ndim)
    # As NumPy: integers with an integer period stay integers (the boundary is ambiguous
    # only for an even period).
    half = period // 2 if integral else period / 2
    discont = period / 2 if discont is None else discont
    dd = diff(p, axis=axis)
    ddmod = mod(dd + half, period) - half
    if not integral or period % 2 == 0:
        ddmod = where_xy((ddmod == -half) & (dd > 0), half, ddmod)
    correct = where_xy(elementwise.abs(dd) < discont, 0, ddmod - dd)
    first = lax.slice_in_dim(p, 0, 1, 1, axis)
    rest = lax.slice_in_dim(p, 1, p.shape[axis], 1, axis) + cumsum(correct, axis=axis)
    return concatenate([first, rest.astype(p.dtype)], axis=axis)


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of ravel(ary), with optional values before
    and after. JAX: jnp.ediff1d."""
    flat = ravel(asarray(ary))
    parts = [flat[1:] - flat[:-1]]
    if to_begin is not None:
        parts.insert(0, ravel(asarray(to_begin)).astype(flat.dtype))
    if to_end is not None:
        parts.append(ravel(asarray(to_end)).astype(flat.dtype))
    return concatenate(parts) if len(parts) > 1 else parts[0]
