"""JAX: jax.extend.mlir.dialects.chlo: jaxlib's MLIR `chlo` dialect bindings."""
from jaxlib.mlir.dialects.chlo import *  # noqa: F401,F403
