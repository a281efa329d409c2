"""The regularized incomplete gamma functions P(a, x) (`lax.igamma`) and Q(a, x)
(`lax.igammac`), d P / d a (`lax.igamma_grad_a`) and d x / d a of a Gamma(a, 1) sample
(`lax.random_gamma_grad`), computed as JAX computes them (XLA's client library
math.cc, as jax/_src/lax/special.py writes it), op for op, so that the values are
JAX's bit for bit:

- per element, a power series of P (`_series`) or a continued fraction of Q (`_cf`,
  Cephes' igamc) is chosen; both iterate in while loops until every element of the
  array has converged (the fraction at most 2000 times), an element that has converged
  or is disabled keeping its values;
- each loop also carries the derivatives in a of its terms, from which d P / d a and the
  sample derivative are read (the `mode` of the loop: "value", "derivative" or
  "sample");
- special cases (x = 0, x = inf, a = 0, NaN, negative operands, an underflowing
  prefactor x^a e^-x / Gamma(a)) are selected last, in JAX's order;
- float16 and bfloat16 operands are computed in float32 and rounded back.

igamma, igammac and igamma_grad_a are primitives in JAX, differentiated by their own
rules (ad.defjvp: d/da of igamma is igamma_grad_a, d/dx is x^(a-1) e^-x / Gamma(a));
here they are these compositions given those rules (registration.DEFJVP), and run as
one compiled program when called eagerly, as a primitive does. random_gamma_grad is a
plain function in JAX and is one here.
"""
from __future__ import annotations

import functools

import numpy as np

from mjax.specs import dtypes
from mjax.tracing import registration
from mjax.tracing.core import aval_of_value
from mjax.lax.control_flow import while_loop
from mjax.lax.elementwise import (abs, convert_element_type, digamma, exp, full_like,
                                  lgamma, log, select)
from mjax.lax.reduce import reduce_or
from mjax.tracing.staging import jit_eagerly


def _upcast(impl):
    """JAX's _up_and_broadcast: float16 and bfloat16 computed in float32 (the operands
    are already of one dtype and shape here); the result is weak when the operands are
    (a primitive's weak type)."""
    def run(a, x):
        aval = aval_of_value(a)
        dtype = np.dtype(aval.dtype)
        if dtype in (np.dtype(np.float16), np.dtype(dtypes.bfloat16)):
            a32, x32 = (convert_element_type(v, np.float32) for v in (a, x))
            out = impl(a32, x32, np.dtype(np.float32))
        else:
            out = impl(a, x, dtype)
        weak = aval.weak_type and aval_of_value(x).weak_type
        return convert_element_type(out, dtype, weak_type=weak)
    return run


def _any(pred):
    return reduce_or(pred, tuple(range(aval_of_value(pred).ndim)))


def _scalar(value, dtype):
    return np.asarray(value, dtype)


def _isnan(v):
    return v != v


def _log_prefactor(a, x):
    """log(x^a e^-x / Gamma(a)) and whether it underflows (below -log(max))."""
    ax = a * log(x) - x - lgamma(a)
    dtype = aval_of_value(a).dtype
    return ax, ax < -log(_scalar(dtypes.finfo(dtype).max, dtype))


# ---- the power series of P(a, x) -------------------------------------------------------------
def _series(ax, x, a, enabled, dtype, mode):
    """P(a, x) = x^a e^-x / Gamma(a + 1) sum_n x^n / ((a+1)...(a+n)), with the derivative
    of the sum in a; `ax` is the prefactor x^a e^-x / Gamma(a)."""
    eps = _scalar(dtypes.finfo(dtype).eps, dtype)

    def body(vals):
        on, r, c, ans, xv, dc_da, dans_da = vals
        r2 = r + 1
        dc_da2 = dc_da * (xv / r2) - (c * xv) / (r2 * r2)
        dans_da2 = dans_da + dc_da2
        c2 = c * (xv / r2)
        ans2 = ans + c2
        if mode == "value":
            going = on & (c2 / ans2 > eps)
        else:
            going = on & (abs(dc_da2 / dans_da2) > eps)
        return (going, select(on, r2, r), select(on, c2, c), select(on, ans2, ans),
                select(on, xv, xv), select(on, dc_da2, dc_da),
                select(on, dans_da2, dans_da))

    one, zero = full_like(a, 1), full_like(a, 0)
    vals = while_loop(lambda v: _any(v[0]), body, (enabled, a, one, one, x, zero, zero))
    ans, dans_da = vals[3], vals[6]
    if mode == "value":
        return (ans * ax) / a
    dlogax_da = log(x) - digamma(a + 1)
    if mode == "derivative":
        return ax * (ans * dlogax_da + dans_da) / a
    return -(dans_da + ans * dlogax_da) * x / a


# ---- the continued fraction of Q(a, x) -------------------------------------------------------
def _cf_body(eps, mode):
    def body(vals):
        (on, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2,
         dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da) = vals
        c = c + 1
        y2 = y + 1
        z2 = z + 2
        yc = y2 * c
        pk = pkm1 * z2 - pkm2 * yc
        qk = qkm1 * z2 - qkm2 * yc
        nonzero = qk != 0
        r = pk / qk
        t2 = select(nonzero, abs((ans - r) / r), full_like(r, 1))
        ans2 = select(nonzero, r, ans)
        dpk_da = dpkm1_da * z2 - pkm1 - dpkm2_da * yc + pkm2 * c
        dqk_da = dqkm1_da * z2 - qkm1 - dqkm2_da * yc + qkm2 * c
        dans_da2 = select(nonzero, (dpk_da - ans2 * dqk_da) / qk, dans_da)
        grad_cond = select(nonzero, abs(dans_da2 - dans_da), full_like(dans_da, 1))
        # shift the recurrences, rescaling them all when p_k grows past 1/eps
        new = [pk, qk, pkm1, qkm1, dpkm1_da, dqkm1_da, dpk_da, dqk_da]
        rescale = abs(pk) > 1 / eps
        (npkm1, nqkm1, npkm2, nqkm2, ndpkm2, ndqkm2, ndpkm1, ndqkm1) = [
            select(rescale, v * eps, v) for v in new]
        if mode == "value":
            going = on & (t2 > eps)
        else:
            going = on & (grad_cond > eps)
        return (going, select(on, ans2, ans), select(on, t2, t), select(on, y2, y),
                select(on, z2, z), c, select(on, npkm1, pkm1), select(on, nqkm1, qkm1),
                select(on, npkm2, pkm2), select(on, nqkm2, qkm2),
                select(on, ndpkm2, dpkm2_da), select(on, ndqkm2, dqkm2_da),
                select(on, ndpkm1, dpkm1_da), select(on, ndqkm1, dqkm1_da),
                select(on, dans_da2, dans_da))
    return body


def _cf(ax, x, a, enabled, dtype, mode):
    """Q(a, x) = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)),
    Cephes' recurrences of its convergents p_k / q_k, with their derivatives in a."""
    eps = _scalar(dtypes.finfo(dtype).eps, dtype)
    y = 1 - a
    z = x + y + 1
    c = _scalar(0, dtype)
    pkm2 = full_like(x, 1)
    qkm2 = x
    pkm1 = x + 1
    qkm1 = z * x
    ans = pkm1 / qkm1
    t = full_like(x, 1)
    dpkm2_da = full_like(x, 0)
    dqkm2_da = full_like(x, 0)
    dpkm1_da = full_like(x, 0)
    dqkm1_da = -x
    dans_da = (dpkm1_da - ans * dqkm1_da) / qkm1
    init = (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2,
            dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da)
    vals = while_loop(lambda v: (v[5] < 2000) & _any(v[0]), _cf_body(eps, mode), init)
    ans = vals[1]
    if mode == "value":
        return ans * ax
    dans_da = vals[14]
    dlogax_da = log(x) - digamma(a)
    if mode == "derivative":
        return ax * (ans * dlogax_da + dans_da)
    return -((dans_da + ans * dlogax_da) * x)


# ---- the functions --------------------------------------------------------------------------
def _igamma(a, x, dtype):
    is_nan = _isnan(a) | _isnan(x)
    x_is_infinity = x == np.inf
    a_is_zero = a == 0
    x_is_zero = x == 0
    domain_error = (x < 0) | (a < 0) | (a_is_zero & x_is_zero) | is_nan
    use_cf = (x >= 1) & (x > a)
    ax, underflow = _log_prefactor(a, x)
    ax = exp(ax)
    enabled = ~(x_is_zero | domain_error | underflow | x_is_infinity)
    out = select(use_cf, 1 - _cf(ax, x, a, enabled & use_cf, dtype, "value"),
                 _series(ax, x, a, enabled & ~use_cf, dtype, "value"))
    out = select(x_is_zero, full_like(a, 0), out)
    out = select(x_is_infinity, full_like(a, 1), out)
    return select(domain_error, full_like(a, np.nan), out)


def _igammac(a, x, dtype):
    is_nan = _isnan(a) | _isnan(x)
    a_is_zero = a == 0
    x_is_zero = x == 0
    x_is_infinity = x == np.inf
    domain_error = (x < 0) | (a < 0) | (a_is_zero & x_is_zero) | is_nan
    use_series = (x < 1) | (x < a)
    ax, underflow = _log_prefactor(a, x)
    enabled = ~(domain_error | underflow | x_is_infinity | a_is_zero)
    ax = exp(ax)
    series = _series(ax, x, a, enabled & use_series, dtype, "value")
    frac = _cf(ax, x, a, enabled & ~use_series, dtype, "value")
    out = select(use_series, 1 - series, frac)
    out = select(x_is_infinity | a_is_zero, full_like(out, 0), out)
    return select(domain_error, full_like(a, np.nan), out)


def _derivative_in_a(a, x, dtype, mode):
    """d P / d a ("derivative") or d x / d a of a Gamma(a, 1) sample ("sample")."""
    is_nan = _isnan(a) | _isnan(x)
    x_is_zero = x == 0
    domain_error = (x < 0) | (a <= 0)
    use_cf = (x > 1) & (x > a)
    ax, underflow = _log_prefactor(a, x)
    ax = exp(ax)
    enabled = ~(x_is_zero | domain_error | underflow | is_nan)
    out = select(use_cf, -_cf(ax, x, a, enabled & use_cf, dtype, mode),
                 _series(ax, x, a, enabled & ~use_cf, dtype, mode))
    out = select(x_is_zero, full_like(out, 0), out)
    return select(domain_error | is_nan, full_like(a, np.nan), out)


@jit_eagerly("a", "x")
@_upcast
def igamma_value(a, x, dtype):
    return _igamma(a, x, dtype)


@jit_eagerly("a", "x")
@_upcast
def igammac_value(a, x, dtype):
    return _igammac(a, x, dtype)


@jit_eagerly("a", "x")
@_upcast
def igamma_grad_a_value(a, x, dtype):
    return _derivative_in_a(a, x, dtype, "derivative")


@_upcast
def random_gamma_grad_value(a, x, dtype):
    return _derivative_in_a(a, x, dtype, "sample")


# ---- JAX's derivative rules (ad.defjvp of igamma_p, igammac_p; none for igamma_grad_a_p) ----
def _gradx(g, a, x):
    return g * exp(-x + (a - full_like(a, 1)) * log(x) - lgamma(a))


def _grada(g, a, x):
    return g * igamma_grad_a(a, x)


@functools.cache
def _differentiable(name):
    """The function of that name, given JAX's derivative rules (built at first use: the
    slot is filled by a floor above)."""
    if name == "igamma":
        return registration.DEFJVP(igamma_value, name, (_grada, _gradx))
    if name == "igammac":
        return registration.DEFJVP(igammac_value, name, (lambda g, a, x: -_grada(g, a, x),
                                                         lambda g, a, x: -_gradx(g, a, x)))
    return registration.DEFJVP(igamma_grad_a_value, name, None)


def igamma(a, x):
    """P(a, x) of operands of one floating dtype and shape."""
    return _differentiable("igamma")(a, x)


def igammac(a, x):
    """Q(a, x) of operands of one floating dtype and shape."""
    return _differentiable("igammac")(a, x)


def igamma_grad_a(a, x):
    """d P(a, x) / d a of operands of one floating dtype and shape."""
    return _differentiable("igamma_grad_a")(a, x)
