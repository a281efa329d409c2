"""JAX: jax.extend.mlir.dialects.sdy: jaxlib's MLIR `sdy` dialect bindings."""
from jaxlib.mlir.dialects.sdy import *  # noqa: F401,F403
