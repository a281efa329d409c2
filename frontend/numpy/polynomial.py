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


def _complex_of(dtype):
    return jnp.result_type(dtype, _onp.complex64)


def _companion_roots(p):
    """The eigenvalues of p's companion matrix, for p[0] != 0: p's roots."""
    n = p.shape[0] - 1
    if n < 1:
        return jnp.zeros((0,), _complex_of(p.dtype))
    first_row = (-p[1:] / p[0])[None, :]
    below = jnp.eye(n - 1, n, dtype=p.dtype)        # ones on the subdiagonal
    return jnp.linalg.eigvals(jnp.concatenate([first_row, below], axis=0))


def roots(p, *, strip_zeros=True):
    """The (complex) roots of the polynomial with coefficients p, highest power first.
    strip_zeros=True drops leading zeros (needs concrete p); with False the roots that
    leading zeros remove are NaN, at the end. JAX: jnp.roots."""
    p = jnp.atleast_1d(jnp.asarray(p))
    (p,) = jnp._promote("roots", p, inexact=True)
    if p.ndim != 1:
        raise ValueError(f"mjax.numpy.roots: input must be a rank-1 array, got shape "
                         f"{p.shape}")
    if p.shape[0] < 2:
        return jnp.zeros((0,), _complex_of(p.dtype))
    if strip_zeros:
        from mjax.numpy.extras import _concrete
        host = _concrete(p, "roots", "to use it under jit pass strip_zeros=False (then "
                         "leading zeros give NaN roots)")
        nonzero = _onp.flatnonzero(host)
        lead = int(nonzero[0]) if nonzero.size else host.shape[0]
        return _companion_roots(p[lead:])
    n = p.shape[0]
    is_zero = p == 0
    lead = jnp.where(jnp.all(is_zero), n, jnp.argmin(is_zero))
    # Roll the leading zeros to the end (an all-zero p becomes ones, so eigvals stays
    # finite): the companion matrix then has `lead` extra zero roots, which become NaN.
    shifted = jnp.roll(jnp.where(lead == n, jnp.ones_like(p), p), -lead)
    found = _companion_roots(shifted)
    order = jnp.argsort(found == 0, stable=True)    # zero roots last
    found = found[order]
    keep = jnp.arange(n - 1) < n - 1 - lead
    return jnp.where(keep, found, jnp.asarray(complex(_onp.nan, _onp.nan), found.dtype))


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree `deg` through (x, y) (y may hold K columns),
    highest power first. full=True adds (residuals, rank, singular values, rcond);
    cov=True (or 'unscaled') adds the coefficients' covariance. JAX: jnp.polyfit."""
    import operator
    x, y = jnp.asarray(x), jnp.asarray(y)
    deg = operator.index(deg)
    if deg < 0:
        raise ValueError("mjax.numpy.polyfit: expected deg >= 0")
    if x.ndim != 1:
        raise TypeError(f"mjax.numpy.polyfit: expected 1D vector for x, got shape {x.shape}")
    if x.shape[0] == 0:
        raise TypeError("mjax.numpy.polyfit: expected non-empty vector for x")
    if y.ndim not in (1, 2):
        raise TypeError(f"mjax.numpy.polyfit: expected 1D or 2D array for y, got shape "
                        f"{y.shape}")
    if x.shape[0] != y.shape[0]:
        raise TypeError(f"mjax.numpy.polyfit: expected x and y to have same length, got "
                        f"{x.shape[0]} and {y.shape[0]}")
    order = deg + 1
    if rcond is None:
        rcond = x.shape[0] * float(jnp.finfo(jnp.result_type(x, float)).eps)
    lhs = jnp.vander(x, order)
    rhs = y
    if w is not None:
        (w,) = jnp._promote("polyfit", w, inexact=True)
        if w.ndim != 1:
            raise TypeError(f"mjax.numpy.polyfit: expected a 1-d array for weights, got "
                            f"shape {w.shape}")
        if w.shape[0] != y.shape[0]:
            raise TypeError("mjax.numpy.polyfit: expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    lhs, rhs = jnp._promote("polyfit", lhs, rhs, inexact=True, broadcast=False)
    # Scaling the columns to unit norm improves the conditioning (as NumPy does).
    scale = jnp.sqrt(jnp.sum(lhs * lhs, axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = jnp.linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, jnp.asarray(rcond)
    if cov:
        base = jnp.linalg.inv(jnp.dot(lhs.T, lhs)) / jnp.outer(scale, scale)
        if cov == "unscaled":
            fac = jnp.asarray(1.0, base.dtype)
        else:
            if x.shape[0] <= order:
                raise ValueError("mjax.numpy.polyfit: the number of data points must exceed "
                                 "order to scale the covariance matrix")
            fac = resids / (x.shape[0] - order)
        if y.ndim == 1:
            return c, base * fac
        return c, base[:, :, None] * jnp.atleast_1d(fac)[None, None, :]
    return c


def polydiv(u, v, *, trim_leading_zeros=False):
    """(quotient, remainder) of polynomial long division u / v. The remainder keeps u's
    length (leading zeros) unless trim_leading_zeros=True, which needs concrete values.
    JAX: jnp.polydiv."""
    u, v = jnp._promote("polydiv", jnp.asarray(u), jnp.asarray(v), inexact=True,
                        broadcast=False)
    if u.ndim != 1 or v.ndim != 1:
        raise ValueError(f"mjax.numpy.polydiv: u and v must be 1-d, got shapes {u.shape} "
                         f"and {v.shape}")
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = jnp.zeros((max(m - n + 1, 1),), u.dtype)
    for k in range(m - n + 1):
        d = scale * u[k]
        q = q.at[k].set(d)
        u = u.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        from mjax.numpy.extras import _concrete
        host = _concrete(u, "polydiv", "trim_leading_zeros=True needs concrete values")
        tol = _onp.sqrt(float(jnp.finfo(u.dtype).eps))
        big = _onp.flatnonzero(_onp.abs(host) >= tol)
        u = u[int(big[0]):] if big.size else u[u.shape[0]:]
    return q, u
