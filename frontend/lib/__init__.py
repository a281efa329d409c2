"""JAX: jax.lib: JAX's jaxlib shim (no public names in JAX 0.10.2). mjax uses jaxlib
directly (mjax.runtime)."""
