"""JAX-private: jax._src.checkify (flax.nnx): mjax.experimental.checkify's names."""
from mjax.experimental.checkify import *  # noqa: F401,F403
