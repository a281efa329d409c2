"""The Poisson distribution (JAX's `jax.scipy.stats.poisson`)."""
from __future__ import annotations

from mjax import lax
from mjax import numpy as jnp
from mjax.scipy import special
from mjax.scipy.stats._util import const, promote


def logpmf(k, mu, loc=0):
    """k log mu - mu - log k!; -inf off the nonnegative integers.
    JAX: jax.scipy.stats.poisson.logpmf."""
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    # JAX's ops in JAX's order (the same bits)
    x = lax.sub(k, loc)
    value = special.xlogy(x, mu) - special.gammaln(x + 1) - mu
    off = jnp.logical_or(lax.lt(x, const(k, 0)), lax.ne(jnp.round(k), k))
    return jnp.where(off, -jnp.inf, value)


def pmf(k, mu, loc=0):
    """JAX: jax.scipy.stats.poisson.pmf."""
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    """P(K <= k) = Q(floor(k) + 1, mu); 0 below 0. JAX: jax.scipy.stats.poisson.cdf."""
    k, mu, loc = promote("poisson.cdf", k, mu, loc)
    zero = const(k, 0)     # (JAX's typed constant: the result is weak only if k is)
    x = lax.sub(k, loc)
    p = special.gammaincc(jnp.floor(1 + x), mu)
    return jnp.where(lax.lt(x, zero), zero, p)


def entropy(mu, loc=0):
    """The entropy -sum_k p(k) log p(k), summed over k up to well past mu.
    JAX: jax.scipy.stats.poisson.entropy."""
    mu, loc = promote("poisson.entropy", mu, loc)
    kmax = 1000  # mass beyond is negligible for mu below a few hundred
    k = jnp.arange(kmax, dtype=mu.dtype).reshape((kmax,) + (1,) * mu.ndim)
    logp = logpmf(k, mu)
    terms = jnp.where(jnp.isfinite(logp), -jnp.exp(logp) * logp, 0.0)
    return jnp.where(mu == 0, 0.0, jnp.sum(terms, axis=0))
