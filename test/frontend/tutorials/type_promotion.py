"""Code cells of JAX's tutorial(s) docs/type_promotion.rst (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags; doctest blocks: one cell per `>>>` statement, prompts
and expected outputs removed."""

# %% docs/type_promotion.rst doctest tags=
x = jnp.arange(5, dtype='int8')

# %% docs/type_promotion.rst doctest tags=
2 * x

# %% docs/type_promotion.rst doctest tags=
jnp.int32(2) * x

# %% docs/type_promotion.rst doctest tags=
jnp.asarray(2)

# %% docs/type_promotion.rst doctest tags=
jnp.asarray(2, dtype='int32')

# %% docs/type_promotion.rst doctest tags=
x = jnp.float32(1)

# %% docs/type_promotion.rst doctest tags=
y = jnp.int32(1)

# %% docs/type_promotion.rst doctest tags=
with jax.numpy_dtype_promotion('strict'):
  z = x + y  # doctest: +SKIP

# %% docs/type_promotion.rst doctest tags=
with jax.numpy_dtype_promotion('strict'):
  z = x + 1

# %% docs/type_promotion.rst doctest tags=
print(z)
