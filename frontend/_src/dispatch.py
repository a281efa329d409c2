"""JAX-private: jax._src.dispatch (equinox): waiting for pending effects."""
from mjax.callbacks import effects_barrier as wait_for_tokens  # noqa: F401
