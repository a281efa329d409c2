"""JAX-private: jax._src.tree_util (flax.nnx): the pytree registry."""
from mjax.tree_util import default_registry as _registry  # noqa: F401
