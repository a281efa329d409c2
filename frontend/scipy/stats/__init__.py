"""`mjax.scipy.stats`: probability distributions over `mjax.numpy` and
`mjax.scipy.special` (JAX's `jax.scipy.stats`), one module per distribution."""
from mjax.scipy.stats import (bernoulli, beta, binom, cauchy, chi2, dirichlet,  # noqa: F401
                              expon, gamma, geom, laplace, logistic, multivariate_normal,
                              norm, poisson, t, uniform)
