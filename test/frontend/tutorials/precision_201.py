"""Code cells of JAX's tutorial(s) docs/new_docs/201/precision.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/new_docs/201/precision.md python tags=
import jax.numpy as jnp
from jax import lax

y = jnp.dot(x, x, precision="F32_F32_F32")                        # true float32
y = jnp.dot(x, x, precision="BF16_BF16_F32")                      # bf16 inputs, f32 accumulation
y = jnp.dot(x, x, precision=lax.DotAlgorithmPreset.TF32_TF32_F32) # TF32 tensor cores

# %% docs/new_docs/201/precision.md python tags=
x16 = jnp.ones((4, 4), jnp.float16)
jnp.dot(x16, x16, precision="F16_F16_F32")                # f16 result
jnp.dot(x16, x16, precision="F16_F16_F32",
        preferred_element_type=jnp.float32)               # keep the f32 accumulator

# %% docs/new_docs/201/precision.md python tags=
def loss(x, w):
  return jnp.sum(jnp.dot(x, w, precision='BF16_BF16_F32'))

x, w = jnp.ones((4, 8)), jnp.ones((8, 2))
print(jax.jit(jax.grad(loss, argnums=1)).trace(x, w).jaxpr)

# %% docs/new_docs/201/precision.md python tags=
jnp.dot(x, x, precision='highest')   # give me real float32, whatever it costs

# %% docs/new_docs/201/precision.md python tags=
# scoped:
with jax.default_matmul_precision('highest'):
  result = f(x)

# process-wide:
jax.config.update('jax_default_matmul_precision', 'BF16_BF16_F32_X3')
