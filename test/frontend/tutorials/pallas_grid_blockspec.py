"""Code cells of JAX's tutorial(s) docs/pallas/grid_blockspec.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags.
The page's examples are doctests: each `>>>` statement (with its `...` lines) is a
cell (a comment-only one joined to the next), prompts removed; the page's expected
outputs are not compared (JAX's run is the oracle)."""

# %% docs/pallas/grid_blockspec.md cell tags=doctest
import jax

# %% docs/pallas/grid_blockspec.md cell tags=doctest
from jax.experimental import pallas as pl

# %% docs/pallas/grid_blockspec.md cell tags=doctest
def slices_for_invocation(x_shape: tuple[int, ...],
                          x_spec: pl.BlockSpec,
                          grid: tuple[int, ...],
                          invocation_indices: tuple[int, ...]) -> tuple[slice, ...]:
  assert len(invocation_indices) == len(grid)
  assert all(0 <= i < grid_size for i, grid_size in zip(invocation_indices, grid))
  block_indices = x_spec.index_map(*invocation_indices)
  assert len(x_shape) == len(x_spec.block_shape) == len(block_indices)
  elem_indices = []
  for x_size, block_size, block_idx in zip(x_shape, x_spec.block_shape, block_indices):
    start_idx = block_idx * block_size
    # At least one element of the block must be within bounds
    assert start_idx < x_size
    elem_indices.append(slice(start_idx, start_idx + block_size))
  return elem_indices

# %% docs/pallas/grid_blockspec.md cell tags=doctest
slices_for_invocation(x_shape=(100, 100),
                      x_spec = pl.BlockSpec((10, 20), lambda i, j: (i, j)),
                      grid = (10, 5),
                      invocation_indices = (2, 4))

# %% docs/pallas/grid_blockspec.md cell tags=doctest
# Same shape of the array and blocks, but we iterate over each block 4 times
slices_for_invocation(x_shape=(100, 100),
                      x_spec = pl.BlockSpec((10, 20), lambda i, j, k: (i, j)),
                      grid = (10, 5, 4),
                      invocation_indices = (2, 4, 0))

# %% docs/pallas/grid_blockspec.md cell tags=doctest
# An example when the block is partially out-of-bounds in the 2nd axis.
slices_for_invocation(x_shape=(100, 90),
                      x_spec = pl.BlockSpec((10, 20), lambda i, j: (i, j)),
                      grid = (10, 5),
                      invocation_indices = (2, 4))

# %% docs/pallas/grid_blockspec.md cell tags=doctest
def show_program_ids(x_shape, block_shape, grid,
                     index_map=lambda i, j: (i, j)):
  def program_ids_kernel(o_ref):  # Fill the output block with 10*program_id(1) + program_id(0)
    axes = 0
    for axis in range(len(grid)):
      axes += pl.program_id(axis) * 10**(len(grid) - 1 - axis)
    o_ref[...] = jnp.full(o_ref.shape, axes)
  res = pl.pallas_call(program_ids_kernel,
                       out_shape=jax.ShapeDtypeStruct(x_shape, dtype=np.int32),
                       grid=grid,
                       in_specs=[],
                       out_specs=pl.BlockSpec(block_shape, index_map),
                       interpret=True)()
  print(res)

# %% docs/pallas/grid_blockspec.md cell tags=doctest
show_program_ids(x_shape=(8, 6), block_shape=(2, 3), grid=(4, 2),
                 index_map=lambda i, j: (i, j))

# %% docs/pallas/grid_blockspec.md cell tags=doctest
# An example with out-of-bounds accesses
show_program_ids(x_shape=(7, 5), block_shape=(2, 3), grid=(4, 2),
                 index_map=lambda i, j: (i, j))

# %% docs/pallas/grid_blockspec.md cell tags=doctest
# It is allowed for the shape to be smaller than block_shape
show_program_ids(x_shape=(1, 2), block_shape=(2, 3), grid=(1, 1),
                 index_map=lambda i, j: (i, j))

# %% docs/pallas/grid_blockspec.md cell tags=doctest
show_program_ids(x_shape=(8, 6), block_shape=(2, 3), grid=(4, 2, 10),
                 index_map=lambda i, j, k: (i, j))

# %% docs/pallas/grid_blockspec.md cell tags=doctest
def kernel(o_ref):
  assert o_ref.shape == (2,)
  o_ref[...] = jnp.full((2,), 10 * pl.program_id(1) + pl.program_id(0))

# %% docs/pallas/grid_blockspec.md cell tags=doctest
pl.pallas_call(kernel,
               jax.ShapeDtypeStruct((3, 4), dtype=np.int32),
               out_specs=pl.BlockSpec((None, 2), lambda i, j: (i, j)),
               grid=(3, 2), interpret=True)()

# %% docs/pallas/grid_blockspec.md cell tags=doctest
show_program_ids(x_shape=(4, 4), block_shape=None, grid=(2, 3),
                 index_map=None)

# %% docs/pallas/grid_blockspec.md cell tags=doctest
show_program_ids(x_shape=(4, 4), block_shape=(4, 4), grid=(2, 3),
                 index_map=None)

# %% docs/pallas/grid_blockspec.md cell tags=doctest
# element without padding
show_program_ids(x_shape=(8, 6), block_shape=(pl.Element(2), pl.Element(3)),
                 grid=(4, 2),
                 index_map=lambda i, j: (2*i, 3*j))

# %% docs/pallas/grid_blockspec.md cell tags=doctest
# element, first pad the array with 1 row and 2 columns.
show_program_ids(x_shape=(7, 7),
                 block_shape=(pl.Element(2, (1, 0)),
                              pl.Element(3, (2, 0))),
                 grid=(4, 3),
                 index_map=lambda i, j: (2*i, 3*j))
