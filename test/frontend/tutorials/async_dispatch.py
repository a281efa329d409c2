"""Code cells of JAX's tutorial(s) docs/async_dispatch.rst (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags; doctest blocks: one cell per `>>>` statement, prompts
and expected outputs removed."""

# %% docs/async_dispatch.rst doctest tags=
import numpy as np

# %% docs/async_dispatch.rst doctest tags=
import jax.numpy as jnp

# %% docs/async_dispatch.rst doctest tags=
from jax import random

# %% docs/async_dispatch.rst doctest tags=
x = random.uniform(random.key(0), (1000, 1000))

# %% docs/async_dispatch.rst doctest tags=
# Printing the result (i.e. evaluating `repr(result)` or `str(result)`)

# %% docs/async_dispatch.rst doctest tags=
# will block until the value is ready.

# %% docs/async_dispatch.rst doctest tags=skip-execution
jnp.dot(x, x) + 3.  # doctest: +SKIP

# %% docs/async_dispatch.rst doctest tags=skip-execution
%time jnp.dot(x, x)  # doctest: +SKIP

# %% docs/async_dispatch.rst doctest tags=skip-execution
%time np.asarray(jnp.dot(x, x))  # doctest: +SKIP

# %% docs/async_dispatch.rst doctest tags=skip-execution
%time jnp.dot(x, x).block_until_ready()  # doctest: +SKIP
