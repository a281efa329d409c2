"""JAX: jax.interpreters.xla: JAX's legacy XLA helpers. mjax's runtime
(mjax.runtime) compiles and runs StableHLO; none of it is exposed here."""
