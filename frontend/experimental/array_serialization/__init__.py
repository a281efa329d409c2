"""`mjax.experimental.array_serialization`: checkpointing arrays (with their shardings)
through TensorStore. JAX: jax.experimental.array_serialization (its `serialization` and
`tensorstore_impl` modules; they need the `tensorstore` package)."""
