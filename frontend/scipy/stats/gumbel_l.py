"""The left-skewed Gumbel (minimum extreme value) distribution (JAX's
`jax.scipy.stats.gumbel_l`): cdf 1 - exp(-exp(z)), z = (x - loc) / scale.
Every function but ppf is nan unless scale > 0."""
from __future__ import annotations

from mjax import numpy as jnp
from mjax.scipy.stats._util import promote


def _z(name, x, loc, scale):
    x, loc, scale = promote(f"gumbel_l.{name}", x, loc, scale)
    return (x - loc) / scale, scale


def logpdf(x, loc=0, scale=1):
    """z - exp(z) - log(scale). JAX: jax.scipy.stats.gumbel_l.logpdf."""
    z, scale = _z("logpdf", x, loc, scale)
    return jnp.where(scale > 0, z - jnp.exp(z) - jnp.log(scale), jnp.nan)


def pdf(x, loc=0, scale=1):
    """The density. JAX: jax.scipy.stats.gumbel_l.pdf."""
    return jnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """log(1 - exp(-exp(z))), through expm1 so the left tail keeps its digits.
    JAX: jax.scipy.stats.gumbel_l.logcdf."""
    z, scale = _z("logcdf", x, loc, scale)
    return jnp.where(scale > 0, jnp.log(-jnp.expm1(-jnp.exp(z))), jnp.nan)


def cdf(x, loc=0, scale=1):
    """JAX: jax.scipy.stats.gumbel_l.cdf."""
    return jnp.exp(logcdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """-exp(z). JAX: jax.scipy.stats.gumbel_l.logsf."""
    z, scale = _z("logsf", x, loc, scale)
    return jnp.where(scale > 0, -jnp.exp(z), jnp.nan)


def sf(x, loc=0, scale=1):
    """JAX: jax.scipy.stats.gumbel_l.sf."""
    return jnp.exp(logsf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    """loc + scale log(-log(1 - p)) on 0 < p < 1, else nan (scale is not checked, as in
    JAX). JAX: jax.scipy.stats.gumbel_l.ppf."""
    p, loc, scale = promote("gumbel_l.ppf", p, loc, scale)
    value = loc + scale * jnp.log(-jnp.log1p(-p))
    return jnp.where((p > 0) & (p < 1), value, jnp.nan)
