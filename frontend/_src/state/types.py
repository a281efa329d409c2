"""JAX-private: jax._src.state.types (flax.nnx): the aval of a mutable ref."""
from mjax.dialect.types import RefAval as AbstractRef  # noqa: F401
