"""JAX: jax.extend.mlir.dialects.mpmd: jaxlib's MLIR `mpmd` dialect bindings."""
from jaxlib.mlir.dialects.mpmd import *  # noqa: F401,F403
