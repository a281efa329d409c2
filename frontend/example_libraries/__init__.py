"""JAX: jax.example_libraries: the small reference libraries JAX ships, `optimizers`
(first-order optimizers over pytrees of parameters) and `stax` (neural-network layers as
(init_fun, apply_fun) pairs), which libraries such as numpyro build on."""
