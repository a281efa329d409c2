"""`pad` with static widths, in every mode JAX has: constant values by `lax.pad`; edge
and wrap as slices of each axis, concatenated (no index table: a Pallas kernel cannot
capture array constants); reflect and
symmetric (even or odd) as flipped slices of the growing array; linear ramps; statistics
of the edge values; a callable mapped over each axis. JAX: jax.numpy.pad.
"""
from __future__ import annotations

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.lax.shapes import fresh
from mjax.numpy import reductions
from mjax.numpy.arguments import check_arraylike
from mjax.numpy.concrete_values import concrete_or_error
from mjax.numpy.conversion import asarray
from mjax.numpy.creation import linspace
from mjax.numpy.elementwise import round as _round
from mjax.numpy.promotion import broadcast_to
from mjax.numpy.quantiles import median
from mjax.numpy.shaping import concatenate, flip, squeeze
from mjax.numpy.vectorize import apply_along_axis

# Each mode's keyword arguments (NumPy's names).
_OPTIONS = {"constant": ("constant_values",), "empty": (), "edge": (), "wrap": (),
            "linear_ramp": ("end_values",), "maximum": ("stat_length",),
            "mean": ("stat_length",), "median": ("stat_length",),
            "minimum": ("stat_length",), "reflect": ("reflect_type",),
            "symmetric": ("reflect_type",)}

_STATISTICS = {"maximum": reductions.max, "minimum": reductions.min,
               "mean": reductions.mean, "median": median}


def _pairs(values, ndim, name):
    """`values` as one (before, after) pair per axis; NumPy's accepted shapes."""
    v = _onp.asarray(concrete_or_error(values, f"mjax.numpy.pad: {name} must be static, "
                                               f"got a traced array"))
    if v.dtype == object:
        raise TypeError(f"`{name}` entries must be the same shape: {values}")
    if v.shape == (ndim, 2):
        return tuple((row[0], row[1]) for row in v)
    if v.shape in ((1, 2), (2,)):
        pair = tuple(v.reshape(2))
        return (pair,) * ndim
    if v.shape in ((1,), ()):
        return ((v.reshape(-1)[0],) * 2,) * ndim
    raise ValueError(f"jnp.pad: {name} with nd={ndim} has unsupported shape {v.shape}. "
                     f"Valid shapes are ({ndim}, 2), (1, 2), (2,), (1,), or ().")


def _like(x, array):
    """`x` in `array`'s dtype, weakly typed when `array` is."""
    return lax.convert_element_type(x, array.dtype, weak_type=array.weak_type)


def pad(array, pad_width, mode="constant", **kwargs):
    """Pads `array` by `pad_width` (static) in one of NumPy's modes or with a callable."""
    return fresh(_pad(array, pad_width, mode, **kwargs))


def _pad(array, pad_width, mode="constant", **kwargs):
    check_arraylike("pad", array)
    array = asarray(array)
    widths = _pairs(pad_width, array.ndim, "pad_width")
    if not all(_is_int(w) for pair in widths for w in pair):
        raise TypeError("`pad_width` must be of integral type.")
    if callable(mode):
        return _pad_callable(array, widths, mode, kwargs)
    if not isinstance(mode, str) or mode not in _OPTIONS:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    extra = set(kwargs) - set(_OPTIONS[mode])
    if extra:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {extra}")
    if array.ndim == 0:
        return array
    if any(w < 0 for pair in widths for w in pair):
        raise ValueError("index can't contain negative values")
    widths = [(int(lo), int(hi)) for lo, hi in widths]
    if mode == "constant":
        return _pad_constant(array, widths, kwargs.get("constant_values", 0))
    if mode == "empty":     # JAX's empty arrays are zeros
        return _pad_constant(array, widths, 0)
    if mode in ("edge", "wrap"):
        return _pad_by_index(array, widths, mode)
    if mode in ("reflect", "symmetric"):
        reflect_type = kwargs.get("reflect_type", "even")
        if reflect_type not in ("even", "odd"):
            raise ValueError(f"jnp.pad: reflect_type must be 'even' or 'odd', got "
                             f"{reflect_type!r}")
        return _pad_reflect(array, widths, mode, reflect_type == "odd")
    if mode == "linear_ramp":
        ends = _pairs(kwargs.get("end_values", 0), array.ndim, "end_values")
        return _pad_linear_ramp(array, widths, ends)
    lengths = kwargs.get("stat_length")
    if lengths is not None:
        lengths = [(int(lo), int(hi)) for lo, hi in _pairs(lengths, array.ndim,
                                                          "stat_length")]
    return _pad_statistic(array, widths, lengths, _STATISTICS[mode])


def _is_int(w):
    return isinstance(w, (int, _onp.integer)) and not isinstance(w, (bool, _onp.bool_))


def _pad_constant(array, widths, values):
    values = _like(asarray(values), array)
    if values.ndim == 0 or values.shape == (1,):
        return lax.pad(array, values.reshape(()), [(lo, hi, 0) for lo, hi in widths])
    if values.ndim == 1 and values.shape[-1] != 2:
        raise ValueError(f"jnp.pad: constant_values has unsupported shape {values.shape}. "
                         f"If the shape is 1D or 2D, the last dimension must be of size 1 "
                         f"or 2.")
    values = broadcast_to(values, (array.ndim, 2))
    # Per-axis (before, after) values: one axis at a time, so later axes pad the corners.
    for axis, (lo, hi) in enumerate(widths):
        for side, width in ((0, lo), (1, hi)):
            if width:
                cfg = [(0, 0, 0)] * array.ndim
                cfg[axis] = (width, 0, 0) if side == 0 else (0, width, 0)
                array = lax.pad(array, values[axis, side], cfg)
    return array


def _check_not_empty(array, axis, lo, hi, mode):
    if array.shape[axis] == 0 and (lo or hi):
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _pad_by_index(array, widths, mode):
    """Edge and wrap padding: the axis's source indices (clipped or modulo n) fall into runs
    of consecutive indices (a slice) or of one repeated index (an edge, broadcast)."""
    for axis, (lo, hi) in enumerate(widths):
        _check_not_empty(array, axis, lo, hi, mode)
        if lo == hi == 0:
            continue
        n = array.shape[axis]
        i = _onp.arange(-lo, n + hi)
        idx = _onp.clip(i, 0, n - 1) if mode == "edge" else i % n
        parts = [_index_run(array, axis, int(idx[a]), b - a, int(idx[b - 1]) == idx[a])
                 for a, b in _runs(idx)]
        array = parts[0] if len(parts) == 1 else concatenate(parts, axis=axis)
    return array


def _runs(idx):
    """[(a, b)]: idx[a:b] counts up by one, or (length > 1) repeats one index."""
    out, a = [], 0
    while a < len(idx):
        b = a + 1
        step = None if b == len(idx) else int(idx[b] - idx[a])
        if step in (0, 1):
            while b < len(idx) and idx[b] - idx[b - 1] == step:
                b += 1
        out.append((a, b))
        a = b
    return out


def _index_run(array, axis, start, length, repeated):
    if not repeated or length == 1:
        return lax.slice_in_dim(array, start, start + length, axis=axis)
    edge = lax.slice_in_dim(array, start, start + 1, axis=axis)
    shape = list(array.shape)
    shape[axis] = length
    return broadcast_to(edge, tuple(shape))


def _pad_reflect(array, widths, mode, odd):
    """Mirror images of the array about its edges, built a chunk at a time: a chunk is
    at most one period of the (growing) array, so wide pads repeat the reflection. An odd
    reflection mirrors the values through the current edge value as well."""
    for axis, (lo, hi) in enumerate(widths):
        n = array.shape[axis]
        _check_not_empty(array, axis, lo, hi, mode)
        if lo == hi == 0:
            continue
        skip = 1 if (mode == "reflect" and n > 1) else 0   # reflect leaves out the edge
        for before, width in ((True, lo), (False, hi)):
            while width > 0:
                chunk = min(width, n - skip)
                width -= chunk
                size = array.shape[axis]
                if before:
                    start, edge = skip, 0
                else:
                    start, edge = size - chunk - skip, size - 1
                part = flip(lax.slice_in_dim(array, start, start + chunk, axis=axis), axis)
                if odd:
                    part = 2 * lax.slice_in_dim(array, edge, edge + 1, axis=axis) - part
                array = concatenate([part, array] if before else [array, part], axis=axis)
    return array


def _pad_linear_ramp(array, widths, ends):
    for axis, ((lo, hi), (end_lo, end_hi)) in enumerate(zip(widths, ends)):
        n = array.shape[axis]
        first = squeeze(lax.slice_in_dim(array, 0, 1, axis=axis), axis)
        last = squeeze(lax.slice_in_dim(array, n - 1, n, axis=axis), axis)
        # Ramps run from the end value toward the edge, which they leave out.
        ramp_lo = linspace(end_lo, first, lo, endpoint=False, dtype=array.dtype, axis=axis)
        ramp_hi = linspace(end_hi, last, hi, endpoint=False, dtype=array.dtype, axis=axis)
        array = concatenate([_like(ramp_lo, array), array, flip(_like(ramp_hi, array), axis)],
                            axis=axis)
    return array


def _pad_statistic(array, widths, lengths, statistic):
    """Pads each side with `statistic` of the `lengths` values nearest it (all of them
    when `lengths` is None), rounded for integer arrays."""
    for axis, (lo, hi) in enumerate(widths):
        n = array.shape[axis]
        if lengths is None:
            stat_lo = stat_hi = statistic(array, axis=axis, keepdims=True)
        else:
            len_lo, len_hi = lengths[axis]
            if len_lo == 0 or len_hi == 0:
                raise ValueError("stat_length of 0 yields no value for padding")
            len_lo, len_hi = min(len_lo, n), min(len_hi, n)
            stat_lo = statistic(lax.slice_in_dim(array, 0, len_lo, axis=axis), axis=axis,
                                keepdims=True)
            stat_hi = statistic(lax.slice_in_dim(array, n - len_hi, n, axis=axis),
                                axis=axis, keepdims=True)
        if _dt.issubdtype(array.dtype, _onp.integer):
            stat_lo, stat_hi = _round(stat_lo), _round(stat_hi)
        before, after = (_repeat_along(_like(stat, array), axis, width)
                         for stat, width in ((stat_lo, lo), (stat_hi, hi)))
        array = concatenate([before, array, after], axis=axis)
    return array


def _repeat_along(block, axis, width):
    """`block` (size 1 along `axis`) broadcast to `width` entries along it."""
    shape = list(block.shape)
    shape[axis] = width
    return broadcast_to(block, shape)


def _pad_callable(array, widths, func, kwargs):
    """NumPy's callable mode, JAX's way: `func(row, (before, after), axis, kwargs)`
    returns each zero-padded row along each axis in turn (vmapped over the others)."""
    if any(w < 0 for pair in widths for w in pair):
        raise ValueError("index can't contain negative values")
    padded = _pad_constant(array, [(int(lo), int(hi)) for lo, hi in widths], 0)
    for axis in range(padded.ndim):
        padded = apply_along_axis(func, axis, padded, widths[axis], axis, kwargs)
    return padded
