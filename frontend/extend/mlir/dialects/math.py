"""JAX: jax.extend.mlir.dialects.math: jaxlib's MLIR `math` dialect bindings."""
from jaxlib.mlir.dialects.math import *  # noqa: F401,F403
