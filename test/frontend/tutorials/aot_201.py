"""Code cells of JAX's tutorial(s) docs/new_docs/201/aot.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags; doctest blocks: one cell per `>>>` statement, prompts
and expected outputs removed."""

# %% docs/new_docs/201/aot.md doctest tags=
import jax

# %% docs/new_docs/201/aot.md doctest tags=
def f(x, y): return 2 * x + y

# %% docs/new_docs/201/aot.md doctest tags=
x, y = 3, 4

# %% docs/new_docs/201/aot.md doctest tags=
traced = jax.jit(f).trace(x, y)

# %% docs/new_docs/201/aot.md doctest tags=
print(traced.jaxpr)

# %% docs/new_docs/201/aot.md doctest tags=
lowered = traced.lower()

# %% docs/new_docs/201/aot.md doctest tags=
print(lowered.as_text())

# %% docs/new_docs/201/aot.md doctest tags=
compiled = lowered.compile()

# %% docs/new_docs/201/aot.md doctest tags=
compiled.cost_analysis()['flops']

# %% docs/new_docs/201/aot.md doctest tags=
compiled(x, y)

# %% docs/new_docs/201/aot.md doctest tags=
stats = compiled.memory_analysis()

# %% docs/new_docs/201/aot.md doctest tags=
stats.argument_size_in_bytes, stats.output_size_in_bytes, stats.temp_size_in_bytes

# %% docs/new_docs/201/aot.md doctest tags=
jax.jit(f).eval_shape(jax.ShapeDtypeStruct((), 'int32'),
                      jax.ShapeDtypeStruct((), 'int32'))

# %% docs/new_docs/201/aot.md doctest tags=
i32_scalar = jax.ShapeDtypeStruct((), jnp.dtype('int32'))

# %% docs/new_docs/201/aot.md doctest tags=
jax.jit(f).trace(i32_scalar, i32_scalar).lower().compile()(x, y)

# %% docs/new_docs/201/aot.md doctest tags=
x_1d = y_1d = jnp.arange(3)

# %% docs/new_docs/201/aot.md doctest tags=
jax.jit(f).trace(i32_scalar, i32_scalar).lower().compile()(x_1d, y_1d)  # doctest: +IGNORE_EXCEPTION_DETAIL

# %% docs/new_docs/201/aot.md doctest tags=
x_f = y_f = jnp.float32(72.)

# %% docs/new_docs/201/aot.md doctest tags=
jax.jit(f).trace(i32_scalar, i32_scalar).lower().compile()(x_f, y_f)  # doctest: +IGNORE_EXCEPTION_DETAIL

# %% docs/new_docs/201/aot.md doctest tags=
lowered_with_x = jax.jit(f, static_argnums=0).trace(7, 8).lower()

# %% docs/new_docs/201/aot.md doctest tags=
print(lowered_with_x.as_text())

# %% docs/new_docs/201/aot.md doctest tags=
lowered_with_x.compile()(5)

# %% docs/new_docs/201/aot.md doctest tags=
jax.jit(f, static_argnums=0).trace(i32_scalar, i32_scalar)  # doctest: +SKIP

# %% docs/new_docs/201/aot.md doctest tags=
jax.jit(f, static_argnums=0).trace(10, i32_scalar).lower().compile()(5)

# %% docs/new_docs/201/aot.md doctest tags=
def g(x):
  assert x.shape == (3, 2)
  return x @ jnp.ones(2)

# %% docs/new_docs/201/aot.md doctest tags=
def make_z(*shape):
  return jnp.arange(np.prod(shape)).reshape(shape)

# %% docs/new_docs/201/aot.md doctest tags=
z, zs = make_z(3, 2), make_z(4, 3, 2)

# %% docs/new_docs/201/aot.md doctest tags=
g_jit = jax.jit(g)

# %% docs/new_docs/201/aot.md doctest tags=
g_aot = jax.jit(g).trace(z).lower().compile()

# %% docs/new_docs/201/aot.md doctest tags=
jax.vmap(g_jit)(zs)

# %% docs/new_docs/201/aot.md doctest tags=
jax.vmap(g_aot)(zs)  # doctest: +SKIP
