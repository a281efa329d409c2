"""The special matrices of `mjax.scipy.linalg` (block_diag, toeplitz, hankel, circulant,
hilbert, fiedler, companion, fiedler_companion, leslie, dft, helmert, pascal, invpascal,
hadamard, invhilbert, convolution_matrix): compositions of jnp, batched over leading axes
as in JAX. JAX: jax.scipy.linalg."""
from __future__ import annotations

import math
import operator

import numpy as _onp

from mjax.specs import dtypes
from mjax import numpy as jnp


def _inexact(fname, *xs):
    return jnp._promote(f"scipy.linalg.{fname}", *[jnp.asarray(x) for x in xs],
                        inexact=True, broadcast=False)


def block_diag(*arrs):
    """The block-diagonal matrix of the given (at most 2-D) arrays."""
    if not arrs:
        return jnp.zeros((1, 0))
    arrs = [jnp.asarray(a) for a in arrs]
    arrs = jnp._promote("scipy.linalg.block_diag", *arrs, broadcast=False)
    arrs = [jnp.atleast_2d(a) for a in arrs]
    bad = [a.ndim for a in arrs if a.ndim > 2]
    if bad:
        raise ValueError(f"Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                         f"dimensions, got {bad}")
    acc = arrs[0]
    for a in arrs[1:]:
        r, c = a.shape
        top = jnp.pad(acc, ((0, 0), (0, c)))
        bottom = jnp.pad(a, ((0, 0), (acc.shape[1], 0)))
        acc = jnp.concatenate([top, bottom], axis=0)
    return acc


def _pick(vals, index):
    """vals[..., index] for a static integer index matrix."""
    return jnp.take(vals, jnp.asarray(index, dtype=_onp.int32), axis=-1)


def _batch_pair(c, r):
    batch = jnp.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    return (jnp.broadcast_to(c, batch + c.shape[-1:]), jnp.broadcast_to(r, batch + r.shape[-1:]))


def toeplitz(c, r=None):
    """T[i, j] = c[i - j] below the diagonal and r[j - i] above (r[0] is ignored)."""
    c = jnp.atleast_1d(jnp.asarray(c))
    r = jnp.conj(c) if r is None else jnp.atleast_1d(jnp.asarray(r))
    c, r = jnp._promote("scipy.linalg.toeplitz", c, r, broadcast=False)
    c, r = _batch_pair(c, r)
    m, n = c.shape[-1], r.shape[-1]
    vals = jnp.concatenate([jnp.flip(r[..., 1:], axis=-1), c], axis=-1)
    i, j = _onp.ogrid[:m, :n]
    return _pick(vals, (n - 1) + i - j)


def hankel(c, r=None):
    """H[i, j] = c[i + j] while i + j < len(c), then r[i + j - len(c) + 1]."""
    c = jnp.asarray(c)
    r = jnp.zeros_like(c) if r is None else jnp.asarray(r)
    if c.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    c, r = jnp._promote("scipy.linalg.hankel", c, r, broadcast=False)
    c, r = _batch_pair(c, r)
    m, n = c.shape[-1], r.shape[-1]
    vals = jnp.concatenate([c, r[..., 1:]], axis=-1)
    i, j = _onp.ogrid[:m, :n]
    return _pick(vals, i + j)


def circulant(c):
    """C[i, j] = c[(i - j) mod n]: each column a cyclic shift of c."""
    c = jnp.atleast_1d(jnp.asarray(c))
    n = c.shape[-1]
    i, j = _onp.ogrid[:n, :n]
    return _pick(c, (i - j) % n)


def hilbert(n):
    """H[i, j] = 1 / (i + j + 1)."""
    a = jnp.arange(n, dtype=jnp.result_type(float))[:, None]
    return 1 / (a + a.T + 1)


def fiedler(a):
    """F[i, j] = |a[i] - a[j]|."""
    a = jnp.atleast_1d(jnp.asarray(a))
    return jnp.abs(a[..., :, None] - a[..., None, :])


def companion(a):
    """Companion matrix of the polynomial with coefficients a (highest degree first)."""
    (a,) = _inexact("companion", jnp.atleast_1d(jnp.asarray(a)))
    n = a.shape[-1]
    if n < 2:
        raise ValueError(f"The length of `a` along the last axis must be at least 2; got "
                         f"shape {a.shape}.")
    first = -a[..., 1:] / a[..., :1]
    sub = jnp.broadcast_to(jnp.eye(n - 2, n - 1, dtype=a.dtype), a.shape[:-1] + (n - 2, n - 1))
    return jnp.concatenate([first[..., None, :], sub], axis=-2)


def leslie(f, s):
    """Leslie matrix: fecundities f in the first row, survival rates s below the diagonal."""
    f, s = jnp.atleast_1d(jnp.asarray(f)), jnp.atleast_1d(jnp.asarray(s))
    n = f.shape[-1]
    if n < 2:
        raise ValueError(f"The length of f along the last axis must be at least 2; got shape "
                         f"{f.shape}.")
    if s.shape[-1] != n - 1:
        raise ValueError(f"Incorrect lengths for f and s. The length of s along the last axis "
                         f"must be one less than the length of f; got f shape {f.shape} and "
                         f"s shape {s.shape}.")
    f, s = jnp._promote("scipy.linalg.leslie", f, s, broadcast=False)
    f, s = _batch_pair(f, s)
    sub = s[..., :, None] * jnp.eye(n - 1, n, dtype=s.dtype)
    return jnp.concatenate([f[..., None, :], sub], axis=-2)


def dft(n, scale=None, *, dtype=None):
    """The n x n discrete Fourier transform matrix, optionally scaled by 1/sqrt(n) or 1/n."""
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    dtype = jnp.result_type(complex) if dtype is None else _onp.dtype(dtype)
    if dtype.kind != "c":
        raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    k = _onp.arange(n)
    m = _onp.exp(-2j * _onp.pi * _onp.outer(k, k) / max(n, 1))
    if scale == "sqrtn":
        m = m / _onp.sqrt(n)
    elif scale == "n":
        m = m / n
    return jnp.asarray(m.astype(dtype))


def helmert(n, full=False):
    """Helmert matrix: orthonormal rows orthogonal to the constant vector (and, with
    full=True, that vector itself as the first row)."""
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i = _onp.arange(1, n)[:, None]
    j = _onp.arange(n)[None, :]
    h = _onp.where(j < i, 1.0, _onp.where(j == i, -i, 0.0)) / _onp.sqrt(i * (i + 1.0))
    if full:
        h = _onp.concatenate([_onp.full((1, n), 1 / _onp.sqrt(n)), h], axis=0)
    return jnp.asarray(h, dtype=jnp.result_type(float))


def convolution_matrix(a, n, mode="full"):
    """The matrix C with C @ v == convolve(a, v, mode) for v of length n.
    JAX: jax.scipy.linalg.convolution_matrix."""
    a = jnp.asarray(a)
    n = operator.index(n)
    if a.ndim != 1:
        raise ValueError("convolution_matrix expects a one-dimensional input array")
    if n <= 0:
        raise ValueError(f"n must be a positive integer, got {n}")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of ('full', 'same', 'valid'), got {mode!r}")
    m = a.shape[0]
    rows = m + n - 1
    # Column j is a shifted down by j: C[i, j] = a[i - j] where 0 <= i - j < m.
    k = _onp.arange(rows)[:, None] - _onp.arange(n)[None, :]
    inside = (k >= 0) & (k < m)
    full = jnp.where(jnp.asarray(inside), a[jnp.asarray(_onp.clip(k, 0, m - 1))],
                     jnp.zeros((), a.dtype))
    if mode == "full":
        return full
    if mode == "same":
        start = (min(n, m) - 1) // 2
        return full[start:start + max(m, n)]
    start = min(m, n) - 1
    return full[start:start + max(m, n) - min(m, n) + 1]


def _float_matrix(values):
    return jnp.asarray(_onp.asarray(values, dtype=_onp.float64).astype(dtypes.default_float()))


def pascal(n, kind=None):
    """The n x n Pascal matrix: 'symmetric' (default), 'lower' or 'upper' (exact binomial
    coefficients, as floats). JAX: jax.scipy.linalg.pascal."""
    n = operator.index(n)
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"Expected kind to be one of 'symmetric', 'lower', or 'upper'; "
                         f"got {kind}")
    i, j = _onp.meshgrid(_onp.arange(n), _onp.arange(n), indexing="ij")
    if kind == "symmetric":
        vals = [[math.comb(int(a + b), int(a)) for a, b in zip(r1, r2)] for r1, r2 in zip(i, j)]
    else:
        vals = [[math.comb(int(a), int(b)) for a, b in zip(r1, r2)] for r1, r2 in zip(i, j)]
        if kind == "upper":
            vals = _onp.asarray(vals).T
    return _float_matrix(vals)


def invpascal(n, kind=None):
    """The inverse of pascal(n, kind). JAX: jax.scipy.linalg.invpascal."""
    n = operator.index(n)
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"Expected kind to be one of 'symmetric', 'lower', or 'upper'; "
                         f"got {kind}")
    # inv(lower) has entries (-1)^(i-j) C(i, j); inv(symmetric) = inv(upper) @ inv(lower).
    low = _onp.array([[(-1) ** (a - b) * math.comb(a, b) if a >= b else 0 for b in range(n)]
                      for a in range(n)], dtype=object)
    if kind == "lower":
        vals = low
    elif kind == "upper":
        vals = low.T
    else:
        vals = low.T.dot(low)
    return _float_matrix(vals.astype(_onp.float64))


def hadamard(n, dtype=int):
    """The n x n Sylvester Hadamard matrix, n a power of 2. JAX: jax.scipy.linalg.hadamard."""
    n = operator.index(n)
    if n < 1 or n & (n - 1):
        raise ValueError("n must be an positive integer, and n must be a power of 2")
    h = _onp.ones((1, 1), dtype=_onp.int64)
    while h.shape[0] < n:
        h = _onp.block([[h, h], [h, -h]])
    return jnp.asarray(h, dtype=dtype)


def invhilbert(n):
    """The inverse of the n x n Hilbert matrix (exact rationals, as floats).
    JAX: jax.scipy.linalg.invhilbert."""
    n = operator.index(n)
    vals = [[(-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1)
             * math.comb(n + j, n - i - 1) * math.comb(i + j, i) ** 2 for j in range(n)]
            for i in range(n)]
    return _float_matrix(_onp.asarray(vals, dtype=_onp.float64))


def _fiedler_one(a):
    n = a.shape[0] - 1
    if n == 0:
        return jnp.zeros((0, 0), a.dtype)
    a = a / a[0]
    if n == 1:
        return -a[1:].reshape(1, 1)
    i = jnp.arange(n)[:, None]
    j = jnp.arange(n)[None, :]
    even, odd = i % 2 == 0, i % 2 == 1
    conds = [(i == 0) & (j == 0), (i == 1) & (j == 0), (j == i + 1) & even,
             (j == i + 2) & even, (j == i - 1) & even & (i >= 2), (j == i - 2) & odd & (i >= 3)]
    one = jnp.ones((), a.dtype)
    vals = [-a[1], one, -a[jnp.minimum(i + 2, n)], one, -a[jnp.minimum(i + 1, n)], one]
    return jnp.select(conds, vals, default=jnp.zeros((), a.dtype))


def fiedler_companion(a):
    """The Fiedler companion matrix (pentadiagonal) of the polynomial with coefficients
    `a` (highest first), batched over leading axes. JAX: jax.scipy.linalg.fiedler_companion."""
    (a,) = jnp._promote("fiedler_companion", jnp.asarray(a), inexact=True, broadcast=False)
    a = jnp.atleast_1d(a)
    if a.shape[-1] == 0:
        raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero "
                         f"length, but got an array of shape {a.shape}.")
    return jnp.vectorize(_fiedler_one, signature="(n)->(m,m)")(a)
