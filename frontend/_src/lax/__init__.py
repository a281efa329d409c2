"""jax._src.lax: its `lax` module (`from jax._src.lax import lax`, as JAX's "primitives"
documentation page writes it) is mjax.lax."""
from mjax._src.lax import lax  # noqa: F401
