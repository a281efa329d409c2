"""The Bernoulli distribution (JAX's `jax.scipy.stats.bernoulli`)."""
from __future__ import annotations

from mjax import lax
from mjax import numpy as jnp
from mjax.scipy import special
from mjax.scipy.stats._util import const, promote


def logpmf(k, p, loc=0):
    """k log p + (1 - k) log(1 - p) on [0, 1] (as JAX, k need not be an integer), -inf
    outside.
    JAX: jax.scipy.stats.bernoulli.logpmf."""
    k, p, loc = promote("bernoulli.logpmf", k, p, loc)
    # JAX's typed constants: the result is weak only if k is
    zero, one = const(k, 0), const(k, 1)
    x = lax.sub(k, loc)
    value = special.xlogy(x, p) + special.xlog1py(lax.sub(one, x), -p)
    return jnp.where(jnp.logical_or(lax.lt(x, zero), lax.gt(x, one)), -jnp.inf, value)


def pmf(k, p, loc=0):
    """JAX: jax.scipy.stats.bernoulli.pmf."""
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    """0 below 0, 1 - p on [0, 1), 1 from 1; NaN for p outside [0, 1].
    JAX: jax.scipy.stats.bernoulli.cdf."""
    k, p = promote("bernoulli.cdf", k, p)
    zero, one = const(k, 0), const(k, 1)     # (JAX's typed constants: weak only if k is)
    conds = [jnp.isnan(k) | jnp.isnan(p) | (p < zero) | (p > one), lax.lt(k, zero),
             jnp.logical_and(lax.ge(k, zero), lax.lt(k, one)), lax.ge(k, one)]
    return jnp.select(conds, [jnp.nan, zero, one - p, one])


def ppf(q, p):
    """The smallest k in {0, 1} with cdf(k) >= q; NaN for q or p outside [0, 1].
    JAX: jax.scipy.stats.bernoulli.ppf."""
    q, p = promote("bernoulli.ppf", q, p)
    value = jnp.where(q > 1 - p, jnp.ones_like(q), jnp.zeros_like(q))   # (q's type: strong)
    return jnp.where((q < 0) | (q > 1) | (p < 0) | (p > 1), jnp.nan, value)
