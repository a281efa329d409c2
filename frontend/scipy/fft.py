"""`mjax.scipy.fft`: the discrete cosine transform of type 2 and its inverse, by one
complex FFT of the reordered input, as JAX's `jax.scipy.fft` (dct, dctn, idct, idctn)."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as _onp

from mjax import lax
from mjax import numpy as jnp

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(name: str, type: int, norm):
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("ortho", "backward"):
        raise ValueError(f"jax.scipy.fft.{name}: norm={norm!r} is not implemented")


def _resized(x, n: int | None, axis: int):
    """x cut or zero-padded to length n along axis (SciPy's `n`)."""
    if n is None or n == x.shape[axis]:
        return x
    if n < 1:
        raise ValueError(f"invalid number of data points ({n}) specified")
    if n < x.shape[axis]:
        return lax.slice_in_dim(x, 0, n, axis=axis)
    pad = [(0, 0, 0)] * x.ndim
    pad[axis] = (0, n - x.shape[axis], 0)
    return lax.pad(x, jnp.zeros((), x.dtype), pad)


def _ortho_scale(n: int, dtype, axis: int, ndim: int):
    """The factors turning the unnormalized type-2 DCT into the orthonormal one."""
    scale = _onp.full(n, 1 / math.sqrt(2 * n))
    scale[0] = 1 / math.sqrt(4 * n)
    shape = [1] * ndim
    shape[axis] = n
    return jnp.asarray(scale.reshape(shape), dtype)


def _twiddle(n: int, axis: int, ndim: int, sign: float):
    """exp(sign * i*pi*k / (2n)), shaped to broadcast along axis."""
    shape = [1] * ndim
    shape[axis] = n
    return jnp.asarray(_onp.exp(sign * 1j * _onp.pi * _onp.arange(n) / (2 * n)).reshape(
        shape), _onp.complex64)


def _dct_real(x, axis: int, norm):
    """Type-2 DCT of a real array along axis: y[k] = 2 Re(V[k] e^{-i pi k/2N}), V the FFT
    of x's even-indexed then reversed odd-indexed elements."""
    n = x.shape[axis]
    v = jnp.concatenate([lax.slice_in_dim(x, 0, n, 2, axis=axis),
                         jnp.flip(lax.slice_in_dim(x, 1, n, 2, axis=axis), axis)], axis)
    spectrum = jnp.fft.fft(v, axis=axis)
    y = 2 * jnp.real(spectrum * _twiddle(n, axis, x.ndim, -1.0).astype(spectrum.dtype))
    if norm == "ortho":
        y = y * _ortho_scale(n, y.dtype, axis, x.ndim)
    return y


def _idct_real(y, axis: int, norm):
    """The inverse of _dct_real: V[k] = e^{i pi k/2N} (y[k] - i y[N-k]) / 2 (y[N] = 0),
    v the inverse FFT of V, and x un-reordered from v."""
    n = y.shape[axis]
    if norm == "ortho":
        y = y / _ortho_scale(n, y.dtype, axis, y.ndim)
    mirrored = jnp.concatenate([jnp.zeros_like(lax.slice_in_dim(y, 0, 1, axis=axis)),
                                jnp.flip(lax.slice_in_dim(y, 1, n, axis=axis), axis)], axis)
    spectrum = lax.complex(y, -mirrored) / 2
    spectrum = spectrum * _twiddle(n, axis, y.ndim, 1.0).astype(spectrum.dtype)
    v = jnp.real(jnp.fft.ifft(spectrum, axis=axis))
    evens = lax.slice_in_dim(v, 0, (n + 1) // 2, axis=axis)
    odds = jnp.flip(lax.slice_in_dim(v, (n + 1) // 2, n, axis=axis), axis)
    # Interleave: x[2m] = evens[m], x[2m+1] = odds[m].
    if n % 2:
        odds = _resized(odds, evens.shape[axis], axis)
    both = jnp.stack([evens, odds], axis=axis + 1)
    shape = list(v.shape)
    shape[axis] = 2 * evens.shape[axis]
    return lax.slice_in_dim(both.reshape(shape), 0, n, axis=axis)


def _transform(real_fn, x, n, axis, norm):
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.inexact) or x.dtype == _onp.float16 or \
            x.dtype == jnp.bfloat16:
        x = x.astype(jnp.promote_types(x.dtype, _onp.float32) if jnp.issubdtype(
            x.dtype, jnp.inexact) else jnp.result_type(float))
    axis = axis % x.ndim if x.ndim else axis
    x = _resized(x, n, axis)
    if jnp.iscomplexobj(x):
        return lax.complex(real_fn(jnp.real(x), axis, norm), real_fn(jnp.imag(x), axis, norm))
    return real_fn(x, axis, norm)


def dct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """Type-2 discrete cosine transform along axis (SciPy's definition; norm None or
    'ortho'). JAX: jax.scipy.fft.dct."""
    _check("dct", type, norm)
    return _transform(_dct_real, x, n, axis, norm)


def idct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """Inverse of the type-2 DCT along axis (SciPy's type-3 DCT, scaled). JAX:
    jax.scipy.fft.idct."""
    _check("idct", type, norm)
    return _transform(_idct_real, x, n, axis, norm)


def _over_axes(name, one, x, type, s, axes, norm):
    _check(name, type, norm)
    x = jnp.asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim)) if s is None else tuple(range(x.ndim - len(s), x.ndim))
    axes = tuple(axes)
    if s is not None and len(s) != len(axes):
        raise ValueError(f"jax.scipy.fft.{name}: shape and axes have different lengths: "
                         f"{len(s)} and {len(axes)}")
    for i, axis in enumerate(axes):
        x = one(x, n=None if s is None else s[i], axis=axis, norm=norm)
    return x


def dctn(x, type: int = 2, s: Sequence[int] | None = None,
         axes: Sequence[int] | None = None, norm: str | None = None):
    """Type-2 DCT over several axes. JAX: jax.scipy.fft.dctn."""
    return _over_axes("dctn", dct, x, type, s, axes, norm)


def idctn(x, type: int = 2, s: Sequence[int] | None = None,
          axes: Sequence[int] | None = None, norm: str | None = None):
    """Inverse type-2 DCT over several axes. JAX: jax.scipy.fft.idctn."""
    return _over_axes("idctn", idct, x, type, s, axes, norm)
