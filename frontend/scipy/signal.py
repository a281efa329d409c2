"""`mjax.scipy.signal`: N-d convolution and correlation (direct, over
`lax.conv_general_dilated`, or by FFT), as JAX's `jax.scipy.signal`."""
from __future__ import annotations

import numpy as _onp

from mjax import lax
from mjax import numpy as jnp
from mjax.scipy.spectral import csd, detrend, istft, stft, welch  # noqa: F401

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve", "csd",
           "detrend", "istft", "stft", "welch"]

_MODES = ("full", "same", "valid")


def _convolve_nd(in1, in2, mode, precision):
    """Direct N-d convolution; the larger input is the lhs (SciPy swaps them), the other
    flipped as the kernel, padded per mode."""
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError("zero-size arrays not supported in convolutions, got shapes "
                         f"{in1.shape} and {in2.shape}.")
    in1, in2 = jnp._promote("scipy.signal.convolve", in1, in2, inexact=True,
                            broadcast=False)
    bigger = all(a >= b for a, b in zip(in1.shape, in2.shape))
    smaller = all(a <= b for a, b in zip(in1.shape, in2.shape))
    if not (bigger or smaller):
        raise ValueError("One input must be smaller than the other in every dimension.")
    other_shape = in2.shape
    if smaller and not bigger:
        in1, in2 = in2, in1
    kshape = in2.shape
    kernel = jnp.flip(in2)
    if mode == "valid":
        padding = [(0, 0)] * len(kshape)
    elif mode == "same":
        # Centre a window of the first input's size in the full result.
        padding = [(k - 1 - (o - 1) // 2, k - o + (o - 1) // 2)
                   for k, o in zip(kshape, other_shape)]
    else:
        padding = [(k - 1, k - 1) for k in kshape]
    out = lax.conv_general_dilated(in1[None, None], kernel[None, None], (1,) * in1.ndim,
                                   padding, precision=precision)
    return out[0, 0]


def _check_method(method):
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"Got unknown method={method!r}; expected 'auto', 'direct' or 'fft'")


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """N-d convolution of in1 and in2 (same rank). JAX: jax.scipy.signal.convolve."""
    _check_method(method)
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    return _convolve_nd(in1, in2, mode, precision)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """N-d cross-correlation: convolution with in2 flipped and conjugated.
    JAX: jax.scipy.signal.correlate."""
    _check_method(method)
    in2 = jnp.flip(jnp.conj(jnp.asarray(in2)))
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    return _convolve_nd(in1, in2, mode, precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill":
        raise NotImplementedError(f"mjax.scipy.signal.{name}: boundary={boundary!r} is not "
                                  "implemented; only 'fill' is supported")
    if fillvalue != 0:
        raise NotImplementedError(f"mjax.scipy.signal.{name}: fillvalue={fillvalue!r} is "
                                  "not implemented; only 0 is supported")
    if jnp.ndim(in1) != 2 or jnp.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-D convolution. JAX: jax.scipy.signal.convolve2d."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode, precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-D cross-correlation. JAX: jax.scipy.signal.correlate2d."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    if mode == "same":
        # JAX centres the 'same' window from the other end: correlate the flipped input.
        in1 = jnp.flip(jnp.asarray(in1))
        return jnp.flip(_convolve_nd(in1, jnp.conj(jnp.asarray(in2)), mode, precision))
    return correlate(in1, in2, mode, precision=precision)


def fftconvolve(in1, in2, mode="full", axes=None):
    """Convolution by FFT over `axes` (all by default; the other axes must agree).
    JAX: jax.scipy.signal.fftconvolve."""
    if mode not in _MODES:
        raise ValueError(f"fftconvolve: mode must be one of {list(_MODES)}; got {mode!r}")
    in1, in2 = jnp._promote("scipy.signal.fftconvolve", in1, in2, inexact=True,
                            broadcast=False)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    axes = tuple(range(in1.ndim)) if axes is None else tuple(
        a % in1.ndim for a in _onp.atleast_1d(axes))
    # (JAX maps its transform over the other axes, which must then agree: no broadcasting)
    if any(in1.shape[i] != in2.shape[i] for i in set(range(in1.ndim)) - set(axes)):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape} "
                         f"in2.shape={in2.shape} axes={axes}")
    if mode == "valid":
        bigger = all(in1.shape[a] >= in2.shape[a] for a in axes)
        if not bigger:
            if all(in1.shape[a] <= in2.shape[a] for a in axes):
                in1, in2 = in2, in1
            else:
                raise ValueError("For 'valid' mode, one must be at least as large as the "
                                 "other in every dimension")
    full = [in1.shape[a] + in2.shape[a] - 1 for a in axes]
    if jnp.iscomplexobj(in1):
        out = jnp.fft.ifftn(jnp.fft.fftn(in1, full, axes) * jnp.fft.fftn(in2, full, axes),
                            full, axes)
    else:
        out = jnp.fft.irfftn(jnp.fft.rfftn(in1, full, axes) * jnp.fft.rfftn(in2, full, axes),
                             full, axes)
    if mode == "full":
        return out
    index = [slice(None)] * out.ndim
    for a, n in zip(axes, full):
        size = in1.shape[a] if mode == "same" else in1.shape[a] - in2.shape[a] + 1
        start = (n - size) // 2
        index[a] = slice(start, start + size)
    return out[tuple(index)]
