"""`mjax.random`: stateless pseudo-random numbers from explicit keys (JAX: jax.random).

Keys are typed (`key(seed)`, dtype `key<fry>`) or raw (`PRNGKey(seed)`, uint32[2]).
Every sampler follows JAX's algorithm step by step, so a key gives the same bits as in
JAX (threefry2x32 with JAX's default partitionable counters), eagerly, under `jit` and
under `vmap`. Each sampler is a jitted function of the key and its array arguments, with
shape and dtype static, as in JAX.
"""
from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence
from functools import partial

import numpy as np

from mjax import dtypes
from mjax import lax
from mjax import numpy as jnp
from mjax.config import config
from mjax.random_gamma_grad import random_gamma_grad
from mjax.prng import (PRNGKeyArray, impl_of, random_bits, random_clone,
                       random_fold_in, random_seed, random_split, resolve_impl, staged)

__all__ = ["key", "PRNGKey", "key_data", "wrap_key_data", "key_impl", "split", "fold_in",
           "bits", "clone", "uniform", "normal", "truncated_normal", "bernoulli", "randint",
           "choice", "permutation", "categorical", "gumbel", "exponential", "laplace",
           "logistic", "cauchy", "rademacher", "gamma", "loggamma", "beta", "dirichlet",
           "poisson", "binomial", "multivariate_normal", "orthogonal", "ball", "t",
           "chisquare", "f", "maxwell", "double_sided_maxwell", "weibull_min", "pareto",
           "geometric", "generalized_normal", "triangular", "lognormal", "rayleigh",
           "wald", "multinomial", "key_dtype", "PRNGKeyArray"]

_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
         64: np.dtype(np.uint64)}


# ---- argument checking ------------------------------------------------------------------
def _is_key(x) -> bool:
    return isinstance(x, PRNGKeyArray)


def _check_prng_key(name: str, key, *, allow_batched=False) -> tuple[PRNGKeyArray, bool]:
    """(typed key, whether it was a raw uint32 key). JAX: random._check_prng_key."""
    if _is_key(key):
        typed, wrapped = key, False
    elif hasattr(key, "shape") and hasattr(key, "dtype") or isinstance(key, (list, tuple)):
        typed, wrapped = wrap_key_data(jnp.asarray(key) if isinstance(key, (list, tuple))
                                       else key), True
        mode = config.read("jax_legacy_prng_key")
        if mode != "allow":
            msg = ("Legacy uint32 key array passed as key to jax.random function. Please "
                   "create keys using jax.random.key(). If use of a raw key array was "
                   "intended, set jax_legacy_prng_key=\"allow\".")
            if mode == "error":
                raise ValueError(msg)
            import warnings
            warnings.warn(msg, stacklevel=3)
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and typed.ndim:
        raise ValueError(f"{name} accepts a single key, but was given a key array of "
                         f"shape {typed.shape} != (). Use jax.vmap for batching.")
    return typed, wrapped


def _return_keys(wrapped: bool, keys: PRNGKeyArray):
    return keys._base if wrapped else keys


def _canon_shape(shape, name="shape") -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return (operator.index(shape),)
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape}.") from None


def _user_dtype(dtype, default) -> np.dtype:
    d = default if dtype is None else dtype
    if d is float:
        return dtypes.default_float()
    if d is int:
        return dtypes.default_int()
    if d is complex:
        return dtypes.default_complex()
    if d is bool:
        return np.dtype(bool)
    if dtype is None:
        return dtypes.canonicalize_dtype(np.dtype(d))
    return dtypes.check_user_dtype(dtype)   # (warns, as JAX, of a 64-bit type without x64)


def _shape_of(x) -> tuple[int, ...]:
    return tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)


def _check_shape(name: str, shape, *param_shapes):
    if param_shapes:
        got = jnp.broadcast_shapes(shape, *param_shapes)
        if tuple(got) != tuple(shape):
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with "
                             f"shape argument, and the result of broadcasting the shapes "
                             f"must equal the shape argument, but got result {tuple(got)} "
                             f"for shape argument {tuple(shape)}.")


def _broadcast_shape(name, shape, *args):
    shapes = [_shape_of(a) for a in args]
    if shape is None:
        return tuple(jnp.broadcast_shapes(*shapes)) if shapes else ()
    shape = _canon_shape(shape)
    _check_shape(name, shape, *shapes)
    return shape


def _check_float(name, dtype, what="a float"):
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `{name}` must be {what} dtype, got {dtype}")


def _check_safe_cast(name, dtype, *args):
    for a in args:
        d = np.dtype(jnp.asarray(a).dtype) if not isinstance(a, (int, float)) else None
        if d is None:
            if isinstance(a, float) and not dtypes.issubdtype(dtype, np.inexact):
                raise dtypes.TypePromotionError(f"In arguments to {name}, cannot safely "
                                                f"cast argument of type float to {dtype}")
            continue
        if dtypes.issubdtype(d, np.complexfloating) and not dtypes.issubdtype(
                dtype, np.complexfloating) or (dtypes.issubdtype(d, np.floating) and
                                               dtypes.issubdtype(dtype, np.integer)):
            raise dtypes.TypePromotionError(f"In arguments to {name}, cannot safely cast "
                                            f"argument of type {d} to {dtype}")


def _jit(static=()):
    def wrap(fun):
        from mjax.api import jit
        return jit(fun, static_argnames=static)
    return wrap


def _finfo(dtype):
    return dtypes.finfo(dtype)


def _const(dtype, value):
    return np.asarray(value, dtype=dtype)


# ---- keys --------------------------------------------------------------------------------
def key_dtype(impl_spec=None):
    """The key dtype of an impl (default: the configured one). JAX: random.key_dtype."""
    from mjax.dialect.types import KeyType
    return KeyType(resolve_impl(impl_spec))


def _make_key(ctor, seed, impl):
    impl = resolve_impl(impl)
    if _is_key(seed):
        raise TypeError(f"{ctor} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(f"{ctor} accepts a scalar seed, but was given an array of shape "
                        f"{np.shape(seed)} != (). Use jax.vmap for batching")
    if isinstance(seed, (bool, np.bool_)):
        seed = int(seed)
    if isinstance(seed, int):
        # JAX: a Python int goes through int64 (truncated to int32 without x64), so
        # Python hashes work as seeds.
        seed = np.int64(seed) if dtypes.x64_enabled() else np.int64(seed).astype(np.int32)
    seed_arr = jnp.asarray(seed)
    if not dtypes.issubdtype(seed_arr.dtype, np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    return random_seed(seed_arr, impl)


def key(seed, *, impl=None, dtype=None) -> PRNGKeyArray:
    """A typed PRNG key from an integer seed. JAX: jax.random.key."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.key")
        impl = dtype
    return _make_key("key", seed, impl)


def PRNGKey(seed, *, impl=None):
    """A raw (legacy) key: uint32[2] for threefry2x32. JAX: jax.random.PRNGKey."""
    return _make_key("PRNGKey", seed, impl)._base


def key_data(keys):
    """The uint32 data of typed keys (raw keys are returned as they are)."""
    typed, _ = _check_prng_key("key_data", keys, allow_batched=True)
    return typed._base


def wrap_key_data(key_bits_array, *, impl=None, dtype=None) -> PRNGKeyArray:
    """Typed keys from uint32 data of shape (..., *key_shape). JAX:
    jax.random.wrap_key_data."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.wrap_key_data")
        impl = dtype
    impl = resolve_impl(impl)
    if _is_key(key_bits_array):
        raise TypeError("wrap_key_data: argument is already a key array")
    data = key_bits_array if hasattr(key_bits_array, "dtype") else jnp.asarray(
        key_bits_array)
    ks = impl_of(impl).key_shape
    if np.dtype(data.dtype) != np.uint32:
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.dtype "
                        f"= uint32; got dtype={np.dtype(data.dtype)}")
    shape = tuple(data.shape)
    if len(shape) < len(ks) or shape[len(shape) - len(ks):] != ks:
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.shape "
                        f"to end with {ks}; got shape={shape} for impl={impl_of(impl)}")
    if not hasattr(data, "aval"):
        data = jnp.asarray(data)
    return PRNGKeyArray(impl, data)


def key_impl(keys) -> str:
    typed, _ = _check_prng_key("key_impl", keys, allow_batched=True)
    return typed.impl


def split(key, num=2):
    """`num` new keys (an int or a shape). JAX: jax.random.split."""
    typed, wrapped = _check_prng_key("split", key)
    return _return_keys(wrapped, _split(typed, num))


def _split(key: PRNGKeyArray, num=2) -> PRNGKeyArray:
    if key.ndim:
        raise TypeError(f"split accepts a single key, but was given a key array of shape "
                        f"{key.shape} != (). Use jax.vmap for batching.")
    shape = tuple(num) if isinstance(num, Sequence) else (operator.index(num),)
    return random_split(key, shape)


def fold_in(key, data):
    """A new key from `key` and the integer `data`. JAX: jax.random.fold_in."""
    typed, wrapped = _check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError(f"fold_in accepts a scalar, but was given an array of"
                        f"shape {np.shape(data)} != (). Use jax.vmap for batching.")
    if isinstance(data, int) and not 0 <= data < 2**32:
        # JAX converts the message with jnp.asarray(data, dtype='uint32').
        raise OverflowError(f"Python integer {data} out of bounds for uint32")
    msgs = jnp.asarray(data)
    if not dtypes.issubdtype(msgs.dtype, np.integer):
        msgs = msgs.astype(np.uint32)
    msgs = lax.convert_element_type(msgs, np.uint32)
    return _return_keys(wrapped, random_fold_in(typed, msgs))


def clone(key):
    """The same key (JAX: jax.random.clone)."""
    if _is_key(key):
        return random_clone(key)
    return key


def _random_bits(key: PRNGKeyArray, bit_width: int, shape):
    return random_bits(key, bit_width, tuple(shape))


def bits(key, shape=(), dtype=None, *, out_sharding=None):
    """Raw random bits of an unsigned dtype. JAX: jax.random.bits."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("bits", key)
    dtype = np.dtype(np.uint32 if dtype is None and not dtypes.x64_enabled() else
                     np.uint64 if dtype is None else _user_dtype(dtype, None))
    if not dtypes.issubdtype(dtype, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got "
                         f"{dtype}")
    return _random_bits(key, dtype.itemsize * 8, _canon_shape(shape))


def _no_sharding(out_sharding):
    if out_sharding is not None:
        raise NotImplementedError("out_sharding is not supported by mjax.random yet")


# ---- uniform family ------------------------------------------------------------------------
def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None):
    """Uniform floats in [minval, maxval). JAX: jax.random.uniform."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("uniform", key)
    dtype = _user_dtype(dtype, float)
    shape = _canon_shape(shape)
    _check_float("uniform", dtype)
    return staged(_uniform, key, minval, maxval, shape=shape, dtype=dtype)


def _uniform_impl(key, minval, maxval, shape, dtype):
    _check_shape("uniform", shape)
    minval = lax.convert_element_type(jnp.asarray(minval), dtype)
    maxval = lax.convert_element_type(jnp.asarray(maxval), dtype)
    minval = lax.broadcast_to_rank(minval, len(shape))
    maxval = lax.broadcast_to_rank(maxval, len(shape))
    fi = _finfo(dtype)
    nbits, nmant = fi.bits, fi.nmant
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}.")
    rng_bits = 8 if nmant < 8 else nbits
    bits_ = _random_bits(key, rng_bits, shape)
    uint = _UINT[nbits]
    if rng_bits != nbits:
        bits_ = lax.convert_element_type(bits_, uint)
    float_bits = lax.shift_right_logical(bits_, jnp.full(shape, rng_bits - nmant, uint))
    one_bits = np.array(1.0, dtype).view(uint)
    float_bits = lax.bitwise_or(float_bits, jnp.full(shape, one_bits, uint))
    floats = lax.bitcast_convert_type(float_bits, dtype) - _const(dtype, 1.0)
    return jnp.maximum(minval, jnp.reshape(floats * (maxval - minval) + minval, shape))


_uniform = _jit(("shape", "dtype"))(_uniform_impl)


def _uniform_in(key, shape, dtype, minval=0.0, maxval=1.0):
    """uniform() from inside another sampler (arguments already checked)."""
    return staged(_uniform, key, minval, maxval, shape=tuple(shape), dtype=np.dtype(dtype))


def _convert_and_clip_integer(val, dtype):
    vi, di = dtypes.iinfo(val.dtype), dtypes.iinfo(dtype)
    lo = np.asarray(max(di.min, vi.min), dtype=val.dtype)
    hi = np.asarray(min(di.max, vi.max), dtype=val.dtype)
    return jnp.clip(val, lo, hi).astype(dtype)


def randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None):
    """Uniform integers in [minval, maxval). JAX: jax.random.randint."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("randint", key)
    dtype = _user_dtype(dtype, int)
    shape = _canon_shape(shape)
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    info = dtypes.iinfo(dtype)
    sampling = dtype
    if info.bits < 32:
        sampling = np.dtype(np.int32)
        minval = jnp.clip(jnp.asarray(minval).astype(np.int32), int(info.min), int(info.max))
        maxval = jnp.clip(jnp.asarray(maxval).astype(np.int32), int(info.min),
                          int(info.max) + 1)
    return staged(_randint, key, minval, maxval, shape=shape, dtype=sampling).astype(dtype)


@_jit(("shape", "dtype"))
def _randint(key, minval, maxval, shape, dtype):
    _check_shape("randint", shape, _shape_of(minval), _shape_of(maxval))
    minval, maxval = jnp.asarray(minval), jnp.asarray(maxval)
    if not dtypes.issubdtype(minval.dtype, np.integer):
        minval = minval.astype(dtypes.default_int())
    if not dtypes.issubdtype(maxval.dtype, np.integer):
        maxval = maxval.astype(dtypes.default_int())
    top = _convert_and_clip_integer(jnp.asarray(np.array(dtypes.iinfo(dtype).max, dtype)),
                                    maxval.dtype)
    maxval_out_of_range = maxval > top
    minval = _convert_and_clip_integer(minval, dtype)
    maxval = _convert_and_clip_integer(maxval, dtype)
    minval = lax.broadcast_to_rank(minval, len(shape))
    maxval = lax.broadcast_to_rank(maxval, len(shape))
    nbits = dtypes.iinfo(dtype).bits
    k1, k2 = _split(key)
    higher = _random_bits(k1, nbits, shape)
    lower = _random_bits(k2, nbits, shape)
    udt = _UINT[nbits]
    span = (maxval - minval).astype(udt)
    span = jnp.where(maxval <= minval, np.asarray(1, udt), span)
    span = jnp.where(maxval_out_of_range & (maxval > minval), span + np.asarray(1, udt), span)
    span = jnp.broadcast_to(span, shape)
    multiplier = lax.rem(jnp.full(shape, 2 ** (nbits // 2), udt), span)
    multiplier = lax.rem(multiplier * multiplier, span)
    offset = lax.rem(higher, span) * multiplier + lax.rem(lower, span)
    offset = lax.rem(offset, span)
    return minval + offset.astype(dtype)


# ---- permutations and choices -------------------------------------------------------------
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


# ---- normal family ------------------------------------------------------------------------
def normal(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard normal floats (complex: unit variance). JAX: jax.random.normal."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("normal", key)
    shape = _canon_shape(shape)
    dtype = _user_dtype(dtype, float)
    if not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"dtype argument to `normal` must be a float or complex dtype, "
                         f"got {dtype}")
    return staged(_normal, key, shape=shape, dtype=dtype)


@_jit(("shape", "dtype"))
def _normal(key, shape, dtype):
    if dtypes.issubdtype(dtype, np.complexfloating):
        sqrt2 = np.array(np.sqrt(2), dtype)
        key_re, key_im = _split(key)
        real = np.array(0, dtype).real.dtype
        re = _normal_real(key_re, shape, real).astype(dtype)
        im = _normal_real(key_im, shape, real).astype(dtype)
        return (re + 1j * im) / sqrt2
    return _normal_real(key, shape, dtype)


def _normal_real(key, shape, dtype):
    lo = np.array(-1.0 + float(_finfo(dtype).epsneg), dtype)  # nextafter(-1, 0)
    u = _uniform_in(key, shape, dtype, lo, np.array(1.0, dtype))
    return lax.mul(jnp.full(u.shape, np.sqrt(2), dtype), lax.erf_inv(u))


def _normal_in(key, shape, dtype):
    return staged(_normal, key, shape=tuple(shape), dtype=np.dtype(dtype))


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky", *,
                        out_sharding=None):
    """Multivariate normal samples. JAX: jax.random.multivariate_normal."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("multivariate_normal", key)
    mean, cov = _promote_inexact(mean, cov)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = mean.dtype if dtype is None else _user_dtype(dtype, float)
    _check_float("multivariate_normal", dtype)
    if shape is not None:
        shape = _canon_shape(shape)
    return staged(_multivariate_normal, key, mean, cov, shape=shape, dtype=dtype,
                  method=method)


def _promote_inexact(*args):
    arrs = [jnp.asarray(a) for a in args]
    d = dtypes.result_type(*args)
    if not dtypes.issubdtype(d, np.inexact):
        d = dtypes.default_float()
    return [a.astype(d) for a in arrs]


@_jit(("shape", "dtype", "method"))
def _multivariate_normal(key, mean, cov, shape, dtype, method):
    if not mean.ndim >= 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if not cov.ndim >= 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {cov.shape}.")
    if shape is None:
        shape = tuple(jnp.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        _check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    if method == "svd":
        u, s, _ = jnp.linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = jnp.linalg.cholesky(cov)
    z = _normal_in(key, shape + mean.shape[-1:], dtype)
    return mean + jnp.einsum("...ij,...j->...i", factor, z)


def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
    """Normal samples truncated to (lower, upper). JAX: jax.random.truncated_normal."""
    _no_sharding(out_sharding)
    if shape is not None:
        shape = _canon_shape(shape)
    key, _ = _check_prng_key("truncated_normal", key)
    dtype = _user_dtype(dtype, float)
    _check_float("truncated_normal", dtype)
    return staged(_truncated_normal, key, lower, upper, shape=shape, dtype=dtype)


def _nextafter(x, direction: float):
    """The next float after x (an array of a float dtype) toward +inf/-inf, by bits."""
    dtype = np.dtype(x.dtype)
    uint = _UINT[dtype.itemsize * 8]
    b = lax.bitcast_convert_type(x, uint)
    one = jnp.full(x.shape, 1, uint)
    sign_bit = jnp.full(x.shape, 1 << (dtype.itemsize * 8 - 1), uint)
    negative = (b & sign_bit) != 0
    is_zero = (b & ~sign_bit) == 0
    up = direction > 0
    grow = negative != up   # away from zero in magnitude when moving outward
    nb = jnp.where(grow, b + one, b - one)
    tiny = jnp.full(x.shape, 1, uint) | (jnp.full(x.shape, 0, uint) if up else sign_bit)
    nb = jnp.where(is_zero, tiny, nb)
    out = lax.bitcast_convert_type(nb, dtype)
    inf = np.array(direction, dtype)
    return jnp.where(jnp.isnan(x) | (x == inf), x, out)


@_jit(("shape", "dtype"))
def _truncated_normal(key, lower, upper, shape, dtype):
    if shape is None:
        shape = tuple(jnp.broadcast_shapes(_shape_of(lower), _shape_of(upper)))
    else:
        _check_shape("truncated_normal", shape, _shape_of(lower), _shape_of(upper))
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = lax.convert_element_type(jnp.asarray(lower), dtype)
    upper = lax.convert_element_type(jnp.asarray(upper), dtype)
    a = lax.erf(lower / sqrt2)
    b = lax.erf(upper / sqrt2)
    u = _uniform_in(key, shape, dtype, a, b)
    out = sqrt2 * lax.erf_inv(u)
    lo = _nextafter(lax.stop_gradient(lower), np.inf)
    hi = _nextafter(lax.stop_gradient(upper), -np.inf)
    return jnp.clip(out, lo, hi)


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None, *, out_sharding=None):
    """exp(sigma * normal). JAX: jax.random.lognormal."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("lognormal", key)
    dtype = _user_dtype(dtype, float)
    if not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"dtype argument to `lognormal` must be a float or complex dtype, "
                         f"got {dtype}")
    shape = _broadcast_shape("lognormal", shape, sigma)
    _check_safe_cast("lognormal", dtype, sigma)
    return staged(_lognormal, key, sigma, shape=shape, dtype=dtype)


@_jit(("shape", "dtype"))
def _lognormal(key, sigma, shape, dtype):
    sigma = lax.convert_element_type(jnp.asarray(sigma), dtype)
    return jnp.exp(_normal_in(key, shape, dtype) * sigma)


# ---- simple transforms of uniform -----------------------------------------------------------
def _float_sampler(name, body):
    """A sampler of signature (key, shape=(), dtype=None) built from body(key, shape,
    dtype)."""
    jitted = _jit(("shape", "dtype"))(body)

    def sampler(key, shape=(), dtype=None, *, out_sharding=None):
        _no_sharding(out_sharding)
        key, _ = _check_prng_key(name, key)
        dtype = _user_dtype(dtype, float)
        _check_float(name, dtype)
        shape = _canon_shape(shape)
        return staged(jitted, key, shape=shape, dtype=dtype)
    sampler.__name__ = sampler.__qualname__ = name
    return sampler, jitted


def _exponential_body(key, shape, dtype):
    u = _uniform_in(key, shape, dtype)
    return jnp.negative(jnp.log1p(jnp.negative(u)))


def _cauchy_body(key, shape, dtype):
    u = _uniform_in(key, shape, dtype, np.array(_finfo(dtype).eps, dtype), 1.0)
    return jnp.tan(_const(dtype, np.pi) * (u - _const(dtype, 0.5)))


def _laplace_body(key, shape, dtype):
    u = _uniform_in(key, shape, dtype, np.array(-1.0 + float(_finfo(dtype).epsneg), dtype),
                    1.0)
    return jnp.sign(u) * jnp.log1p(jnp.negative(jnp.abs(u)))


def _logistic_body(key, shape, dtype):
    x = _uniform_in(key, shape, dtype, np.array(_finfo(dtype).tiny, dtype), 1.0)
    return jnp.log(x) - jnp.log1p(jnp.negative(x))


def _maxwell_body(key, shape, dtype):
    z = _normal_in(key, tuple(shape) + (3,), dtype)
    return jnp.linalg.norm(z, axis=-1)


exponential, _exponential = _float_sampler("exponential", _exponential_body)
cauchy, _cauchy = _float_sampler("cauchy", _cauchy_body)
laplace, _laplace = _float_sampler("laplace", _laplace_body)
logistic, _logistic = _float_sampler("logistic", _logistic_body)
maxwell, _maxwell = _float_sampler("maxwell", _maxwell_body)
exponential.__doc__ = "Exponential(1) samples. JAX: jax.random.exponential."
cauchy.__doc__ = "Standard Cauchy samples. JAX: jax.random.cauchy."
laplace.__doc__ = "Standard Laplace samples. JAX: jax.random.laplace."
logistic.__doc__ = "Standard logistic samples. JAX: jax.random.logistic."
maxwell.__doc__ = "Maxwell samples (norm of 3 normals). JAX: jax.random.maxwell."


def gumbel(key, shape=(), dtype=None, mode=None, *, out_sharding=None):
    """Standard Gumbel samples. JAX: jax.random.gumbel."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("gumbel", key)
    dtype = _user_dtype(dtype, float)
    _check_float("gumbel", dtype)
    shape = _canon_shape(shape)
    if mode is None:
        try:
            high = config.read("jax_high_dynamic_range_gumbel")
        except AttributeError:
            high = False
        mode = "high" if high else "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return staged(_gumbel, key, shape=shape, dtype=dtype, mode=mode)


def _u64_pair_to_float32(bits):
    """(hi, lo) uint32 words of a 64-bit fraction -> the float32 nearest below it, with
    the exponent from the leading zeros (JAX: random._safe_int_to_float)."""
    u32 = np.uint32
    hi, lo = bits[0], bits[1]
    hiclz, loclz = lax.clz(hi), lax.clz(lo)
    top = hiclz == u32(32)
    mant = lax.shift_left(hi, hiclz) | jnp.where(top, lax.shift_left(lo, loclz),
                                                 lax.shift_right_logical(lo, u32(32) - hiclz))
    mant = lax.shift_right_logical(mant, jnp.full(mant.shape, 8, u32))
    mant = mant & u32((1 << 23) - 1)
    exp = u32(126) - jnp.where(top, u32(32) + loclz, hiclz)
    exp = lax.shift_left(exp, jnp.full(exp.shape, 23, u32)) & u32((1 << 30) - (1 << 22))
    return lax.bitcast_convert_type(exp | mant, np.float32)


@_jit(("shape", "dtype", "mode"))
def _gumbel(key, shape, dtype, mode):
    info = _finfo(dtype)
    if dtype == np.float32 and mode == "highest":
        # 64 random bits become one float in (0, 1) with full precision near 0 and 1:
        # values below 1/2 from the bits, values above from their 64-bit negation.
        u32 = np.uint32
        b = _random_bits(key, 32, (2,) + tuple(shape))
        neg = lax.bitwise_not(b)
        lo = neg[1]
        carry = (lo == np.uint32(2**32 - 1)).astype(u32)
        neg = jnp.stack([neg[0] + carry, lo + np.uint32(1)])
        flip = b[0] < np.uint32(2**31)
        x = _u64_pair_to_float32(jnp.where(flip, b, neg))
        return jnp.where(flip, -jnp.log(-jnp.log1p(-x)), -jnp.log(-jnp.log(x)))
    if mode in ("high", "highest"):
        both = _uniform_in(key, (2,) + tuple(shape), dtype)
        high, low = both[0], both[1]
        x = jnp.where(high >= 0.5, high,
                      high + _const(dtype, 2.0 ** -info.nmant) * low + _const(dtype, info.tiny))
        return jnp.negative(jnp.log(jnp.negative(jnp.log1p(jnp.negative(x)))))
    u = _uniform_in(key, shape, dtype, np.array(info.tiny, dtype), 1.0)
    return jnp.negative(jnp.log(jnp.negative(jnp.log(u))))


def bernoulli(key, p=0.5, shape=None, mode="low", *, out_sharding=None):
    """Booleans that are True with probability p. JAX: jax.random.bernoulli."""
    _no_sharding(out_sharding)
    if shape is not None:
        shape = _canon_shape(shape)
    if mode not in ["high", "low"]:
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    key, _ = _check_prng_key("bernoulli", key)
    dtype = dtypes.dtype(p)
    if not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got "
                        f"{dtype}.")
    p = lax.convert_element_type(jnp.asarray(p), dtype)
    return staged(_bernoulli, key, p, shape=shape, mode=mode)


@_jit(("shape", "mode"))
def _bernoulli(key, p, shape, mode):
    if shape is None:
        shape = tuple(p.shape)
    else:
        _check_shape("bernoulli", shape, tuple(p.shape))
    dtype = np.dtype(p.dtype)
    if mode == "high":
        both = _uniform_in(key, (2,) + tuple(shape), dtype)
        u1, u2 = both[0], both[1]
        u2 = u2 * _const(dtype, 2.0 ** -_finfo(dtype).nmant)
        return u2 < p - u1
    return _uniform_in(key, shape, dtype) < p


def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
    """Uniform samples from {-1, +1}. JAX: jax.random.rademacher."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("rademacher", key)
    dtype = _user_dtype(dtype, int)
    shape = _canon_shape(shape)
    return staged(_rademacher, key, shape=shape, dtype=dtype)


@_jit(("shape", "dtype"))
def _rademacher(key, shape, dtype):
    b = staged(_bernoulli, key, jnp.asarray(np.float32(0.5)), shape=shape,
               mode="low").astype(dtype)
    return (2 * b - 1).astype(dtype)


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None, *,
                out_sharding=None):
    """Samples category indices from unnormalized log-probabilities. JAX:
    jax.random.categorical."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("categorical", key)
    logits = jnp.asarray(logits)
    if axis >= 0:
        axis -= logits.ndim
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


# ---- samplers with array parameters ----------------------------------------------------------
def _param_call(name, jitted, key, params, shape, dtype, out_sharding, integer=False):
    """A sampler whose shape broadcasts with its parameters' shapes (JAX's pattern for
    pareto, t, rayleigh, wald, ...): checks, then the jitted body."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key(name, key)
    dtype = _user_dtype(dtype, int if integer else float)
    if integer:
        if not dtypes.issubdtype(dtype, np.integer):
            raise ValueError(f"dtype argument to `{name}` must be an int dtype, got {dtype}")
    else:
        _check_float(name, dtype)
    shape = _broadcast_shape(name, shape, *params)
    if not integer:
        _check_safe_cast(name, dtype, *params)
    return staged(jitted, key, *params, shape=shape, dtype=dtype)


def _as(x, dtype, shape=None):
    x = lax.convert_element_type(jnp.asarray(x), dtype)
    return x if shape is None else jnp.broadcast_to(x, shape)


def _pareto_body(key, b, shape, dtype):
    b = _as(b, dtype)
    e = staged(_exponential, key, shape=shape, dtype=dtype)
    return jnp.exp(e / b)


def _rayleigh_body(key, scale, shape, dtype):
    u = _uniform_in(key, shape, dtype)
    scale = _as(scale, dtype, shape)
    return scale * jnp.sqrt(jnp.log(u) * _const(dtype, -2))


def _wald_body(key, mean, shape, dtype):
    k1, k2 = _split(key, 2)
    mean = _as(mean, dtype, shape)
    v = _normal_in(k1, shape, dtype)
    z = _uniform_in(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = jnp.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return jnp.where(z <= mean / (mean + x), x, mean_sq / x)


def _geometric_body(key, p, shape, dtype):
    (p,) = _promote_inexact(p)
    u = _uniform_in(key, shape, p.dtype)
    u = jnp.where(u == 0, np.asarray(1, p.dtype), u)
    g = jnp.floor(jnp.log(u) / jnp.broadcast_to(jnp.log1p(-p), shape)) + 1
    return g.astype(dtype)


def _triangular_body(key, left, mode, right, shape, dtype):
    left, right, mode = _as(left, dtype, shape), _as(right, dtype, shape), _as(mode, dtype,
                                                                               shape)
    fc = (mode - left) / (right - left)
    u = _uniform_in(key, shape, dtype)
    out1 = left + jnp.sqrt(u * (right - left) * (mode - left))
    out2 = right - jnp.sqrt((1 - u) * (right - left) * (right - mode))
    return jnp.where(u < fc, out1, out2)


_SHAPE_DTYPE = ("shape", "dtype")
_pareto = _jit(_SHAPE_DTYPE)(_pareto_body)
_rayleigh = _jit(_SHAPE_DTYPE)(_rayleigh_body)
_wald = _jit(_SHAPE_DTYPE)(_wald_body)
_geometric = _jit(_SHAPE_DTYPE)(_geometric_body)
_triangular = _jit(_SHAPE_DTYPE)(_triangular_body)


def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
    """Pareto samples with shape b. JAX: jax.random.pareto."""
    return _param_call("pareto", _pareto, key, (b,), shape, dtype, out_sharding)


def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
    """Rayleigh samples with a scale. JAX: jax.random.rayleigh."""
    return _param_call("rayleigh", _rayleigh, key, (scale,), shape, dtype, out_sharding)


def wald(key, mean, shape=None, dtype=None, *, out_sharding=None):
    """Wald (inverse Gaussian) samples with a mean. JAX: jax.random.wald."""
    return _param_call("wald", _wald, key, (mean,), shape, dtype, out_sharding)


def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
    """Geometric samples (trials to first success). JAX: jax.random.geometric."""
    return _param_call("geometric", _geometric, key, (p,), shape, dtype, out_sharding,
                       integer=True)


def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
    """Triangular samples on [left, right]. JAX: jax.random.triangular."""
    return _param_call("triangular", _triangular, key, (left, mode, right), shape, dtype,
                       out_sharding)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell samples. JAX: jax.random.double_sided_maxwell."""
    key, _ = _check_prng_key("double_sided_maxwell", key)
    dtype = _user_dtype(dtype, float)
    _check_float("double_sided_maxwell", dtype)
    shape = _canon_shape(shape)
    return staged(_double_sided_maxwell, key, loc, scale, shape=shape, dtype=dtype)


@_jit(("shape", "dtype"))
def _double_sided_maxwell(key, loc, scale, shape, dtype):
    params = tuple(jnp.broadcast_shapes(_shape_of(loc), _shape_of(scale)))
    if not shape:
        shape = params
    shape = tuple(shape) + params
    mkey, rkey = _split(key)
    m = staged(_maxwell, mkey, shape=shape, dtype=dtype)
    sign = staged(_rademacher, rkey, shape=shape, dtype=dtype)
    return sign * m * scale + loc


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples. JAX: jax.random.weibull_min."""
    key, _ = _check_prng_key("weibull_min", key)
    dtype = _user_dtype(dtype, float)
    _check_float("weibull_min", dtype)
    shape = _canon_shape(shape)
    return staged(_weibull_min, key, scale, concentration, shape=shape, dtype=dtype)


@_jit(("shape", "dtype"))
def _weibull_min(key, scale, concentration, shape, dtype):
    u = _uniform_in(key, shape, dtype, 0, 1)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def orthogonal(key, n, shape=(), dtype=None, m=None, *, out_sharding=None):
    """Haar-random orthogonal (unitary) matrices. JAX: jax.random.orthogonal."""
    _no_sharding(out_sharding)
    m = n if m is None else m
    shape = _canon_shape(shape)
    key, _ = _check_prng_key("orthogonal", key)
    dtype = _user_dtype(dtype, float)
    return staged(_orthogonal, key, n=operator.index(n), m=operator.index(m), shape=shape,
                  dtype=dtype)


@_jit(("n", "m", "shape", "dtype"))
def _orthogonal(key, n, m, shape, dtype):
    z = _normal_in(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return jnp.swapaxes(x, -1, -2) if n < m else x


# ---- gamma family --------------------------------------------------------------------------
def _while_loop():
    return lax.while_loop


def _gamma_one(key, alpha, log_space):
    """One Gamma(alpha) sample by Marsaglia-Tsang. JAX: random._gamma_one."""
    dtype = np.dtype(alpha.dtype)
    zero, one = _const(dtype, 0), _const(dtype, 1)
    minus_one, two = _const(dtype, -1), _const(dtype, 2)
    half, third = _const(dtype, 0.5), _const(dtype, 1.0 / 3.0)
    squeeze = _const(dtype, 0.0331)
    boost_mask = alpha >= one
    alpha_orig = alpha
    alpha = jnp.where(boost_mask, alpha, alpha + one)
    d = alpha - third
    c = third / jnp.sqrt(d)

    def cond_fn(kXVU):
        _, X, V, U = kXVU
        return ((U >= one - squeeze * (X * X)) &
                (jnp.log(U) >= X * half + d * (one - V + jnp.log(V))))

    def body_fn(kXVU):
        def next_kxv(kxv):
            k = kxv[0]
            k, sub = _split(k)
            x = _normal_in(sub, (), dtype)
            return k, x, one + x * c
        k = kXVU[0]
        ks = _split(k, 3)
        k, x_key, u_key = ks[0], ks[1], ks[2]
        _, x, v = lax.while_loop(lambda kxv: kxv[2] <= zero, next_kxv,
                                 (x_key, jnp.asarray(zero), jnp.asarray(minus_one)))
        X = x * x
        V = v * v * v
        U = _uniform_in(u_key, (), dtype)
        return k, X, V, U

    key, subkey = _split(key)
    _, _, V, _ = lax.while_loop(cond_fn, body_fn, (key, jnp.asarray(zero),
                                                   jnp.asarray(one), jnp.asarray(two)))
    if log_space:
        log_samples = jnp.negative(staged(_exponential, subkey, shape=(), dtype=dtype))
        log_boost = jnp.where(boost_mask | (log_samples == 0), zero,
                              log_samples * (one / alpha_orig))
        return jnp.log(d) + jnp.log(V) + log_boost
    samples = 1 - _uniform_in(subkey, (), dtype)
    boost = jnp.where(boost_mask, one, jnp.power(samples, one / alpha_orig))
    return d * V * boost


def _gamma_impl(key, a, log_space):
    """Samples of Gamma(a) for every element of a (key split per element, as JAX)."""
    shape = tuple(a.shape)
    n = math.prod(shape)
    keys = _split(key, (n,))
    alphas = jnp.reshape(a, (n,))
    # One rejection loop per element, vectorized (as JAX lowers random_gamma_p).
    from mjax.batching import vmap
    samples = vmap(partial(_gamma_one, log_space=log_space))(keys, alphas)
    return jnp.reshape(samples, shape)


def _gamma_grad(sample, a, log_space):
    """d sample / d a, by implicit differentiation (JAX: random._gamma_grad)."""
    if log_space:
        x = jnp.exp(sample)
        x = jnp.where(x == 0, _const(x.dtype, _finfo(x.dtype).tiny), x)
        return random_gamma_grad(a, x) / x
    return random_gamma_grad(a, sample)


def _gamma_sampler(log_space):
    from mjax.ad import custom_jvp

    def make(key):
        @custom_jvp
        def sample(a):
            return _gamma_impl(key, a, log_space)

        @sample.defjvp
        def _jvp(primals, tangents):
            (a,), (t,) = primals, tangents
            ans = sample(a)
            return ans, t * _gamma_grad(ans, a, log_space)
        return sample
    return make


_gamma_fn = {False: _gamma_sampler(False), True: _gamma_sampler(True)}


@_jit(("shape", "dtype", "log_space"))
def _gamma(key, a, shape, dtype, log_space=False):
    if shape is None:
        shape = tuple(jnp.shape(a))
    else:
        _check_shape("gamma", shape, tuple(jnp.shape(a)))
    a = lax.convert_element_type(jnp.asarray(a), dtype)
    if tuple(a.shape) != tuple(shape):
        a = jnp.broadcast_to(a, shape)
    return _gamma_fn[log_space](key)(a)


def gamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """Gamma(a, 1) samples, differentiable in a. JAX: jax.random.gamma."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("gamma", key)
    dtype = _user_dtype(dtype, float)
    _check_float("gamma", dtype)
    if shape is not None:
        shape = _canon_shape(shape)
    return staged(_gamma, key, a, shape=shape, dtype=dtype)


def loggamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """log of Gamma(a, 1) samples, accurate for small a. JAX: jax.random.loggamma."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("loggamma", key)
    dtype = _user_dtype(dtype, float)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `gamma` must be a float dtype, got {dtype}")
    if shape is not None:
        shape = _canon_shape(shape)
    return staged(_gamma, key, a, shape=shape, dtype=dtype, log_space=True)


def _loggamma_in(key, a, shape, dtype):
    return staged(_gamma, key, a, shape=tuple(shape), dtype=np.dtype(dtype), log_space=True)


def beta(key, a, b, shape=None, dtype=None, *, out_sharding=None):
    """Beta(a, b) samples. JAX: jax.random.beta."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("beta", key)
    dtype = _user_dtype(dtype, float)
    _check_float("beta", dtype)
    _check_safe_cast("beta", dtype, a, b)
    shape = _broadcast_shape("beta", shape, a, b)
    return staged(_beta, key, a, b, shape=shape, dtype=dtype)


@_jit(("shape", "dtype"))
def _beta(key, a, b, shape, dtype):
    a, b = _as(a, dtype, shape), _as(b, dtype, shape)
    key_a, key_b = _split(key)
    log_ga = _loggamma_in(key_a, a, shape, dtype)
    log_gb = _loggamma_in(key_b, b, shape, dtype)
    log_max = jnp.maximum(log_ga, log_gb)
    ga = jnp.exp(log_ga - log_max)
    gb = jnp.exp(log_gb - log_max)
    return ga / (ga + gb)


def dirichlet(key, alpha, shape=None, dtype=None, *, out_sharding=None):
    """Dirichlet(alpha) samples over alpha's last axis. JAX: jax.random.dirichlet."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("dirichlet", key)
    dtype = _user_dtype(dtype, float)
    _check_float("dirichlet", dtype)
    if shape is not None:
        shape = _canon_shape(shape)
    return staged(_dirichlet, key, alpha, shape=shape, dtype=dtype)


@_jit(("shape", "dtype"))
def _dirichlet(key, alpha, shape, dtype):
    from mjax.nn import softmax
    alpha = jnp.asarray(alpha)
    if not alpha.ndim >= 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{alpha.ndim}")
    if shape is None:
        shape = tuple(alpha.shape[:-1])
    else:
        _check_shape("dirichlet", shape, tuple(alpha.shape[:-1]))
    alpha = lax.convert_element_type(alpha, dtype)
    log_g = _loggamma_in(key, alpha, tuple(shape) + tuple(alpha.shape[-1:]), dtype)
    return softmax(log_g, -1)


def _t_body(key, df, shape, dtype):
    df = _as(df, dtype)
    key_n, key_g = _split(key)
    n = _normal_in(key_n, shape, dtype)
    half_df = df / _const(dtype, 2)
    g = staged(_gamma, key_g, half_df, shape=tuple(shape), dtype=np.dtype(dtype))
    return n * jnp.sqrt(half_df / g)


def _chisquare_body(key, df, shape, dtype):
    df = _as(df, dtype)
    half_df = df / _const(dtype, 2)
    return jnp.exp(_loggamma_in(key, half_df, shape, dtype)) * _const(dtype, 2)


def _f_body(key, dfnum, dfden, shape, dtype):
    dfden, dfnum = _as(dfden, dtype), _as(dfnum, dtype)
    key_dfd, key_dfn = _split(key)
    chi_n = _chisquare_body(key_dfn, dfnum, shape, dtype)
    chi_d = _chisquare_body(key_dfd, dfden, shape, dtype)
    return (chi_n / dfnum) / (chi_d / dfden)


_t = _jit(_SHAPE_DTYPE)(_t_body)
_chisquare = _jit(_SHAPE_DTYPE)(_chisquare_body)
_f = _jit(_SHAPE_DTYPE)(_f_body)


def t(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Student's t samples with df degrees of freedom. JAX: jax.random.t."""
    return _param_call("t", _t, key, (df,), shape, dtype, out_sharding)


def chisquare(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Chi-square samples with df degrees of freedom. JAX: jax.random.chisquare."""
    return _param_call("chisquare", _chisquare, key, (df,), shape, dtype, out_sharding)


def f(key, dfnum, dfden, shape=None, dtype=None, *, out_sharding=None):
    """F-distribution samples. JAX: jax.random.f."""
    return _param_call("f", _f, key, (dfnum, dfden), shape, dtype, out_sharding)


def generalized_normal(key, p, shape=(), dtype=None, *, out_sharding=None):
    """Generalized normal samples with exponent p. JAX: jax.random.generalized_normal."""
    _no_sharding(out_sharding)
    shape = _canon_shape(shape)
    key, _ = _check_prng_key("generalized_normal", key)
    dtype = _user_dtype(dtype, float)
    return staged(_generalized_normal, key, p, shape=shape, dtype=dtype)


@_jit(("shape", "dtype"))
def _generalized_normal(key, p, shape, dtype):
    keys = _split(key)
    g = staged(_gamma, keys[0], 1 / p, shape=tuple(shape), dtype=dtype)
    r = staged(_rademacher, keys[1], shape=tuple(shape), dtype=dtype)
    return r * g ** (1 / p)


def ball(key, d, p=2, shape=(), dtype=None, *, out_sharding=None):
    """Uniform samples from the unit p-ball in d dimensions. JAX: jax.random.ball."""
    _no_sharding(out_sharding)
    shape = _canon_shape(shape)
    key, _ = _check_prng_key("ball", key)
    dtype = _user_dtype(dtype, float)
    return staged(_ball, key, p, d=operator.index(d), shape=shape, dtype=dtype)


@_jit(("d", "shape", "dtype"))
def _ball(key, p, d, shape, dtype):
    k1, k2 = _split(key)
    g = staged(_generalized_normal, k1, p, shape=(*shape, d), dtype=dtype)
    e = staged(_exponential, k2, shape=tuple(shape), dtype=dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


# ---- discrete samplers with loops ----------------------------------------------------------
def poisson(key, lam, shape=None, dtype=None, *, out_sharding=None):
    """Poisson(lam) samples. JAX: jax.random.poisson."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("poisson", key)
    dtype = _user_dtype(dtype, int)
    if key.impl != "threefry2x32":
        raise NotImplementedError(f"`poisson` is only implemented for the threefry2x32 "
                                  f"RNG, not {impl_of(key.impl)}")
    shape = _canon_shape(shape) if shape is not None else _shape_of(lam)
    lam = jnp.broadcast_to(jnp.asarray(lam), shape)
    lam = lax.convert_element_type(lam, np.float32)
    return staged(_poisson, key, lam, shape=shape, dtype=dtype)


@_jit(("shape", "dtype"))
def _poisson(key, lam, shape, dtype):
    use_knuth = jnp.isnan(lam) | (lam < 10)
    lam_knuth = jnp.where(use_knuth, lam, jnp.zeros_like(lam))
    lam_rej = jnp.where(use_knuth, jnp.full_like(lam, 100000.0), lam)
    max_iters = int(dtypes.iinfo(dtype).max)
    result = jnp.where(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                       _poisson_rejection(key, lam_rej, shape, dtype, max_iters))
    return jnp.where(lam == 0, jnp.zeros_like(result), result)


def _poisson_knuth(key, lam, shape, dtype, max_iters):
    def body(carry):
        i, k, rng, log_prod = carry
        rng, sub = _split(rng)
        k = jnp.where(log_prod > -lam, k + 1, k)
        u = _uniform_in(sub, shape, np.float32)
        return i + 1, k, rng, log_prod + jnp.log(u)

    def cond(carry):
        i, log_prod = carry[0], carry[3]
        return jnp.any(log_prod > -lam) & (i < max_iters)
    k0 = jnp.zeros(shape, dtype)
    lp0 = jnp.zeros(shape, np.float32)
    k = lax.while_loop(cond, body, (np.asarray(0, dtype), k0, key, lp0))[1]
    return (k - 1).astype(dtype)


def _poisson_rejection(key, lam, shape, dtype, max_iters):
    log_lam = jnp.log(lam)
    b = 0.931 + 2.53 * jnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, key = carry
        ks = _split(key, 3)
        key, k0, k1 = ks[0], ks[1], ks[2]
        u = _uniform_in(k0, shape, lam.dtype) - 0.5
        v = _uniform_in(k1, shape, lam.dtype)
        us = 0.5 - jnp.abs(u)
        k = jnp.floor((2 * a / us + b) * u + lam + 0.43)
        s = jnp.log(v * inv_alpha / (a / (us * us) + b))
        tt = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (us >= 0.07) & (v <= v_r)
        reject = (k < 0) | (us < 0.013) & (v > us)
        accept2 = s <= tt
        accept = accept1 | ~reject & accept2
        k_out = jnp.where(accept, k, k_out)
        return i + 1, k_out, accepted | accept, key

    def cond(carry):
        i, _, accepted, _ = carry
        return jnp.any(~accepted) & (i < max_iters)
    k0 = jnp.full(shape, -1, lam.dtype)
    acc0 = jnp.zeros(shape, bool)
    k = lax.while_loop(cond, body, (np.asarray(0, dtype), k0, acc0, key))[1]
    return k.astype(dtype)


def _stirling_approx_tail(k):
    vals = jnp.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                      0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                      0.0118967099458917, 0.010411265261972, 0.00925546218271273,
                      0.00833056343336287], dtype=k.dtype)
    use_tail = k <= 9
    k = jnp.clip(k, _const(k.dtype, 0.0), _const(k.dtype, 9.0))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = jnp.floor(k)
    return jnp.where(use_tail, jnp.take(vals, jnp.asarray(k, dtype=np.int32)), approx)


def _binomial_inversion(key, count, prob, shape, dtype, max_iters):
    log1mp = jnp.log1p(-prob)

    def body(carry):
        i, num_geom, geom_sum, key = carry
        ks = _split(key)
        sub, key = ks[0], ks[1]
        num_geom_out = jnp.where(geom_sum <= count, num_geom + 1, num_geom)
        u = _uniform_in(sub, shape, prob.dtype)
        geom = jnp.ceil(jnp.log(u) / log1mp)
        return i + 1, num_geom_out, geom_sum + geom, key

    def cond(carry):
        i, geom_sum = carry[0], carry[2]
        return jnp.any(geom_sum <= count) & (i < max_iters)
    z = jnp.zeros(shape, prob.dtype)
    k = lax.while_loop(cond, body, (np.asarray(0, dtypes.default_int()), z, z, key))[1]
    return (k - 1).astype(dtype)


def _btrs(key, count, prob, shape, dtype, max_iters):
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def body(carry):
        i, k_out, accepted, key = carry
        ks = _split(key, 3)
        key, k0, k1 = ks[0], ks[1], ks[2]
        u = _uniform_in(k0, shape, prob.dtype)
        v = _uniform_in(k1, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m) + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k) - _stirling_approx_tail(count - k))
        accept2 = v <= ub
        accept = accept1 | ~reject & accept2
        k_out = jnp.where(accept, k, k_out)
        return i + 1, k_out, accepted | accept, key

    def cond(carry):
        i, accepted = carry[0], carry[2]
        return jnp.any(~accepted) & (i < max_iters)
    k0 = jnp.full(shape, -1, prob.dtype)
    carry = (np.asarray(0, dtypes.default_int()), k0, jnp.zeros(shape, bool), key)
    return lax.while_loop(cond, body, carry)[1].astype(dtype)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) samples (as floats, like JAX). JAX: jax.random.binomial."""
    key, _ = _check_prng_key("binomial", key)
    dtype = _user_dtype(dtype, float)
    _check_float("binomial", dtype)
    if shape is not None:
        shape = _canon_shape(shape)
    return staged(_binomial, key, n, p, shape=shape, dtype=dtype)


@_jit(("shape", "dtype"))
def _binomial(key, count, prob, shape, dtype):
    if shape is None:
        shape = tuple(jnp.broadcast_shapes(_shape_of(count), _shape_of(prob)))
    else:
        _check_shape("binomial", shape, _shape_of(count), _shape_of(prob))
    (prob,) = _promote_inexact(prob)
    count = lax.convert_element_type(jnp.asarray(count), prob.dtype)
    count = jnp.broadcast_to(count, shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = jnp.where(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = jnp.isnan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = jnp.isnan(q)
    q_l_0 = q < 0.0
    q = jnp.where(q_is_nan | q_l_0, jnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)
    count_inv = jnp.where(use_inversion, count, jnp.zeros_like(count))
    count_btrs = jnp.where(use_inversion, jnp.full_like(count, 10000.0), count)
    q_btrs = jnp.where(use_inversion, jnp.full_like(q, 0.5), q)
    max_iters = float(_finfo(dtype).max)
    samples = jnp.where(use_inversion,
                        _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
                        _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters))
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = jnp.where(invalid, jnp.full_like(samples, np.nan, dtype), samples)
    samples = jnp.where(count_inf & ~invalid, jnp.full_like(samples, np.inf, dtype), samples)
    return jnp.where(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                     count.astype(dtype) - samples)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts over p's last axis. JAX: jax.random.multinomial."""
    key, _ = _check_prng_key("multinomial", key)
    n, p = _promote_inexact(n, p)
    dtype = _user_dtype(dtype, float)
    if shape is None:
        shape = tuple(p.shape)
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.broadcast_to(p, shape)

    def step(remainder, ratio_key):
        ratio, k = ratio_key
        count = binomial(k, remainder, jnp.clip(ratio, 0, 1), dtype=remainder.dtype)
        return remainder - count, count
    p = jnp.moveaxis(p, -1, 0)
    remaining = jnp.flip(jnp.cumsum(jnp.flip(p, 0), 0), 0)
    ratios = p / jnp.where(remaining == 0, 1, remaining)
    keys = split(key, ratios.shape[0])
    _, counts = lax.scan(step, n, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dtype)


def _laid_out(sampler):
    """`sampler` with its `out_sharding=` applied to the samples (the same bits as JAX's,
    whose partitionable threefry gives each element the same value however it is laid
    out)."""
    @functools.wraps(sampler)
    def wrapped(*args, out_sharding=None, **kwargs):
        from mjax.lax.sharding import apply_out_sharding
        return apply_out_sharding(sampler(*args, **kwargs), out_sharding)
    return wrapped


for _name, _sampler in list(globals().items()):
    if not _name.startswith("_") and callable(_sampler) and \
            "out_sharding" in getattr(getattr(_sampler, "__code__", None), "co_varnames", ()):
        globals()[_name] = _laid_out(_sampler)
del _name, _sampler
