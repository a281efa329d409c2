"""`mjax.random`: stateless pseudo-random numbers from explicit keys (JAX: jax.random).

Keys are typed (`key(seed)`, dtype `key<fry>`) or raw (`PRNGKey(seed)`, uint32[2]).
Every sampler follows JAX's algorithm step by step, so a key gives the same bits as in
JAX (threefry2x32 with JAX's default partitionable counters), eagerly, under `jit` and
under `vmap`. Each sampler is a jitted function of the key and its array arguments, with
shape and dtype static, as in JAX.

The modules, each importing only those above it: `arguments` (checks and wrappers),
`keys`, `front_doors` (checks shared by many samplers), `uniform_normal`, `discrete`,
`continuous`, `choices`, `gamma_sampler`, `gamma_families`, `multivariate`.
"""
from mjax.lax import key_ops  # noqa: F401 (lax's ops on key arrays; fills BIND_ON_KEYS)
from mjax.lax.prng import PRNGKeyArray
from mjax.random.keys import (PRNGKey, bits, clone, fold_in, key, key_data, key_dtype,
                              key_impl, split, wrap_key_data)
from mjax.random.uniform_normal import normal, truncated_normal, uniform
from mjax.random.discrete import (bernoulli, binomial, geometric, multinomial, poisson,
                                  rademacher, randint)
from mjax.random.continuous import (cauchy, double_sided_maxwell, exponential, gumbel,
                                    laplace, logistic, lognormal, maxwell, pareto, rayleigh,
                                    triangular, wald, weibull_min)
from mjax.random.choices import categorical, choice, permutation
from mjax.random.gamma_sampler import gamma, loggamma
from mjax.random.gamma_families import beta, chisquare, f, generalized_normal, t
from mjax.random.multivariate import ball, dirichlet, multivariate_normal, orthogonal

__all__ = ["key", "PRNGKey", "key_data", "wrap_key_data", "key_impl", "split", "fold_in",
           "bits", "clone", "uniform", "normal", "truncated_normal", "bernoulli", "randint",
           "choice", "permutation", "categorical", "gumbel", "exponential", "laplace",
           "logistic", "cauchy", "rademacher", "gamma", "loggamma", "beta", "dirichlet",
           "poisson", "binomial", "multivariate_normal", "orthogonal", "ball", "t",
           "chisquare", "f", "maxwell", "double_sided_maxwell", "weibull_min", "pareto",
           "geometric", "generalized_normal", "triangular", "lognormal", "rayleigh",
           "wald", "multinomial", "key_dtype", "PRNGKeyArray"]
