"""jax._src.lib: only its `mlir` bindings (jaxlib's), which lowering rules written for
JAX import from here."""
