"""The associated Legendre functions of the first kind, P_l^m(x) for 0 <= m, l <= n
(`lpmn`, `lpmn_values`; deprecated in JAX, reached through the module's __getattr__).

The table is indexed [m, l, point]. The diagonal P_m^m comes from the running product of
sqrt(1 - x^2), the first off-diagonal from P_{m+1}^m = (2m + 1) x P_m^m, and the rest from
the three-term recurrence in l, one diagonal l - m = k per step, over the whole table with
coefficient masks, in JAX's order of operations so that values agree to the bit. The masks
are exact small-integer arithmetic with one rounded division (and square root), so they
are NumPy constants here. Derivatives (unnormalized only) use the recurrences for
P_l^{m-1} and P_l^{m+1}, with m = 1 handled apart (its formula divides by zero).
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from mjax import lax
from mjax import numpy as jnp
from mjax.lax.control_flow import fori_loop
from mjax.jit.api import jit


def _check(name, m, n, z, is_normalized=False):
    z = jnp.asarray(z)
    if z.dtype not in (np.float32, np.float64):
        raise TypeError(f"z.dtype={z.dtype} is not supported, see docstring for supported "
                        "types.")
    if z.ndim != 1:
        raise ValueError("z must be a 1D array.")
    m, n = (operator.index(_concrete_int(v, name)) for v in (m, n))
    if m != n:
        raise NotImplementedError("Computations for m!=n are not yet supported.")
    return n, z, bool(is_normalized)


def _concrete_int(v, name):
    try:
        return int(v)
    except Exception as e:  # a tracer: the degree sets the table's shape
        raise type(e)(f"Argument m/n of {name} must be concrete (it sets the output "
                      f"shape): {e}") from e


def _recurrence_masks(l_max, normalized, dtype):
    """c0[k], c1[k]: the coefficients of x P_{l-1}^m and P_{l-2}^m for the entries with
    l - m == k (zero elsewhere), as [k, m, l] tables."""
    size = l_max + 1
    m, l = np.meshgrid(np.arange(size, dtype=dtype), np.arange(size, dtype=dtype),
                       indexing="ij")
    one = dtype(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        if normalized:
            ll, mm, l2, lm1 = l * l, m * m, dtype(2) * l, (l - one) * (l - one)
            d0 = np.sqrt((dtype(4) * ll - one) / (ll - mm))
            d1 = np.sqrt(((l2 + one) * (lm1 - mm)) / ((l2 - dtype(3)) * (ll - mm)))
        else:
            d0 = (dtype(2) * l - one) / (l - m)
            d1 = (l + m - one) / (l - m)
    d0 = np.where(np.triu(np.ones((size, size), bool), 1), d0, dtype(0))
    d1 = np.where(np.triu(np.ones((size, size), bool), 2), d1, dtype(0))
    k = np.arange(size)[:, None, None]
    on_diag = (k + np.arange(size)[None, :, None] == np.arange(size)[None, None, :])
    return (d0[None] * on_diag).astype(dtype), (d1[None] * on_diag).astype(dtype)


def _initial_value(normalized, dtype):
    if not normalized:
        return 1.0
    # (JAX takes sqrt(pi) in the default float type, then rounds to z's)
    default = jnp.zeros(()).dtype.type
    return dtype(default(0.5) / np.sqrt(default(np.pi)))


@functools.partial(jit, static_argnums=(0, 2))
def _legendre_table(l_max, x, normalized):
    dt = x.dtype.type
    size, npts = l_max + 1, x.shape[0]
    # (iotas in the program, not host constants: XLA folds them as it does JAX's, which
    # decides e.g. whether a product with a constant -1 becomes a negation)
    b = lax.iota(x.dtype, l_max)
    a = 1.0 + b
    init = _initial_value(normalized, dt)
    if normalized:
        f_a = jnp.cumprod(-1 * jnp.sqrt(1.0 + 0.5 / a))
        f_b = jnp.sqrt(2.0 * b + 3.0)
    else:
        f_a = jnp.cumprod(1.0 - 2.0 * a)
        f_b = 2.0 * b + 1.0
    p = jnp.zeros((size, size, npts), dtype=x.dtype).at[0, 0].set(init)
    sines = jnp.cumprod(jnp.broadcast_to(jnp.sqrt(1.0 - x * x), (l_max, npts)), axis=0)
    diag = np.arange(1, size)
    p = p.at[diag, diag].set(init * jnp.einsum("i,ij->ij", f_a, sines))
    first = np.arange(l_max)
    p = p.at[first, first + 1].set(jnp.einsum(
        "ij,ij->ij", jnp.einsum("i,j->ij", f_b, x), p[first, first]))
    c0, c1 = _recurrence_masks(l_max, normalized, dt)
    c0, c1 = jnp.asarray(c0), jnp.asarray(c1)

    def step(k, p):
        up1 = jnp.einsum("ijk,k->ijk", jnp.roll(p, 1, axis=1), x)
        return p + (jnp.einsum("ij,ijk->ijk", c0[k], up1)
                    - jnp.einsum("ij,ijk->ijk", c1[k], jnp.roll(p, 2, axis=1)))
    if l_max > 1:
        p = fori_loop(2, l_max + 1, step, p)
    return p


@jit
def _legendre_derivatives(p, x):
    size, _, npts = p.shape
    dt = x.dtype.type
    below = jnp.pad(p, ((0, 0), (1, 0), (0, 0)))[:, :size, :]  # P_{l-1}^m
    up2 = jnp.pad(below, ((0, 2), (0, 0), (0, 0)))[2:size + 2]  # P_{l-1}^{m+2}
    down2 = jnp.pad(below, ((2, 0), (0, 0), (0, 0)))[:size]  # P_{l-1}^{m-2}
    # m - 2 < 0: P_l^{-m} = (-1)^m (l-m)!/(l+m)! P_l^m
    if size > 1:
        lv = np.arange(1, size - 1, dtype=dt)
        coef = dt(-1.0) / ((lv + dt(1)) * lv)
        down2 = down2.at[1, 2:size, :].set(jnp.einsum("i,ij->ij", coef, p[1, 1:size - 1]))
    if size > 2:
        lv = np.arange(2, size - 1, dtype=dt)
        coef = dt(1.0) / ((lv + dt(2)) * (lv + dt(1)) * lv * (lv - dt(1)))
        down2 = down2.at[0, 3:size, :].set(jnp.einsum("i,ij->ij", coef, p[2, 2:size - 1]))
    m, l = np.meshgrid(np.arange(size, dtype=dt), np.arange(size, dtype=dt), indexing="ij")
    upper = np.triu(np.ones((size, size), bool))
    not_m1 = upper & (np.arange(size) != 1)[:, None]
    s = l + m
    with np.errstate(divide="ignore", invalid="ignore"):
        a0 = dt(-0.5) / (m - dt(1))
        c0 = a0 * (s - dt(2)) * (s - dt(1))
        d0 = dt(-0.5) / (m + dt(1))
        e0 = d0 * s * (s + dt(1))
        f0 = s * (l - m + dt(1)) / dt(2)

    def scaled(v, keep, q):  # (einsums, as JAX: XLA then fuses the same way)
        return jnp.einsum("ij,ijk->ijk", np.where(keep, v, dt(0)).astype(dt), q)
    m_minus_1 = scaled(a0, not_m1, below) + scaled(c0, not_m1, down2)
    m_plus_1 = scaled(d0, upper, up2) + scaled(e0, upper, below)
    deriv = scaled(f0, upper, m_minus_1) - 0.5 * m_plus_1
    if size > 1:
        lv = np.arange(size, dtype=dt)
        g = jnp.einsum("i,ij->ij", (lv + dt(1)) * lv, p[0])
        if size > 2:
            g = g - p[2]
        # (0.5 * rsqrt: what XLA makes of JAX's 0.5 / sqrt; written so, it stays so when
        # this is inlined into a program that also takes the sqrt, as the table does)
        deriv = deriv.at[1].set(jnp.einsum("j,ij->ij", 0.5 * lax.rsqrt(1 - x * x), g))
        deriv = deriv.at[1, 0, :].set(0)
    return deriv


def lpmn(m, n, z):
    """The associated Legendre functions P_l^m(z) and their derivatives for orders and
    degrees 0..n (m must equal n), each of shape (n + 1, n + 1, len(z)) indexed
    [order, degree, point]; z a 1-D float32 or float64 array.
    JAX: jax.scipy.special.lpmn (deprecated there)."""
    n, z, _ = _check("lpmn", m, n, z)
    p = _legendre_table(n, z, False)
    return p, _legendre_derivatives(p, z)


def lpmn_values(m, n, z, is_normalized):
    """The associated Legendre functions P_l^m(z) for orders and degrees 0..n (m must
    equal n), shape (n + 1, n + 1, len(z)); is_normalized scales them so that the
    spherical harmonics are orthonormal. JAX: jax.scipy.special.lpmn_values (deprecated
    there)."""
    n, z, normalized = _check("lpmn_values", m, n, z, is_normalized)
    return _legendre_table(n, z, normalized)


__all__ = ["lpmn", "lpmn_values"]
