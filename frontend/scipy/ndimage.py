"""`mjax.scipy.ndimage`: `map_coordinates` (nearest and linear interpolation), as
`jax.scipy.ndimage`. Each output is a weighted sum over the 2**ndim (order 1) or single
(order 0) neighbouring grid points, whose indices the boundary mode folds into range."""
from __future__ import annotations

import functools
import itertools
import operator

from mjax import lax
from mjax import numpy as jnp
from mjax.tracing.staging import jit_eagerly

__all__ = ["map_coordinates"]


def _mirror(index, size):
    # Triangular wave of period 2*(size-1): 0, 1, .., size-1, size-2, .., 1, 0, ...
    period = size - 1
    return jnp.abs((index + period) % (2 * period) - period)


def _reflect(index, size):
    # Mirror about the half-sample edges: the mirror fold of the doubled index.
    return jnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_FOLD = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round(x):
    return x if jnp.issubdtype(x.dtype, jnp.integer) else lax.round(x)


def _nodes(coord, order):
    """(index, weight) pairs for one axis."""
    if order == 0:
        return [(_round(coord).astype(jnp.int32), coord.dtype.type(1))]
    lower = jnp.floor(coord)
    upper_w = coord - lower
    index = lower.astype(jnp.int32)
    return [(index, 1 - upper_w), (index + 1, upper_w)]


@jit_eagerly("input", "coordinates", "cval")
def _map_coordinates(input, coordinates, order, mode, cval):
    arr = jnp.asarray(input)
    coords = [jnp.asarray(c) for c in coordinates]
    cval = jnp.asarray(cval, arr.dtype)
    if len(coords) != arr.ndim:
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coords)} != {arr.ndim}")
    if arr.ndim == 0:
        # (JAX fails here with a TypeError from reducing no terms)
        raise TypeError("map_coordinates requires an input of at least 1 dimension")
    fold = _FOLD.get(mode)
    if fold is None:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
            f"Currently supported modes are {set(_FOLD)}.")
    if order not in (0, 1):
        raise NotImplementedError(
            "jax.scipy.ndimage.map_coordinates currently requires order<=1")
    per_axis = []
    for coord, size in zip(coords, arr.shape):
        per_axis.append([(fold(i, size), (0 <= i) & (i < size) if mode == "constant" else None,
                          w) for i, w in _nodes(coord, order)])
    terms = []
    for combo in itertools.product(*per_axis):
        indices = tuple(c[0] for c in combo)
        valids = [c[1] for c in combo if c[1] is not None]
        value = arr[indices]
        if valids:
            value = jnp.where(functools.reduce(operator.and_, valids), value, cval)
        terms.append(functools.reduce(operator.mul, [c[2] for c in combo]) * value)
    result = functools.reduce(operator.add, terms)
    if jnp.issubdtype(arr.dtype, jnp.integer):
        result = _round(result)
    return result.astype(arr.dtype)


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
    """Values of `input` at the fractional `coordinates` (one array per axis of `input`),
    by nearest-neighbour (`order=0`) or linear (`order=1`) interpolation. `mode` says how
    points outside the grid are found: 'constant' (`cval`; SciPy's 'grid-constant'),
    'nearest', 'wrap' (SciPy's 'grid-wrap'), 'mirror' or 'reflect'."""
    return _map_coordinates(input, tuple(coordinates) if isinstance(coordinates, list)
                            else coordinates, order, mode, cval)
