"""The exponential integrals E_n(x) (`expn`), E_1 (`exp1`) and Ei (`expi`), written as JAX
writes them (from Cephes' expn.c and ei.c), so that the values agree to the bit (over
an array, E_n's looped cases may differ in the last bits: mapped loops are fused
differently from JAX's by XLA):

- expn maps a scalar function over the broadcast (n, x) (`jnp.vectorize`); per element a
  case is chosen as `jnp.piecewise` does (the last condition that holds; a `lax.switch`
  on that index): NaN for n < 0 or x < 0, inf at x = 0 for n < 2, 1/n at x = 0 (JAX's
  value; SciPy's is 1/(n-1)), e^-x / x for n = 0, the asymptotic expansion for
  n >= 5000, the continued fraction for x > 1 and the power series otherwise (the series
  and the fraction loop per element until their term is below eps; unlike JAX's, they
  also stop on the elements they are not chosen for);
- expi uses -E_1(-x) below 0 and Cephes' rational forms on (0, 2], (2, 4], ...,
  (32, 64], (64, inf) above, each again picked by `piecewise` (Ei(0) and Ei(+inf) are
  NaN, as JAX's);
- derivatives are JAX's rules: d/dx E_n = -E_{n-1}, d/dx Ei = e^x / x.
"""
from __future__ import annotations

import numpy as np

from mjax import lax
from mjax import numpy as jnp
from mjax.ad import custom_jvp
from mjax.jit.api import jit
from mjax.scipy import special_tables as T
from mjax.specs import dtypes


def _c(x, v):
    return np.array(v, dtype=jnp.asarray(x).dtype)


def _piecewise(x, conds, funcs, **kw):
    """jnp.piecewise's choice: funcs[0] is the default, funcs[i + 1] where conds[i] is the
    last condition that holds; constants are broadcast, each result cast to x's dtype."""
    dtype = x.dtype
    conds = jnp.asarray(conds, dtype=bool)
    index = jnp.argmax(jnp.cumsum(jnp.concatenate([jnp.zeros_like(conds[:1]), conds], 0),
                                  0), 0)

    def branch(f):
        if callable(f):
            return lambda x: f(x, **kw).astype(dtype)
        return lambda x: jnp.array(f, dtype=dtype)
    return jnp.vectorize(lax.switch, excluded=(1,))(index, [branch(f) for f in funcs], x)


def _choose(x, conds, funcs, **kw):
    """piecewise's argument order: the last function is the default (one more than
    conditions)."""
    return _piecewise(x, conds, [funcs[-1]] + list(funcs[:-1]), **kw)


# ---- E_n ------------------------------------------------------------------------------------
def _expn_series(x, n):
    """0 < x <= 1: psi(n) (x^(n-1) (-1)^(n-1) / (n-1)!) minus the power series."""
    eps = dtypes.finfo(x.dtype).eps
    zero, one = _c(x, 0.0), _c(x, 1.0)
    psi = -np.euler_gamma - jnp.log(x)
    psi = lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] + one / c[0]),
                         (_c(n, 1), psi))[1]
    n1 = jnp.where(n == _c(n, 1), one + one, n)
    init = dict(x=x, z=-x, xk=zero, yk=one, pk=one - n,
                ans=jnp.where(n == _c(n, 1), zero, one / (one - n1)), t=np.inf)

    def body(d):
        d = dict(d)
        d["xk"] = d["xk"] + one
        d["yk"] = d["yk"] * (d["z"] / d["xk"])
        d["pk"] = d["pk"] + one
        d["ans"] = d["ans"] + jnp.where(d["pk"] != zero, d["yk"] / d["pk"], zero)
        d["t"] = jnp.where(d["ans"] != zero, abs(d["yk"] / d["ans"]), one)
        return d
    d = lax.while_loop(lambda d: (d["x"] > _c(d["x"], 0.0)) & (d["t"] > eps), body, init)
    # (JAX's n reaches this branch as an operand of its switch, so XLA computes lgamma(n)
    # at run time even for a constant n; the barrier keeps it from being folded here)
    gamma_n = jnp.exp(lax.lgamma(lax.optimization_barrier(n)))
    return d["z"] ** (n - _c(n, 1)) * psi / gamma_n - d["ans"]


def _expn_fraction(x, n):
    """x > 1: the continued fraction, its convergents divided by 2^57 when they grow."""
    big = _c(x, 1.44115188075855872e17)
    eps = dtypes.finfo(x.dtype).eps
    zero, one = _c(x, 0.0), _c(x, 1.0)
    init = dict(k=_c(n, 1), pkm2=one, qkm2=x, pkm1=one, qkm1=x + n, ans=one / (x + n),
                t=_c(x, np.inf), r=zero, x=x)

    def body(d):
        d = dict(d)
        x = d["x"]
        d["k"] = k = d["k"] + _c(d["k"], 1)
        odd = k % _c(k, 2) == _c(k, 1)
        yk = jnp.where(odd, one, x)
        xk = jnp.where(odd, n + (k - _c(k, 1)) / _c(k, 2), k / _c(k, 2))
        pk = d["pkm1"] * yk + d["pkm2"] * xk
        qk = d["qkm1"] * yk + d["qkm2"] * xk
        nz = qk != zero
        d["r"] = r = jnp.where(nz, pk / qk, d["r"])
        d["t"] = jnp.where(nz, abs((d["ans"] - r) / r), one)
        d["ans"] = jnp.where(nz, r, d["ans"])
        d["pkm2"], d["pkm1"], d["qkm2"], d["qkm1"] = d["pkm1"], pk, d["qkm1"], qk
        is_big = abs(pk) > big
        for key in ("pkm1", "pkm2", "qkm1", "qkm2"):
            d[key] = jnp.where(is_big, d[key] / big, d[key])
        return d
    d = lax.while_loop(lambda d: (d["x"] > _c(d["k"], 0)) & (d["t"] > eps), body, init)
    return d["ans"] * jnp.exp(-x)


def _expn_large_n(x, n):
    """n >= 5000: the uniform asymptotic expansion."""
    one = _c(x, 1.0)
    xk = x + n
    yk = one / (xk * xk)
    ans = yk * n * (_c(x, 6) * x * x - _c(x, 8) * n * x + n * n)
    ans = yk * (ans + n * (n - _c(x, 2) * x))
    ans = yk * (ans + n)
    return (ans + one) * jnp.exp(-x) / xk


@jit
def _expn_scalar(n, x):
    zero, one = _c(x, 0), _c(x, 1)
    conds = [(n < _c(n, 0)) | (x < zero), (x == zero) & (n < _c(n, 2)),
             (x == zero) & (n >= _c(n, 2)), (n == _c(n, 0)) & (x >= zero),
             n >= _c(n, 5000), x > one]
    n1 = jnp.where(n == _c(n, 1), n + n, n)  # (n = 1 is not taken there: no 1/0)
    return _choose(x, conds, [np.nan, np.inf, one / n1, jnp.exp(-x) / x, _expn_large_n,
                              _fraction_if_taken, _series_if_taken], n=n)


# Mapped over an array, every case is computed for every element (the switch becomes a
# select), so the loops also run on the elements they are not chosen for: JAX's never
# stop there for a tiny x > 0 in the fraction or a huge n in the series. These give each
# loop an argument it finishes on where it is not chosen (the chosen values are the same).
def _fraction_if_taken(x, n):
    return _expn_fraction(jnp.where((x > _c(x, 0)) & (x <= _c(x, 1)), _c(x, 2), x), n)


def _series_if_taken(x, n):
    return _expn_series(x, jnp.where(n >= _c(n, 5000), _c(n, 1), n))


def _real(name, *args):
    args = jnp._promote(name, *[jnp.asarray(a) for a in args], inexact=True,
                        broadcast=False)
    if any(jnp.iscomplexobj(a) for a in args):
        raise ValueError(f"{name} does not support complex-valued inputs.")
    return args


def _expn_any(n, x):
    n, x = _real("expn", n, x)
    return jnp.vectorize(_expn_scalar)(n, x)


_expn = custom_jvp(_expn_any, nondiff_argnums=(0,))


@_expn.defjvp
def _expn_jvp(n, primals, tangents):
    (x,), (dx,) = primals, tangents
    return _expn(n, x), lax.mul(lax.neg(dx), _expn(lax.sub(n, _c(n, 1)), x))


def expn(n, x):
    """The generalized exponential integral E_n(x) = int_1^inf e^(-x t) / t^n dt, real
    arguments (differentiable in x only). JAX: jax.scipy.special.expn."""
    return _expn(n, x)


def exp1(x):
    """The exponential integral E_1(x) = int_x^inf e^-t / t dt, real x.
    JAX: jax.scipy.special.exp1."""
    (x,) = _real("exp1", x)
    return _expn(1, x)


# ---- Ei ---------------------------------------------------------------------------------------
def _ei_small(x):
    """0 < x <= 2: a rational form plus gamma + log x."""
    f = (jnp.polyval(np.array(T.EI1_P, x.dtype), x)
         / jnp.polyval(np.array(T.EI1_Q, x.dtype), x))
    return x * f + np.euler_gamma + jnp.log(x)


def _ei_tail(p, q):
    def f(x):
        one = _c(x, 1.0)
        w = one / x
        r = jnp.polyval(np.array(p, x.dtype), w) / jnp.polyval(np.array(q, x.dtype), w)
        return jnp.exp(x) * w * (w * r + one)
    return f


_EI_TAILS = [_ei_tail(getattr(T, f"EI{i}_P"), getattr(T, f"EI{i}_Q")) for i in range(2, 8)]


def _ei_positive(x):
    conds = [(_c(x, 0) < x) & (x <= _c(x, 2))] + [
        (_c(x, 2 ** i) < x) & (x <= _c(x, 2 ** (i + 1))) for i in range(1, 6)]
    return _choose(x, conds, [_ei_small] + _EI_TAILS)


def _ei_negative(x):
    return -exp1(-x)


@custom_jvp
@jit
def _expi(x):
    return _choose(x, [x < 0], [_ei_negative, _ei_positive])


@_expi.defjvp
@jit
def _expi_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return _expi(x), jnp.exp(x) / x * dx


def expi(x):
    """The exponential integral Ei(x) = int_{-inf}^x e^t / t dt, real x.
    JAX: jax.scipy.special.expi."""
    (x,) = _real("expi", x)
    return _expi(x)
