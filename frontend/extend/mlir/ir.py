"""JAX: jax.extend.mlir.ir: jaxlib's MLIR core bindings (Context, Module, Operation, ...).

mjax's own IR lives in the same bindings; its process-wide context is
`mjax.dialect.context`."""
from jaxlib.mlir.ir import *  # noqa: F401,F403
