"""`lax` special functions that JAX also builds from other ops rather than lowering to
one HLO op: the regularized incomplete gamma and beta functions (series, continued
fractions), the Hurwitz zeta function, and the reparameterized gamma-sample gradient
d x / d a (mjax.scipy.special builds on them). The exponentially scaled Bessel functions
I0e and I1e are ops of their own (JAX's primitives; passes/rules/bessel.py).

Loops have a fixed trip count (`fori_loop` over a scan) or run elementwise while loops,
so grad, jit and vmap go through them; each branch sees inputs clamped into its own
domain so that the branch a `select` drops never leaks NaN into gradients. Called
eagerly, each runs as one compiled program (`jit_eagerly`), as JAX jits them.
"""
from __future__ import annotations

import numpy as np

from mjax import dtypes
from mjax.core import aval_of_value, bind
from mjax.dialect.ops.elementwise import BesselI0eOp, BesselI1eOp
from mjax.lax.control_flow import fori_loop, while_loop
from mjax.lax.elementwise import (_prepare, abs, as_array, convert_element_type, digamma, eq,
                                  exp, floor, full, full_like, lgamma, log, log1p, max, ne,
                                  pow, select)
from mjax.lax.reduce import reduce_or
from mjax.lax.shapes import broadcast_to
from mjax.staging import jit_eagerly


# ---- the public functions: JAX's checks (floating operands), promoted and broadcast ------
def _floats(name, *args):
    """The operands as arrays of one floating dtype and shape; JAX's TypeError for others."""
    arrays = [as_array(a) for a in args]
    avals = [aval_of_value(a) for a in arrays]
    for i, av in enumerate(avals):
        if not dtypes.issubdtype(av.dtype, np.floating):
            raise TypeError(f"{name} does not accept dtype {av.dtype} at position {i}. "
                            f"Accepted dtypes at position {i} are subtypes of floating.")
    dtype, weak = dtypes.promote_types(*[(av.dtype, av.weak_type) for av in avals])
    shape = np.broadcast_shapes(*[av.shape for av in avals])
    return [broadcast_to(convert_element_type(a, dtype, weak_type=weak), shape)
            for a in arrays]


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x). JAX: lax.igamma."""
    return _gammainc(*_floats("igamma", a, x))


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x). JAX: lax.igammac."""
    return _gammaincc(*_floats("igammac", a, x))


def igamma_grad_a(a, x):
    """d/da P(a, x), from the gamma-sample gradient: holding P fixed, dx/da = -(dP/da) /
    (dP/dx) with dP/dx = x^(a-1) e^-x / Gamma(a). JAX: lax.igamma_grad_a."""
    a, x = _floats("igamma_grad_a", a, x)
    return _igamma_grad_a(a, x)


@jit_eagerly("a", "x")
def _igamma_grad_a(a, x):
    return -_random_gamma_grad(a, x) * exp((a - 1) * log(x) - x - lgamma(a))


def random_gamma_grad(a, x):
    """d x / d a for a Gamma(a, 1) sample x (implicit reparameterization).
    JAX: lax.random_gamma_grad."""
    return _random_gamma_grad(*_floats("random_gamma_grad", a, x))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b). JAX: lax.betainc."""
    return _betainc(*_floats("betainc", a, b, x))


def bessel_i0e(x):
    """exp(-|x|) I0(x). JAX: lax.bessel_i0e."""
    return bind(BesselI0eOp, *_floats("bessel_i0e", x))


def bessel_i1e(x):
    """exp(-|x|) I1(x). JAX: lax.bessel_i1e."""
    return bind(BesselI1eOp, *_floats("bessel_i1e", x))


def zeta(x, q):
    """The Hurwitz zeta function. JAX: lax.zeta."""
    return _zeta(*_floats("zeta", x, q))


# ---- helpers --------------------------------------------------------------------------------
def _where(c, x, y):
    """jnp.where for these compositions: Python scalars take the arrays' dtype, scalars
    broadcast."""
    x, y = _prepare(x, y, fn="where", strict=False)
    shape = np.broadcast_shapes(*[aval_of_value(v).shape for v in (c, x, y)])
    return select(broadcast_to(c, shape), broadcast_to(x, shape), broadcast_to(y, shape))


def _isnan(x):
    return ne(x, x)


def _isinf(x):
    return eq(abs(x), full_like(x, np.inf))


# ---- incomplete gamma and beta, Bessel, zeta ---------------------------------------------------
_ITERS = 256  # enough for a up to ~1e3 in float64 (terms shrink like exp(-n^2 / 2a))


def _tiny(x):
    return dtypes.finfo(aval_of_value(x).dtype).tiny


def _lower_gamma_series(a, x):
    """P(a, x) = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a+1)...(a+n)); for x < a + 1."""
    def body(i, carry):
        term, total = carry
        term = term * x / (a + i)
        return term, total + term
    one = full_like(x, 1)
    _, total = fori_loop(1, _ITERS, body, (one, one))
    log_pre = a * log(x) - x - lgamma(a + 1)
    return exp(log_pre) * total


def _upper_gamma_cf(a, x):
    """Q(a, x) = e^-x x^a / Gamma(a) / (x + 1 - a - 1(1-a)/(x + 3 - a - ...)), by
    modified Lentz; for x >= a + 1."""
    tiny = _tiny(x)
    b = x + 1 - a
    c = full_like(x, 1 / tiny)
    d = 1 / b
    h = d

    def body(i, carry):
        b, c, d, h = carry
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = _where(abs(d) < tiny, tiny, d)
        c = b + an / c
        c = _where(abs(c) < tiny, tiny, c)
        d = 1 / d
        return b, c, d, h * d * c
    _, _, _, h = fori_loop(1, _ITERS, body, (b, c, d, h))
    return exp(a * log(x) - x - lgamma(a)) * h


def _gamma_parts(a, x):
    """(use_series, P from the series, Q from the continued fraction), domains split at
    x = a + 1 where each converges fastest."""
    a = _where(a > 0, a, full_like(a, 1))
    series = x < a + 1
    xs = _where(series, max(x, _tiny(x)), a + 1)
    xc = _where(series, a + 1, x)
    xc = _where(_isinf(xc), a + 1, xc)
    return series, _lower_gamma_series(a, xs), _upper_gamma_cf(a, xc)


def _gamma_edges(a, x, value, at_zero_x, at_zero_a):
    nan = full_like(value, np.nan)
    out = _where(x == 0, at_zero_x, value)
    out = _where(_isinf(x) & (x > 0), 1 - at_zero_x, out)
    out = _where((a == 0) & (x > 0), at_zero_a, out)
    bad = (a < 0) | (x < 0) | _isnan(a) | _isnan(x) | ((a == 0) & (x == 0))
    return _where(bad, nan, out)


@jit_eagerly("a", "x")
def _gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    series, p, q = _gamma_parts(a, x)
    return _gamma_edges(a, x, _where(series, p, 1 - q), 0.0, 1.0)


@jit_eagerly("a", "x")
def _gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    series, p, q = _gamma_parts(a, x)
    return _gamma_edges(a, x, _where(series, 1 - p, q), 1.0, 0.0)


def _beta_cf(a, b, x):
    """The continued fraction of I_x(a, b) (Numerical Recipes' betacf), modified Lentz."""
    tiny = _tiny(x)
    qab, qap, qam = a + b, a + 1, a - 1
    c = full_like(x, 1)
    d = 1 - qab * x / qap
    d = 1 / _where(abs(d) < tiny, tiny, d)
    h = d

    def step(d, c, aa):
        d = 1 + aa * d
        d = 1 / _where(abs(d) < tiny, tiny, d)
        c = 1 + aa / c
        c = _where(abs(c) < tiny, tiny, c)
        return d, c

    def body(m, carry):
        c, d, h = carry
        m = convert_element_type(m, x.dtype)
        m2 = 2 * m
        d, c = step(d, c, m * (b - m) * x / ((qam + m2) * (a + m2)))
        h = h * d * c
        d, c = step(d, c, -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)))
        return c, d, h * d * c
    _, _, h = fori_loop(1, _ITERS, body, (c, d, h))
    return h


@jit_eagerly("a", "b", "x")
def _betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    ok = (a > 0) & (b > 0)
    sa, sb = _where(ok, a, 1), _where(ok, b, 1)
    inside = (x > 0) & (x < 1)
    sx = _where(inside, x, 0.5)
    # The fraction converges fast below (a+1)/(a+b+2); above, use I_x(a,b) = 1 - I_1-x(b,a).
    flip = sx > (sa + 1) / (sa + sb + 2)
    fa, fb = _where(flip, sb, sa), _where(flip, sa, sb)
    fx = _where(flip, 1 - sx, sx)
    log_front = (fa * log(fx) + fb * log1p(-fx) - lgamma(fa) - lgamma(fb)
                 + lgamma(fa + fb))
    part = exp(log_front) * _beta_cf(fa, fb, fx) / fa
    value = _where(flip, 1 - part, part)
    value = _where(x <= 0, 0.0, _where(x >= 1, 1.0, value))
    # Degenerate shapes, as SciPy: a == 0 puts all mass at 0, b == 0 at 1.
    value = _where((a == 0) & (b > 0), 1.0, value)
    value = _where((b == 0) & (a > 0), 0.0, value)
    bad = (a < 0) | (b < 0) | ((a == 0) & (b == 0)) | (x < 0) | (x > 1) | _isnan(x)
    return _where(bad, np.nan, value)


# B_2j / (2j)! for the Euler-Maclaurin tail of the zeta sum.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798)


@jit_eagerly("x", "q")
def _zeta(x, q):
    """The Hurwitz zeta function sum_k (k + q)^-x, for x > 1."""
    s = _where(x > 1, x, 2)
    n = 12
    total = sum(pow(q + k, -s) for k in range(n))
    w = q + n
    total = total + pow(w, 1 - s) / (s - 1) + pow(w, -s) / 2
    rising = s  # s (s+1) ... (s + 2j - 2)
    wpow = pow(w, -s - 1)
    fact = 1.0
    for j, b2j in enumerate(_BERNOULLI, start=1):
        fact *= (2 * j) * (2 * j - 1)
        total = total + b2j / fact * rising * wpow
        rising = rising * (s + 2 * j - 1) * (s + 2 * j)
        wpow = wpow / (w * w)
    out = _where(x == 1, np.inf, _where(x < 1, np.nan, total))
    # q a nonpositive integer hits a pole.
    pole = (q <= 0) & (q == floor(q))
    return _where(pole, np.inf, out)


# ---- d x / d a of a Gamma(a, 1) sample (JAX: lax.random_gamma_grad) ---------------------
# By implicit differentiation of its CDF F(a, x): dx/da = -(dF/da) / (dF/dx). dF/da comes from
# the derivative of F's power series (x <= 1 or x <= a) or of the continued fraction of its
# complement (otherwise), iterated until the derivative converges, as JAX's (Cephes' igam/igamc).
def _full(x, value):
    return full(aval_of_value(x).shape, value, aval_of_value(x).dtype)


def _series(x, a, enabled, eps):
    """(ans, d ans/da) of the power series sum_n x^n / (a+1)...(a+n)."""
    def cond(v):
        return reduce_or(v[0], tuple(range(aval_of_value(v[0]).ndim)))

    def body(v):
        on, r, c, ans, dc_da, dans_da = v
        r2 = r + 1
        dc_da2 = dc_da * (x / r2) - (c * x) / (r2 * r2)
        dans_da2 = dans_da + dc_da2
        c2 = c * (x / r2)
        ans2 = ans + c2
        keep = on & (abs(dc_da2 / dans_da2) > eps)
        pick = lambda new, old: _where(on, new, old)  # noqa: E731
        return (keep, pick(r2, r), pick(c2, c), pick(ans2, ans), pick(dc_da2, dc_da),
                pick(dans_da2, dans_da))
    init = (enabled, a, _full(a, 1), _full(a, 1), _full(a, 0), _full(a, 0))
    out = while_loop(cond, body, init)
    return out[3], out[5]


def _continued_fraction(x, a, enabled, eps):
    """(ans, d ans/da) of the continued fraction of the upper incomplete gamma."""
    def cond(v):
        return reduce_or(v[0], tuple(range(aval_of_value(v[0]).ndim))) & (v[5] < 2000)

    def body(v):
        (on, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1,
         dans) = v
        c2 = c + 1
        y2 = y + 1
        z2 = z + 2
        yc = y2 * c2
        pk = pkm1 * z2 - pkm2 * yc
        qk = qkm1 * z2 - qkm2 * yc
        nonzero = qk != 0
        r = pk / qk
        t2 = _where(nonzero, abs((ans - r) / r), _full(r, 1))
        ans2 = _where(nonzero, r, ans)
        dpk = dpkm1 * z2 - pkm1 - dpkm2 * yc + pkm2 * c2
        dqk = dqkm1 * z2 - qkm1 - dqkm2 * yc + qkm2 * c2
        dans2 = _where(nonzero, (dpk - ans2 * dqk) / qk, dans)
        grad_cond = _where(nonzero, abs(dans2 - dans), _full(dans, 1))
        npkm2, npkm1, nqkm2, nqkm1 = pkm1, pk, qkm1, qk
        ndpkm2, ndqkm2, ndpkm1, ndqkm1 = dpkm1, dqkm1, dpk, dqk
        rescale = abs(pk) > 1 / eps
        sc = lambda u: _where(rescale, u * eps, u)  # noqa: E731
        npkm2, npkm1, nqkm2, nqkm1 = sc(npkm2), sc(npkm1), sc(nqkm2), sc(nqkm1)
        ndpkm2, ndqkm2, ndpkm1, ndqkm1 = sc(ndpkm2), sc(ndqkm2), sc(ndpkm1), sc(ndqkm1)
        keep = on & (grad_cond > eps)
        pick = lambda new, old: _where(on, new, old)  # noqa: E731
        return (keep, pick(ans2, ans), pick(t2, t), pick(y2, y), pick(z2, z), c2,
                pick(npkm1, pkm1), pick(nqkm1, qkm1), pick(npkm2, pkm2), pick(nqkm2, qkm2),
                pick(ndpkm2, dpkm2), pick(ndqkm2, dqkm2), pick(ndpkm1, dpkm1),
                pick(ndqkm1, dqkm1), pick(dans2, dans))
    y = 1 - a
    z = x + y + 1
    pkm2 = _full(x, 1)
    qkm2 = x
    pkm1 = x + 1
    qkm1 = z * x
    ans = pkm1 / qkm1
    dqkm1 = -x
    dans = (_full(x, 0) - ans * dqkm1) / qkm1
    init = (enabled, ans, _full(x, 1), y, z, convert_element_type(0, aval_of_value(x).dtype), pkm1, qkm1, pkm2,
            qkm2, _full(x, 0), _full(x, 0), _full(x, 0), dqkm1, dans)
    out = while_loop(cond, body, init)
    return out[1], out[14]


def _random_gamma_grad(a, x):
    """d x / d a of Gamma(a, 1) samples x (elementwise)."""
    dtype = aval_of_value(a).dtype
    fi = dtypes.finfo(dtype)
    eps = np.asarray(fi.eps, dtype)
    is_nan = _isnan(a) | _isnan(x)
    x_is_zero = x == 0
    domain_error = (x < 0) | (a <= 0)
    use_cf = (x > 1) & (x > a)
    ax = a * log(x) - x - lgamma(a)
    underflow = ax < -np.log(np.asarray(fi.max, np.float64)).astype(dtype)
    enabled = ~(x_is_zero | domain_error | underflow | is_nan)
    ans_s, dans_s = _series(x, a, enabled & ~use_cf, eps)
    series = -(dans_s + ans_s * (log(x) - digamma(a + 1))) * x / a
    ans_c, dans_c = _continued_fraction(x, a, enabled & use_cf, eps)
    cf = -(dans_c + ans_c * (log(x) - digamma(a))) * x
    out = _where(use_cf, -cf, series)
    out = _where(x_is_zero, full_like(out, 0), out)
    return _where(domain_error | is_nan, full_like(out, np.nan), out)
