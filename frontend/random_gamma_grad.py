"""d x / d a for a Gamma(a, 1) sample x, by implicit differentiation of its CDF.

With F(a, x) the regularized lower incomplete gamma function, holding F fixed gives
dx/da = -(dF/da) / (dF/dx). dF/da comes from the derivative of F's power series (x <= 1
or x <= a) or of the continued fraction of its complement (otherwise), iterated until
the derivative converges, as JAX's lax.random_gamma_grad (Cephes' igam/igamc) does.
A composition of jaxpr ops (elementwise while loops), so it batches and lowers with them.
"""
from __future__ import annotations

import numpy as np

from mjax import dtypes
from mjax import lax
from mjax import numpy as jnp


def _full(x, value):
    return jnp.full(x.shape, value, x.dtype)


def _series(x, a, enabled, eps):
    """(ans, d ans/da) of the power series sum_n x^n / (a+1)...(a+n)."""
    def cond(v):
        return jnp.any(v[0])

    def body(v):
        on, r, c, ans, dc_da, dans_da = v
        r2 = r + 1
        dc_da2 = dc_da * (x / r2) - (c * x) / (r2 * r2)
        dans_da2 = dans_da + dc_da2
        c2 = c * (x / r2)
        ans2 = ans + c2
        keep = on & (jnp.abs(dc_da2 / dans_da2) > eps)
        pick = lambda new, old: jnp.where(on, new, old)  # noqa: E731
        return (keep, pick(r2, r), pick(c2, c), pick(ans2, ans), pick(dc_da2, dc_da),
                pick(dans_da2, dans_da))
    init = (enabled, a, _full(a, 1), _full(a, 1), _full(a, 0), _full(a, 0))
    out = lax.while_loop(cond, body, init)
    return out[3], out[5]


def _continued_fraction(x, a, enabled, eps):
    """(ans, d ans/da) of the continued fraction of the upper incomplete gamma."""
    def cond(v):
        return jnp.any(v[0]) & (v[5] < 2000)

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
        t2 = jnp.where(nonzero, jnp.abs((ans - r) / r), _full(r, 1))
        ans2 = jnp.where(nonzero, r, ans)
        dpk = dpkm1 * z2 - pkm1 - dpkm2 * yc + pkm2 * c2
        dqk = dqkm1 * z2 - qkm1 - dqkm2 * yc + qkm2 * c2
        dans2 = jnp.where(nonzero, (dpk - ans2 * dqk) / qk, dans)
        grad_cond = jnp.where(nonzero, jnp.abs(dans2 - dans), _full(dans, 1))
        npkm2, npkm1, nqkm2, nqkm1 = pkm1, pk, qkm1, qk
        ndpkm2, ndqkm2, ndpkm1, ndqkm1 = dpkm1, dqkm1, dpk, dqk
        rescale = jnp.abs(pk) > 1 / eps
        sc = lambda u: jnp.where(rescale, u * eps, u)  # noqa: E731
        npkm2, npkm1, nqkm2, nqkm1 = sc(npkm2), sc(npkm1), sc(nqkm2), sc(nqkm1)
        ndpkm2, ndqkm2, ndpkm1, ndqkm1 = sc(ndpkm2), sc(ndqkm2), sc(ndpkm1), sc(ndqkm1)
        keep = on & (grad_cond > eps)
        pick = lambda new, old: jnp.where(on, new, old)  # noqa: E731
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
    init = (enabled, ans, _full(x, 1), y, z, jnp.asarray(np.asarray(0, x.dtype)), pkm1, qkm1, pkm2,
            qkm2, _full(x, 0), _full(x, 0), _full(x, 0), dqkm1, dans)
    out = lax.while_loop(cond, body, init)
    return out[1], out[14]


def random_gamma_grad(a, x):
    """d x / d a of Gamma(a, 1) samples x (elementwise). JAX: lax.random_gamma_grad."""
    a, x = jnp.broadcast_arrays(jnp.asarray(a), jnp.asarray(x))
    fi = dtypes.finfo(a.dtype)
    eps = np.asarray(fi.eps, a.dtype)
    is_nan = jnp.isnan(a) | jnp.isnan(x)
    x_is_zero = x == 0
    domain_error = (x < 0) | (a <= 0)
    use_cf = (x > 1) & (x > a)
    ax = a * jnp.log(x) - x - lax.lgamma(a)
    underflow = ax < -np.log(np.asarray(fi.max, np.float64)).astype(a.dtype)
    enabled = ~(x_is_zero | domain_error | underflow | is_nan)
    ans_s, dans_s = _series(x, a, enabled & ~use_cf, eps)
    series = -(dans_s + ans_s * (jnp.log(x) - lax.digamma(a + 1))) * x / a
    ans_c, dans_c = _continued_fraction(x, a, enabled & use_cf, eps)
    cf = -(dans_c + ans_c * (jnp.log(x) - lax.digamma(a))) * x
    out = jnp.where(use_cf, -cf, series)
    out = jnp.where(x_is_zero, jnp.zeros_like(out), out)
    return jnp.where(domain_error | is_nan, jnp.full_like(out, np.nan), out)
