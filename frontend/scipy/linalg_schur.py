"""`mjax.scipy.linalg`'s functions built on the Schur form: rsf2csf (real to complex Schur
form by Givens rotations), funm (Parlett's recurrence on the complex Schur form) and
solve_sylvester (Bartels-Stewart, or an eigendecomposition), as JAX 0.10.2's. Like JAX's,
they need LAPACK's Schur and eigen solvers (CPU)."""
from __future__ import annotations

import numpy as _onp

from mjax import lax
from mjax import numpy as jnp
from mjax.lax import linalg as lax_linalg
from mjax.numpy import linalg as _np_linalg
from mjax.tracing.staging import jit_eagerly


def _complex(fname, *xs):
    """xs promoted together to their common complex dtype (real inputs widen to complex)."""
    xs = jnp._promote(f"scipy.linalg.{fname}", *[jnp.asarray(x) for x in xs], inexact=True,
                      broadcast=False)
    dt = jnp.result_type(xs[0].dtype, jnp.complex64)
    return [x.astype(dt) for x in xs]


def _H(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


# ---- rsf2csf -------------------------------------------------------------------------------
def _rotate(m, t, z):
    """t, z with the Givens rotation that zeroes t[m, m-1] (its 2x2 block's first
    eigenvalue as the shift) applied to rows and columns m-1, m of t and columns of z."""
    n = t.shape[0]
    block = lax.dynamic_slice(t, (m - 1, m - 1), (2, 2))
    tmm, sub = t[m, m], t[m, m - 1]
    mu = _np_linalg.eigvals(block)[0] - tmm
    r = jnp.sqrt(jnp.abs(mu) ** 2 + jnp.abs(sub) ** 2).astype(t.dtype)
    c, s = mu / r, sub / r
    g = jnp.stack([jnp.stack([jnp.conj(c), s]), jnp.stack([-s, c])])
    gh = _H(g)
    idx = jnp.arange(n)
    rows = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=0)
    right = idx >= m - 1                           # columns m-1.. of rows m-1, m
    rows = jnp.where(right, jnp.matmul(g, jnp.where(right, rows, 0)), rows)
    t = lax.dynamic_update_slice_in_dim(t, rows, m - 1, axis=0)
    cols = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=1)
    above = (idx < m + 1)[:, None]                 # rows ..m of columns m-1, m
    cols = jnp.where(above, jnp.matmul(jnp.where(above, cols, 0), gh), cols)
    t = lax.dynamic_update_slice_in_dim(t, cols, m - 1, axis=1)
    zc = lax.dynamic_slice_in_dim(z, m - 1, 2, axis=1)
    z = lax.dynamic_update_slice_in_dim(z, jnp.matmul(zc, gh), m - 1, axis=1)
    return t, z


def _rsf2csf_one(t, z):
    n = t.shape[0]
    if n <= 1:
        return t, z
    eps = jnp.finfo(t.dtype).eps

    def step(k, tz):
        t, z = tz
        m = n - k                                  # from the last row up
        sub = jnp.abs(t[m, m - 1])
        t, z = lax.cond(sub > eps * (jnp.abs(t[m - 1, m - 1]) + jnp.abs(t[m, m])),
                        lambda tz: _rotate(m, *tz), lambda tz: tz, (t, z))
        return t.at[m, m - 1].set(0), z

    return lax.fori_loop(1, n, step, (t, z))


@jit_eagerly("T", "Z")
def rsf2csf(T, Z, check_finite=True):
    """(T, Z) converted from the real Schur form (T quasi-upper-triangular, A = Z T Z^T) to
    the complex one (T upper triangular, A = Z T Z^H); batch axes broadcast. JAX:
    jax.scipy.linalg.rsf2csf."""
    del check_finite
    t, z = jnp.asarray(T), jnp.asarray(Z)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if z.ndim < 2 or z.shape[-1] != z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if t.shape[-1] != z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {z.shape} vs. T: {t.shape}")
    t, z = _complex("rsf2csf", t, z)
    return jnp.vectorize(_rsf2csf_one, signature="(n,n),(n,n)->(n,n),(n,n)")(t, z)


# ---- funm ----------------------------------------------------------------------------------
def _shifted(x, p):
    """y[i, k] = x[i + p, k] (zero past the end), p traced."""
    n = x.shape[0]
    padded = jnp.concatenate([x, jnp.zeros_like(x)], axis=0)
    return lax.dynamic_slice(padded, (p, 0), (n, n))


@jit_eagerly("f", "t")
def _parlett(f, t):
    """f with its strict upper triangle filled, one superdiagonal p at a time, by Parlett's
    recurrence f t = t f (Golub and Van Loan, Algorithm 11.1.1), t upper triangular; and
    the smallest |t[j, j] - t[i, i]| divided by."""
    n = t.shape[0]
    i = jnp.arange(n)
    k = i[None, :]
    diag_t, diag_f = jnp.diagonal(t), jnp.diagonal(f)

    def step(p, fm):
        f, minden = fm
        j = i + p
        valid = j < n
        jc = jnp.minimum(j, n - 1)
        inner = (k > i[:, None]) & (k < j[:, None])        # i < k < j
        t_col = _shifted(t.T, p)                           # t_col[i, k] = t[k, i + p]
        f_col = _shifted(f.T, p)
        s = t[i, jc] * (diag_f[jc] - diag_f)
        s = s + (jnp.sum(jnp.where(inner, t * f_col, 0), axis=1)
                 - jnp.sum(jnp.where(inner, f * t_col, 0), axis=1))
        den = diag_t[jc] - diag_t
        s = jnp.where(den != 0, s / jnp.where(den != 0, den, 1), s)
        f = jnp.where((k == (i + p)[:, None]) & valid[:, None], s[:, None], f)
        minden = jnp.minimum(minden, jnp.min(jnp.where(valid, jnp.abs(den), jnp.inf)))
        return f, minden

    return lax.fori_loop(1, n, step, (f, jnp.abs(t[0, 0])))


def funm(A, func, disp=True):
    """func applied to the square matrix A through its complex Schur form; with disp=False,
    (F, an estimate of its relative error). JAX: jax.scipy.linalg.funm."""
    a = jnp.asarray(A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected square array_like input")
    t, z = lax_linalg.schur(a)
    t, z = rsf2csf(t, z)
    f = jnp.diag(func(jnp.diagonal(t))).astype(t.dtype)
    f, minden = _parlett(f, t)
    f = jnp.matmul(jnp.matmul(z, f), _H(z))
    if disp:
        return f
    tol = _onp.finfo(_onp.float32 if f.dtype == _onp.complex64 else _onp.float64).eps
    minden = jnp.where(minden == 0.0, tol, minden)
    err = jnp.minimum(1, jnp.maximum(tol, (tol / minden) * _np_linalg.norm(jnp.triu(t, 1), 1)))
    return f, jnp.where(jnp.any(jnp.isinf(f)), _onp.inf, err)


# ---- solve_sylvester -----------------------------------------------------------------------
def _sylvester_triangular(r, s, f):
    """y with r y + y s = f, r upper and s lower triangular: column by column from the
    last, each a triangular solve with r + s[j, j]."""
    m, n = f.shape
    eye = jnp.eye(m, dtype=r.dtype)

    def step(k, y):
        j = n - 1 - k
        later = jnp.arange(n) > j
        rhs = f[:, j] - jnp.matmul(y, jnp.where(later, s[:, j], 0))
        col = lax_linalg.triangular_solve(r + s[j, j] * eye, rhs[:, None], left_side=True,
                                          lower=False)
        return y.at[:, j].set(col[:, 0])

    return lax.fori_loop(0, n, step, jnp.zeros_like(f))


def _sylvester_one(a, b, c, method, tol):
    if method == "schur":
        r, u = lax_linalg.schur(a.astype(jnp.result_type(a.dtype, jnp.complex64)))
        s, v = lax_linalg.schur(_H(b).astype(r.dtype))
        f = jnp.matmul(jnp.matmul(_H(u), c.astype(r.dtype)), v)
        y = _sylvester_triangular(r, _H(s), f)
        x = jnp.matmul(jnp.matmul(u, y), _H(v))
    elif method == "eigen":
        ra, ua = _np_linalg.eig(a)
        rb, ub = _np_linalg.eig(b)
        f = _np_linalg.solve(ua, jnp.matmul(c.astype(ra.dtype), ub))
        y = f / (ra[:, None] + rb[None, :])
        x = jnp.matmul(jnp.matmul(ua, y), _np_linalg.inv(ub))
    else:
        raise ValueError(f"Unrecognized method {method}. The two valid methods are either "
                         "\"schur\" or \"eigen\".")
    if not jnp.issubdtype(c.dtype, jnp.complexfloating):
        x = jnp.real(x)
    sums = _np_linalg.eigvals(a)[:, None] + _np_linalg.eigvals(b)[None, :]
    return jnp.where(jnp.any(jnp.abs(sums) < tol), jnp.full_like(x, _onp.nan), x)


@jit_eagerly("A", "B", "C")
def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """X with A X + X B = C, by Bartels-Stewart on the complex Schur forms (method="schur")
    or by eigendecompositions ("eigen"); all NaN where an eigenvalue of A plus one of B is
    within tol of zero. Batch axes broadcast. JAX: jax.scipy.linalg.solve_sylvester."""
    a, b, c = jnp._promote("scipy.linalg.solve_sylvester", jnp.asarray(A), jnp.asarray(B),
                           jnp.asarray(C), inexact=True, broadcast=False)
    m, n = c.shape[-2:]
    if a.shape[-2:] != (m, m) or b.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {a.shape}\n"
                         f"B: {b.shape}\nC: {c.shape}")
    return jnp.vectorize(lambda a, b, c: _sylvester_one(a, b, c, method, tol),
                         signature="(m,m),(n,n),(m,n)->(m,n)")(a, b, c)
