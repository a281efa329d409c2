"""Code cells of JAX's tutorial(s) docs/tracing.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/tracing.md cell tags=
from jax import jit
import jax.numpy as jnp
import numpy as np

@jit
def f(x, y):
  print("Running f():")
  print(f"  x = {x}")
  print(f"  y = {y}")
  result = jnp.dot(x + 1, y + 1)
  print(f"  result = {result}")
  return result

x = np.random.randn(3, 4)
y = np.random.randn(4)
f(x, y)

# %% docs/tracing.md cell tags=
x2 = np.random.randn(3, 4)
y2 = np.random.randn(4)
f(x2, y2)

# %% docs/tracing.md cell tags=
from jax import make_jaxpr

def f(x, y):
  return jnp.dot(x + 1, y + 1)

make_jaxpr(f)(x, y)

# %% docs/tracing.md cell tags=raises-exception
@jit
def f(x, neg):
  return -x if neg else x

f(1, True)

# %% docs/tracing.md cell tags=
from functools import partial

@jit(static_argnums=(1,))
def f(x, neg):
  return -x if neg else x

f(1, True)

# %% docs/tracing.md cell tags=
f(1, False)

# %% docs/tracing.md cell tags=raises-exception
import jax.numpy as jnp
from jax import jit

@jit
def f(x):
  return x.reshape(jnp.array(x.shape).prod())

x = jnp.ones((2, 3))
f(x)

# %% docs/tracing.md cell tags=
@jit
def f(x):
  print(f"x = {x}")
  print(f"x.shape = {x.shape}")
  print(f"jnp.array(x.shape).prod() = {jnp.array(x.shape).prod()}")
  # comment this out to avoid the error:
  # return x.reshape(jnp.array(x.shape).prod())

f(x)

# %% docs/tracing.md cell tags=
from jax import jit
import jax.numpy as jnp
import numpy as np

@jit
def f(x):
  return x.reshape((np.prod(x.shape),))

f(x)

# %% docs/tracing.md cell tags=
def divide(x, y):
  return x / y if y >= 1. else 0.

