"""JAX-private: jax._src.hijax (JAX's Pallas tests define high-level types with it):
mjax.experimental.hijax's names."""
from mjax.experimental.hijax import *  # noqa: F401,F403
from mjax.experimental.hijax import HiType, register_hitype  # noqa: F401
