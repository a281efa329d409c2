"""quantile/percentile/median and their NaN-ignoring twins, as in jax.numpy.

The data are sorted along the reduced axis (NaNs sort last) and each quantile read at
its fractional position there, by JAX's ops (quantile_program.py). Methods are
JAX's: 'linear', 'lower', 'higher', 'midpoint', 'nearest', and 'inverted_cdf' (the only
one that takes weights).
"""
from __future__ import annotations

from mjax.jit.jitted import jit
from mjax.lax.sharding import takes_out_sharding
from mjax.numpy.conversion import asarray
from mjax.numpy.elementwise import true_divide
from mjax.numpy.quantile_program import quantile_program


METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _quantile(a, q, axis, method, keepdims, squash_nans, weights, percent=False):
    if method not in METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', "
                         "'nearest' or 'inverted_cdf'")
    axis = axis if axis is None or isinstance(axis, int) else tuple(axis)
    # One compiled program per call signature, as JAX jits its quantile.
    return _quantile_jit(a, q, axis, method, bool(keepdims), squash_nans, weights, percent)


def _quantile_impl(a, q, axis, method, keepdims, squash_nans, weights, percent=False):
    if method not in METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', "
                         "'nearest' or 'inverted_cdf'")
    if percent:     # (in the program, as JAX's percentile: XLA folds / 100 with the rest)
        q = true_divide(asarray(q), 100)
    return quantile_program(a, q, axis, method, keepdims, squash_nans, weights)


def _jitted(fn):
    return jit(fn, static_argnums=(2, 3, 4, 5, 7))


_quantile_jit = _jitted(_quantile_impl)


def _check_unsupported(fname, out, overwrite_input):
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{fname} does not support overwrite_input=True or "
                         f"out != None")


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    """The q-th quantiles (q in [0, 1]) along axis. JAX: jnp.quantile."""
    _check_unsupported("quantile", out, overwrite_input)
    method = interpolation if interpolation is not None else method
    return _quantile(a, q, axis, method, keepdims, False, weights)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    """quantile ignoring NaNs. JAX: jnp.nanquantile."""
    _check_unsupported("nanquantile", out, overwrite_input)
    method = interpolation if interpolation is not None else method
    return _quantile(a, q, axis, method, keepdims, True, weights)


@takes_out_sharding
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    """The q-th percentiles (q in [0, 100]) along axis. JAX: jnp.percentile."""
    _check_unsupported("percentile", out, overwrite_input)
    method = interpolation if interpolation is not None else method
    return _quantile(a, q, axis, method, keepdims, False, weights, True)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):
    """percentile ignoring NaNs. JAX: jnp.nanpercentile."""
    _check_unsupported("nanpercentile", out, overwrite_input)
    method = interpolation if interpolation is not None else method
    return _quantile(a, q, axis, method, keepdims, True, weights, True)



def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along axis (the midpoint of the two middle values). JAX: jnp.median."""
    return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                    keepdims=keepdims, method="midpoint")


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """median ignoring NaNs. JAX: jnp.nanmedian."""
    return nanquantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                       keepdims=keepdims, method="midpoint")


__all__ = ["quantile", "nanquantile", "percentile", "nanpercentile", "median", "nanmedian"]
