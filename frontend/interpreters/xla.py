"""JAX: jax.interpreters.xla: JAX's legacy XLA helpers. mjax's runtime
(mjax.runtime) compiles and runs StableHLO; none of it is exposed here."""
import numpy as np

from mjax.specs import dtypes

# type -> canonicalizer; filled by libraries (TensorFlow Probability's JAX substrate),
# not read by mjax (its arrays are canonicalized by mjax.dtypes).
canonicalize_dtype_handlers: dict = {
    np.ndarray: lambda x: np.asarray(x, dtypes.canonicalize_dtype(x.dtype))}
