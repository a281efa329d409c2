"""Covariance and correlation: cov, corrcoef. (Quantiles and medians are in
quantiles.py, the nan-ignoring reductions in nanfunctions.py.)"""
from __future__ import annotations

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.numpy import elementwise, reductions
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.conversion import asarray
from mjax.numpy.creation import full, zeros
from mjax.numpy.elementwise import clip, conj, imag, sqrt
from mjax.numpy.products import diag, dot
from mjax.numpy.promotion import promote_ranks
from mjax.numpy.reductions import mean
from mjax.numpy.scalar_types import iscomplexobj
from mjax.numpy.shaping import atleast_2d, concatenate, squeeze


@fused_when_eager   # (jitted in JAX: fused half floats round alike)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    """Covariance matrix of the variables (rows, unless rowvar=False). JAX: jnp.cov."""
    if y is None:
        m = asarray(m)
        m = m.astype(_dt.to_inexact_dtype(m.dtype))
    else:   # (as JAX's promote_args_inexact: ranks differing is the user's promotion)
        m, y = promote_ranks("cov", m, y, inexact=True)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and not _dt.issubdtype(dtype, _onp.inexact):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got "
                         f"dtype={dtype!r}")
    # (a 1-d m is one variable whatever rowvar says, as NumPy 2.2's cov)
    x = atleast_2d(m) if rowvar or m.ndim == 1 else atleast_2d(m).T
    if x.shape[0] == 0:
        return zeros((0, 0), m.dtype)
    if y is not None:
        y = atleast_2d(y)
        x = concatenate([x, y if rowvar or y.shape[0] == 1 else y.T], axis=0)
    if x.shape[1] == 0:   # (no observations: NaN, as NumPy)
        return full(() if x.shape[0] == 1 else (x.shape[0],) * 2, _onp.nan, x.dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    w = _weights(fweights, aweights, x.shape[1])
    if dtype is not None:
        x = x.astype(dtype)
        w = None if w is None else w.astype(dtype)
    if w is None:
        avg = mean(x, axis=1)
        fact = x.shape[1] - ddof
    else:
        w_sum = reductions.sum(w)
        avg = reductions.sum(x * w[None, :], axis=1) / w_sum
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            aw = elementwise.abs(asarray(aweights))
            fact = w_sum - ddof * reductions.sum(w * aw.astype(w.dtype)) / w_sum
    x = x - avg[:, None]
    xw = x if w is None else x * w[None, :]
    return squeeze(elementwise.true_divide(dot(x, conj(xw).T), fact))


def _weights(fweights, aweights, n):
    """cov's observation weights, fweights * aweights (absolute values, as JAX: NumPy
    raises on negative ones), checked as JAX checks them; None without either."""
    w = None
    if fweights is not None:
        fweights = _one_weight_per_sample(fweights, n, "fweights")
        if not _dt.issubdtype(fweights.dtype, _onp.integer):
            raise TypeError("fweights must be integer.")
        w = elementwise.abs(fweights)
    if aweights is not None:
        aweights = elementwise.abs(_one_weight_per_sample(aweights, n, "aweights"))
        w = aweights if w is None else w * aweights
    return w


def _one_weight_per_sample(weights, n, name):
    weights = asarray(weights)
    if weights.ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if weights.shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    return weights


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
