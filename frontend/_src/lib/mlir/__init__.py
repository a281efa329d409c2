"""jax._src.lib.mlir: jaxlib's MLIR bindings (ir, passmanager) and dialects."""
from jaxlib.mlir import ir, passmanager  # noqa: F401
