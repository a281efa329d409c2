"""The regularized incomplete beta function I_x(a, b) (`lax.betainc`), computed as JAX
computes it (XLA's client library math.cc, as jax/_src/lax/special.py writes it), op for
op, so that the values are JAX's bit for bit:

- below the mean-ish point x < (a + 1) / (a + b + 2) the continued fraction of DLMF 8.17.22
  converges fast; above it the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) is used;
- the fraction is evaluated by the modified Lentz (Thompson-Barnett) method in one while
  loop over the whole array, until every element's step is within eps/2 of 1 (at most 200
  steps in float32, 600 otherwise); converged elements keep iterating with the rest;
- the prefactor x^a (1-x)^b / (a B(a, b)) is taken in logs (for a below 2 tiny, through
  a Gamma(a) = Gamma(a + 1) ~ 1); zero, one and NaN cases are selected last;
- float16 and bfloat16 operands are computed in float32 and rounded back.

JAX's primitive has a derivative in x only (in a or b it raises ValueError); here the
composition is given that rule, and runs as one compiled program when called eagerly.
"""
from __future__ import annotations

import functools

import numpy as np

from mjax.specs import dtypes
from mjax.tracing import registration
from mjax.tracing.core import aval_of_value
from mjax.lax.control_flow import while_loop
from mjax.lax.elementwise import (abs, convert_element_type, exp, full_like, lgamma, log,
                                  log1p, select)
from mjax.lax.igamma import _any
from mjax.lax.shapes import broadcast_to
from mjax.tracing.staging import jit_eagerly


def _upcast(impl):
    """Half floats in float32, rounded back; the result weak when all operands are."""
    def run(a, b, x):
        avals = [aval_of_value(v) for v in (a, b, x)]
        dtype = np.dtype(avals[0].dtype)
        if dtype in (np.dtype(np.float16), np.dtype(dtypes.bfloat16)):
            out = impl(*(convert_element_type(v, np.float32) for v in (a, b, x)),
                       np.dtype(np.float32))
        else:
            out = impl(a, b, x, dtype)
        weak = all(av.weak_type for av in avals)
        return convert_element_type(out, dtype, weak_type=weak)
    return run


def _numerator(step, a, b, x, dtype):
    """The step-th partial numerator of the fraction (1 for the first step)."""
    step = broadcast_to(step, aval_of_value(a).shape)
    even = (step % 2) == 0
    m_int = (step - 1) // 2
    m = convert_element_type(m_int, dtype)
    one, two = full_like(a, 1), full_like(a, 2.0)
    a2m = a + two * m
    first_even = -(a + b) * x / (a + one)  # (m = 0 kept apart: exact as a -> 0)
    even_num = select(m_int == 0, first_even,
                      -(a + m) * (a + b + m) * x / (a2m * (a2m + one)))
    odd_num = m * (b - m) * x / ((a2m - one) * a2m)
    return select(step == 1, full_like(x, 1.0), select(even, even_num, odd_num))


def _lentz(a, b, x, dtype):
    """The continued fraction, every partial denominator 1 after the first (0)."""
    small = np.asarray(dtypes.finfo(dtype).eps / 2, dtype)
    steps = 200 if dtype == np.float32 else 600
    h0 = full_like(x, small)  # (the 0th denominator, 0, replaced by `small`)

    def body(vals):
        step, _, c, d, h = vals
        num = _numerator(step, a, b, x, dtype)
        small_c = full_like(c, small)
        c = full_like(x, 1) + num / c
        c = select(abs(c) < small_c, small_c, c)
        d = full_like(x, 1) + num * d
        d = select(abs(d) < small_c, small_c, d)
        d = full_like(d, 1) / d
        delta = c * d
        unconverged = _any(abs(delta - full_like(delta, 1.0)) >= small_c)
        return step + 1, unconverged, c, d, h * delta

    init = (1, True, h0, full_like(h0, 0), h0)
    return while_loop(lambda v: (v[0] < steps) & v[1], body, init)[4]


def _betainc(a, b, x, dtype):
    zero, one = full_like(a, 0), full_like(a, 1)
    inf = full_like(a, float("inf"))
    a_is_zero = (a == zero) | (b == inf)
    b_is_zero = (b == zero) | (a == inf)
    x_is_zero, x_is_one = x == zero, x == one
    is_nan = (a != a) | (b != b) | (x != x)
    result_is_zero = (b_is_zero & ~x_is_one) | (a_is_zero & x_is_zero)
    result_is_one = (a_is_zero & ~x_is_zero) | (b_is_zero & x_is_one)
    result_is_nan = ((a < zero) | (b < zero) | (x < zero) | (x > one)
                     | ((a_is_zero & b_is_zero) | is_nan))
    fast = x < (a + one) / (a + b + full_like(b, 2.0))
    a, b = select(fast, a, b), select(fast, b, a)
    x = select(fast, x, one - x)
    fraction = _lentz(a, b, x, dtype)
    very_small = np.asarray(dtypes.finfo(dtype).tiny * 2, dtype)
    lbeta_small_a = lgamma(b) - lgamma(a + b)
    lbeta = lgamma(a) + lbeta_small_a
    factor = select(a < full_like(a, very_small), exp(log1p(-x) * b - lbeta_small_a),
                    exp(log(x) * a + log1p(-x) * b - lbeta) / a)
    result = fraction * factor
    result = select(fast, result, one - result)
    result = select(result_is_zero, zero, result)
    result = select(result_is_one, one, result)
    return select(result_is_nan, full_like(a, float("nan")), result)


@jit_eagerly("a", "b", "x")
@_upcast
def betainc_value(a, b, x, dtype):
    return _betainc(a, b, x, dtype)


def _grad_params(g, a, b, x):
    raise ValueError("Betainc gradient with respect to a and b not supported.")


def _gradx(g, a, b, x):
    lbeta = lgamma(a) + lgamma(b) - lgamma(a + b)
    return exp((b - 1) * log1p(-x) + (a - 1) * log(x) - lbeta) * g


@functools.cache
def _differentiable():
    # (built at first use: the slot is filled by a floor above)
    return registration.DEFJVP(betainc_value, "regularized_incomplete_beta",
                               (_grad_params, _grad_params, _gradx))


def betainc(a, b, x):
    """I_x(a, b) of operands of one floating dtype and shape."""
    return _differentiable()(a, b, x)
