"""JAX: jax.extend.mlir.dialects.builtin: jaxlib's MLIR `builtin` dialect bindings."""
from jaxlib.mlir.dialects.builtin import *  # noqa: F401,F403
