"""Code of JAX's page(s) docs/new_docs/501/compilation-cache.md (jax-ml/jax@cec06d116c05, Apache-2.0),
extracted unchanged for test_tutorials.py: one cell per code cell, ```python block, or
doctest example (prompts removed; its last expression is shown, as doctest does)."""

# %% docs/new_docs/501/compilation-cache.md python tags=
pip install etils

# %% docs/new_docs/501/compilation-cache.md python tags=
import jax
import jax.numpy as jnp

jax.config.update("jax_compilation_cache_dir", "/tmp/jax_cache")
jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_enable_xla_caches", "xla_gpu_per_fusion_autotune_cache_dir")

@jax.jit
def f(x):
  return x + 1

x = jnp.zeros((2, 2))
f(x)

# %% docs/new_docs/501/compilation-cache.md python tags=
import os
os.environ["JAX_COMPILATION_CACHE_DIR"] = "/tmp/jax_cache"

# %% docs/new_docs/501/compilation-cache.md python tags=
jax.config.update("jax_compilation_cache_dir", "/tmp/jax_cache")

# %% docs/new_docs/501/compilation-cache.md python tags=
from jax.experimental.compilation_cache import compilation_cache as cc
cc.set_cache_dir("/tmp/jax_cache")

# %% docs/new_docs/501/compilation-cache.md python tags=
# Example assuming the GCS bucket is mounted at /gcs/my-bucket
jax.config.update("jax_compilation_cache_dir", "/gcs/my-bucket/jax-cache")

# %% docs/new_docs/501/compilation-cache.md python tags=
jax.config.update("jax_compilation_cache_dir", "gs://jax-cache")

# %% docs/new_docs/501/compilation-cache.md python tags=
jax.config.update("jax_mock_gpu_topology", "4x8x1")

# %% docs/new_docs/501/compilation-cache.md python tags=
import os
os.environ["JAX_DEBUG_LOG_MODULES"] = "jax._src.compiler,jax._src.lru_cache"

# %% docs/new_docs/501/compilation-cache.md python tags=
import os
os.environ["JAX_LOGGING_LEVEL"] = "DEBUG"
# or locally with
jax.config.update("jax_logging_level", "DEBUG")

# %% docs/new_docs/501/compilation-cache.md python tags=
jax.config.update("jax_explain_cache_misses", True)

# %% docs/new_docs/501/compilation-cache.md python tags=
import jax

def F(x1, x2, gamma, beta):
   ln_out = LayerNorm(x1, gamma, beta)
   return ln_out @ x2

# %% docs/new_docs/501/compilation-cache.md python tags=
layernorm_matmul_without_shard_map = jax.jit(F, in_shardings=(...), out_sharding=(...))(x1, x2, gamma, beta)

# %% docs/new_docs/501/compilation-cache.md python tags=
import jax

def G(x1, x2, gamma, beta, mesh, ispecs, ospecs):
   ln_out = jax.shard_map(LayerNorm, mesh=mesh, in_specs=ispecs, out_specs=ospecs, check_vma=False)(x1, x2, gamma, beta)
   return ln_out @ x2

ispecs = jax.sharding.PartitionSpec(...)
ospecs = jax.sharding.PartitionSpec(...)
mesh = jax.sharding.Mesh(...)
layernorm_matmul_with_shard_map = jax.jit(G, static_argnames=['mesh', 'ispecs', 'ospecs'])(x1, x2, gamma, beta, mesh, ispecs, ospecs)
