"""jax._src.numpy: only `util` (JAX's linalg_test imports promote_dtypes_inexact)."""
