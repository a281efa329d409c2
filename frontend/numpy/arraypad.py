"""`pad` with static widths: constant values by `lax.pad`, the other modes as one gather
per axis from a static table of source indices. JAX: jax.numpy.pad.
"""
from __future__ import annotations

import numpy as _onp

from mjax import lax
from mjax.numpy.arguments import is_array
from mjax.numpy.concrete_values import concrete_or_error
from mjax.numpy.conversion import asarray, astype
from mjax.numpy.indexing import take


def _widths(pad_width, ndim, what="pad_width"):
    w = concrete_or_error(pad_width, f"mjax.numpy.pad: {what} must be static, got a traced "
                                     f"array")
    if w.dtype.kind not in "iu":
        raise TypeError(f"mjax.numpy.pad: {what} must be integers, got {w.dtype}")
    try:
        w = _onp.broadcast_to(w, (ndim, 2))
    except ValueError:
        raise ValueError(f"mjax.numpy.pad: {what} of shape {w.shape} does not fit an array "
                         f"of rank {ndim} (expected (n,), (1, 2) or ({ndim}, 2))") from None
    if (w < 0).any():
        raise ValueError(f"mjax.numpy.pad: {what} must be non-negative, got "
                         f"{w.tolist()}")
    return [(int(lo), int(hi)) for lo, hi in w]


def _source_index(mode, n, lo, hi):
    """For each output position along one axis, the input position it copies."""
    i = _onp.arange(-lo, n + hi)
    if mode == "edge":
        return _onp.clip(i, 0, n - 1)
    if mode == "wrap":
        return i % n
    if mode == "reflect":       # mirror about the edge elements: period 2(n-1)
        if n == 1:
            return _onp.zeros_like(i)
        period = 2 * (n - 1)
        i = i % period
        return _onp.where(i >= n, period - i, i)
    if mode == "symmetric":     # mirror including the edge elements: period 2n
        i = i % (2 * n)
        return _onp.where(i >= n, 2 * n - 1 - i, i)
    raise AssertionError(mode)


_INDEX_MODES = ("edge", "wrap", "reflect", "symmetric")


def pad(array, pad_width, mode="constant", **kwargs):
    """Pads with `mode` in constant/edge/reflect/symmetric/wrap; widths are static."""
    array = asarray(array)
    widths = _widths(pad_width, array.ndim)
    if mode == "constant":
        values = kwargs.pop("constant_values", 0)
        _no_more_options(mode, kwargs)
        return _pad_constant(array, widths, values)
    if mode not in _INDEX_MODES:
        raise NotImplementedError(f"mjax.numpy.pad: mode {mode!r} is not supported (use one "
                                  f"of 'constant', {', '.join(map(repr, _INDEX_MODES))})")
    if kwargs.pop("reflect_type", "even") != "even":
        raise NotImplementedError("mjax.numpy.pad: only reflect_type='even' is supported")
    _no_more_options(mode, kwargs)
    for axis, (lo, hi) in enumerate(widths):
        if lo == hi == 0:
            continue
        n = array.shape[axis]
        if n == 0:
            raise ValueError(f"mjax.numpy.pad: cannot pad an empty axis {axis} in mode "
                             f"{mode!r}")
        idx = _source_index(mode, n, lo, hi)
        array = take(array, idx.astype(_onp.int32), axis=axis)
    return array


def _no_more_options(mode, kwargs):
    if kwargs:
        raise ValueError(f"mjax.numpy.pad: unsupported keyword arguments for mode {mode!r}: "
                         f"{sorted(kwargs)}")


def _pad_constant(array, widths, values):
    if is_array(values):
        if values.ndim != 0:
            raise NotImplementedError("mjax.numpy.pad: per-axis constant_values must be "
                                      "static (a list or NumPy array)")
        return lax.pad(array, astype(values, array.dtype),
                       [(lo, hi, 0) for lo, hi in widths])
    v = _onp.asarray(values)
    if v.ndim == 0:
        return lax.pad(array, lax.convert_element_type(v, array.dtype),
                       [(lo, hi, 0) for lo, hi in widths])
    # Per-axis (before, after) values: pad one axis at a time, as NumPy does.
    v = _onp.broadcast_to(v, (array.ndim, 2))
    for axis, ((lo, hi), (v_lo, v_hi)) in enumerate(zip(widths, v)):
        for cfg_axis, fill in (((lo, 0, 0), v_lo), ((0, hi, 0), v_hi)):
            cfg = [(0, 0, 0)] * array.ndim
            cfg[axis] = cfg_axis
            array = lax.pad(array, lax.convert_element_type(fill, array.dtype), cfg)
    return array
