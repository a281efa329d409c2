"""The beta distribution on [loc, loc + scale] (JAX's `jax.scipy.stats.beta`)."""
from __future__ import annotations

from mjax import numpy as jnp
from mjax.scipy import special
from mjax.scipy.stats._util import promote


def logpdf(x, a, b, loc=0, scale=1):
    """log density; -inf outside [loc, loc + scale]. JAX: jax.scipy.stats.beta.logpdf."""
    x, a, b, loc, scale = promote("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    value = (special.xlogy(a - 1, y) + special.xlog1py(b - 1, -y) - special.betaln(a, b)
             - jnp.log(scale))
    return jnp.where((x < loc) | (x > loc + scale), -jnp.inf, value)


def pdf(x, a, b, loc=0, scale=1):
    """The density. JAX: jax.scipy.stats.beta.pdf."""
    return jnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1):
    """I_y(a, b) with y = (x - loc) / scale clipped to [0, 1]. JAX: jax.scipy.stats.beta.cdf."""
    x, a, b, loc, scale = promote("beta.cdf", x, a, b, loc, scale)
    return special.betainc(a, b, jnp.clip((x - loc) / scale, 0, 1))


def logcdf(x, a, b, loc=0, scale=1):
    """log cdf. JAX: jax.scipy.stats.beta.logcdf."""
    return jnp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    """1 - cdf, as I_1-y(b, a). JAX: jax.scipy.stats.beta.sf."""
    x, a, b, loc, scale = promote("beta.sf", x, a, b, loc, scale)
    return special.betainc(b, a, 1 - jnp.clip((x - loc) / scale, 0, 1))


def logsf(x, a, b, loc=0, scale=1):
    """log sf. JAX: jax.scipy.stats.beta.logsf."""
    return jnp.log(sf(x, a, b, loc, scale))
