"""JAX: jax.extend.mlir.dialects.func: jaxlib's MLIR `func` dialect bindings."""
from jaxlib.mlir.dialects.func import *  # noqa: F401,F403
