"""JAX-private: jax._src.compiler (chex imports it to patch JAX's compile entry points;
mjax compiles in mjax.runtime and has none of them)."""
