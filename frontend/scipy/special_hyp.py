"""`mjax.scipy.special`'s confluent and Gauss hypergeometric functions (hyp1f1,
hyp2f1; Pearson, Olver & Porter 2014's series, asymptotic and transformation methods, as
JAX 0.10.2 uses them), Bessel J_0..J_v by Miller's backward recurrence (bessel_jn) and the
spherical harmonics (sph_harm_y). The hypergeometric functions are written for one element
and mapped with `jnp.vectorize`, so each element's loops stop when it has converged.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from mjax import lax
from mjax import numpy as jnp
from mjax.ad import custom_jvp
from mjax.base.errors import ConcretizationTypeError, TracerArrayConversionError
from mjax.tracing.staging import jit_eagerly

__all__ = ["hyp1f1", "hyp2f1", "bessel_jn", "sph_harm_y"]


def _gamma(x):
    """Gamma(x) = sign * exp(lgamma(x)); NaN at the poles 0, -1, -2, ..."""
    fl = jnp.floor(x)
    sign = jnp.where((x > 0) | (jnp.remainder(fl, 2) == 0), 1.0, -1.0)
    out = sign * jnp.exp(lax.lgamma(x))
    return jnp.where((x <= 0) & (x == fl), jnp.nan, out)


def _real(name, *args):
    args = jnp._promote(name, *args, inexact=True)
    if jnp.iscomplexobj(args[0]):
        raise ValueError(f"{name} does not support complex-valued inputs.")
    return jnp.broadcast_arrays(*[lax.convert_element_type(a, a.dtype) for a in args])


def _eps(x):
    return float(jnp.finfo(x.dtype).eps)


def _series(first, ratio, weight, start, relative=True):
    """start + sum_{k>=1} term_k weight(k), term_1 = first, term_{k+1} = term_k ratio(k),
    until the next term is below eps (relative to the sum) or after 249 terms."""
    eps = _eps(first)

    def body(c):
        k, s, term = c
        return k + 1, s + term * weight(k), term * ratio(k)

    def cond(c):
        k, s, term = c
        return (k < 250) & (jnp.abs(term) > eps * jnp.abs(s) if relative
                            else jnp.abs(term) / jnp.abs(s) > eps)

    one = jnp.ones_like(first)
    return lax.while_loop(cond, body, (one, start + 0 * first, first))[1]


# ---- 1F1 ----------------------------------------------------------------------------------
def _1f1_scalar(a, b, x):
    one = jnp.ones_like(x)
    near = jnp.abs(x) < 100
    xs = jnp.where(near, x, 0 * x)  # each method sees a safe x where it is not used
    taylor = _series(a / b * xs, lambda k: (a + k) / (b + k) * xs / (k + 1), lambda k: one,
                     one, relative=False)
    xa = jnp.where(near, 200 * one, x)
    tail = _series((b - a) * (1 - a) / xa, lambda k: (b - a + k) * (1 - a + k) / (k + 1) / xa,
                   lambda k: one, one, relative=False)
    asymptotic = _gamma(b) / _gamma(a) * jnp.exp(xa) * xa ** (a - b) * tail
    out = jnp.where(near, taylor, asymptotic)
    out = jnp.where(a == 0, one, out)
    out = jnp.where((a == b) & (a != 0), jnp.exp(x), out)
    return jnp.where((b == 0) & (a != 0), jnp.inf, out)


def _1f1_da(a, b, x):
    return _series(a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1),
                   lambda k: lax.digamma(a + k) - lax.digamma(a), 0 * x, relative=False)


def _1f1_db(a, b, x):
    return _series(a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1),
                   lambda k: lax.digamma(b) - lax.digamma(b + k), 0 * x, relative=False)


@custom_jvp
def _hyp1f1(a, b, x):
    return jnp.vectorize(_1f1_scalar)(a, b, x)


_hyp1f1.defjvps(
    lambda da, out, a, b, x: jnp.vectorize(_1f1_da)(a, b, x) * da,
    lambda db, out, a, b, x: jnp.vectorize(_1f1_db)(a, b, x) * db,
    lambda dx, out, a, b, x: a / b * _hyp1f1(a + 1, b + 1, x) * dx)


@jit_eagerly("a", "b", "x")
def hyp1f1(a, b, x):
    """The confluent hypergeometric function 1F1(a; b; x) = sum_k (a)_k / ((b)_k k!) x^k,
    real arguments; 1 at a = b = 0 (as JAX, unlike SciPy). JAX: jax.scipy.special.hyp1f1."""
    return _hyp1f1(*_real("hyp1f1", a, b, x))


# ---- 2F1 ----------------------------------------------------------------------------------
def _near_int(v, eps):
    return jnp.abs(v - jnp.round(v)) < eps


def _2f1_terminal(a, b, c, x):
    """The Taylor series when a or b is a non-positive integer: a finite sum."""
    eps = 50 * _eps(x)
    swap = (b < a) & _near_int(b, eps) & ~((jnp.remainder(c, 1) == 0) & (c <= 0) & (c > b))
    a, b = jnp.where(swap, b, a), jnp.where(swap, a, b)
    a = jnp.abs(a)

    def body(s):
        i, total, term = s
        term = term * -(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x
        return i + 1, total + term, term

    one = jnp.ones_like(x)
    return lax.while_loop(lambda s: s[0] < a + 1, body, (one, one, one))[1]


def _2f1_taylor(a, b, c, x):
    one = jnp.ones_like(x)
    return _series(one, lambda k: (a + k - 1) * (b + k - 1) / (c + k - 1) / k * x,
                   lambda k: one, 0 * x)


def _2f1_near_one(a, b, c, x):
    """x > 0.9 with c - a - b near an integer m: the digamma form of the transformation
    to 1 - x (Abramowitz & Stegun 15.3.10-12)."""
    eps = _eps(x)
    d = c - a - b
    s = 1 - x
    rd = jnp.round(d)
    pos = rd >= 0
    e = jnp.where(pos, d, -d)
    d1 = jnp.where(pos, d, 0 * d)
    d2 = jnp.where(pos, 0 * d, d)
    m = jnp.abs(rd)
    log_s = jnp.log(s)
    psi = lax.digamma
    y = (psi(jnp.ones_like(x)) + psi(1 + e) - psi(a + d1) - psi(b + d1) - log_s) / _gamma(e + 1)
    p = (a + d1) * (b + d1) * s / _gamma(e + 2)

    def body(st):
        t, p, q, y = st
        r = psi(1 + t) + psi(1 + t + e) - psi(a + t + d1) - psi(b + t + d1) - log_s
        q = p * r
        p = p * s * (a + t + d1) / (t + 1) * (b + t + d1) / (t + 1 + e)
        return t + 1, p, q, y + q

    one = jnp.ones_like(x)
    y = lax.while_loop(lambda st: (st[0] < 250) & (jnp.abs(st[2]) >= eps * jnp.abs(st[3])),
                       body, (one, p, y, y))[3]

    def finite(st):
        i, t, p, y1 = st
        p = p * s * (a + t + d2) * (b + t + d2) / (1 - e + t) / (t + 1)
        return i + 1, t + 1, p, y1 + p

    y1 = lax.while_loop(lambda st: st[0] < m, finite, (one, 0 * x, one, one))[3]
    gc = _gamma(c)
    y1 = y1 * _gamma(e) * gc / (_gamma(a + d1) * _gamma(b + d1))
    y2 = y * gc / (_gamma(a + d2) * _gamma(b + d2))
    y2 = jnp.where(jnp.remainder(m, 2) == 1, -y2, y2)
    q = s ** rd
    summed = jnp.where(rd > 0, y2 * q + y1, y2 + y1 * q)
    return jnp.where(rd == 0, y * gc / (_gamma(a) * _gamma(b)), summed)


def _2f1_series(a, b, c, x):
    """The Taylor series, its terminating form, or the transformation near x = 1; each
    method sees safe arguments where it is not the one chosen."""
    eps = 50 * _eps(x)
    zero = 0 * x
    neg_int = ((a <= 0) & _near_int(a, eps)) | ((b <= 0) & _near_int(b, eps))
    near_one = (x > 0.9) & ~neg_int & ~(jnp.abs(c - a - b - jnp.round(c - a - b)) >= eps)
    plain = ~neg_int & ~near_one
    taylor = _2f1_taylor(a, b, c, jnp.where(plain, x, zero))
    transformed = _2f1_near_one(a, b, c, jnp.where(near_one, x, 0.95 + zero))
    terminal = _2f1_terminal(jnp.where(neg_int, a, zero), b, c, x)
    return jnp.where(neg_int, terminal, jnp.where(near_one, transformed, taylor))


def _2f1_scalar(a, b, c, x):
    eps = 50 * _eps(x)
    d = c - a - b
    s = 1 - x
    one = jnp.ones_like(x)
    # JAX's case order: the first that holds is used
    cases = [
        ((x == 0) | (((a == 0) | (b == 0)) & (c != 0)), lambda: one),
        ((c == 0) | ((c < 0) & (jnp.remainder(c, 1) == 0)), lambda: jnp.inf * one),
        ((d <= -1) & ~((jnp.abs(d - jnp.round(d)) >= eps) & (s < 0)), None),
        ((d <= 0) & (x == 1), lambda: jnp.inf * one),
        ((x < 1) & (b == c), lambda: s ** (-a)),
        ((x < 1) & (a == c), lambda: s ** (-b)),
        (x > 1, lambda: jnp.inf * one),
        (x == 1, lambda: _gamma(c) * _gamma(d) / (_gamma(c - a) * _gamma(c - b))),
    ]
    taken = jnp.zeros(x.shape, bool)
    choice = []
    for cond, _ in cases:
        choice.append(cond & ~taken)
        taken = taken | cond
    # One series for both uses: the Euler transformation 2F1(a, b; c; x) =
    # (1 - x)^d 2F1(c - a, c - b; c; x) where case 2 is chosen, the plain one where none is.
    euler = choice[2]
    series = _2f1_series(jnp.where(euler, c - a, a), jnp.where(euler, c - b, b), c,
                         jnp.where(euler | ~taken, x, 0 * x))
    out = jnp.where(euler, s ** d * series, series)
    for pick, (_, value) in zip(choice, cases):
        if value is not None:
            out = jnp.where(pick, value(), out)
    return out


def _2f1_dparam(which):
    def d(a, b, c, x):
        first = a * b / c * x
        ratio = lambda k: (a + k) * (b + k) / (c + k) / (k + 1) * x  # noqa: E731
        weight = {"a": lambda k: lax.digamma(a + k) - lax.digamma(a),
                  "b": lambda k: lax.digamma(b + k) - lax.digamma(b),
                  "c": lambda k: lax.digamma(c) - lax.digamma(c + k)}[which]
        return _series(first, ratio, weight, 0 * x, relative=False)
    return jnp.vectorize(d)


@custom_jvp
def _hyp2f1(a, b, c, x):
    return jnp.vectorize(_2f1_scalar)(a, b, c, x)


_hyp2f1.defjvps(
    lambda da, out, a, b, c, x: _2f1_dparam("a")(a, b, c, x) * da,
    lambda db, out, a, b, c, x: _2f1_dparam("b")(a, b, c, x) * db,
    lambda dc, out, a, b, c, x: _2f1_dparam("c")(a, b, c, x) * dc,
    lambda dx, out, a, b, c, x: a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x) * dx)


@jit_eagerly("a", "b", "c", "x")
def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function 2F1(a, b; c; x), real arguments (inf for x > 1).
    JAX: jax.scipy.special.hyp2f1."""
    a, b, c, x = jnp._promote("hyp2f1", a, b, c, x, inexact=True)
    if jnp.iscomplexobj(x):
        raise ValueError("hyp2f1 does not support complex-valued inputs.")
    args = jnp.broadcast_arrays(*[lax.convert_element_type(v, v.dtype) for v in (a, b, c, x)])
    return _hyp2f1(*args)


# ---- Bessel J_0 .. J_v ----------------------------------------------------------------------
@jit_eagerly("z")
def _bessel_jn(z, v, n_iter):
    # Miller's backward recurrence J_{k-1} = 2k/z J_k - J_{k+1} from a tiny start at
    # k = n_iter + 1, normalized by J_0 + 2 (J_2 + J_4 + ...) = 1 (Zhang & Jin, BJNDD).
    def step(carry, k):
        f0, f1, total = carry
        f = 2 * (k + 1) * f1 / z - f0
        total = jnp.where(jnp.remainder(k, 2) == 0, total + 2 * f, total)
        return (f1, f, total), f

    init = (jnp.zeros_like(z), jnp.full_like(z, 1e-16), jnp.zeros_like(z))
    ks = jnp.arange(n_iter + 1, dtype=z.dtype)
    (_, _, total), fs = lax.scan(step, init, ks, reverse=True)
    return fs[:v + 1] / (total - fs[0])


def bessel_jn(z, *, v, n_iter=50):
    """Bessel functions of the first kind J_0(z), ..., J_v(z) of real z, stacked on a new
    leading axis (shape (v + 1, *z.shape)); `v` and `n_iter` (the recurrence's length)
    are static ints. JAX: jax.scipy.special.bessel_jn."""
    (z,) = jnp._promote("bessel_jn", jnp.asarray(z), inexact=True)
    if jnp.iscomplexobj(z):
        raise ValueError("complex input not supported.")
    v = operator.index(v)
    n_iter = int(n_iter)
    return _bessel_jn(lax.convert_element_type(z, z.dtype), v, n_iter)


# ---- spherical harmonics ---------------------------------------------------------------------
@jit_eagerly("n", "m", "theta", "phi")
def _sph_harm(n, m, theta, phi, n_max):
    x = jnp.cos(theta)
    sin = jnp.sqrt(1 - x * x)
    am = jnp.clip(jnp.abs(m), 0, n_max).astype(x.dtype)
    nn = jnp.clip(n, 0, n_max).astype(x.dtype)
    # The normalized associated Legendre function P_n^|m|(x) (Condon-Shortley phase):
    # the diagonal P_m^m, then P_{m+1}^m, then the three-term recurrence up to n.
    p1 = jnp.full_like(x, 0.5 / math.sqrt(math.pi))
    for k in range(1, n_max + 1):
        p1 = jnp.where(k <= am, -math.sqrt(1 + 0.5 / k) * sin * p1, p1)
    p2 = jnp.zeros_like(x)
    for level in range(1, n_max + 1):
        active = (level > am) & (level <= nn)
        first = level == am + 1
        rec = active & ~first
        denom = jnp.where(rec, level * level - am * am, 1.0)
        d0 = jnp.sqrt((4.0 * level * level - 1) / denom)
        d1 = jnp.sqrt(jnp.where(rec, (2.0 * level + 1) * ((level - 1) ** 2 - am * am)
                                / ((2.0 * level - 3) * denom), 1.0))
        new = jnp.where(first, jnp.sqrt(2 * am + 3) * x * p1, d0 * x * p1 - d1 * p2)
        p1, p2 = jnp.where(active, new, p1), jnp.where(active, p1, p2)
    legendre = jnp.where(am > nn, 0.0, p1)
    angle = jnp.abs(m) * phi
    y = lax.complex(legendre * jnp.cos(angle), legendre * jnp.sin(angle))
    sign = jnp.where(jnp.remainder(jnp.abs(m), 2) == 1, -1.0, 1.0).astype(x.dtype)
    return jnp.where(m < 0, sign * jnp.conjugate(y), y)


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonics Y_n^m(theta, phi) (theta the polar angle, phi the azimuth),
    complex; n_max (static, default max(n), which must then be concrete) bounds the
    degrees: larger n are clipped to it, as JAX. JAX: jax.scipy.special.sph_harm_y."""
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    n, m = jnp.asarray(n), jnp.asarray(m)
    theta, phi = jnp._promote("sph_harm_y", theta, phi, inexact=True)
    if jnp.ndim(theta) == 0:
        theta = jnp.reshape(theta, (1,))
    if n_max is None:
        try:
            n_max = np.max(np.asarray(n))
        except TracerArrayConversionError as e:
            raise ConcretizationTypeError(
                n, "The `n_max` argument of `jnp.scipy.special.sph_harm` must be statically "
                "specified to use `sph_harm` within JAX transformations.") from e
    n_max = operator.index(int(n_max))
    n, m, theta, phi = jnp.broadcast_arrays(n, m, theta, phi)
    return _sph_harm(n, m, theta, phi, n_max)
