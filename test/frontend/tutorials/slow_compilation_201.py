"""Code of JAX's page(s) docs/new_docs/201/slow-compilation.md (jax-ml/jax@cec06d116c05, Apache-2.0),
extracted unchanged for test_tutorials.py: one cell per code cell, ```python block, or
doctest example (prompts removed; its last expression is shown, as doctest does)."""

# %% docs/new_docs/201/slow-compilation.md python tags=
import jax
jax.config.update("jax_log_compiles", True)
jax.config.update("jax_explain_cache_misses", True)
jax.config.update("jax_dump_ir_to", "/tmp/jax_ir")  # or "sponge"
jax.config.update("jax_dump_ir_modes", "eqn_count_pprof")

# %% docs/new_docs/201/slow-compilation.md python tags=
# ❌ BAD: Recreating function object on every call
def top_function(...):
  # Creates a brand new function object with a new memory id on every call
  # to `top_function`.
  def custom_einsum(a, b):
    return jnp.einsum("...i,...i->...", a, b)

  return jax.jit(custom_einsum)(x, y)

# %% docs/new_docs/201/slow-compilation.md python tags=
# ✔️ GOOD: Reusing the same function handle
def custom_einsum(a, b):
  return jnp.einsum("...i,...i->...", a, b)

def top_function(...):
  return jax.jit(custom_einsum)(x, y)

# %% docs/new_docs/201/slow-compilation.md python tags=
# ❌ BAD: JIT compiling a freshly created lambda on every call
def add_multiply(a, b, scale):
  return (a + b) * scale

def top_function(x, y, scale_factor):
  # Creates a brand new lambda object with a new memory id on every pass!
  return jax.jit(lambda a, b: add_multiply(a, b, scale=scale_factor))(x, y)

# %% docs/new_docs/201/slow-compilation.md python tags=
# ✔️ GOOD: Using functools.partial
import functools

def add_multiply(a, b, scale):
  return (a + b) * scale

def top_function(x, y, scale_factor):
  # JAX correctly unwraps functools.partial and hits the tracing cache!
  return jax.jit(functools.partial(add_multiply, scale=scale_factor))(x, y)

# %% docs/new_docs/201/slow-compilation.md python tags=
# ❌ BAD: Eager op-by-op PyTree mapping
def quantize(x):
  scale = jnp.max(jnp.abs(x))
  return jnp.round(x * scale)

# Eagerly dispatches jnp.max, jnp.abs, jnp.round for every weight tensor!
params = jax.tree.map(quantize, params)

# %% docs/new_docs/201/slow-compilation.md python tags=
# ✔️ GOOD: Compiles a single fused XLA graph for the entire PyTree
params = jax.jit(lambda p: jax.tree.map(quantize, p))(params)

# %% docs/new_docs/201/slow-compilation.md python tags=
import jax
import jax.numpy as jnp

@jax.jit
def unrolled_loop(x):
  # ❌ BAD: Unrolls 5,000 identical add equations into the Jaxpr!
  for _ in range(5000):
    x = x + 1.0
  return x

# Run with JAX_DUMP_IR_TO=/tmp/jax_ir JAX_DUMP_IR_MODES=eqn_count_pprof
unrolled_loop(jnp.zeros(10))
