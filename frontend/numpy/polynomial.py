"""`polyval`, `convolve` and `correlate`, from multiply-adds and one `dot`.

convolve gathers the sliding windows of the zero-padded input (a static index table) and
contracts them with the reversed kernel. JAX: jnp.polyval, jnp.convolve, jnp.correlate.
"""
from __future__ import annotations

import numpy as _onp

from mjax import numpy as jnp


def polyval(p, x, *, unroll=16):
    """p[0] * x**(n-1) + ... + p[n-1], by Horner's rule over the static length of p."""
    p, x = jnp._promote("polyval", p, x, broadcast=False)
    if p.ndim != 1:
        raise ValueError(f"mjax.numpy.polyval: p must be 1-d, got shape {p.shape}")
    y = jnp.zeros_like(x)
    for k in range(p.shape[0]):
        y = y * x + p[k]
    return y


def _full_convolution(a, v):
    """The full discrete convolution of 1-d a and v, length len(a) + len(v) - 1."""
    n, m = a.shape[0], v.shape[0]
    padded = jnp.pad(a, (m - 1, m - 1))
    # windows[i, j] = padded[i + j]; out[i] = sum_j padded[i + j] * v[m - 1 - j]
    windows = padded[_onp.arange(n + m - 1)[:, None] + _onp.arange(m)[None, :]]
    return jnp.dot(windows, jnp.flip(v, 0))


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of two 1-d arrays; mode full, same or valid."""
    a, v = jnp._promote("convolve", a, v, broadcast=False)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"mjax.numpy.convolve: a and v must be 1-d, got shapes {a.shape} "
                         f"and {v.shape}")
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError("mjax.numpy.convolve: inputs cannot be empty")
    if v.shape[0] > a.shape[0]:
        a, v = v, a                              # convolution commutes; NumPy swaps too
    n, m = a.shape[0], v.shape[0]
    full = _full_convolution(a, v)
    if mode == "full":
        return full
    if mode == "same":
        start = (m - 1) // 2
        return full[start:start + n]
    if mode == "valid":
        return full[m - 1:n]
    raise ValueError(f"mjax.numpy.convolve: mode must be 'full', 'same' or 'valid', got "
                     f"{mode!r}")


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of two 1-d arrays: convolve(a, conj(v[::-1]))."""
    a, v = jnp._promote("correlate", a, v, broadcast=False)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"mjax.numpy.correlate: a and v must be 1-d, got shapes "
                         f"{a.shape} and {v.shape}")
    return convolve(a, jnp.conj(jnp.flip(v, 0)), mode)
