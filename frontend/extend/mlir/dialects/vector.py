"""JAX: jax.extend.mlir.dialects.vector: jaxlib's MLIR `vector` dialect bindings."""
from jaxlib.mlir.dialects.vector import *  # noqa: F401,F403
