"""Code cells of JAX's tutorial(s) docs/jep/9263-typed-keys.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/jep/9263-typed-keys.md doctest tags=
key = jax.random.PRNGKey(0)

# %% docs/jep/9263-typed-keys.md doctest tags=
key

# %% docs/jep/9263-typed-keys.md doctest tags=
key.shape

# %% docs/jep/9263-typed-keys.md doctest tags=
key.dtype

# %% docs/jep/9263-typed-keys.md doctest tags=
key = jax.random.key(0)

# %% docs/jep/9263-typed-keys.md doctest tags=
key

# %% docs/jep/9263-typed-keys.md doctest tags=
key.shape

# %% docs/jep/9263-typed-keys.md doctest tags=
key.dtype

# %% docs/jep/9263-typed-keys.md doctest tags=
key_arr = jax.vmap(jax.random.key)(jnp.arange(4))

# %% docs/jep/9263-typed-keys.md doctest tags=
key_arr

# %% docs/jep/9263-typed-keys.md doctest tags=
key_arr.shape

# %% docs/jep/9263-typed-keys.md python tags=
# split
new_key, subkey = jax.random.split(key)

# random number generation
data = jax.random.uniform(key, shape=(5,))

# %% docs/jep/9263-typed-keys.md doctest tags=
key = key + 1  # doctest: +SKIP

# %% docs/jep/9263-typed-keys.md doctest tags=
jax.random.key_data(key)

# %% docs/jep/9263-typed-keys.md doctest tags=
typed_key = jax.random.key(0)

# %% docs/jep/9263-typed-keys.md doctest tags=
jax.dtypes.issubdtype(typed_key.dtype, jax.dtypes.prng_key)

# %% docs/jep/9263-typed-keys.md doctest tags=
raw_key = jax.random.PRNGKey(0)

# %% docs/jep/9263-typed-keys.md doctest tags=
jax.dtypes.issubdtype(raw_key.dtype, jax.dtypes.prng_key)

# %% docs/jep/9263-typed-keys.md python tags=
from jax import dtypes

def ensure_typed_key_array(key: Array) -> Array:
  if dtypes.issubdtype(key.dtype, dtypes.prng_key):
    return key
  else:
    raise TypeError("New-style typed JAX PRNG keys required")

# %% docs/jep/9263-typed-keys.md doctest tags=
key = jax.random.key(0, impl='threefry2x32')  # this is the default impl

# %% docs/jep/9263-typed-keys.md doctest tags=
key

# %% docs/jep/9263-typed-keys.md doctest tags=
jax.random.uniform(key, shape=(3,))

# %% docs/jep/9263-typed-keys.md doctest tags=
key = jax.random.key(0, impl='rbg')

# %% docs/jep/9263-typed-keys.md doctest tags=
key

# %% docs/jep/9263-typed-keys.md doctest tags=
jax.random.uniform(key, shape=(3,))

# %% docs/jep/9263-typed-keys.md doctest tags=
jax.dtypes.issubdtype(jax.dtypes.prng_key, jax.dtypes.extended)

# %% docs/jep/9263-typed-keys.md doctest tags=
key = jax.random.key(0)

# %% docs/jep/9263-typed-keys.md doctest tags=
jax.dtypes.issubdtype(key.dtype, jax.dtypes.extended)

# %% docs/jep/9263-typed-keys.md doctest tags=
jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key)
