"""Code cells of JAX's tutorial(s) docs/jep/4410-omnistaging.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/jep/4410-omnistaging.md python tags=
jax.config.disable_omnistaging()

# %% docs/jep/4410-omnistaging.md python tags=
@jit
def f(x):
  input_size = jnp.prod(x.shape)
  if input_size > 100:
    ...

# %% docs/jep/4410-omnistaging.md python tags=
import numpy as np

@jit
def f(x):
  input_size = np.prod(x.shape)
  if input_size > 100:
    ...

# %% docs/jep/4410-omnistaging.md python tags=
from jax import jit
import jax.numpy as jnp

@jit
def f(x):
  y = jnp.add(1, 1)
  return x * y

f(3)

# %% docs/jep/4410-omnistaging.md python tags=
import jax.numpy as jnp
from jax import lax

@jit
def select_tril(x):
  mask = jnp.arange(x.shape[0])[:, None] > jnp.arange(x.shape[1])
  return lax.select(mask, x, jnp.zeros_like(x))  # lax.select is like jnp.where

x = np.arange(12).reshape((3, 4))
select_tril(x)

# %% docs/jep/4410-omnistaging.md python tags=
from jax import jit
from jax import random

key = random.PRNGKey(0)

def init():
  global key
  key, subkey = random.split(key)
  return random.normal(subkey, ())

print(init())  # -1.2515389
print(init())  # -0.58665067

init = jit(init)
print(init())  # 0.48648298
print(init())  # 0.48648298  !!

# %% docs/jep/4410-omnistaging.md python tags=
print(key) # Traced<ShapedArray(uint32[2])>with<DynamicJaxprTrace(level=0/1)>

# %% docs/jep/4410-omnistaging.md python tags=
random.normal(key, ())
