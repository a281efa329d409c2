"""Code of JAX's page(s) docs/debugging/flags.md (jax-ml/jax@cec06d116c05, Apache-2.0),
extracted unchanged for test_tutorials.py: one cell per code cell or ```python block."""

# %% docs/debugging/flags.md code-cell tags=
import jax
import jax.numpy as jnp
import traceback
jax.config.update("jax_debug_nans", True)

def f(x):
  w = 3 * jnp.square(x)
  return jnp.log(-w)

# The stack trace is very long so only print a couple lines.
try:
  f(5.)
except FloatingPointError as e:
  print(traceback.format_exc(limit=2))

# %% docs/debugging/flags.md code-cell tags=[raises-exception]
jax.jit(f)(5.)

# %% docs/debugging/flags.md code-cell tags=
with jax.debug_nans(False):
  print(jax.jit(f)(5.))

# %% docs/debugging/flags.md python tags=
import jax
jax.config.update("jax_disable_jit", True)

def f(x):
  y = jnp.log(x)
  if jnp.isnan(y):
    breakpoint()
  return y
jax.jit(f)(-2.)  # ==> Enters PDB breakpoint!
