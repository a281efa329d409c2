"""JAX-private: jax._src.flatten_util (blackjax): ravel_pytree."""
from mjax.flatten_util import ravel_pytree  # noqa: F401
