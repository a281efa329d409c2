"""Shuffles and choices: permutations, choices from an array or a range, and categorical
draws (JAX: jax.random.permutation, choice, categorical)."""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from mjax.specs import dtypes
from mjax import lax
from mjax import numpy as jnp
from mjax.lax.prng import staged
from mjax.numpy.arguments import normalize_axis
from mjax.random.arguments import (_canon_shape, _check_shape, _jit, _laid_out,
                                   _no_sharding)
from mjax.random.continuous import gumbel
from mjax.random.discrete import randint
from mjax.random.keys import _check_prng_key, _random_bits, _split
from mjax.random.uniform_normal import uniform


@_laid_out
def permutation(key, x, axis=0, independent=False, *, out_sharding=None):
    """A shuffled range(x) or a shuffle of x along `axis`. JAX: jax.random.permutation."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("permutation", key)
    ndim = np.ndim(x) if not hasattr(x, "ndim") else x.ndim
    axis = _canonical_axis(axis, ndim or 1)
    if not ndim:
        xd = jnp.asarray(x).dtype if not isinstance(x, int) else np.dtype(int)
        if not dtypes.issubdtype(xd, np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        r = operator.index(x) if not hasattr(x, "aval") else int(x)
        return staged(_shuffle, key, jnp.arange(r), axis=axis)
    x = jnp.asarray(x)
    if independent or x.ndim == 1:
        return staged(_shuffle, key, x, axis=axis)
    ind = staged(_shuffle, key, jnp.arange(x.shape[axis]), axis=0)
    return jnp.take(x, ind, axis)


def _canonical_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


@_jit(("axis",))
def _shuffle(key, x, axis):
    size = int(np.prod(x.shape, dtype=np.int64))
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        key, subkey = _split(key)
        sort_keys = _random_bits(subkey, 32, x.shape)
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Samples from a (or range(a)), with or without replacement, optionally weighted
    by p. JAX: jax.random.choice."""
    key, _ = _check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got "
                        f"{shape}")
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(a)
    else:
        axis = _canonical_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    shape = tuple(shape)
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
        else:
            slices = (slice(None),) * axis + (slice(n_draws),)
            result = permutation(key, n_inputs if arr.ndim == 0 else arr, axis)[slices]
    else:
        p_arr = jnp.asarray(p)
        if not dtypes.issubdtype(p_arr.dtype, np.inexact):
            p_arr = p_arr.astype(dtypes.to_inexact_dtype(p_arr.dtype))
        if p_arr.shape != (n_inputs,):
            raise ValueError(f"p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {p_arr.shape} and a.shape[axis] "
                             f"is {n_inputs}.")
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - uniform(key, shape, dtype=p_cuml.dtype))
            ind = jnp.searchsorted(p_cuml, r).astype(dtypes.default_int())
        else:
            g = gumbel(key, (n_inputs,), dtype=p_arr.dtype, mode=mode) + jnp.log(p_arr)
            ind = lax.top_k(g, k=n_draws)[1].astype(dtypes.default_int())
        result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
    return result.reshape(shape if arr.ndim == 0 else
                          arr.shape[0:axis] + tuple(shape) + arr.shape[axis + 1:])


@_laid_out
def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None, *,
                out_sharding=None):
    """Samples category indices from unnormalized log-probabilities. JAX:
    jax.random.categorical."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("categorical", key)
    logits = jnp.asarray(logits)
    # (counted from the end; out of range: NumPy's AxisError, an IndexError as JAX's)
    axis = normalize_axis(axis, logits.ndim) - logits.ndim
    batch_shape = tuple(np.delete(logits.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = _canon_shape(shape)
        _check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis % logits.ndim, logits.shape[axis])
        g = gumbel(key, (*prefix, *logits_shape), logits.dtype, mode=mode)
        return jnp.argmax(g + lax.expand_dims(logits, tuple(range(len(prefix)))), axis=axis)
    logits = logits + gumbel(key, logits.shape, logits.dtype, mode=mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed "
                         f"number of categories ({logits.shape[axis]}).")
    _, indices = lax.top_k(jnp.moveaxis(logits, axis, -1), k)
    dims = (indices.ndim - 1, *range(indices.ndim - 1))
    return lax.reshape(indices, shape, dims)
