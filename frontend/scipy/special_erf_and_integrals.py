"""`mjax.scipy.special`'s error-function family (wofz, erfcx, dawsn, fresnel,
owens_t) and the sine/cosine and Spence integrals (sici, spence), as JAX 0.10.2 computes
them: rational approximations from Cephes (the tables in `special_tables`), Weideman's
rational series for the Faddeeva function and a Gauss-Legendre rule for Owen's T (the
exponential integrals are in `special_expint`). Each defines the
derivative JAX defines (a custom_jvp), so grads need not go through the approximations.
Half floats are computed in float32 and rounded back.
"""
from __future__ import annotations

import math

import numpy as np

from mjax import lax
from mjax import numpy as jnp
from mjax.ad import custom_jvp
from mjax.scipy import special_tables as T
from mjax.tracing.staging import jit_eagerly

__all__ = ["wofz", "erfcx", "dawsn", "fresnel", "owens_t", "sici", "spence"]

_EULER = 0.5772156649015329
_SQRT_PI = math.sqrt(math.pi)
_HALF = (np.dtype(np.float16), np.dtype(jnp.bfloat16))


def _horner(coeffs, t):
    """sum_k coeffs[k] t^(n-k): the coefficients from the highest degree down."""
    acc = jnp.full_like(t, coeffs[0])
    for c in coeffs[1:]:
        acc = acc * t + c
    return acc


def _real(name, *args):
    """The arguments promoted to one inexact dtype (strong, as JAX's results are); complex
    input is a ValueError, as in JAX."""
    args = jnp._promote(name, *args, inexact=True)
    if jnp.iscomplexobj(args[0]):
        raise ValueError(f"{name} does not support complex-valued inputs.")
    return [lax.convert_element_type(a, a.dtype) for a in args]


def _in_f32(fn, x, *rest):
    """fn over float32 copies of half-float arguments, its results rounded back."""
    if x.dtype not in _HALF:
        return fn(x, *rest)
    out = fn(x.astype(jnp.float32), *(r.astype(jnp.float32) for r in rest))
    if isinstance(out, tuple):
        return tuple(o.astype(x.dtype) for o in out)
    return out.astype(x.dtype)


# ---- the Faddeeva function w(z) = exp(-z^2) erfc(-iz) ---------------------------------------
def _weideman(n):
    """Weideman (1994)'s N-term rational approximation of w in the upper half plane:
    w(z) ~ 2 p(Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz)), Z = (L + iz) / (L - iz), with
    p's coefficients (highest degree first) from an FFT of exp(-t^2) (L^2 + t^2)."""
    m = 2 * n
    scale = math.sqrt(n / math.sqrt(2))
    theta = np.arange(-m + 1, m) * np.pi / m
    t = scale * np.tan(theta / 2)
    f = np.concatenate([[0.0], np.exp(-t * t) * (scale * scale + t * t)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return scale, tuple(float(c) for c in a[1:n + 1][::-1])


_WOFZ_L, _WOFZ_P = _weideman(32)


def _wofz_upper(z):
    iz = lax.complex(-jnp.imag(z), jnp.real(z))
    denom = _WOFZ_L - iz
    p = _horner(_WOFZ_P, (_WOFZ_L + iz) / denom)
    return 2 * p / (denom * denom) + (1 / _SQRT_PI) / denom


@custom_jvp
def _wofz(z):
    upper = jnp.imag(z) >= 0
    w = _wofz_upper(jnp.where(upper, z, -z))
    return jnp.where(upper, w, 2 * jnp.exp(-z * z) - w)  # w(-z) = 2 exp(-z^2) - w(z)


@_wofz.defjvp
def _wofz_jvp(primals, tangents):
    (z,), (dz,) = primals, tangents
    w = _wofz(z)
    return w, dz * (-2 * z * w + lax.complex(jnp.zeros_like(jnp.real(z)),
                                               jnp.full_like(jnp.real(z), 2 / _SQRT_PI)))


def _to_complex(name, z):
    (z,) = jnp._promote(name, z, inexact=True)
    if not jnp.iscomplexobj(z):
        z = z.astype(jnp.complex128 if z.dtype == np.float64 else jnp.complex64)
    return lax.convert_element_type(z, z.dtype)


@jit_eagerly("z")
def wofz(z):
    """The Faddeeva function exp(-z^2) erfc(-iz), complex. JAX: jax.scipy.special.wofz."""
    return _wofz(_to_complex("wofz", z))


# ---- erfcx(x) = exp(x^2) erfc(x) ------------------------------------------------------------
def _erfcx_f(x):
    # exp(x^2) erfc(x) until exp(x^2) would overflow; above, the asymptotic series
    # 1 / (sqrt(pi) x) sum_k (-1)^k (2k-1)!! / (2 x^2)^k, 5 terms (float32) or 9 (float64).
    nterms = 9 if x.dtype == np.float64 else 5
    coeffs = [(-1) ** k * math.prod(range(1, 2 * k, 2)) / 2 ** k for k in range(nterms)]
    large = x > math.sqrt(math.log(float(jnp.finfo(x.dtype).max)))
    xs = jnp.where(large, jnp.ones_like(x), x)
    direct = jnp.exp(xs * xs) * lax.erfc(xs)
    xl = jnp.where(large, x, jnp.ones_like(x))
    asymptotic = _horner(coeffs[::-1], 1 / (xl * xl)) / (xl * _SQRT_PI)
    return jnp.where(large, asymptotic, direct)


@custom_jvp
def _erfcx(x):
    return _in_f32(_erfcx_f, x)


@_erfcx.defjvp
def _erfcx_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    y = _erfcx(x)
    return y, dx * (2 * x * y - 2 / _SQRT_PI)


def erfcx(x):
    """The scaled complementary error function exp(x^2) erfc(x), real or complex (for
    complex x, wofz(ix)). JAX: jax.scipy.special.erfcx."""
    (x,) = jnp._promote("erfcx", x, inexact=True)
    x = lax.convert_element_type(x, x.dtype)
    if jnp.iscomplexobj(x):
        return _wofz(lax.complex(-jnp.imag(x), jnp.real(x)))
    return _erfcx(x)


# ---- Dawson's integral -----------------------------------------------------------------------
def _dawsn_f(x):
    ax = jnp.abs(x)
    one = jnp.ones_like(ax)
    r1, r3 = ax < 3.25, ax >= 6.25
    r2 = ~r1 & ~r3
    a1 = jnp.where(r1, ax, one)  # each region sees a safe argument where it is not used
    small = a1 * _horner(T.DAWSN_AN, a1 * a1) / _horner(T.DAWSN_AD, a1 * a1)
    a2, a3 = jnp.where(r2, ax, one), jnp.where(r3, ax, one)
    t2, t3 = 1 / (a2 * a2), 1 / (a3 * a3)
    mid = 0.5 / a2 * (1 + t2 * _horner(T.DAWSN_BN, t2) / _horner(T.DAWSN_BD, t2))
    far = 0.5 / a3 * (1 + t3 * _horner(T.DAWSN_CN, t3) / _horner(T.DAWSN_CD, t3))
    return jnp.sign(x) * jnp.where(r1, small, jnp.where(r2, mid, far))


@custom_jvp
def _dawsn(x):
    return _in_f32(_dawsn_f, x)


@_dawsn.defjvp
def _dawsn_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    y = _dawsn(x)
    return y, dx * (1 - 2 * x * y)


@jit_eagerly("x")
def dawsn(x):
    """Dawson's integral exp(-x^2) int_0^x exp(t^2) dt, real x.
    JAX: jax.scipy.special.dawsn."""
    (x,) = _real("dawsn", x)
    return _dawsn(x)


# ---- Fresnel integrals -------------------------------------------------------------------------
def _sincos_half_pi_sq(x):
    """sin and cos of pi x^2 / 2, reducing x^2 / 2 mod 2 exactly first."""
    x = jnp.abs(x)
    s = jnp.fmod(x, 2.0)
    r = jnp.fmod(s * (x - s / 2), 2.0)  # (x^2 / 2) mod 2, without forming x^2
    pi = math.pi
    sin = jnp.where(r < 0.5, jnp.sin(pi * r),
                    jnp.where(r > 1.5, jnp.sin(pi * (r - 2)), -jnp.sin(pi * (r - 1))))
    cos = jnp.where(r == 0.5, jnp.zeros_like(r),
                    jnp.where(r < 1, -jnp.sin(pi * (r - 0.5)), jnp.sin(pi * (r - 1.5))))
    return sin, cos


def _fresnel_f(xx):
    single = xx.dtype == np.float32
    x = jnp.abs(xx)
    x2 = x * x
    t4 = x2 * x2
    if single:
        s_small = x * x2 * _horner(T.FRESNEL32_SN, t4)
        c_small = x * _horner(T.FRESNEL32_CN, t4)
    else:
        s_small = x * x2 * _horner(T.FRESNEL64_SN, t4) / _horner(T.FRESNEL64_SD, t4)
        c_small = x * _horner(T.FRESNEL64_CN, t4) / _horner(T.FRESNEL64_CD, t4)
    sin, cos = _sincos_half_pi_sq(x)
    if single:
        s_large = c_large = jnp.full_like(x, 0.5)
    else:
        c_large = 0.5 + sin / (math.pi * x)
        s_large = 0.5 - cos / (math.pi * x)
    t = 1 / (math.pi * x2)
    u = t * t
    if single:
        f = 1 - u * _horner(T.FRESNEL32_FN, u)
        g = t * _horner(T.FRESNEL32_GN, u)
    else:
        f = 1 - u * _horner(T.FRESNEL64_FN, u) / _horner(T.FRESNEL64_FD, u)
        g = t * _horner(T.FRESNEL64_GN, u) / _horner(T.FRESNEL64_GD, u)
    c_mid = 0.5 + (f * sin - g * cos) / (math.pi * x)
    s_mid = 0.5 - (f * cos + g * sin) / (math.pi * x)
    small, large, inf = x2 < 2.5625, x > 36974.0, jnp.isinf(x)
    s = jnp.where(inf, 0.5, jnp.where(small, s_small, jnp.where(large, s_large, s_mid)))
    c = jnp.where(inf, 0.5, jnp.where(small, c_small, jnp.where(large, c_large, c_mid)))
    neg = xx < 0
    return jnp.where(neg, -s, s), jnp.where(neg, -c, c)


@custom_jvp
def _fresnel(x):
    return _in_f32(_fresnel_f, x)


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    sin, cos = _sincos_half_pi_sq(x)
    return _fresnel(x), (sin * dx, cos * dx)


@jit_eagerly("x")
def fresnel(x):
    """The Fresnel integrals (S(x), C(x)) = int_0^x (sin, cos)(pi t^2 / 2) dt, real x
    (Cephes' fresnl; accurate on [-10, 10] as in JAX). JAX: jax.scipy.special.fresnel."""
    (x,) = jnp._promote("fresnel", x, inexact=True)
    if jnp.iscomplexobj(x):
        raise NotImplementedError("fresnel: complex-valued inputs are not supported (as in "
                                  "JAX)")
    if x.dtype not in (np.float16, np.float32, np.float64, jnp.bfloat16):
        raise NotImplementedError(f"fresnel: {x.dtype} is not supported")
    return _fresnel(lax.convert_element_type(x, x.dtype))


# ---- Owen's T ----------------------------------------------------------------------------------
# The nodes and weights as float64 NumPy arrays, as JAX's: under x64 they promote float32
# operands to float64 (JAX's result dtype), without it they are float32 constants.
_OWENS_NODES = np.array(T.OWENS_T_NODES)
_OWENS_WEIGHTS = np.array(T.OWENS_T_WEIGHTS)


def _owens_t_quadrature(h, a):
    nodes = jnp.expand_dims(_OWENS_NODES, tuple(range(a.ndim)))
    r = jnp.square(a)[..., None] * nodes
    integrand = jnp.exp(-0.5 * jnp.square(h)[..., None] * (1. + r)) / (1. + r)
    return a * (integrand @ _OWENS_WEIGHTS)


@custom_jvp
def _owens_t(h, a):
    h, abs_a = jnp.abs(h), jnp.abs(a)
    root_2 = np.array(np.sqrt(2), dtype=h.dtype)
    h_normed = h / root_2
    # T(h, a) from T(|a| h, 1 / |a|) when |a| > 1, and the exact values at h = 0, a = 1
    ma = jnp.where(abs_a <= 1., abs_a, jnp.reciprocal(abs_a))
    mh = jnp.where(abs_a <= 1., h, abs_a * h)
    out = _owens_t_quadrature(mh, ma)
    out = jnp.where(mh == 0., jnp.arctan(ma) / (2 * np.pi), out)
    out = jnp.where(ma == 1., 0.125 * lax.erfc(-mh / root_2) * lax.erfc(mh / root_2), out)
    eh, eah = lax.erfc(h_normed), lax.erfc(abs_a * h_normed)
    out = jnp.where(abs_a > 1.,
                    jnp.where(abs_a * h <= 0.67,
                              0.25 - 0.25 * lax.erf(h_normed) * lax.erf(abs_a * h_normed)
                              - out,
                              0.25 * (eh + eah - eh * eah) - out),
                    out)
    out = lax.sign(a) * out
    return jnp.where(jnp.isnan(a) | jnp.isnan(h), jnp.full_like(out, jnp.nan), out)


@_owens_t.defjvp
def _owens_t_jvp(primals, tangents):
    (h, a), (dh, da) = primals, tangents
    out = _owens_t(h, a)
    root_2 = np.array(np.sqrt(2), dtype=h.dtype)
    d_h = (-lax.exp(-0.5 * lax.square(h)) * lax.erf(a * h / root_2)
           / (2. * np.array(np.sqrt(2. * np.pi), dtype=h.dtype)))
    d_a = (lax.exp(-0.5 * (lax.square(a) + 1.) * lax.square(h))
           / (2. * np.pi * (lax.square(a) + 1.)))
    return out, (d_h * dh + d_a * da).astype(out.dtype)


def owens_t(h, a):
    """Owen's T function (1 / 2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx, by a
    13-node quadrature (Patefield & Tandy's T5); op by op when called eagerly, as JAX's.
    JAX: jax.scipy.special.owens_t."""
    h, a = jnp._promote("owens_t", jnp.asarray(h), jnp.asarray(a), inexact=True,
                        broadcast=False)
    rank = max(h.ndim, a.ndim)  # (ranks equalized with leading 1s, shapes not broadcast)
    h, a = (jnp.reshape(v, (1,) * (rank - v.ndim) + v.shape) for v in (h, a))
    return _owens_t(h, a)


# ---- sine and cosine integrals ----------------------------------------------------------------
def _sici_f(x):
    ax = jnp.abs(x)
    one = jnp.ones_like(ax)
    small = ax <= 4
    xs = jnp.where(small & (ax > 0), ax, one)
    t = xs * xs
    si_s = xs * _horner(T.SICI_SN, t) / _horner(T.SICI_SD, t)
    ci_s = _EULER + jnp.log(xs) + t * _horner(T.SICI_CN, t) / _horner(T.SICI_CD, t)
    si_s = jnp.where(ax == 0, 0.0, si_s)
    ci_s = jnp.where(ax == 0, -jnp.inf, ci_s)
    xa = jnp.where(small, 5 * one, ax)  # 4 < |x|: the auxiliary functions f and g
    z = 1 / (xa * xa)
    near = xa < 8
    f = jnp.where(near, _horner(T.SICI_FN4, z) / (xa * _horner(T.SICI_FD4, z)),
                  _horner(T.SICI_FN8, z) / (xa * _horner(T.SICI_FD8, z)))
    g = jnp.where(near, z * _horner(T.SICI_GN4, z) / _horner(T.SICI_GD4, z),
                  z * _horner(T.SICI_GN8, z) / _horner(T.SICI_GD8, z))
    sin, cos = jnp.sin(xa), jnp.cos(xa)
    si_a = math.pi / 2 - f * cos - g * sin
    ci_a = f * sin - g * cos
    far = ax > 1e9  # only the leading terms; their limits at infinity
    si_f = jnp.where(jnp.isposinf(ax), math.pi / 2, math.pi / 2 - cos / xa)
    ci_f = jnp.where(jnp.isposinf(ax), 0.0, sin / xa)
    si = jnp.where(small, si_s, jnp.where(far, si_f, si_a))
    ci = jnp.where(small, ci_s, jnp.where(far, ci_f, ci_a))
    return jnp.sign(x) * si, jnp.where(jnp.isneginf(x), jnp.nan, ci)


@custom_jvp
def _sici(x):
    return _in_f32(_sici_f, x)


@_sici.defjvp
def _sici_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return _sici(x), (jnp.sinc(x / math.pi) * dx, jnp.cos(x) / x * dx)


@jit_eagerly("x")
def sici(x):
    """The sine and cosine integrals (Si(x), Ci(x)); Ci(x) for x < 0 is Ci(|x|), the real
    part. JAX: jax.scipy.special.sici."""
    (x,) = jnp._promote("sici", x, inexact=True)
    if jnp.iscomplexobj(x):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x.dtype}.")
    return _sici(lax.convert_element_type(x, x.dtype))


# ---- Spence's function ----------------------------------------------------------------------
@jit_eagerly("x")
def spence(x):
    """Spence's function int_1^x log(t) / (1 - t) dt for x >= 0 (NaN below 0, as JAX);
    float32 or float64 input only. JAX: jax.scipy.special.spence."""
    x = jnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"spence: x.dtype={x.dtype} is not supported (float32 or float64 "
                        "only)")
    x = lax.convert_element_type(x, x.dtype)
    ok = (x > 0) & (x != 1)
    xs = jnp.where(ok, x, 0.5 * jnp.ones_like(x))  # a safe argument off the interior
    inverted = xs > 2
    xs = jnp.where(inverted, 1 / xs, xs)
    above, below = xs > 1.5, xs < 0.5
    w = jnp.where(above, 1 / xs - 1, jnp.where(below, -xs, xs - 1))
    y = -w * _horner(T.SPENCE_P, w) / _horner(T.SPENCE_Q, w)
    xb = jnp.where(below, xs, 0.25 * jnp.ones_like(xs))
    # (log(1 - x), as JAX: log1p(-x) rounds otherwise, and the chip's two differ more)
    y = jnp.where(below, math.pi ** 2 / 6 - jnp.log(xb) * jnp.log(1.0 - xb) - y, y)
    y = jnp.where(inverted | above, -0.5 * jnp.log(xs) ** 2 - y, y)
    y = jnp.where(x == 0, math.pi ** 2 / 6, jnp.where(x == 1, 0.0, y))
    return jnp.where((x < 0) | jnp.isnan(x), jnp.nan, y)
