"""JAX: jax.extend.mlir.dialects.sparse_tensor: jaxlib's MLIR `sparse_tensor` dialect bindings."""
from jaxlib.mlir.dialects.sparse_tensor import *  # noqa: F401,F403
