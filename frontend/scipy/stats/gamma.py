"""The gamma distribution (JAX's `jax.scipy.stats.gamma`)."""
from __future__ import annotations

import numpy as np

from mjax import lax
from mjax import numpy as jnp
from mjax.scipy import special
from mjax.scipy.stats._util import const, promote


def logpdf(x, a, loc=0, scale=1):
    """log density with shape a; -inf below loc. JAX: jax.scipy.stats.gamma.logpdf."""
    x, a, loc, scale = promote("gamma.logpdf", x, a, loc, scale)
    # JAX's ops in JAX's order (the same bits)
    ok = lax.ge(x, loc)
    one = const(x, 1)
    y = jnp.where(ok, lax.div(lax.sub(x, loc), scale), one)
    log_linear_term = lax.sub(special.xlogy(lax.sub(a, one), y), y)
    shape_terms = lax.add(special.gammaln(a), lax.log(scale))
    return jnp.where(ok, lax.sub(log_linear_term, shape_terms), -np.inf)


def pdf(x, a, loc=0, scale=1):
    """The density. JAX: jax.scipy.stats.gamma.pdf."""
    return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    """P(a, y), y = (x - loc) / scale clipped at 0. JAX: jax.scipy.stats.gamma.cdf."""
    x, a, loc, scale = promote("gamma.cdf", x, a, loc, scale)
    return special.gammainc(a, jnp.clip((x - loc) / scale, 0, None))


def logcdf(x, a, loc=0, scale=1):
    """log cdf. JAX: jax.scipy.stats.gamma.logcdf."""
    return jnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    """Q(a, y). JAX: jax.scipy.stats.gamma.sf."""
    x, a, loc, scale = promote("gamma.sf", x, a, loc, scale)
    return special.gammaincc(a, jnp.clip((x - loc) / scale, 0, None))


def logsf(x, a, loc=0, scale=1):
    """log sf. JAX: jax.scipy.stats.gamma.logsf."""
    return jnp.log(sf(x, a, loc, scale))
