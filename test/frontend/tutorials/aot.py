"""Code of JAX's page(s) docs/aot.md (jax-ml/jax@cec06d116c05, Apache-2.0),
extracted unchanged for test_tutorials.py: one cell per ```python block, or per doctest
example (`>>> `/`... ` prompts removed; its last expression is shown, as doctest does)."""

# %% docs/aot.md doctest tags=
import jax

# %% docs/aot.md doctest tags=
def f(x, y): return 2 * x + y

# %% docs/aot.md doctest tags=
x, y = 3, 4

# %% docs/aot.md doctest tags=
traced = jax.jit(f).trace(x, y)

# %% docs/aot.md doctest tags=
# Print the specialized, staged-out representation (as Jaxpr IR)

# %% docs/aot.md doctest tags=
print(traced.jaxpr)

# %% docs/aot.md doctest tags=
lowered = traced.lower()

# %% docs/aot.md doctest tags=
# Print lowered HLO

# %% docs/aot.md doctest tags=
print(lowered.as_text())

# %% docs/aot.md doctest tags=
compiled = lowered.compile()

# %% docs/aot.md doctest tags=
# Query for cost analysis, print FLOP estimate

# %% docs/aot.md doctest tags=
compiled.cost_analysis()['flops']

# %% docs/aot.md doctest tags=
# Execute the compiled function!

# %% docs/aot.md doctest tags=
compiled(x, y)

# %% docs/aot.md doctest tags=
i32_scalar = jax.ShapeDtypeStruct((), jnp.dtype('int32'))

# %% docs/aot.md doctest tags=
jax.jit(f).trace(i32_scalar, i32_scalar).lower().compile()(x, y)

# %% docs/aot.md doctest tags=
x_1d = y_1d = jnp.arange(3)

# %% docs/aot.md doctest tags=
jax.jit(f).trace(i32_scalar, i32_scalar).lower().compile()(x_1d, y_1d)  # doctest: +IGNORE_EXCEPTION_DETAIL

# %% docs/aot.md doctest tags=
x_f = y_f = jnp.float32(72.)

# %% docs/aot.md doctest tags=
jax.jit(f).trace(i32_scalar, i32_scalar).lower().compile()(x_f, y_f)  # doctest: +IGNORE_EXCEPTION_DETAIL

# %% docs/aot.md doctest tags=
lowered_with_x = jax.jit(f, static_argnums=0).trace(7, 8).lower()

# %% docs/aot.md doctest tags=
# Lowered HLO, specialized to the *value* of the first argument (7)

# %% docs/aot.md doctest tags=
print(lowered_with_x.as_text())

# %% docs/aot.md doctest tags=
lowered_with_x.compile()(5)

# %% docs/aot.md doctest tags=skip-execution
jax.jit(f, static_argnums=0).trace(i32_scalar, i32_scalar)  # doctest: +SKIP

# %% docs/aot.md doctest tags=
jax.jit(f, static_argnums=0).trace(10, i32_scalar).lower().compile()(5)

# %% docs/aot.md doctest tags=
def g(x):
  assert x.shape == (3, 2)
  return x @ jnp.ones(2)

# %% docs/aot.md doctest tags=
def make_z(*shape):
  return jnp.arange(np.prod(shape)).reshape(shape)

# %% docs/aot.md doctest tags=
z, zs = make_z(3, 2), make_z(4, 3, 2)

# %% docs/aot.md doctest tags=
g_jit = jax.jit(g)

# %% docs/aot.md doctest tags=
g_aot = jax.jit(g).trace(z).lower().compile()

# %% docs/aot.md doctest tags=
jax.vmap(g_jit)(zs)

# %% docs/aot.md doctest tags=skip-execution
jax.vmap(g_aot)(zs)  # doctest: +SKIP
