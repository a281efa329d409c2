"""Covariance and correlation: cov, corrcoef. (Quantiles and medians are in
quantiles.py, the nan-ignoring reductions in nanfunctions.py.)"""
from __future__ import annotations

from mjax import lax
from mjax.numpy import elementwise, reductions, scalar_types
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.conversion import asarray
from mjax.numpy.elementwise import clip, conj, imag, sqrt
from mjax.numpy.products import diag, dot
from mjax.numpy.promotion import result_type
from mjax.numpy.reductions import mean
from mjax.numpy.scalar_types import iscomplexobj
from mjax.numpy.shaping import atleast_2d, concatenate, squeeze


@fused_when_eager   # (jitted in JAX: fused half floats round alike)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    """Covariance matrix of the variables (rows, unless rowvar=False). JAX: jnp.cov."""
    m = atleast_2d(asarray(m))
    dtype = result_type(m, float) if dtype is None else scalar_types.dtype(dtype)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if not rowvar and m.shape[0] != 1:
        m = m.T
    if y is not None:
        y = atleast_2d(asarray(y))
        if not rowvar and y.shape[0] != 1:
            y = y.T
        m = concatenate([m, y], axis=0)
        dtype = result_type(dtype, y)
    m = m.astype(dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    n = m.shape[1]
    w = None
    if fweights is not None:
        w = asarray(fweights).astype(dtype)
    if aweights is not None:
        aw = asarray(aweights).astype(dtype)
        w = aw if w is None else w * aw
    if w is None:
        avg = mean(m, axis=1)
        w_sum = asarray(float(n), dtype)
        fact = w_sum - ddof
    else:
        w_sum = reductions.sum(w)
        avg = reductions.sum(m * w, axis=1) / w_sum
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * reductions.sum(w * asarray(aweights).astype(dtype)) / w_sum
    x = m - avg[:, None]
    xw = x if w is None else x * w
    c = dot(xw, conj(x).T) / fact
    return squeeze(c)


@fused_when_eager
def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients. JAX: jnp.corrcoef."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = diag(c)
    stddev = sqrt(elementwise.real(d)).astype(c.dtype)
    c = c / stddev[:, None] / stddev[None, :]
    real = clip(elementwise.real(c), -1, 1)
    if iscomplexobj(c):
        return lax.complex(real, clip(imag(c), -1, 1))
    return real
