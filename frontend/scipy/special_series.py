"""Special functions computed by series, continued fractions and Newton steps, composed
from `mjax.numpy` (JAX computes most of them in Python over lax too): the regularized
incomplete gamma and beta functions, exponentially scaled Bessel I0/I1, the Hurwitz zeta
function and the inverse normal CDF.

Called eagerly, each public function runs as one compiled program (`jit_eagerly`), as
JAX jits them, instead of dispatching its many small ops one by one. Loops have a fixed
trip count (`lax.fori_loop` over a scan), so grad, jit and vmap go
through them; each branch sees inputs clamped into its own domain so that the branch
`where` drops never leaks NaN into gradients.
"""
from __future__ import annotations

import math

from mjax import lax
from mjax import numpy as jnp
from mjax.ad import custom_jvp
from mjax.numpy.linalg import jit_eagerly

_ITERS = 256  # enough for a up to ~1e3 in float64 (terms shrink like exp(-n^2 / 2a))


def _float(name, *args):
    return jnp._promote(name, *args, inexact=True)


def _tiny(x):
    return jnp.finfo(x.dtype).tiny


def _lower_gamma_series(a, x):
    """P(a, x) = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a+1)...(a+n)); for x < a + 1."""
    def body(i, carry):
        term, total = carry
        term = term * x / (a + i)
        return term, total + term
    one = jnp.ones_like(x)
    _, total = lax.fori_loop(1, _ITERS, body, (one, one))
    log_pre = a * jnp.log(x) - x - lax.lgamma(a + 1)
    return jnp.exp(log_pre) * total


def _upper_gamma_cf(a, x):
    """Q(a, x) = e^-x x^a / Gamma(a) / (x + 1 - a - 1(1-a)/(x + 3 - a - ...)), by
    modified Lentz; for x >= a + 1."""
    tiny = _tiny(x)
    b = x + 1 - a
    c = jnp.full_like(x, 1 / tiny)
    d = 1 / b
    h = d

    def body(i, carry):
        b, c, d, h = carry
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = jnp.where(jnp.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = jnp.where(jnp.abs(c) < tiny, tiny, c)
        d = 1 / d
        return b, c, d, h * d * c
    _, _, _, h = lax.fori_loop(1, _ITERS, body, (b, c, d, h))
    return jnp.exp(a * jnp.log(x) - x - lax.lgamma(a)) * h


def _gamma_parts(a, x):
    """(use_series, P from the series, Q from the continued fraction), domains split at
    x = a + 1 where each converges fastest."""
    a = jnp.where(a > 0, a, jnp.ones_like(a))
    series = x < a + 1
    xs = jnp.where(series, jnp.clip(x, _tiny(x), None), a + 1)
    xc = jnp.where(series, a + 1, x)
    xc = jnp.where(jnp.isinf(xc), a + 1, xc)
    return series, _lower_gamma_series(a, xs), _upper_gamma_cf(a, xc)


def _gamma_edges(a, x, value, at_zero_x, at_zero_a):
    nan = jnp.full_like(value, jnp.nan)
    out = jnp.where(x == 0, at_zero_x, value)
    out = jnp.where(jnp.isinf(x) & (x > 0), 1 - at_zero_x, out)
    out = jnp.where((a == 0) & (x > 0), at_zero_a, out)
    bad = (a < 0) | (x < 0) | jnp.isnan(a) | jnp.isnan(x) | ((a == 0) & (x == 0))
    return jnp.where(bad, nan, out)


@jit_eagerly("a", "x")
def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x).
    JAX: jax.scipy.special.gammainc."""
    a, x = _float("gammainc", a, x)
    series, p, q = _gamma_parts(a, x)
    return _gamma_edges(a, x, jnp.where(series, p, 1 - q), 0.0, 1.0)


@jit_eagerly("a", "x")
def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).
    JAX: jax.scipy.special.gammaincc."""
    a, x = _float("gammaincc", a, x)
    series, p, q = _gamma_parts(a, x)
    return _gamma_edges(a, x, jnp.where(series, 1 - p, q), 1.0, 0.0)


def _beta_cf(a, b, x):
    """The continued fraction of I_x(a, b) (Numerical Recipes' betacf), modified Lentz."""
    tiny = _tiny(x)
    qab, qap, qam = a + b, a + 1, a - 1
    c = jnp.ones_like(x)
    d = 1 - qab * x / qap
    d = 1 / jnp.where(jnp.abs(d) < tiny, tiny, d)
    h = d

    def step(d, c, aa):
        d = 1 + aa * d
        d = 1 / jnp.where(jnp.abs(d) < tiny, tiny, d)
        c = 1 + aa / c
        c = jnp.where(jnp.abs(c) < tiny, tiny, c)
        return d, c

    def body(m, carry):
        c, d, h = carry
        m = jnp.asarray(m, x.dtype)
        m2 = 2 * m
        d, c = step(d, c, m * (b - m) * x / ((qam + m2) * (a + m2)))
        h = h * d * c
        d, c = step(d, c, -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)))
        return c, d, h * d * c
    _, _, h = lax.fori_loop(1, _ITERS, body, (c, d, h))
    return h


@jit_eagerly("a", "b", "x")
def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b).
    JAX: jax.scipy.special.betainc."""
    a, b, x = _float("betainc", a, b, x)
    ok = (a > 0) & (b > 0)
    sa, sb = jnp.where(ok, a, 1), jnp.where(ok, b, 1)
    inside = (x > 0) & (x < 1)
    sx = jnp.where(inside, x, 0.5)
    # The fraction converges fast below (a+1)/(a+b+2); above, use I_x(a,b) = 1 - I_1-x(b,a).
    flip = sx > (sa + 1) / (sa + sb + 2)
    fa, fb = jnp.where(flip, sb, sa), jnp.where(flip, sa, sb)
    fx = jnp.where(flip, 1 - sx, sx)
    log_front = (fa * jnp.log(fx) + fb * jnp.log1p(-fx) - lax.lgamma(fa) - lax.lgamma(fb)
                 + lax.lgamma(fa + fb))
    part = jnp.exp(log_front) * _beta_cf(fa, fb, fx) / fa
    value = jnp.where(flip, 1 - part, part)
    value = jnp.where(x <= 0, 0.0, jnp.where(x >= 1, 1.0, value))
    # Degenerate shapes, as SciPy: a == 0 puts all mass at 0, b == 0 at 1.
    value = jnp.where((a == 0) & (b > 0), 1.0, value)
    value = jnp.where((b == 0) & (a > 0), 0.0, value)
    bad = (a < 0) | (b < 0) | ((a == 0) & (b == 0)) | (x < 0) | (x > 1) | jnp.isnan(x)
    return jnp.where(bad, jnp.nan, value)


def _bessel_ie(nu, x):
    """exp(-|x|) I_nu(|x|) for nu in {0, 1}: power series below 20, the asymptotic
    expansion e^x / sqrt(2 pi x) sum_k (-1)^k a_k(nu) / x^k above."""
    ax = jnp.abs(x)
    small = ax <= 20
    xs = jnp.where(small, ax, 1)
    q = xs * xs / 4
    term = jnp.ones_like(xs) if nu == 0 else xs / 2
    total = term
    for k in range(1, 60):
        term = term * q / (k * (k + nu))
        total = total + term
    series = total * jnp.exp(-xs)
    xl = jnp.where(small, 21, ax)
    mu = 4 * nu * nu
    term, total = jnp.ones_like(xl), jnp.ones_like(xl)
    for k in range(1, 20):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8 * xl)
        total = total + term
    asym = total / jnp.sqrt(2 * math.pi * xl)
    return jnp.where(small, series, asym)


@jit_eagerly("x")
def i0e(x):
    """exp(-|x|) I0(x). JAX: jax.scipy.special.i0e."""
    (x,) = _float("i0e", x)
    return _bessel_ie(0, x)


@jit_eagerly("x")
def i1e(x):
    """exp(-|x|) I1(x), odd in x. JAX: jax.scipy.special.i1e."""
    (x,) = _float("i1e", x)
    return jnp.sign(x) * _bessel_ie(1, x)


@jit_eagerly("x")
def i0(x):
    """The modified Bessel function I0(x). JAX: jax.scipy.special.i0."""
    (x,) = _float("i0", x)
    return jnp.exp(jnp.abs(x)) * _bessel_ie(0, x)


@jit_eagerly("x")
def i1(x):
    """The modified Bessel function I1(x). JAX: jax.scipy.special.i1."""
    (x,) = _float("i1", x)
    return jnp.sign(x) * jnp.exp(jnp.abs(x)) * _bessel_ie(1, x)


# B_2j / (2j)! for the Euler-Maclaurin tail of the zeta sum.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798)


@jit_eagerly("x", "q")
def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (k + q)^-x (Riemann's for q=None), for x > 1.
    JAX: jax.scipy.special.zeta."""
    if q is None:
        (x,) = _float("zeta", x)
        q = jnp.ones_like(x)
    else:
        x, q = _float("zeta", x, q)
    s = jnp.where(x > 1, x, 2)
    n = 12
    total = sum(jnp.power(q + k, -s) for k in range(n))
    w = q + n
    total = total + jnp.power(w, 1 - s) / (s - 1) + jnp.power(w, -s) / 2
    rising = s  # s (s+1) ... (s + 2j - 2)
    wpow = jnp.power(w, -s - 1)
    fact = 1.0
    for j, b2j in enumerate(_BERNOULLI, start=1):
        fact *= (2 * j) * (2 * j - 1)
        total = total + b2j / fact * rising * wpow
        rising = rising * (s + 2 * j - 1) * (s + 2 * j)
        wpow = wpow / (w * w)
    out = jnp.where(x == 1, jnp.inf, jnp.where(x < 1, jnp.nan, total))
    # q a nonpositive integer hits a pole.
    pole = (q <= 0) & (q == jnp.floor(q))
    return jnp.where(pole, jnp.inf, out)


@custom_jvp
def _ndtri(p):
    from mjax.scipy.special import log_ndtr
    lower = p <= 0.5
    pl = jnp.where(lower, p, 1 - p)  # the lower tail: solve ndtr(x) = pl with x <= 0
    pl = jnp.clip(pl, _tiny(pl), 0.5)
    # Abramowitz & Stegun 26.2.23 as the start, then Newton steps on log ndtr(x) = log pl.
    t = jnp.sqrt(-2 * jnp.log(pl))
    x = -(t - (2.515517 + 0.802853 * t + 0.010328 * t * t)
          / (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t))
    log_p = jnp.log(pl)
    for _ in range(4):
        log_cdf = log_ndtr(x)
        log_pdf = -0.5 * x * x - 0.5 * math.log(2 * math.pi)
        x = x - (log_cdf - log_p) * jnp.exp(log_cdf - log_pdf)
    x = jnp.where(lower, x, -x)
    x = jnp.where(p == 0.5, 0.0, x)
    x = jnp.where(p == 0, -jnp.inf, jnp.where(p == 1, jnp.inf, x))
    return jnp.where((p < 0) | (p > 1) | jnp.isnan(p), jnp.nan, x)


@_ndtri.defjvp
def _ndtri_jvp(primals, tangents):
    (p,), (t,) = primals, tangents
    x = _ndtri(p)
    return x, t * jnp.sqrt(2 * math.pi) * jnp.exp(0.5 * x * x)


@jit_eagerly("p")
def ndtri(p):
    """The inverse of the standard normal CDF. JAX: jax.scipy.special.ndtri."""
    (p,) = _float("ndtri", p)
    return _ndtri(p)
