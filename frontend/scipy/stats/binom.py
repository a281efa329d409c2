"""The binomial distribution (JAX's `jax.scipy.stats.binom`)."""
from __future__ import annotations

from mjax import lax
from mjax import numpy as jnp
from mjax.scipy import special
from mjax.scipy.stats._util import promote


def logpmf(k, n, p, loc=0):
    """log C(n, k) + k log p + (n - k) log(1 - p) on 0 <= k <= n.
    JAX: jax.scipy.stats.binom.logpmf."""
    k, n, p, loc = promote("binom.logpmf", k, n, p, loc)
    y = k - loc
    comb = lax.lgamma(n + 1) - lax.lgamma(y + 1) - lax.lgamma(n - y + 1)
    value = comb + special.xlogy(y, p) + special.xlog1py(n - y, -p)
    return jnp.where((y < 0) | (y > n), -jnp.inf, value)


def pmf(k, n, p, loc=0):
    """JAX: jax.scipy.stats.binom.pmf."""
    return jnp.exp(logpmf(k, n, p, loc))
