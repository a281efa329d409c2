"""JAX: jax.extend.mlir.dialects.arith: jaxlib's MLIR `arith` dialect bindings."""
from jaxlib.mlir.dialects.arith import *  # noqa: F401,F403
