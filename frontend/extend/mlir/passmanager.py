"""JAX: jax.extend.mlir.passmanager: jaxlib's MLIR PassManager bindings."""
from jaxlib.mlir.passmanager import *  # noqa: F401,F403
