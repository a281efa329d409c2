"""The chi-squared distribution, gamma(df / 2, scale 2) (JAX's `jax.scipy.stats.chi2`)."""
from __future__ import annotations

from mjax.scipy.stats import gamma as _gamma
from mjax.scipy.stats._util import promote


def _args(name, x, df, loc, scale):
    x, df, loc, scale = promote(name, x, df, loc, scale)
    return x, df / 2, loc, 2 * scale


def logpdf(x, df, loc=0, scale=1):
    """JAX: jax.scipy.stats.chi2.logpdf."""
    return _gamma.logpdf(*_args("chi2.logpdf", x, df, loc, scale))


def pdf(x, df, loc=0, scale=1):
    """JAX: jax.scipy.stats.chi2.pdf."""
    return _gamma.pdf(*_args("chi2.pdf", x, df, loc, scale))


def cdf(x, df, loc=0, scale=1):
    """JAX: jax.scipy.stats.chi2.cdf."""
    return _gamma.cdf(*_args("chi2.cdf", x, df, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    """JAX: jax.scipy.stats.chi2.logcdf."""
    return _gamma.logcdf(*_args("chi2.logcdf", x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    """JAX: jax.scipy.stats.chi2.sf."""
    return _gamma.sf(*_args("chi2.sf", x, df, loc, scale))


def logsf(x, df, loc=0, scale=1):
    """JAX: jax.scipy.stats.chi2.logsf."""
    return _gamma.logsf(*_args("chi2.logsf", x, df, loc, scale))
