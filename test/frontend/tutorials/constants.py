"""Code of JAX's page(s) docs/internals/constants.md (jax-ml/jax@cec06d116c05, Apache-2.0),
extracted unchanged for test_tutorials.py: one cell per code cell or ```python block."""

# %% docs/internals/constants.md python tags=
import numpy as np
from jax import jit
from jax import numpy as jnp

a_jax_array = jnp.ones((16,), dtype=np.float32)

@jit
def f(x):
  return x + a_jax_array + np.full((16,), 42.) + jnp.full((16,), 142.)

# %% docs/internals/constants.md python tags=
const = jnp.array([42.])
f = jax.jit(lambda: const)

f()
f()
