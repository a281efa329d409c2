"""`mjax.scipy.signal`'s spectral analysis: detrend, stft/istft and the cross/power
spectral densities csd/welch (segments cut by slicing, windowed, FFT'd), following
JAX 0.10.2's `jax.scipy.signal` (itself SciPy's semantics, fewer options)."""
from __future__ import annotations

import importlib
import warnings

import numpy as _onp

from mjax import lax
from mjax import numpy as jnp
from mjax.numpy.concrete_values import concrete_int


def _inexact(name, *xs):
    return jnp._promote(name, *xs, inexact=True, broadcast=False)


def _complex_dtype(dtype):
    return jnp.result_type(dtype, jnp.complex64) if not jnp.issubdtype(
        dtype, jnp.complexfloating) else jnp.dtype(dtype)


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """`data` less its mean ("constant") or less a least-squares line on each piece
    between the breakpoints `bp` ("linear"). JAX: jax.scipy.signal.detrend."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (x,) = _inexact("detrend", jnp.asarray(data))
    if type == "constant":
        return x - x.mean(axis, keepdims=True)
    n = x.shape[axis]
    cuts = _onp.sort(_onp.unique(_onp.r_[0, bp, n]))
    if cuts[0] < 0 or cuts[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data "
                         "along given axis.")
    x = jnp.moveaxis(x, axis, 0)
    shape = x.shape
    x = x.reshape(n, -1)
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        npts = int(hi - lo)
        # Fit c0 + c1 t, t = (1..npts)/npts, by least squares on this piece.
        design = jnp.stack([jnp.ones(npts, x.dtype),
                            jnp.arange(1, npts + 1, dtype=x.dtype) / jnp.asarray(npts, x.dtype)],
                           axis=1)
        coef = jnp.linalg.lstsq(design, x[lo:hi])[0]
        x = x.at[lo:hi].add(-jnp.matmul(design, coef, precision=lax.Precision.HIGHEST))
    return jnp.moveaxis(x.reshape(shape), 0, axis)


def _named_window(window, n):
    if window == "hann":     # the default, built here (no SciPy needed)
        return _onp.ones(1) if n == 1 else _onp.sin(_onp.linspace(0, _onp.pi, n,
                                                                  endpoint=False)) ** 2
    try:
        scipy_signal = importlib.import_module("scipy.signal")
    except ImportError as err:
        raise ImportError(f"scipy must be available to use window={window!r}") from err
    return scipy_signal.get_window(window, n)


def _segments_window(window, nperseg, length, dtype):
    """(window array, nperseg): a named window of nperseg (at most `length`) points, or
    the given 1-D window, whose length is nperseg."""
    if isinstance(window, (str, tuple)):
        n = length if nperseg is None else int(nperseg)
        if n > length:
            warnings.warn(f"nperseg={n} is greater than input_length={length}, using "
                          f"nperseg={length}")
            n = length
        if window == "hann":
            return jnp.sin(jnp.linspace(0, _onp.pi, n, endpoint=False)).astype(dtype) ** 2 \
                if n > 1 else jnp.ones(1, dtype), n
        return jnp.asarray(_named_window(window, n), dtype=dtype), n
    win = jnp.asarray(window, dtype=dtype)
    n = win.size if nperseg is None else int(nperseg)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if length < win.size:
        raise ValueError("window is longer than input signal")
    if n != win.size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, n


def _windowed_ffts(x, win, detrend_fn, nperseg, noverlap, nfft, twosided):
    """The FFTs of the windowed, detrended segments of x's last axis: (..., nseg, freq)."""
    if x.dtype.kind == "i":
        x = x.astype(win.dtype)
    length = x.shape[-1]
    if nperseg == 1 and noverlap == 0:
        segs = x[..., None]
    else:
        starts = range(0, length - nperseg + 1, nperseg - noverlap)
        segs = jnp.stack([x[..., s:s + nperseg] for s in starts], axis=-2)
    segs = detrend_fn(segs)
    if jnp.iscomplexobj(win):
        segs = segs.astype(_complex_dtype(segs.dtype))
    segs = win * segs
    if twosided:
        return jnp.fft.fft(segs, n=nfft)
    return jnp.fft.rfft(segs.real, n=nfft)


def _odd_ext(x, n, axis=-1):
    if n < 1:
        return x
    if n > x.shape[axis] - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                         f"x.shape[axis]-1, which is {x.shape[axis] - 1}.")
    first = lax.slice_in_dim(x, 0, 1, axis=axis)
    last = lax.slice_in_dim(x, x.shape[axis] - 1, x.shape[axis], axis=axis)
    left = jnp.flip(lax.slice_in_dim(x, 1, n + 1, axis=axis), axis=axis)
    right = jnp.flip(lax.slice_in_dim(x, x.shape[axis] - n - 1, x.shape[axis] - 1,
                                      axis=axis), axis=axis)
    return jnp.concatenate([2 * first - left, x, 2 * last - right], axis=axis)


def _pad_ext(mode, **kwargs):
    def ext(x, n, axis=-1):
        widths = [(0, 0)] * x.ndim
        widths[axis] = (n, n)
        return jnp.pad(x, widths, mode, **kwargs)
    return ext


_BOUNDARIES = {"even": _pad_ext("reflect"), "odd": _odd_ext, "constant": _pad_ext("edge"),
               "zeros": _pad_ext("constant", constant_values=0.0), None: None}


def _zero_pad_last(x, n):
    return jnp.concatenate([x, jnp.zeros((*x.shape[:-1], n), x.dtype)], axis=-1)


def _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend_type, return_onesided,
              scaling, axis, mode, boundary=None, padded=False):
    """(freqs, times, result): the STFT of x (mode "stft") or the per-segment cross
    spectral density of x and y (y None: x with itself), frequencies on `axis`."""
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                         f"{list(_BOUNDARIES)}")
    x = jnp.asarray(x)
    axis = concrete_int(axis, "axis of windowed-FFT")
    if not -x.ndim <= axis < max(x.ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    axis = axis % max(x.ndim, 1)
    if y is None:
        (x,) = _inexact("spectral_helper", x)
        yv = x
        outer = x.shape[:axis] + x.shape[axis + 1:]
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        x, yv = _inexact("spectral_helper", x, jnp.asarray(y))
        if x.ndim != yv.ndim:
            raise ValueError(f"two-arguments must have the same rank ({x.ndim} vs "
                             f"{yv.ndim}).")
        try:
            outer = jnp.broadcast_shapes(x.shape[:axis] + x.shape[axis + 1:],
                                         yv.shape[:axis] + yv.shape[axis + 1:])
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    out_dtype = _complex_dtype(x.dtype)
    freq_dtype = jnp.finfo(out_dtype).dtype
    if nperseg is not None:
        nperseg = concrete_int(nperseg, "nperseg of windowed-FFT")
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg = _segments_window(window, nperseg, x.shape[axis], x.dtype)
    noverlap = nperseg // 2 if noverlap is None else concrete_int(noverlap,
                                                                    "noverlap of windowed-FFT")
    nfft = nperseg if nfft is None else concrete_int(nfft, "nfft of windowed-FFT")
    if y is None and x.size == 0:
        return (jnp.zeros(x.shape, freq_dtype), jnp.zeros(x.shape, freq_dtype),
                jnp.zeros(x.shape, out_dtype))
    if y is not None and (x.size == 0 or yv.size == 0):
        shape = outer[:axis] + (min(x.shape[axis], yv.shape[axis]),) + outer[axis:]
        return (jnp.zeros(shape, freq_dtype), jnp.zeros(shape, freq_dtype),
                jnp.zeros(shape, out_dtype))
    x = jnp.moveaxis(x, axis, -1)
    if y is not None:
        if yv.ndim > 1:
            yv = jnp.moveaxis(yv, axis, -1)
        if x.shape[-1] < yv.shape[-1]:
            x = _zero_pad_last(x, yv.shape[-1] - x.shape[-1])
        elif x.shape[-1] > yv.shape[-1]:
            yv = _zero_pad_last(yv, x.shape[-1] - yv.shape[-1])
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    if boundary is not None:
        x = _BOUNDARIES[boundary](x, nperseg // 2, axis=-1)
        if y is not None:
            yv = _BOUNDARIES[boundary](yv, nperseg // 2, axis=-1)
    if padded:      # a whole number of segments: length nperseg + k * step
        extra = (-(x.shape[-1] - nperseg) % step) % nperseg
        x = _zero_pad_last(x, extra)
        if y is not None:
            yv = _zero_pad_last(yv, extra)
    if isinstance(detrend_type, str):
        def detrend_fn(d):
            return detrend(d, axis=-1, type=detrend_type)
    elif callable(detrend_type):
        if axis != -1:    # (axis is non-negative here: JAX wraps every callable)
            def detrend_fn(d):
                return jnp.moveaxis(detrend_type(jnp.moveaxis(d, axis, -1)), -1, axis)
        else:
            detrend_fn = detrend_type
    elif not detrend_type:
        def detrend_fn(d):
            return d
    else:
        raise ValueError(f"Unsupported detrend type: {detrend_type}")
    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = jnp.sqrt(scale)
    scale = jnp.asarray(scale)
    scale = scale.astype(_complex_dtype(scale.dtype))
    twosided = not return_onesided
    if return_onesided and (jnp.iscomplexobj(x) or (y is not None and jnp.iscomplexobj(yv))):
        twosided = True
        warnings.warn("Input data is complex, switching to return_onesided=False")
    freqs = (jnp.fft.fftfreq(nfft, 1 / fs, dtype=freq_dtype) if twosided
             else jnp.fft.rfftfreq(nfft, 1 / fs, dtype=freq_dtype))
    result = _windowed_ffts(x, win, detrend_fn, nperseg, noverlap, nfft, twosided)
    if y is not None:
        result = jnp.conjugate(result) * _windowed_ffts(yv, win, detrend_fn, nperseg,
                                                        noverlap, nfft, twosided)
    elif mode == "psd":
        result = jnp.conjugate(result) * result
    result = result * scale
    if not twosided and mode == "psd":     # fold the negative frequencies in
        result = result.at[..., 1:None if nfft % 2 else -1].mul(2)
    time = jnp.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, step,
                      dtype=freq_dtype) / fs
    if boundary is not None:
        time = time - (nperseg / 2) / fs
    result = result.astype(out_dtype)
    if y is None and mode != "stft":
        result = result.real
    return freqs, time, jnp.moveaxis(result, -1, axis)


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1):
    """(freqs, times, Zxx): the short-time Fourier transform of x along `axis`.
    JAX: jax.scipy.signal.stft."""
    return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                     "spectrum", axis, "stft", boundary, padded)


def _median_bias(n):
    k = _onp.arange(2.0, n, 2)
    return 1 + _onp.sum(1.0 / (k + 1) - 1.0 / k)


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1,
        average="mean"):
    """(freqs, Pxy): the cross power spectral density of x and y by Welch's method (the
    segments' spectra averaged). JAX: jax.scipy.signal.csd."""
    freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                              return_onesided, scaling, axis, "psd")
    if y is not None:
        pxy = pxy + 0j
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                bias = jnp.asarray(_median_bias(pxy.shape[-1])).astype(pxy.dtype)
                if jnp.iscomplexobj(pxy):
                    pxy = (jnp.median(pxy.real, axis=-1)
                           + 1j * jnp.median(pxy.imag, axis=-1))
                else:
                    pxy = jnp.median(pxy, axis=-1)
                pxy = pxy / bias
            elif average == "mean":
                pxy = pxy.mean(axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = pxy.reshape(pxy.shape[:-1])
    return freqs, pxy


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):
    """(freqs, Pxx): the power spectral density of x by Welch's method.
    JAX: jax.scipy.signal.welch."""
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, pxx.real


def _overlap_add(frames, step):
    """Sum of the (..., nframes, seglen) frames, frame k starting at k * step."""
    *batch, nframes, seglen = frames.shape
    out = jnp.zeros((*batch, step * (nframes - 1) + seglen), frames.dtype)
    for k in range(nframes):
        out = out.at[..., k * step:k * step + seglen].add(frames[..., k, :])
    return out


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2):
    """(times, x): the inverse short-time Fourier transform (overlap-add of the inverse
    FFTs, normalized by the summed squared window). JAX: jax.scipy.signal.istft."""
    Zxx = jnp.asarray(Zxx)
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    nd = Zxx.ndim
    for ax in (freq_axis, time_axis):
        if not -nd <= ax < nd:
            raise ValueError(f"axis {ax} is out of bounds for array of dimension {nd}")
    freq_axis, time_axis = freq_axis % nd, time_axis % nd
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = Zxx.astype(_complex_dtype(Zxx.dtype))
    n_default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]
    nperseg = concrete_int(nperseg or n_default, "nperseg: segment length of STFT")
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft_n = n_default + (1 if input_onesided and nperseg == n_default + 1 else 0)
    else:
        nfft_n = concrete_int(nfft, "nfft of STFT")
    if nfft_n < nperseg:
        raise ValueError(f"FFT length ({nfft_n}) must be longer than nperseg ({nperseg}).")
    noverlap = concrete_int(noverlap or nperseg // 2, "noverlap of STFT")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    if time_axis != nd - 1 or freq_axis != nd - 2:
        outer = tuple(i for i in range(nd) if i not in (time_axis, freq_axis))
        Zxx = jnp.transpose(Zxx, outer + (freq_axis, time_axis))
    # As JAX: the inverse FFT takes the given `nfft` (None: its own default length).
    inv = jnp.fft.irfft if input_onesided else jnp.fft.ifft
    xsubs = inv(Zxx, axis=-2, n=nfft)[..., :nperseg, :]     # (..., frame, nframes)
    if isinstance(window, (str, tuple)):
        win = jnp.asarray(_named_window(window, nperseg)).astype(xsubs.dtype)
    else:
        win = jnp.asarray(window)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg:
            raise ValueError(f"window must have length of {nperseg}")
    xsubs = xsubs * win.sum()      # undoes stft's 'spectrum' scaling
    wcol = win[:, None]
    x = _overlap_add(jnp.swapaxes(xsubs * wcol, -2, -1), step)
    wsq = jnp.broadcast_to(wcol * wcol, (nperseg, xsubs.shape[-1]))
    norm = _overlap_add(jnp.swapaxes(wsq, -2, -1), step)
    if boundary:
        half = nperseg // 2
        x = x[..., half:-half]
        norm = norm[..., half:-half]
    x = x / jnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != nd - 1:
        x = jnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    time = jnp.arange(x.shape[0], dtype=jnp.finfo(x.dtype).dtype) / fs
    return time, x

