"""`mjax.scipy.interpolate`: `RegularGridInterpolator`, as `jax.scipy.interpolate`."""
from __future__ import annotations

import itertools

import numpy as _onp

from mjax.specs import dtypes
from mjax import numpy as jnp
from mjax.numpy.arguments import check_arraylike
from mjax.base.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _check_method(method):
    if method not in _METHODS:
        raise ValueError(f"method {method!r} is not defined")


def _query_points(xi, ndim):
    """The query points as one (..., ndim) array: a tuple of per-axis coordinate arrays is
    broadcast and stacked; a 1-D array is read as rows of `ndim` coordinates."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        parts = jnp.broadcast_arrays(*xi)
        return jnp.stack([jnp.asarray(p, dtype=float) for p in parts], axis=-1)
    xi = jnp.asarray(jnp._promote("RegularGridInterpolator", xi, broadcast=False)[0])
    return xi.reshape(-1, ndim) if xi.ndim == 1 else xi


class RegularGridInterpolator:
    """Linear or nearest-point interpolation of `values` on the rectangular grid whose axes
    are the strictly increasing 1-D arrays `points`. Points outside the grid get
    `fill_value` (NaN by default; None extrapolates). `bounds_error=True` is not supported
    (it cannot be checked under jit). A pytree: grid, values and fill_value are leaves."""

    def __init__(self, points, values, method="linear", bounds_error=False,
                 fill_value=_onp.nan):
        _check_method(method)
        self.method = method
        self.bounds_error = bounds_error
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        check_arraylike("RegularGridInterpolator", values)
        (values,) = jnp._promote("RegularGridInterpolator", values, inexact=True,
                                 broadcast=False)
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions")
        if fill_value is not None:
            (fill_value,) = jnp._promote("RegularGridInterpolator", fill_value,
                                         broadcast=False)
            if not dtypes.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible "
                                 "with values")
        self.fill_value = fill_value
        check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi, method=None):
        method = self.method if method is None else method
        _check_method(method)
        ndim = len(self.grid)
        xi = _query_points(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[1]}, "
                             f"but this RegularGridInterpolator has dimension {ndim}")
        lead = xi.shape[:-1]
        xi = xi.reshape(-1, ndim)
        indices, fractions, outside = self._locate(xi.T)
        if method == "linear":
            result = self._linear(indices, fractions)
        else:
            result = self.values[tuple(jnp.where(f <= 0.5, i, i + 1)
                                       for i, f in zip(indices, fractions))]
        if self.fill_value is not None:
            mask = outside.reshape(result.shape[:1] + (1,) * (result.ndim - 1))
            result = jnp.where(mask, self.fill_value, result)
        return result.reshape(lead + self.values.shape[ndim:])

    def _locate(self, xi):
        """Per axis: the index of the cell's lower corner, the fractional position within
        it, and whether the point lies outside the grid."""
        indices, fractions = [], []
        outside = jnp.zeros((xi.shape[1],), dtype=bool)
        for x, g in zip(xi, self.grid):
            i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.size - 2)
            indices.append(i)
            fractions.append((x - g[i]) / (g[i + 1] - g[i]))
            outside = outside | (x < g[0]) | (x > g[-1])
        return indices, fractions, outside

    def _linear(self, indices, fractions):
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        total = jnp.asarray(0.0)
        for corner in itertools.product(*[(i, i + 1) for i in indices]):
            weight = jnp.asarray(1.0)
            for c, i, f in zip(corner, indices, fractions):
                weight = weight * jnp.where(c == i, 1 - f, f)
            total = total + self.values[corner] * weight[trailing]
        return total


register_pytree_node(
    RegularGridInterpolator,
    lambda r: ((r.grid, r.values, r.fill_value), (r.method, r.bounds_error)),
    lambda aux, kids: RegularGridInterpolator(kids[0], kids[1], *aux, kids[2]))
