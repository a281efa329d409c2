"""JAX-private: jax._src.state (flax.nnx)."""
