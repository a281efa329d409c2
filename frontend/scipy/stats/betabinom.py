"""The beta-binomial distribution (JAX's `jax.scipy.stats.betabinom`)."""
from __future__ import annotations

from mjax import numpy as jnp
from mjax.scipy import special
from mjax.scipy.stats._util import promote


def logpmf(k, n, a, b, loc=0):
    """log C(n, y) + log B(y + a, n - y + b) - log B(a, b) with y = floor(k) - loc (k is
    floored, loc is not, as in JAX); -inf off 0 <= y <= n, nan for n < 0 or a, b <= 0.
    JAX: jax.scipy.stats.betabinom.logpmf."""
    k, n, a, b, loc = promote("betabinom.logpmf", k, n, a, b, loc)
    y = jnp.floor(k) - loc
    # C(n, y) = 1 / ((n + 1) B(n - y + 1, y + 1)), defined for real y as JAX does.
    log_comb = -jnp.log1p(n) - special.betaln(n - y + 1, y + 1)
    value = log_comb + special.betaln(y + a, n - y + b) - special.betaln(a, b)
    value = jnp.where((y == 0) & (n == 0), 0.0, value)
    value = jnp.where((y < 0) | (y > n), -jnp.inf, value)
    return jnp.where((n < 0) | (a <= 0) | (b <= 0), jnp.nan, value)


def pmf(k, n, a, b, loc=0):
    """JAX: jax.scipy.stats.betabinom.pmf."""
    return jnp.exp(logpmf(k, n, a, b, loc))
