"""Code cells of JAX's tutorial(s) docs/faq.rst (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags; doctest blocks: one cell per `>>>` statement, prompts
and expected outputs removed."""

# %% docs/faq.rst doctest tags=
from jax import jit

# %% docs/faq.rst doctest tags=
import jax.numpy as jnp

# %% docs/faq.rst doctest tags=
def f(x):
  return jnp.log(jnp.sqrt(x))

# %% docs/faq.rst doctest tags=
x = jnp.pi

# %% docs/faq.rst doctest tags=
print(f(x))

# %% docs/faq.rst doctest tags=
print(jit(f)(x))

# %% docs/faq.rst doctest tags=
def f(x):
  return jnp.log(jnp.exp(x))

# %% docs/faq.rst doctest tags=
x = 100.0

# %% docs/faq.rst doctest tags=
print(f(x))

# %% docs/faq.rst doctest tags=
print(jit(f)(x))
