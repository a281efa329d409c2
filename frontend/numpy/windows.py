"""Window functions (bartlett, blackman, hamming, hanning, kaiser) and i0, the Bessel
function the Kaiser window is made of."""
from __future__ import annotations

import operator

import numpy as _onp

from mjax import dtypes as _dt, lax
from mjax.numpy import elementwise
from mjax.numpy.conversion import asarray
from mjax.numpy.creation import arange, ones
from mjax.numpy.elementwise import cos, exp, log, maximum, minimum, sqrt, where_xy


def _window(M, fn):
    M = operator.index(M)
    dtype = _dt.default_float()
    if M <= 1:
        return ones((max(M, 0),), dtype)
    n = arange(M, dtype=dtype)
    return fn(n, M).astype(dtype)


def bartlett(M):
    """The Bartlett (triangular) window. JAX: jnp.bartlett."""
    return _window(M, lambda n, M: 1 - elementwise.abs(2 * n - M + 1) / (M - 1))


def blackman(M):
    """The Blackman window. JAX: jnp.blackman."""
    return _window(M, lambda n, M: 0.42 - 0.5 * cos(2 * _onp.pi * n / (M - 1)) +
                   0.08 * cos(4 * _onp.pi * n / (M - 1)))


def hamming(M):
    """The Hamming window. JAX: jnp.hamming."""
    return _window(M, lambda n, M: 0.54 - 0.46 * cos(2 * _onp.pi * n / (M - 1)))


def hanning(M):
    """The Hann window. JAX: jnp.hanning."""
    return _window(M, lambda n, M: 0.5 - 0.5 * cos(2 * _onp.pi * n / (M - 1)))


_I0_SWITCH = 30.0  # below: the power series (positive terms, no cancellation); above: asymptotic


def i0(x):
    """The modified Bessel function of the first kind, order 0. JAX: jnp.i0.

    |x| <= 30: sum_k ((x/2)^k / k!)^2 over 64 terms, each formed in log space; beyond:
    e^|x| / sqrt(2 pi |x|) times the first terms of its asymptotic series."""
    x = asarray(x)
    if _dt.issubdtype(x.dtype, _onp.complexfloating):
        raise NotImplementedError("i0 does not support complex-valued inputs")
    if not _dt.is_inexact(x.dtype):
        x = x.astype(_dt.default_float())
    ax = elementwise.abs(x)
    small = minimum(ax, _I0_SWITCH)
    k = arange(64, dtype=x.dtype)
    log_half = log(maximum(small, asarray(1e-30, x.dtype)) / 2)[..., None]
    terms = exp(2 * k * log_half - 2 * lax.lgamma(k + 1))
    series = where_xy(small[..., None] == 0, (k == 0).astype(x.dtype), terms).sum(-1)
    big = maximum(ax, _I0_SWITCH)
    t = 1 / (8 * big)
    poly = 1 + t * (1 + t * (9 / 2 + t * (225 / 6 + t * (11025 / 24 + t * 893025 / 120))))
    asym = exp(big) / sqrt(2 * _onp.pi * big) * poly
    return where_xy(ax <= _I0_SWITCH, series, asym)


def kaiser(M, beta):
    """The Kaiser window. JAX: jnp.kaiser."""
    M = operator.index(M)
    dtype = _dt.default_float()
    if M <= 1:
        return ones((max(M, 0),), dtype)
    n = arange(M, dtype=dtype)
    alpha = 0.5 * (M - 1)
    beta = asarray(beta, dtype)
    return i0(beta * sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)
