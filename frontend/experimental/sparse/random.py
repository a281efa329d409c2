"""JAX's module jax.experimental.sparse.random: `random_bcoo`."""
from mjax.experimental.sparse.api import random_bcoo  # noqa: F401
