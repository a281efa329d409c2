"""Code cells of JAX's tutorial(s) docs/rank_promotion_warning.rst (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags; doctest blocks: one cell per `>>>` statement, prompts
and expected outputs removed."""

# %% docs/rank_promotion_warning.rst doctest tags=
from jax import numpy as jnp

# %% docs/rank_promotion_warning.rst doctest tags=
x = jnp.arange(12).reshape(4, 3)

# %% docs/rank_promotion_warning.rst doctest tags=
y = jnp.array([0, 1, 0])

# %% docs/rank_promotion_warning.rst doctest tags=
x + y
