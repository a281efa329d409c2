"""Code cells of JAX's tutorial(s) docs/default_dtypes.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags; doctest blocks: one cell per `>>>` statement, prompts
and expected outputs removed."""

# %% docs/default_dtypes.md doctest tags=
import jax.numpy as jnp

# %% docs/default_dtypes.md doctest tags=
jnp.arange(5)

# %% docs/default_dtypes.md doctest tags=
jnp.zeros(5)

# %% docs/default_dtypes.md doctest tags=
jnp.ones(5, dtype=int)

# %% docs/default_dtypes.md python tags=
import jax
import jax.numpy as jnp

jax.config.update('jax_enable_x64', True)

print(repr(jnp.arange(5)))
print(repr(jnp.zeros(5)))
print(repr(jnp.ones(5, dtype=int)))
