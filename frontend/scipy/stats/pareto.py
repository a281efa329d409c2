"""The Pareto distribution with shape b on [loc + scale, inf) (JAX's
`jax.scipy.stats.pareto`): sf y^-b with y = (x - loc) / scale."""
from __future__ import annotations

from mjax import numpy as jnp
from mjax.scipy.stats._util import promote


def _args(name, x, b, loc, scale):
    x, b, loc, scale = promote(f"pareto.{name}", x, b, loc, scale)
    return x, b, (x - loc) / scale, x < loc + scale


def logpdf(x, b, loc=0, scale=1):
    """-log(scale / b) - (b + 1) log y; -inf below loc + scale. (The one logarithm of
    scale / b keeps JAX's values when both are negative.)
    JAX: jax.scipy.stats.pareto.logpdf."""
    x, b, y, below = _args("logpdf", x, b, loc, scale)
    value = -jnp.log(scale / b) - (b + 1) * jnp.log(y)
    return jnp.where(below, -jnp.inf, value)


def pdf(x, b, loc=0, scale=1):
    """The density. JAX: jax.scipy.stats.pareto.pdf."""
    return jnp.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    """1 - y^-b; 0 below loc + scale. JAX: jax.scipy.stats.pareto.cdf."""
    x, b, y, below = _args("cdf", x, b, loc, scale)
    return jnp.where(below, 0.0, 1 - y ** -b)


def logcdf(x, b, loc=0, scale=1):
    """log1p(-y^-b); -inf below loc + scale. JAX: jax.scipy.stats.pareto.logcdf."""
    x, b, y, below = _args("logcdf", x, b, loc, scale)
    return jnp.where(below, -jnp.inf, jnp.log1p(-(y ** -b)))


def logsf(x, b, loc=0, scale=1):
    """-b log y; 0 below loc + scale. JAX: jax.scipy.stats.pareto.logsf."""
    x, b, y, below = _args("logsf", x, b, loc, scale)
    return jnp.where(below, 0.0, -b * jnp.log(y))


def sf(x, b, loc=0, scale=1):
    """JAX: jax.scipy.stats.pareto.sf."""
    return jnp.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    """loc + scale (1 - q)^(-1/b); nan off [0, 1]. JAX: jax.scipy.stats.pareto.ppf."""
    q, b, loc, scale = promote("pareto.ppf", q, b, loc, scale)
    value = loc + scale * (1 - q) ** (-1 / b)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), jnp.nan, value)
