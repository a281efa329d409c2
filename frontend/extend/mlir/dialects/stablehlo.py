"""JAX: jax.extend.mlir.dialects.stablehlo: jaxlib's MLIR `stablehlo` dialect bindings."""
from jaxlib.mlir.dialects.stablehlo import *  # noqa: F401,F403
