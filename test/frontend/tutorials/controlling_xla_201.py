"""Code cells of JAX's tutorial(s) docs/new_docs/201/controlling-xla.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/new_docs/201/controlling-xla.md python tags=
def f(x):
  return jnp.sqrt(x ** 2) + 1.

f_opt = jax.jit(f, compiler_options={
    "xla_embed_ir_in_executable": True,
    "xla_gpu_auto_spmd_partitioning_memory_budget_ratio": 0.5,
})

f_opt(1.0)

# %% docs/new_docs/201/controlling-xla.md python tags=
g = jax.jit(f, compiler_options={"optimization_level": jax.CompilerEffortLevel.O3})

# %% docs/new_docs/201/controlling-xla.md python tags=
jax.jit(f, compiler_options={"not_a_real_flag": 1})(1.0)
# ==> JaxRuntimeError: INVALID_ARGUMENT: No such compile option: 'not_a_real_flag'

# %% docs/new_docs/201/controlling-xla.md python tags=
compiled = jax.jit(f).lower(1.0).compile(
    compiler_options={"xla_embed_ir_in_executable": True})

# %% docs/new_docs/201/controlling-xla.md python tags=
import jax
import jax.numpy as jnp
from jax.experimental.xla_metadata import xla_metadata_call

@xla_metadata_call(tag="my_block")
def block(x):
  y = jnp.sin(x)
  return y * jnp.cos(x)

@jax.jit
def f(x):
  return block(x) + 1.

print(f.lower(1.0).as_text("hlo"))

# %% docs/new_docs/201/controlling-xla.md python tags=
@xla_metadata_call(tag="my_block")
def block(x):
  return jnp.sin(x)

print(jax.jit(jax.grad(block)).lower(1.0).as_text("hlo"))

# %% docs/new_docs/201/controlling-xla.md python tags=
from jax.experimental.xla_metadata import xla_metadata_call2

f = xla_metadata_call2(jnp.sin, {"tag": "x"})                             # tag fwd + bwd (default)
f = xla_metadata_call2(jnp.sin, {"tag": "x"}, ad_metadata='drop')         # tag fwd only
f = xla_metadata_call2(jnp.sin, {"tag": "x"}, ad_metadata={"tag": "y"})   # retag bwd

# %% docs/new_docs/201/controlling-xla.md python tags=
from jax.experimental.xla_metadata import set_xla_metadata

def g(x):
  y = jnp.sin(x)
  z = jnp.cos(x)
  return set_xla_metadata(y * z, breakpoint=True)

print(jax.jit(g).lower(1.0).as_text("hlo"))
