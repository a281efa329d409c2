"""The von Mises distribution on the circle (JAX's `jax.scipy.stats.vonmises`)."""
from __future__ import annotations

import math

from mjax import numpy as jnp
from mjax.scipy import special
from mjax.scipy.stats._util import promote


def logpdf(x, kappa):
    """kappa cos(x) - log(2 pi I0(kappa)), with I0 scaled (i0e) so large kappa does not
    overflow; nan unless kappa > 0. JAX: jax.scipy.stats.vonmises.logpdf."""
    x, kappa = promote("vonmises.logpdf", x, kappa)
    value = kappa * (jnp.cos(x) - 1) - jnp.log(2 * math.pi * special.i0e(kappa))
    return jnp.where(kappa > 0, value, jnp.nan)


def pdf(x, kappa):
    """The density. JAX: jax.scipy.stats.vonmises.pdf."""
    return jnp.exp(logpdf(x, kappa))
