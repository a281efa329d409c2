"""Student's t distribution (JAX's `jax.scipy.stats.t`)."""
from __future__ import annotations

import math

from mjax import lax
from mjax import numpy as jnp
from mjax.scipy.stats._util import const, promote


def logpdf(x, df, loc=0, scale=1):
    """log of the t density with `df` degrees of freedom. JAX: jax.scipy.stats.t.logpdf."""
    x, df, loc, scale = promote("t.logpdf", x, df, loc, scale)
    # JAX's ops in JAX's order (the same bits)
    two = const(x, 2)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    df_over_two = lax.div(df, two)
    df_plus_one_over_two = lax.add(df_over_two, const(x, 0.5))
    normalize_term_const = lax.mul(lax.mul(scale, scale), const(x, math.pi))
    normalize_term_tmp = lax.div(lax.log(lax.mul(normalize_term_const, df)), two)
    normalize_term = lax.sub(lax.add(lax.lgamma(df_over_two), normalize_term_tmp),
                             lax.lgamma(df_plus_one_over_two))
    quadratic = lax.div(lax.mul(scaled_x, scaled_x), df)
    return lax.neg(lax.add(normalize_term, lax.mul(df_plus_one_over_two, lax.log1p(quadratic))))


def pdf(x, df, loc=0, scale=1):
    """The t density. JAX: jax.scipy.stats.t.pdf."""
    return jnp.exp(logpdf(x, df, loc, scale))
