"""JAX-private: jax._src.pallas, only the test helpers JAX's Pallas tests import
(pallas_test_util)."""
