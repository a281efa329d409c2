"""Window functions (bartlett, blackman, hamming, hanning, kaiser) and i0, the Bessel
function the Kaiser window is made of."""
from __future__ import annotations

import operator

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.ad import custom_jvp, jvp
from mjax.numpy.conversion import asarray
from mjax.numpy.creation import arange, ones
from mjax.numpy.elementwise import abs as _abs, cos, sqrt, where_xy
from mjax.numpy.promotion import promote
from mjax.tracing.staging import jit_eagerly


def _window(M, fn):
    M = operator.index(M)
    dtype = _dt.default_float()
    if M <= 1:
        return ones((max(M, 0),), dtype)
    n = arange(M, dtype=dtype)
    return fn(n, M).astype(dtype)


def bartlett(M):
    """The Bartlett (triangular) window. JAX: jnp.bartlett."""
    return _window(M, lambda n, M: 1 - _abs(2 * n - M + 1) / (M - 1))


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


@jit_eagerly("x")
def i0(x):
    """The modified Bessel function of the first kind, order 0: exp(|x|) i0e(|x|) (JAX's
    composition, so values and overflow agree). Called eagerly it is one program, as JAX
    jits it (op by op, a TPU rounds bfloat16 intermediates JAX's fused program keeps in
    float32). JAX: jnp.i0."""
    (x,) = promote("i0", x, inexact=True)
    if not _dt.issubdtype(x.dtype, _onp.floating):
        raise ValueError(f"Unsupported input type to jnp.i0: {x.dtype} (real floats only)")
    return _i0(x)


@custom_jvp
def _i0(x):
    ax = lax.abs(x)
    return lax.mul(lax.exp(ax), lax.bessel_i0e(ax))


@_i0.defjvp
def _i0_jvp(primals, tangents):
    # (|x|'s derivative at 0 is 1: I0'(0) = 0 is set explicitly)
    (x,), (t,) = primals, tangents
    out, dout = jvp(_i0.fun, (x,), (t,))
    return out, where_xy(x == 0, lax.full_like(dout, 0), dout)


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
