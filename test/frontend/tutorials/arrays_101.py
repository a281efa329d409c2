"""Code cells of JAX's tutorial(s) docs/new_docs/101/arrays.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/new_docs/101/arrays.md cell tags=remove-cell
# This ensures that code cell tracebacks appearing below will be concise.
%xmode minimal

# %% docs/new_docs/101/arrays.md cell tags=
import jax
import jax.numpy as jnp
import numpy as np

# %% docs/new_docs/101/arrays.md cell tags=
x = jnp.arange(9.0).reshape(3, 3)
y = jnp.ones(3)

print(x @ y)
print(x.sum(axis=0))
print(x[1, :2])

# %% docs/new_docs/101/arrays.md cell tags=
isinstance(x, jax.Array)

# %% docs/new_docs/101/arrays.md cell tags=
print(jax.typeof(x))

# %% docs/new_docs/101/arrays.md cell tags=
x_np = np.arange(10)
x_np[0] = 10
print(x_np)

# %% docs/new_docs/101/arrays.md cell tags=raises-exception
x = jnp.arange(10)
x[0] = 10

# %% docs/new_docs/101/arrays.md cell tags=
y = x.at[0].set(10)
print(x)  # unchanged
print(y)

# %% docs/new_docs/101/arrays.md cell tags=
print(x.at[3].add(100))
print(x.at[:3].max(5))

# %% docs/new_docs/101/arrays.md cell tags=
print(np.array([1.0, 2.0]).dtype)
print(jnp.array([1.0, 2.0]).dtype)

# %% docs/new_docs/101/arrays.md python tags=
import jax
jax.config.update("jax_enable_x64", True)

# %% docs/new_docs/101/arrays.md cell tags=
(jnp.arange(3) + 1.5).dtype

# %% docs/new_docs/101/arrays.md cell tags=
x = jnp.arange(10)
x[11]  # clamped to x[9]

# %% docs/new_docs/101/arrays.md cell tags=
x.at[11].set(99)  # update is dropped

# %% docs/new_docs/101/arrays.md cell tags=raises-exception
jnp.sum([1, 2, 3])

# %% docs/new_docs/101/arrays.md cell tags=
jnp.sum(jnp.array([1, 2, 3]))

# %% docs/new_docs/101/arrays.md cell tags=
x.sharding

# %% docs/new_docs/101/arrays.md python tags=
def sin(x):
  x = jnp.asarray(x)                            # accept built-in Python numbers
  if not jnp.issubdtype(x.dtype, jnp.inexact):
    x = x.astype(float)                         # promote integers to floating point
  return lax.sin(x)

# %% docs/new_docs/101/arrays.md cell tags=
jnp.add(1, 1.0)

# %% docs/new_docs/101/arrays.md cell tags=raises-exception
from jax import lax
lax.add(1, 1.0)
