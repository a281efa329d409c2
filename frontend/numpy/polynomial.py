"""Polynomials: `polyval` (multiply-adds), `polyadd`/`polysub`/`polymul`/`polydiv`,
`polyder`/`polyint`, `polyfit`, `roots`, `poly`, `vander`; `convolve` and `correlate`
come from convolution.py. JAX: jnp.polyval and the others of the same names.
"""
from __future__ import annotations

import operator

import numpy as _onp

from mjax.numpy import linalg, reductions
from mjax.numpy.arguments import check_arraylike, concrete
from mjax.numpy.conversion import asarray
from mjax.numpy.convolution import convolve, correlate  # noqa: F401  (jnp's names)
from mjax.numpy.creation import arange, eye, full, ones, ones_like, zeros, zeros_like
from mjax.numpy.elementwise import maximum, power, sqrt, true_divide, where_xy
from mjax.numpy.products import dot, outer
from mjax.numpy.promotion import broadcast_shapes, promote, result_type
from mjax.numpy.reductions import argmin
from mjax.numpy.scalar_types import finfo
from mjax.numpy.shaping import atleast_1d, concatenate, roll, stack, trim_zeros
from mjax.numpy.sorting import argsort
from mjax.tracing.staging import jit_eagerly


def vander(x, N=None, increasing=False):
    """Columns of powers of x (decreasing unless increasing=True). JAX: jnp.vander."""
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    N = x.shape[0] if N is None else operator.index(N)
    if N < 0:
        raise ValueError("N must be nonnegative")
    powers = arange(N, dtype=x.dtype)
    if not increasing:
        powers = powers[::-1]
    return power(x[:, None], powers)


def polyadd(a1, a2):
    """Sum of two polynomials (highest power first): the shorter one (along the leading
    axis) is added to the last entries of the longer, so 2-d arrays hold polynomials
    along axis 0 as in JAX. JAX: jnp.polyadd."""
    a1, a2 = promote("polyadd", atleast_1d(asarray(a1)), atleast_1d(asarray(a2)),
                     broadcast=False)
    if a2.shape[0] <= a1.shape[0]:
        return a1.at[-a2.shape[0]:].add(a2)
    return a2.at[-a1.shape[0]:].add(a1)


def polysub(a1, a2):
    """Difference of two polynomials. JAX: jnp.polysub."""
    a1, a2 = promote("polysub", atleast_1d(asarray(a1)), atleast_1d(asarray(a2)),
                     broadcast=False)
    return polyadd(a1, -a2)


def polymul(a1, a2, *, trim_leading_zeros=False):
    """Product of two polynomials. JAX: jnp.polymul."""
    a1, a2 = atleast_1d(asarray(a1)), atleast_1d(asarray(a2))
    if trim_leading_zeros:
        a1, a2 = trim_zeros(a1, "f"), trim_zeros(a2, "f")
    if a1.shape[0] == 0:
        a1 = asarray([0], a1.dtype)
    if a2.shape[0] == 0:
        a2 = asarray([0], a2.dtype)
    return convolve(a1, a2, mode="full")


def polyder(p, m=1):
    """The m-th derivative of a polynomial. JAX: jnp.polyder."""
    (p,) = promote("polyder", p, inexact=True)   # (JAX's result is inexact, NumPy's not)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    n = p.shape[0]
    powers = arange(n - 1, 0, -1)
    out = p[:-1] * powers.astype(result_type(p, powers))
    return polyder(out, m - 1)


@jit_eagerly("p", "k")
def polyint(p, m=1, k=None):
    """The m-th antiderivative of a polynomial (integration constants k): JAX's one
    division of p and k by the products of the exponents each coefficient went through.
    JAX: jnp.polyint."""
    m = operator.index(m)
    k = 0 if k is None else k
    check_arraylike("polyint", p, k)
    p, k = promote("polyint", p, k, inexact=True, broadcast=False)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = atleast_1d(k)
    if k.shape[0] == 1:
        k = full((m,), k[0])
    if k.shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    grid = (arange(p.shape[0] + m, dtype=p.dtype)[None] -
            arange(m, dtype=p.dtype)[:, None])
    coeff = reductions.prod(maximum(1, grid), axis=0)[::-1]
    return true_divide(concatenate((p, k)), coeff)


def poly(seq_of_zeros):
    """Coefficients of the monic polynomial with the given roots (or a matrix's
    characteristic polynomial). JAX: jnp.poly."""
    a = atleast_1d(asarray(seq_of_zeros))
    if a.ndim == 2 and a.shape[0] == a.shape[1] and a.shape[0] > 0:
        a = linalg.eigvals(a)
    elif a.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dtype = result_type(a, float)
    out = ones((1,), dtype)
    for i in range(a.shape[0]):
        out = convolve(out, stack([ones((), dtype), -a[i].astype(dtype)]),
                           mode="full")
    return out


@jit_eagerly("p", "x")
def polyval(p, x, *, unroll=16):
    """p[0] * x**(n-1) + ... + p[n-1], by Horner's rule over the static length of p. The
    coefficients run along p's first axis; its other axes broadcast with x (as JAX: p of
    shape (n, 3) gives 3 polynomials). Called eagerly it is one compiled program, as JAX
    jits it: the CPU fuses each step's multiply-add, which op by op rounds twice."""
    p, x = promote("polyval", p, x, broadcast=False)
    if p.ndim == 0:
        raise ValueError("mjax.numpy.polyval: p must be at least 1-d, got a scalar")
    # (a strong zero, as JAX's lax.full_like with a dtype: y is never weak)
    y = zeros(broadcast_shapes(p.shape[1:], x.shape), x.dtype)
    for k in range(p.shape[0]):
        y = y * x + p[k]
    return y


def _complex_of(dtype):
    return result_type(dtype, _onp.complex64)


def _companion_roots(p):
    """The eigenvalues of p's companion matrix, for p[0] != 0: p's roots."""
    n = p.shape[0] - 1
    if n < 1:
        return zeros((0,), _complex_of(p.dtype))
    first_row = (-p[1:] / p[0])[None, :]
    below = eye(n - 1, n, dtype=p.dtype)        # ones on the subdiagonal
    return linalg.eigvals(concatenate([first_row, below], axis=0))


def roots(p, *, strip_zeros=True):
    """The (complex) roots of the polynomial with coefficients p, highest power first.
    strip_zeros=True drops leading zeros (needs concrete p); with False the roots that
    leading zeros remove are NaN, at the end. JAX: jnp.roots."""
    p = atleast_1d(asarray(p))
    (p,) = promote("roots", p, inexact=True)
    if p.ndim != 1:
        raise ValueError(f"mjax.numpy.roots: input must be a rank-1 array, got shape "
                         f"{p.shape}")
    if p.shape[0] < 2:
        return zeros((0,), _complex_of(p.dtype))
    if strip_zeros:
        host = concrete(p, "roots", "to use it under jit pass strip_zeros=False (then "
                         "leading zeros give NaN roots)")
        nonzero = _onp.flatnonzero(host)
        lead = int(nonzero[0]) if nonzero.size else host.shape[0]
        return _companion_roots(p[lead:])
    n = p.shape[0]
    is_zero = p == 0
    lead = where_xy(reductions.all(is_zero), n, argmin(is_zero))
    # Roll the leading zeros to the end (an all-zero p becomes ones, so eigvals stays
    # finite): the companion matrix then has `lead` extra zero roots, which become NaN.
    shifted = roll(where_xy(lead == n, ones_like(p), p), -lead)
    found = _companion_roots(shifted)
    order = argsort(found == 0, stable=True)    # zero roots last
    found = found[order]
    keep = arange(n - 1) < n - 1 - lead
    return where_xy(keep, found, asarray(complex(_onp.nan, _onp.nan), found.dtype))


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree `deg` through (x, y) (y may hold K columns),
    highest power first. full=True adds (residuals, rank, singular values, rcond);
    cov=True (or 'unscaled') adds the coefficients' covariance. JAX: jnp.polyfit."""
    import operator
    x, y = asarray(x), asarray(y)
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
        rcond = x.shape[0] * float(finfo(result_type(x, float)).eps)
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        (w,) = promote("polyfit", w, inexact=True)
        if w.ndim != 1:
            raise TypeError(f"mjax.numpy.polyfit: expected a 1-d array for weights, got "
                            f"shape {w.shape}")
        if w.shape[0] != y.shape[0]:
            raise TypeError("mjax.numpy.polyfit: expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    lhs, rhs = promote("polyfit", lhs, rhs, inexact=True, broadcast=False)
    # Scaling the columns to unit norm improves the conditioning (as NumPy does).
    scale = sqrt(reductions.sum(lhs * lhs, axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, asarray(rcond)
    if cov:
        base = linalg.inv(dot(lhs.T, lhs)) / outer(scale, scale)
        if cov == "unscaled":
            fac = asarray(1.0, base.dtype)
        else:
            if x.shape[0] <= order:
                raise ValueError("mjax.numpy.polyfit: the number of data points must exceed "
                                 "order to scale the covariance matrix")
            fac = resids / (x.shape[0] - order)
        if y.ndim == 1:
            return c, base * fac
        return c, base[:, :, None] * atleast_1d(fac)[None, None, :]
    return c


def polydiv(u, v, *, trim_leading_zeros=False):
    """(quotient, remainder) of polynomial long division u / v. The remainder keeps u's
    length (leading zeros) unless trim_leading_zeros=True, which needs concrete values.
    JAX: jnp.polydiv."""
    u, v = promote("polydiv", asarray(u), asarray(v), inexact=True,
                        broadcast=False)
    if u.ndim != 1 or v.ndim != 1:
        raise ValueError(f"mjax.numpy.polydiv: u and v must be 1-d, got shapes {u.shape} "
                         f"and {v.shape}")
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = zeros((max(m - n + 1, 1),), u.dtype)
    for k in range(m - n + 1):
        d = scale * u[k]
        q = q.at[k].set(d)
        u = u.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        host = concrete(u, "polydiv", "trim_leading_zeros=True needs concrete values")
        tol = _onp.sqrt(float(finfo(u.dtype).eps))
        big = _onp.flatnonzero(_onp.abs(host) >= tol)
        u = u[int(big[0]):] if big.size else u[u.shape[0]:]
    return q, u
