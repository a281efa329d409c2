"""JAX: jax.interpreters.pxla: JAX's SPMD lowering internals. mjax's SPMD path is its
sharding propagation pass and Shardy (mjax.sharding); none of it is exposed here."""
