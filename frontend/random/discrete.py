"""Discrete samplers: integers, booleans, signs, geometric, Poisson, binomial and
multinomial counts (JAX: jax.random.randint, bernoulli, rademacher, geometric, poisson,
binomial, multinomial)."""
from __future__ import annotations

import numpy as np

from mjax.specs import dtypes
from mjax import lax
from mjax import numpy as jnp
from mjax.lax.prng import impl_of, staged
from mjax.random.arguments import nested
from mjax.random.arguments import (_SHAPE_DTYPE, _UINT, _canon_shape, _check_float,
                                   _check_shape, _const, _finfo, _jit, _laid_out,
                                   _no_sharding, _promote_inexact, _shape_of, _user_dtype)
from mjax.random.front_doors import _param_call
from mjax.random.keys import _check_prng_key, _random_bits, _split, split
from mjax.random.uniform_normal import _uniform_in


def _convert_and_clip_integer(val, dtype):
    vi, di = dtypes.iinfo(val.dtype), dtypes.iinfo(dtype)
    lo = np.asarray(max(di.min, vi.min), dtype=val.dtype)
    hi = np.asarray(min(di.max, vi.max), dtype=val.dtype)
    return jnp.clip(val, lo, hi).astype(dtype)


@_laid_out
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


@_laid_out
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
    return nested(_bernoulli, key, p, shape=shape, mode=mode)   # (JAX's jit, as uniform's)


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


@_laid_out
def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
    """Uniform samples from {-1, +1}. JAX: jax.random.rademacher."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key("rademacher", key)
    dtype = _user_dtype(dtype, int)
    shape = _canon_shape(shape)
    return staged(_rademacher, key, shape=shape, dtype=dtype)


@_jit(("shape", "dtype"))
def _rademacher(key, shape, dtype):
    # (p is JAX's Python 0.5: the default float, float64 under x64, draws the uniforms)
    b = staged(_bernoulli, key, jnp.asarray(0.5), shape=shape, mode="low").astype(dtype)
    return (2 * b - 1).astype(dtype)


def _geometric_body(key, p, shape, dtype):
    (p,) = _promote_inexact(p)
    u = _uniform_in(key, shape, p.dtype)
    u = jnp.where(u == 0, np.asarray(1, p.dtype), u)
    g = jnp.floor(jnp.log(u) / jnp.broadcast_to(jnp.log1p(-p), shape)) + 1
    return g.astype(dtype)


_geometric = _jit(_SHAPE_DTYPE)(_geometric_body)


@_laid_out
def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
    """Geometric samples (trials to first success). JAX: jax.random.geometric."""
    return _param_call("geometric", _geometric, key, (p,), shape, dtype, out_sharding,
                       integer=True)


@_laid_out
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
