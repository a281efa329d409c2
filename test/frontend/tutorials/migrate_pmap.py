"""Code cells of JAX's tutorial(s) docs/migrate_pmap.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/migrate_pmap.md python tags=
import jax
jax.config.update("jax_pmap_shmap_merge", False)

# %% docs/migrate_pmap.md python tags=
from jax.experimental import multihost_utils as mhu

# Instead of custom barriers
mhu.sync_global_devices("barrier_name")

# %% docs/migrate_pmap.md python tags=
# Old slow way:
# result = x[0]

# New fast way:
# x.addressable_shards is a list of shards on the current process.
# We grab the first one, extract the data, and remove the leading dimension.
result = x.addressable_shards[0].data.squeeze(0)

# %% docs/migrate_pmap.md python tags=
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

def device_put_sharded(shards, devices):
  """Drop-in replacement for jax.device_put_sharded supporting pytrees."""
  mesh = Mesh(np.array(devices), ('x',))
  sharding = NamedSharding(mesh, P('x'))
  return jax.tree.map(
      lambda *xs: jax.device_put(jnp.stack(xs), sharding), *shards
  )

def device_put_replicated(x, devices):
  """Drop-in replacement for jax.device_put_replicated supporting pytrees."""
  mesh = Mesh(np.array(devices), ('x',))
  sharding = NamedSharding(mesh, P('x'))
  return jax.tree.map(
      lambda y: jax.device_put(jnp.stack([y] * len(devices)), sharding), x
  )

# %% docs/migrate_pmap.md python tags=
# pmap style (rank-reduced)
def mapped_fn(x):
  # x has shape (128,)
  return jnp.dot(x, weights)

# shard_map style (rank-preserving)
def mapped_fn(x):
  # x has shape (1, 128)
  # Option 1: restores pmap rank
  return jnp.dot(x.squeeze(0), weights)

  # Option 2: use matmul (handles the leading dimension naturally)
  # return jnp.matmul(x, weights)

  # Option 3: indexing
  # return jnp.dot(x[0], weights)

# %% docs/migrate_pmap.md python tags=
from functools import partial
import jax
from jax.sharding import Mesh

# Define device topology: 8 devices logically arranged as a 1D vector named 'i'.
# This serves as the global context for axis names, similar to 'axis_name' in
# pmap.
mesh = jax.make_mesh(shape=(8,), axis_names=('i',))

# %% docs/migrate_pmap.md python tags=
# pmap style: rank-reducing
# x_global: f32[8, 128]
@jax.pmap
def f(x):
  # x: f32[128]
  return x * 2
# output: f32[8, 128]

# shard_map style: rank-preserving
# x_global: f32[8, 128]
@jax.jit
@partial(jax.shard_map, mesh=mesh, in_specs=jax.P('i'), out_specs=jax.P('i'))
def f(x):
  # x: f32[1, 128] (if logically x_global was (8, 128) and mesh size is 8)
  return x * 2
# output: f32[8, 128]

# %% docs/migrate_pmap.md python tags=
# pmap style
# x: f32[8, 128], y: f32[128]
@partial(jax.pmap, in_axes=(0, None), out_axes=None)
def f(x, y):
  # x: f32[128], y: f32[128]
  return x + y
# output: f32[128] (replicated)

# shard_map style
# x_global: f32[8, 128], y_replicated: f32[128]
@jax.jit
@partial(
    jax.shard_map, mesh=mesh, in_specs=(jax.P('i'), jax.P()), out_specs=jax.P()
)
def f(x, y):
  # x: f32[1, 128], y: f32[128]
  return x + y
# output: f32[128] (replicated)

# %% docs/migrate_pmap.md python tags=
# Analogy to pmap(pmap(f, 'i'), 'j')
# mesh2d: 4 devices for 'i', 2 devices for 'j'
mesh2d = jax.make_mesh(shape=(4, 2), axis_names=('i', 'j'))

# nested pmap
# x: f32[4, 2, 128]
@partial(jax.pmap, axis_name='i')
@partial(jax.pmap, axis_name='j')
def f(x):
  # x: f32[128]
  return jax.lax.psum(x, ('i', 'j'))
# output: f32[4, 2, 128] (if out_axes=0)

# shard_map
# x_global: f32[4, 2, 128]
@jax.jit
@partial(
    jax.shard_map, mesh=mesh2d, in_specs=jax.P('i', 'j'), out_specs=jax.P()
)
def f(x):
  # x: f32[1, 1, 128]
  return jax.lax.psum(x, ('i', 'j'))
# output: f32[128] (replicated)

# %% docs/migrate_pmap.md python tags=
# pmap style
# donate_argnums specifies which inputs can be overwritten in-place
f = jax.pmap(func, donate_argnums=(0,))

# shard_map style: donate_argnums goes on the jit wrapper
# The underlying shard_map itself just handles the sharding layout
f = jax.jit(jax.shard_map(func, mesh=mesh, ...), donate_argnums=(0,))

# %% docs/migrate_pmap.md python tags=
import jax
import jax.numpy as jnp
import numpy as np

# 1. Define your mesh and sharding (logical view)
mesh = jax.make_mesh((jax.process_count(),), ('batch',))
sharding = jax.NamedSharding(mesh, jax.P('batch'))

# 2. Load host-local data (as you would for pmap)
# Example: each process loads a different subset of a dataset
local_batch_size = 32
start_idx = jax.process_index() * local_batch_size
local_data = np.arange(start_idx, start_idx + local_batch_size).reshape(
    local_batch_size, 10
)

# 3. Stitch into a global jax.Array
# The resulting array will have global shape (32 * num_processes, 10)
global_batch = jax.make_array_from_process_local_data(sharding, local_data)

print(f"Process {jax.process_index()} local shape: {local_data.shape}")
print(f"Global array shape: {global_batch.shape}")

# %% docs/migrate_pmap.md python tags=
import numpy as np

# After calling pmap
result = pmapped_fn(...)

# Materialize before reduction
if jax.config.jax_pmap_shmap_merge:
  result = jax.tree.map(np.asarray, result)

# Now reductions work correctly
mean_value = jnp.mean(result.values, where=result.mask)

# %% docs/migrate_pmap.md python tags=
@jax.jit
def training_step(...):
  scores = pmapped_fn(...)
  # Materialize sharded arrays inside jit
  if jax.config.jax_pmap_shmap_merge:
    scores = jnp.asarray(scores)
  return jnp.reshape(scores, [-1])  # Now reshapes correctly

# %% docs/migrate_pmap.md python tags=
from flax import jax_utils
import jax.numpy as jnp
import jax

# jax_utils.replicate calls jax.device_put_replicated.
# This stacks num_devices copies and SHARDS them over the stacked dimension.
# Logical Shape: (8, 3, 4) | Sharding: P('x', None, None)
train_state = jax_utils.replicate({'params': jnp.zeros((3, 4))})

# out_axes=0 by default, so the output remains sharded along dim 0.
train_step_pmapped = jax.pmap(lambda x: x)

# jax_utils.unreplicate performs a jax.tree_map(lambda x: x[0], tree).
# Users do this to grab metrics, log param statistics, checkpoint, etc.
train_state = jax_utils.unreplicate(train_step_pmapped(train_state))
