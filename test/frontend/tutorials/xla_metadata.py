"""Code of JAX's page(s) docs/debugging/xla_metadata.md (jax-ml/jax@cec06d116c05, Apache-2.0),
extracted unchanged for test_tutorials.py: one cell per ```python block."""

# %% docs/debugging/xla_metadata.md python tags=
import jax
import jax.numpy as jnp
from jax.experimental.xla_metadata import set_xla_metadata

# Tagging an individual operation
def value_tagging(x):
  y = jnp.sin(x)
  z = jnp.cos(x)
  return set_xla_metadata(y * z, breakpoint=True)

print(jax.jit(value_tagging).lower(1.0).as_text("hlo"))

# %% docs/debugging/xla_metadata.md python tags=
import jax
import jax.numpy as jnp
from jax.experimental.xla_metadata import set_xla_metadata

# Tagging a block of code
def context_tagging(x):
  with set_xla_metadata(_xla_log=True):
    y = jnp.sin(x)
    z = jnp.cos(y)
    return y * z

print(jax.jit(context_tagging).lower(1.0).as_text("hlo"))

# %% docs/debugging/xla_metadata.md python tags=
import jax
import jax.numpy as jnp
from jax.experimental.xla_metadata import set_xla_metadata

# Tagging with a decorator
@set_xla_metadata(_xla_log=True)
@jax.jit
def decorator_tagging(x):
  y = jnp.sin(x)
  z = jnp.cos(y)
  return y * z

print(decorator_tagging.lower(1.0).as_text("hlo"))

# %% docs/debugging/xla_metadata.md python tags=
import jax
import jax.numpy as jnp
from jax.experimental.xla_metadata import set_xla_metadata

def fn(x):
    y = jnp.sin(x)
    z = jnp.cos(x)
    return y * z

metadata = {"example": "grad_tagging"}

# --- Define Custom VJP to tag gradients ---
@jax.custom_vjp
def wrapped_fn(x):
    return fn(x)

def fwd(*args):
    primal_out, vjp_fn = jax.vjp(fn, *args)
    return primal_out, vjp_fn

def bwd(vjp_fn, cts_in):
    cts_out = vjp_fn(cts_in)
    cts_out = set_xla_metadata(cts_out, **metadata)
    return cts_out

wrapped_fn.defvjp(fwd, bwd)
# ------

print(jax.jit(jax.grad(wrapped_fn)).lower(jnp.array(3.0)).as_text("hlo"))
