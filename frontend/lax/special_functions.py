"""`lax` special functions that JAX also builds from other ops rather than lowering to
one HLO op: the regularized incomplete gamma functions and their derivatives in a (their
operands checked here, computed as JAX's in mjax.lax.igamma), the regularized incomplete
beta function (a continued fraction) and the Hurwitz zeta function (mjax.scipy.special
builds on them). The exponentially scaled Bessel functions I0e and I1e are ops of their
own (JAX's primitives; passes/rules/bessel.py).

The beta function's loop has a fixed trip count (`fori_loop` over a scan), so grad, jit
and vmap go through it; each branch sees inputs clamped into its own domain so that the
branch a `select` drops never leaks NaN into gradients. Called eagerly, each runs as one
compiled program (`jit_eagerly`), as JAX jits them.
"""
from __future__ import annotations

import numpy as np

from mjax.specs import dtypes
from mjax.tracing.core import aval_of_value, bind
from mjax.dialect.ops.elementwise import BesselI0eOp, BesselI1eOp
from mjax.lax import igamma as _ig
from mjax.lax.control_flow import fori_loop
from mjax.lax.elementwise import (_prepare, abs, as_array, convert_element_type, exp,
                                  floor, full_like, lgamma, log, log1p, ne, pow, select)
from mjax.lax.shapes import broadcast_to
from mjax.tracing.staging import jit_eagerly


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
    return _ig.igamma(*_floats("igamma", a, x))


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x). JAX: lax.igammac."""
    return _ig.igammac(*_floats("igammac", a, x))


def igamma_grad_a(a, x):
    """d/da P(a, x). JAX: lax.igamma_grad_a."""
    return _ig.igamma_grad_a(*_floats("igamma_grad_a", a, x))


def random_gamma_grad(a, x):
    """d x / d a for a Gamma(a, 1) sample x (implicit reparameterization).
    JAX: lax.random_gamma_grad."""
    return _ig.random_gamma_grad_value(*_floats("random_gamma_grad", a, x))


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


# ---- incomplete beta, Bessel, zeta ---------------------------------------------------
_ITERS = 256  # enough for a up to ~1e3 in float64 (terms shrink like exp(-n^2 / 2a))


def _tiny(x):
    return dtypes.finfo(aval_of_value(x).dtype).tiny


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
