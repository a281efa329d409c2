"""jax._src.lax.lax: mjax.lax's functions (the module JAX's lax functions live in)."""
from mjax.lax import *  # noqa: F401,F403
