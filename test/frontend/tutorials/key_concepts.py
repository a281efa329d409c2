"""Code cells of JAX's tutorial(s) docs/key-concepts.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/key-concepts.md cell tags=
import jax
import jax.numpy as jnp

def selu(x, alpha=1.67, lambda_=1.05):
  return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

selu_jit = jax.jit(selu)
print(selu_jit(1.0))

# %% docs/key-concepts.md cell tags=
@jax.jit
def selu(x, alpha=1.67, lambda_=1.05):
  return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

# %% docs/key-concepts.md cell tags=
@jax.jit
def f(x):
  print(x)
  return x + 1

x = jnp.arange(5)
result = f(x)

# %% docs/key-concepts.md cell tags=
def selu(x, alpha=1.67, lambda_=1.05):
  return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

# %% docs/key-concepts.md cell tags=
x = jnp.arange(5.0)
jax.make_jaxpr(selu)(x)

# %% docs/key-concepts.md cell tags=
# (nested) list of parameters
params = [1, 2, (jnp.arange(3), jnp.ones(2))]

print(jax.tree.structure(params))
print(jax.tree.leaves(params))

# %% docs/key-concepts.md cell tags=
# Dictionary of parameters
params = {'n': 5, 'W': jnp.ones((2, 2)), 'b': jnp.zeros(2)}

print(jax.tree.structure(params))
print(jax.tree.leaves(params))

# %% docs/key-concepts.md cell tags=
# Named tuple of parameters
from typing import NamedTuple

class Params(NamedTuple):
  a: int
  b: float

params = Params(1, 5.0)
print(jax.tree.structure(params))
print(jax.tree.leaves(params))

# %% docs/key-concepts.md cell tags=
import jax.numpy as jnp
jnp.add(1, 1.0)  # jax.numpy API implicitly promotes mixed types.

# %% docs/key-concepts.md cell tags=raises-exception
from jax import lax
lax.add(1, 1.0)  # jax.lax API requires explicit type promotion.

# %% docs/key-concepts.md cell tags=
lax.add(jnp.float32(1), 1.0)

# %% docs/key-concepts.md cell tags=
x = jnp.array([1, 2, 1])
y = jnp.ones(10)
jnp.convolve(x, y)

# %% docs/key-concepts.md cell tags=
from jax import lax
result = lax.conv_general_dilated(
    x.reshape(1, 1, 3).astype(float),  # note: explicit promotion
    y.reshape(1, 1, 10),
    window_strides=(1,),
    padding=[(len(y) - 1, len(y) - 1)])  # equivalent of padding='full' in NumPy
result[0, 0]

