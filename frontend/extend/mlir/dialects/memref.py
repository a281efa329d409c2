"""JAX: jax.extend.mlir.dialects.memref: jaxlib's MLIR `memref` dialect bindings."""
from jaxlib.mlir.dialects.memref import *  # noqa: F401,F403
