"""JAX: jax.extend.mlir.dialects.scf: jaxlib's MLIR `scf` dialect bindings."""
from jaxlib.mlir.dialects.scf import *  # noqa: F401,F403
