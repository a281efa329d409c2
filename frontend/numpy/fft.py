"""`mjax.numpy.fft`: NumPy's discrete Fourier transforms over the `jaxpr.fft` primitive.
JAX: jax.numpy.fft.

XLA transforms the innermost one to three axes, so the requested axes move there and back;
more than three axes take several passes. `n`/`s` crop or zero-pad the input first, and
`norm` is "backward" (default: 1/n on the inverse), "ortho" or "forward".
"""
from __future__ import annotations

import operator

import numpy as _onp

from mjax.specs import dtypes as _dt
from mjax.lax.linalg import fft as _lax_fft
from mjax.numpy import elementwise, reductions
from mjax.numpy.arraypad import pad
from mjax.numpy.conversion import asarray
from mjax.numpy.creation import arange
from mjax.numpy.elementwise import conj
from mjax.numpy.scalar_types import finfo
from mjax.numpy.shaping import moveaxis, roll
from mjax.tracing.staging import jit_eagerly


_NORMS = ("backward", "ortho", "forward")


def _as_fft_input(arr, fft_type: str, full_name: str):
    """Integers and low-precision floats promote as JAX does: to complex64/complex128 for
    complex transforms, to a real float for RFFT (which rejects complex input)."""
    dtype = _onp.dtype(arr.dtype)
    if fft_type == "RFFT":
        if dtype.kind == "c":
            raise ValueError(f"{full_name}: only real valued inputs supported for rfft, "
                             f"got dtype {dtype.name}")
        target = _onp.dtype(_onp.float64) if dtype == _onp.float64 else _onp.dtype(
            _dt.canonicalize_dtype(_onp.float64) if dtype.kind in "biu" else _onp.float32)
    else:
        target = _onp.dtype(_onp.complex128) if dtype in (
            _onp.float64, _onp.complex128) else _onp.dtype(_dt.canonicalize_dtype(
                _onp.complex128) if dtype.kind in "biu" else _onp.complex64)
    return arr if dtype == target else arr.astype(target)


def _fft_norm(s, func_name: str, norm: str, dtype):
    """The factor of a normalized transform, computed in the program in the result's
    dtype from the sizes (complex for complex results), as JAX computes it."""
    size = reductions.prod(asarray(list(s), dtype=dtype))
    inverse = func_name.startswith("i")
    if norm == "ortho":
        return elementwise.sqrt(size) if inverse else 1 / elementwise.sqrt(size)
    if norm == "forward":
        return size if inverse else 1 / size
    raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _fft_nd(arr, fft_type: str, s):
    """FFT over the trailing len(s) axes, in passes of at most three axes. JAX: _fft_core_nd."""
    s = tuple(s)
    if len(s) <= 3:
        return _lax_fft(arr, fft_type, s)
    n = 2 if len(s) == 4 else 3
    src = tuple(range(arr.ndim - len(s), arr.ndim - n))
    dst = tuple(range(arr.ndim - len(s) + n, arr.ndim))
    if fft_type in ("RFFT", "FFT"):
        arr = _lax_fft(arr, fft_type, s[-n:])
        arr = moveaxis(arr, src, dst)
        arr = _fft_nd(arr, "FFT", s[:-n])
        return moveaxis(arr, dst, src)
    arr = moveaxis(arr, src, dst)
    arr = _fft_nd(arr, "IFFT", s[:-n])
    arr = moveaxis(arr, dst, src)
    return _lax_fft(arr, fft_type, s[-n:])


def _fft_core(func_name: str, fft_type: str, a, s, axes, norm):
    full_name = f"jax.numpy.fft.{func_name}"
    arr = asarray(a)
    if s is not None:
        s = tuple(operator.index(x) for x in s)
        if any(x <= 0 for x in s):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if norm is not None and norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or '
                         f'"forward".')
    orig_axes = axes
    if axes is None:
        axes = tuple(range(arr.ndim)) if s is None else tuple(range(arr.ndim - len(s),
                                                                    arr.ndim))
    axes = tuple(operator.index(ax) for ax in axes)
    normalized = tuple(ax % arr.ndim if -arr.ndim <= ax < arr.ndim else None for ax in axes)
    if None in normalized:
        raise ValueError(f"{full_name}: axes {axes} out of range for an array of rank "
                         f"{arr.ndim}")
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    arr = _as_fft_input(arr, fft_type, full_name)
    if orig_axes is not None:
        inner = tuple(range(arr.ndim - len(axes), arr.ndim))
        arr = moveaxis(arr, normalized, inner)
        axes = inner
    if s is not None:
        in_s = list(arr.shape)
        for ax, n in zip(axes, s):
            in_s[ax] = n
        if fft_type == "IRFFT":
            in_s[-1] = in_s[-1] // 2 + 1
        arr = arr[tuple(slice(n) for n in in_s)]
        arr = pad(arr, [(0, n - m) for n, m in zip(in_s, arr.shape)])
    elif fft_type == "IRFFT":
        s = [arr.shape[ax] for ax in axes[:-1]]
        if axes:
            s += [max(0, 2 * (arr.shape[axes[-1]] - 1))]
    else:
        s = [arr.shape[ax] for ax in axes]
    out = _fft_nd(arr, fft_type, s) if len(s) else arr
    if norm is not None and norm != "backward":
        out = out * _fft_norm(s, func_name, norm, out.dtype)
    if orig_axes is not None:
        out = moveaxis(out, axes, normalized)
    return out


def _check_1d(func_name, axis):
    if isinstance(axis, (list, tuple)):
        full_name = f"jax.numpy.fft.{func_name}"
        raise ValueError(f"{full_name} does not support multiple axes. Please use "
                         f"{full_name}n. Got axis = {axis!r}.")


def _fft_1d(func_name, fft_type, a, n, axis, norm):
    _check_1d(func_name, axis)
    return _fft_core(func_name, fft_type, a, None if n is None else [n],
                     None if axis is None else [axis], norm)


def _fft_2d(func_name, fft_type, a, s, axes, norm):
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. Got axes = {axes!r}.")
    return _fft_core(func_name, fft_type, a, s, axes, norm)


@jit_eagerly("a")
def fft(a, n=None, axis=-1, norm=None):
    """1-D discrete Fourier transform along `axis`."""
    return _fft_1d("fft", "FFT", a, n, axis, norm)


@jit_eagerly("a")
def ifft(a, n=None, axis=-1, norm=None):
    """1-D inverse discrete Fourier transform along `axis`."""
    return _fft_1d("ifft", "IFFT", a, n, axis, norm)


@jit_eagerly("a")
def rfft(a, n=None, axis=-1, norm=None):
    """1-D transform of a real signal: the n // 2 + 1 non-negative frequencies."""
    return _fft_1d("rfft", "RFFT", a, n, axis, norm)


@jit_eagerly("a")
def irfft(a, n=None, axis=-1, norm=None):
    """Inverse of rfft: a real signal of length n (default 2 * (m - 1))."""
    return _fft_1d("irfft", "IRFFT", a, n, axis, norm)


@jit_eagerly("a")
def hfft(a, n=None, axis=-1, norm=None):
    """Transform of a Hermitian-symmetric signal given by its first half: a real spectrum."""
    _check_1d("hfft", axis)
    conj_a = conj(asarray(a))
    nn = (conj_a.shape[axis] - 1) * 2 if n is None else n
    return _fft_1d("hfft", "IRFFT", conj_a, n, axis, norm) * nn


@jit_eagerly("a")
def ihfft(a, n=None, axis=-1, norm=None):
    """Inverse of hfft: the first half of a Hermitian-symmetric spectrum."""
    _check_1d("ihfft", axis)
    arr = asarray(a)
    nn = arr.shape[axis] if n is None else n
    out = _fft_1d("ihfft", "RFFT", arr, n, axis, norm)
    return conj(out) * (1 / nn)


@jit_eagerly("a")
def fft2(a, s=None, axes=(-2, -1), norm=None):
    """2-D discrete Fourier transform over `axes`."""
    return _fft_2d("fft2", "FFT", a, s, axes, norm)


@jit_eagerly("a")
def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """2-D inverse discrete Fourier transform over `axes`."""
    return _fft_2d("ifft2", "IFFT", a, s, axes, norm)


@jit_eagerly("a")
def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """2-D transform of a real signal (half spectrum along the last axis)."""
    return _fft_2d("rfft2", "RFFT", a, s, axes, norm)


@jit_eagerly("a")
def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """Inverse of rfft2."""
    return _fft_2d("irfft2", "IRFFT", a, s, axes, norm)


@jit_eagerly("a")
def fftn(a, s=None, axes=None, norm=None):
    """N-D discrete Fourier transform over `axes` (all by default)."""
    return _fft_core("fftn", "FFT", a, s, axes, norm)


@jit_eagerly("a")
def ifftn(a, s=None, axes=None, norm=None):
    """N-D inverse discrete Fourier transform over `axes`."""
    return _fft_core("ifftn", "IFFT", a, s, axes, norm)


@jit_eagerly("a")
def rfftn(a, s=None, axes=None, norm=None):
    """N-D transform of a real signal (half spectrum along the last axis)."""
    return _fft_core("rfftn", "RFFT", a, s, axes, norm)


@jit_eagerly("a")
def irfftn(a, s=None, axes=None, norm=None):
    """Inverse of rfftn."""
    return _fft_core("irfftn", "IRFFT", a, s, axes, norm)


def _freq_dtype(dtype):
    dtype = _dt.canonicalize_dtype(_onp.float64) if dtype is None else _onp.dtype(dtype)
    return dtype, _onp.dtype(finfo(_dt.to_inexact_dtype(dtype)).dtype)


def _check_freq_args(name, n, d):
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{name} only takes an int. "
                         f"Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{name} only takes a single "
                         f"value. Got d = {list(d)}.")


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an n-point FFT with sample spacing d."""
    _check_freq_args("fftfreq", n, d)
    out_dtype, dtype = _freq_dtype(dtype)
    i = arange(n, dtype=dtype)
    k = (i + n // 2) % n - n // 2
    return (k / asarray(d * n, dtype=dtype)).astype(out_dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an n-point rfft with sample spacing d."""
    _check_freq_args("rfftfreq", n, d)
    out_dtype, dtype = _freq_dtype(dtype)
    k = arange(0, n // 2 + 1, dtype=dtype)
    return (k / asarray(d * n, dtype=dtype)).astype(out_dtype)


def _shift(x, axes, sign):
    x = asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
        shift = [sign * (dim // 2) for dim in x.shape]
    elif isinstance(axes, int):
        shift = sign * (x.shape[axes] // 2)
    else:
        shift = [sign * (x.shape[ax] // 2) for ax in axes]
    return roll(x, shift, axes)


def fftshift(x, axes=None):
    """Moves the zero frequency to the center."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    """Inverse of fftshift."""
    return _shift(x, axes, -1)
