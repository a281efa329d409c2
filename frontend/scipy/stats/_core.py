"""The statistics functions of `mjax.scipy.stats` that are not distributions: mode,
rankdata and sem (JAX's `jax.scipy.stats.mode`, `rankdata`, `sem`)."""
from __future__ import annotations

import math
from typing import NamedTuple

from mjax import lax
from mjax import numpy as jnp
from mjax.numpy.arguments import check_arraylike
from mjax.tracing.staging import jit_eagerly

_NAN_POLICIES = ("propagate", "omit", "raise")
_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


class ModeResult(NamedTuple):
    """mode's result: the most common value and how often it occurs."""
    mode: jnp.ndarray
    count: jnp.ndarray


def _check_nan_policy(fname, nan_policy):
    """Only 'propagate' is supported: a nan is an ordinary value (mode) or poisons its
    slice (rankdata). 'omit' and 'raise' are JAX's NotImplementedError too."""
    if nan_policy not in _NAN_POLICIES:
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         f"{{'propagate', 'omit', 'raise'}}")
    if nan_policy == "omit":
        raise NotImplementedError(f"{fname}: nan_policy='omit' is not supported")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"{fname}: nan_policy='raise' is not supported, as it needs to look at the "
            "values (not possible under jit); test for nans before calling it")


def _equal_or_both_nan(u, v):
    eq = u == v
    if jnp.issubdtype(u.dtype, jnp.inexact):
        eq = eq | (jnp.isnan(u) & jnp.isnan(v))
    return eq


@jit_eagerly("a")   # (each runs as one compiled program eagerly, as JAX jits them)
def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most common value along `axis` (all values when None) and its count; ties go
    to the smallest value, nans count as equal to each other and sort last. A zero-length
    axis gives nan with a (float) count of 0. JAX: jax.scipy.stats.mode."""
    check_arraylike("mode", a)
    _check_nan_policy("mode", nan_policy)
    x = jnp.atleast_1d(a)
    kept_shape = (1,) * x.ndim
    if axis is None:
        x, axis, flat = x.ravel(), 0, True
    else:
        axis, flat = jnp._axis(axis, x.ndim), False

    def finish(value):
        if not keepdims:
            return value
        return value.reshape(kept_shape) if flat else jnp.expand_dims(value, axis)

    out_shape = x.shape[:axis] + x.shape[axis + 1:]
    if x.shape[axis] == 0:
        return ModeResult(finish(jnp.full(out_shape, jnp.nan, dtype=float)),
                          finish(jnp.zeros(out_shape, dtype=float)))
    s = jnp.sort(jnp.moveaxis(x, axis, -1), axis=-1)
    new_run = jnp.concatenate(
        [jnp.ones(s.shape[:-1] + (1,), bool),
         ~_equal_or_both_nan(s[..., 1:], s[..., :-1])], axis=-1)
    idx = jnp.broadcast_to(jnp.arange(s.shape[-1]), s.shape)
    run_start = lax.cummax(jnp.where(new_run, idx, 0), axis=s.ndim - 1)
    run_length = idx - run_start + 1
    # The first maximum ends the first (so smallest-valued) of the longest runs; the
    # value is read at the run's start (-0.0 before 0.0, as JAX).
    last = jnp.argmax(run_length, axis=-1)[..., None]
    first = jnp.take_along_axis(run_start, last, axis=-1)
    value = jnp.take_along_axis(s, first, axis=-1)[..., 0]
    count = jnp.max(run_length, axis=-1)
    return ModeResult(finish(value), finish(count))


@jit_eagerly("a")
def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """The ranks (from 1) of the values of `a`, flattened unless `axis` is given, as
    floats; ties get the average, min or max of their ranks, consecutive ranks (dense) or
    ranks in order of appearance (ordinal). A slice holding a nan is all nan.
    JAX: jax.scipy.stats.rankdata."""
    check_arraylike("rankdata", a)
    _check_nan_policy("rankdata", nan_policy)
    if method not in _RANK_METHODS:
        raise ValueError(f"unknown method {method!r}: expected one of {_RANK_METHODS}")
    x = jnp.asarray(a)
    if axis is None:
        x, axis = x.ravel(), 0
    axis = jnp._axis(axis, x.ndim)
    x = jnp.moveaxis(x, axis, -1)
    n = x.shape[-1]
    if n == 0:
        return jnp.moveaxis(jnp.zeros(x.shape, dtype=float), -1, axis)
    last_axis = x.ndim - 1
    order = jnp.argsort(x, axis=-1, stable=True)
    s = jnp.take_along_axis(x, order, axis=-1)
    idx = jnp.broadcast_to(jnp.arange(n), x.shape)
    if method == "ordinal":
        sorted_ranks = idx + 1
    else:
        differs = s[..., 1:] != s[..., :-1]
        edge = jnp.ones(x.shape[:-1] + (1,), bool)
        first_of_run = jnp.concatenate([edge, differs], axis=-1)
        if method == "dense":
            sorted_ranks = jnp.cumsum(first_of_run, axis=-1)
        else:
            last_of_run = jnp.concatenate([differs, edge], axis=-1)
            start = lax.cummax(jnp.where(first_of_run, idx, 0), axis=last_axis)
            end = lax.cummin(jnp.where(last_of_run, idx, n - 1), axis=last_axis,
                             reverse=True)
            sorted_ranks = {"min": start + 1, "max": end + 1,
                            "average": 0.5 * (start + end) + 1}[method]
    # Each value's rank is the rank at its position in sorted order.
    position = jnp.argsort(order, axis=-1)
    ranks = jnp.take_along_axis(sorted_ranks, position, axis=-1).astype(float)
    if jnp.issubdtype(x.dtype, jnp.inexact):
        ranks = jnp.where(jnp.any(jnp.isnan(x), axis=-1, keepdims=True), jnp.nan, ranks)
    return jnp.moveaxis(ranks, -1, axis)


@jit_eagerly("a")
def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean, std(a, ddof) / sqrt(count), along `axis` (all
    values when None); nan_policy 'omit' leaves nans out. JAX: jax.scipy.stats.sem."""
    check_arraylike("sem", a)
    x, = jnp._promote("scipy.stats.sem", a, inexact=True)
    if nan_policy == "propagate":
        size = x.size if axis is None else x.shape[axis]
        return jnp.std(x, axis=axis, ddof=ddof, keepdims=keepdims) / math.sqrt(size)
    if nan_policy == "omit":
        count = jnp.sum(~jnp.isnan(x), axis=axis, keepdims=keepdims)
        return (jnp.nanstd(x, axis=axis, ddof=ddof, keepdims=keepdims)
                / jnp.sqrt(count).astype(x.dtype))
    raise ValueError(f"sem: nan_policy={nan_policy!r} is not supported (only 'propagate' "
                     "and 'omit')")
