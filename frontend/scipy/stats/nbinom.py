"""The negative binomial distribution (JAX's `jax.scipy.stats.nbinom`): the number of
failures y = k - loc before the n-th success, success probability p."""
from __future__ import annotations

from mjax import lax
from mjax import numpy as jnp
from mjax.scipy import special
from mjax.scipy.stats._util import not_weak, promote


def logpmf(k, n, p, loc=0):
    """log Gamma(y + n) - log Gamma(y + 1) - log Gamma(n) + n log p + y log(1 - p);
    -inf for k < loc. JAX: jax.scipy.stats.nbinom.logpmf."""
    k_is_array = jnp.ndim(k) > 0
    k, n, p, loc = promote("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    # (JAX's order, and y log(1 - p) as its xlogy: the same roundings)
    log_comb = (lax.lgamma(y + n) - lax.lgamma(n)) - lax.lgamma(y + 1)
    value = log_comb + (special.xlogy(n, p) + special.xlogy(y, 1 - p))
    value = jnp.where(k < loc, -jnp.inf, value)
    # JAX's result is weakly typed only for a scalar k (its constant 1 takes k's shape).
    return not_weak(value) if k_is_array else value


def pmf(k, n, p, loc=0):
    """JAX: jax.scipy.stats.nbinom.pmf."""
    return jnp.exp(logpmf(k, n, p, loc))
