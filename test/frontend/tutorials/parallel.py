"""Code of JAX's page(s) docs/parallel.md (jax-ml/jax@cec06d116c05, Apache-2.0),
extracted unchanged for test_tutorials.py: one cell per code cell, ```python block, or
doctest example (prompts removed; its last expression is shown, as doctest does)."""

# %% docs/parallel.md code-cell tags=
from __future__ import annotations
import enum

# %% docs/parallel.md code-cell tags=
import jax
import jax.numpy as jnp
jax.config.update('jax_num_cpu_devices', 8)

# %% docs/parallel.md code-cell tags=
jax.set_mesh(jax.make_mesh((4, 2), ('X', 'Y')))  # explicit mode by default

x = jnp.arange(8 * 4.).reshape(8, 4)
x = jax.device_put(x, jax.P('X', 'Y'))
print(jax.typeof(x))  # f32[8@X, 4@Y]

# %% docs/parallel.md code-cell tags=
jax.debug.visualize_array_sharding(x)

# %% docs/parallel.md code-cell tags=
y = jnp.sin(x).T
print(jax.typeof(y))  # f32[4@Y, 8@X]

# %% docs/parallel.md code-cell tags=
class AbstractMesh:
  axis_sizes: tuple[int, ...]
  axis_names: tuple[str, ...]
  axis_types: tuple[AxisType, ...]

class AxisType(enum.Enum):
  Auto = enum.auto()
  Explicit = enum.auto()
  Manual = enum.auto()

# A concrete mesh additionally includes physical device objects with e.g.
# precise coordinates:

# %% docs/parallel.md code-cell tags=
import numpy as np

class Mesh:
  devices: np.ndarray[jax.Device]
  axis_names: tuple[str, ...]
  axis_types: tuple[AxisType, ...]

  @property
  def axis_sizes(self) -> tuple[int, ...]:
    return self.devices.shape

# %% docs/parallel.md code-cell tags=
mesh = jax.make_mesh((4, 2), ('X', 'Y'))
print(mesh)

# %% docs/parallel.md code-cell tags=
jax.set_mesh(mesh)

# %% docs/parallel.md code-cell tags=
@jax.jit
def f(x):
  abstract_mesh = jax.sharding.AbstractMesh((8,), ('A',), (jax.sharding.AxisType.Explicit,))
  with jax.sharding.use_abstract_mesh(abstract_mesh):
    y = jax.reshard(x, jax.P('A', None))
    return y * 2

z = f(x)
print(jax.typeof(z))  # f32[8@A, 4]

# %% docs/parallel.md code-cell tags=
print(x.sharding)
jax.debug.visualize_array_sharding(x)

# %% docs/parallel.md code-cell tags=
for s in x.addressable_shards:
  print(s.device, s.data, sep='\n', end='\n\n')

# %% docs/parallel.md code-cell tags=
y = jax.device_put(x, jax.P('Y', 'X'))
print(y.sharding)
jax.debug.visualize_array_sharding(y)

# %% docs/parallel.md code-cell tags=
y = jax.device_put(x, jax.P('X', None))
print(y.sharding)
jax.debug.visualize_array_sharding(y)

# %% docs/parallel.md code-cell tags=
for s in y.addressable_shards:
  print(s.device, s.data, sep='\n', end='\n\n')

# %% docs/parallel.md code-cell tags=
y = jax.device_put(x, jax.P(('X', 'Y')))
print(y.sharding)
jax.debug.visualize_array_sharding(y)

# %% docs/parallel.md code-cell tags=
y = jax.device_put(x, jax.P('X', None, unreduced={'Y'}))
print(y.sharding)

# %% docs/parallel.md code-cell tags=
for s in y.addressable_shards:
  print(s.device, s.data, sep='\n', end='\n\n')

# %% docs/parallel.md code-cell tags=
mesh2 = jax.make_mesh((8,), ('A',))
z = jax.device_put(x, jax.NamedSharding(mesh2, jax.P('A', None)))
print(z.sharding)
print(y.sharding)

# %% docs/parallel.md code-cell tags=
print(jax.typeof(x).sharding)

# %% docs/parallel.md code-cell tags=
jax.jit(lambda x: print(jax.typeof(x).sharding))(x)

# %% docs/parallel.md code-cell tags=
arg0 = jax.device_put(np.arange(4).reshape(4, 1), jax.P("X", None))
arg1 = jax.device_put(np.arange(8).reshape(1, 8), jax.P(None, "Y"))

result = arg0 + arg1

print(f"{jax.typeof(arg0)=!s}")
print(f"{jax.typeof(arg1)=!s}")
print(f"{jax.typeof(result)=!s}")

# %% docs/parallel.md code-cell tags=
@jax.jit
def add_arrays(x, y):
  ans = x + y
  print(f"{jax.typeof(arg0)=!s}")
  print(f"{jax.typeof(arg1)=!s}")
  print(f"{jax.typeof(result)=!s}")
  return ans

add_arrays(arg0, arg1)

# %% docs/parallel.md code-cell tags=
x = jax.random.normal(jax.random.key(0), (8, 4),
                      out_sharding=jax.P('X', 'Y'))
print(jax.typeof(x))

# %% docs/parallel.md code-cell tags=
y = x.sum(0)
print(jax.typeof(y))

# %% docs/parallel.md code-cell tags=
compile_txt = jax.jit(lambda x: x.sum(0)).lower(x).compile().as_text()
print('all-reduce(' in compile_txt)

# %% docs/parallel.md code-cell tags=
x = jax.device_put(jnp.arange(8 * 4.).reshape(8, 4), jax.P(None, 'X'))
y = jax.device_put(jnp.arange(4 * 16.).reshape(4, 16), jax.P('X', None))

try:
  jnp.dot(x, y)
except Exception as e:
  print("ERROR!")
  print(e)

# %% docs/parallel.md code-cell tags=
z = jnp.dot(x, y, out_sharding=jax.P('X', None))

print(jax.typeof(z))

# %% docs/parallel.md code-cell tags=
from jax.sharding import auto_axes, explicit_axes

x = jax.device_put(np.arange(16).reshape(4, 4), jax.P("X", None))
y = jax.device_put(np.arange(16).reshape(4, 4), jax.P(None, "X"))

try:
  x + y
except Exception as e:
  print("ERROR!")
  print(e)

# %% docs/parallel.md code-cell tags=
@auto_axes
def add2(x, y):
  print("We're in auto-sharding mode here. This is the current mesh:\n"
        f"{jax.sharding.get_abstract_mesh()}")
  return x + y

result = add2(x, y, out_sharding=jax.P("X", None))
print(f"Result type: {jax.typeof(result)}")

# %% docs/parallel.md code-cell tags=
Auto = jax.sharding.AxisType.Auto
auto_mesh = jax.make_mesh((4, 2), ('X', 'Y'), (Auto, Auto))
jax.set_mesh(auto_mesh)

x = jax.device_put(jnp.arange(8 * 4. ).reshape(8, 4 ), jax.P(None, 'X'))
y = jax.device_put(jnp.arange(4 * 16.).reshape(4, 16), jax.P('X', None))

z = jnp.dot(x, y)  # not an error!

# %% docs/parallel.md code-cell tags=
print(z.sharding)  # works at the top-level only (i.e. outside `jit`)

# %% docs/parallel.md code-cell tags=
@jax.jit
def f(x, y):
  z = jnp.dot(x, y)
  z = jax.lax.with_sharding_constraint(z, jax.P('X', None))
  return z

z = f(x, y)
print(z.sharding)

# %% docs/parallel.md code-cell tags=
@explicit_axes
def explicit_g(y):
  print(f'mesh inside g: {jax.sharding.get_abstract_mesh()}')
  print(f'y.sharding inside g: {jax.typeof(y) = }')
  z = y * 2
  print(f'z.sharding inside g: {jax.typeof(z) = }', end='\n\n')
  return z

@jax.jit
def f(arr1):
  print(f'mesh inside f: {jax.sharding.get_abstract_mesh()}', end='\n\n')
  x = jnp.sin(arr1)
  z = explicit_g(x, in_sharding=jax.P("X", "Y"))
  return z + 1

x = jax.device_put(np.arange(16).reshape(4, 4), jax.P("X", "Y"))
f(x)

# %% docs/parallel.md code-cell tags=
jax.set_mesh(jax.make_mesh((4, 2), ('X', 'Y')))  # Explicit mode

def compare_shardings(x):
  print(f"=== with mesh: {jax.sharding.get_abstract_mesh()} ===")
  print(f"Concrete value sharding: {x.sharding.spec}")
  print(f"Type-specified sharding: {jax.typeof(x).sharding.spec}\n")

my_array = jnp.sin(jax.device_put(np.arange(8), jax.P("X")))
compare_shardings(my_array)

@auto_axes
def check_in_auto_context(x):
  compare_shardings(x)
  return x

check_in_auto_context(my_array, out_sharding=jax.P("X"))

# %% docs/parallel.md code-cell tags=
mesh = jax.make_mesh((4, 2), ('X', 'Y'))
jax.set_mesh(mesh)

x = jax.device_put(jnp.arange(8 * 4. ).reshape(8, 4 ), jax.P(None, 'X'))
y = jax.device_put(jnp.arange(4 * 16.).reshape(4, 16), jax.P('X', None))

@jax.shard_map(out_specs=jax.P('X', None))
def matmul(x_shard, y_shard):
  z_summand = jnp.dot(x_shard, y_shard)
  return jax.lax.psum_scatter(z_summand, 'X', tiled=True)

z = matmul(x, y)
print(jax.typeof(z))

z_ref = jnp.dot(x, y, out_sharding=jax.P('X', None))
print(jnp.allclose(z_ref, z))
