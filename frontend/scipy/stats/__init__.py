"""`mjax.scipy.stats`: probability distributions over `mjax.numpy` and
`mjax.scipy.special` (JAX's `jax.scipy.stats`), one module per distribution, and the
statistics functions mode, rankdata, sem and gaussian_kde."""
from mjax.scipy.stats import (bernoulli, beta, betabinom, binom, cauchy, chi2,  # noqa: F401
                              dirichlet, expon, gamma, gennorm, geom, gumbel_l, gumbel_r,
                              laplace, logistic, multinomial, multivariate_normal, nbinom,
                              norm, pareto, poisson, t, truncnorm, uniform, vonmises,
                              wrapcauchy)
from mjax.scipy.stats._core import mode, rankdata, sem  # noqa: F401
from mjax.scipy.stats._kde import gaussian_kde  # noqa: F401
