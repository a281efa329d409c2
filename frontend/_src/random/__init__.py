"""JAX-private: jax._src.random, the PRNG implementation registry (prng) and the
threefry implementation's key functions (threefry2x32) that JAX's Pallas PRNG kernels
(jax.experimental.pallas.ops.tpu.random: threefry.py, philox.py) import to define their
jax.random implementations."""
