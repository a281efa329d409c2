"""JAX-private: jax._src.random, the PRNG implementation registry (prng) and the
threefry implementation's key functions (threefry2x32) that JAX's Pallas PRNG kernels
(jax.experimental.pallas.ops.tpu.random: threefry.py, philox.py) import to define their
jax.random implementations."""
from __future__ import annotations

from mjax.lax import prng as _prng


def default_prng_impl():
    """The configured default implementation (jax_default_prng_impl) as its PRNGImpl."""
    return _prng.impl_of(_prng.resolve_impl(None))
