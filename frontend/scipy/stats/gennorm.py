"""The generalized normal distribution with shape beta (JAX's `jax.scipy.stats.gennorm`)."""
from __future__ import annotations

from mjax import lax
from mjax import numpy as jnp
from mjax.scipy.stats._util import promote


def logpdf(x, beta):
    """log(beta / 2) - log Gamma(1 / beta) - |x|^beta. JAX: jax.scipy.stats.gennorm.logpdf."""
    x, beta = promote("gennorm.logpdf", x, beta)
    return jnp.log(0.5 * beta) - lax.lgamma(1 / beta) - jnp.abs(x) ** beta


def pdf(x, beta):
    """The density. JAX: jax.scipy.stats.gennorm.pdf."""
    return jnp.exp(logpdf(x, beta))


def cdf(x, beta):
    """(1 + sign(x) P(1 / beta, |x|^beta)) / 2. JAX: jax.scipy.stats.gennorm.cdf."""
    x, beta = promote("gennorm.cdf", x, beta)
    p = lax.igamma(1 / beta, jnp.abs(x) ** beta)
    # (mjax's lax.igamma drops a weak type that JAX's keeps: restore it)
    p = lax.convert_element_type(p, p.dtype, weak_type=x.weak_type)
    return 0.5 * (1 + jnp.sign(x) * p)
