"""Code cells of JAX's tutorial(s) docs/new_docs/201/callbacks.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/new_docs/201/callbacks.md cell tags=remove-cell
# This ensures that code cell tracebacks appearing below will be concise.
%xmode minimal

# %% docs/new_docs/201/callbacks.md cell tags=remove-cell
import jax
jax.config.update('jax_num_cpu_devices', 8)  # simulate 8 devices, for the sharding section

# %% docs/new_docs/201/callbacks.md cell tags=
import jax

@jax.jit
def f(x):
  y = x + 1
  print("intermediate value: {}".format(y))
  return y * 2

result = f(2)

# %% docs/new_docs/201/callbacks.md cell tags=
@jax.jit
def f(x):
  y = x + 1
  jax.debug.print("intermediate value: {}", y)
  return y * 2

result = f(2)

# %% docs/new_docs/201/callbacks.md cell tags=
import jax
import jax.numpy as jnp
import numpy as np

def f_host(x):
  # call a numpy (not jax.numpy) operation:
  return np.sin(x).astype(x.dtype)

def f(x):
  result_shape = jax.ShapeDtypeStruct.like(x)
  return jax.pure_callback(f_host, result_shape, x, vmap_method='sequential')

x = jnp.arange(5.0)
f(x)

# %% docs/new_docs/201/callbacks.md cell tags=
jax.jit(f)(x)

# %% docs/new_docs/201/callbacks.md cell tags=
def body_fun(_, x):
  return _, f(x)
jax.lax.scan(body_fun, None, jnp.arange(5.0))[1]

# %% docs/new_docs/201/callbacks.md cell tags=
jax.vmap(f)(x)

# %% docs/new_docs/201/callbacks.md cell tags=raises-exception
jax.grad(f)(x)

# %% docs/new_docs/201/callbacks.md cell tags=
def print_something():
  print('printing something')
  return np.int32(0)

@jax.jit
def f1():
  return jax.pure_callback(print_something, np.int32(0))
f1();

# %% docs/new_docs/201/callbacks.md cell tags=
@jax.jit
def f2():
  jax.pure_callback(print_something, np.int32(0))
  return 1.0
f2();

# %% docs/new_docs/201/callbacks.md python tags=
import jax
import jax.numpy as jnp

def raise_via_callback(x):
  def _raise(x):
    raise ValueError(f"value of x is {x}")
  return jax.pure_callback(_raise, x, x)

def raise_if_negative(x):
  return jax.lax.cond(x < 0, raise_via_callback, lambda x: x, x)

x_batch = jnp.arange(4)

[raise_if_negative(x) for x in x_batch]  # does not raise

jax.vmap(raise_if_negative)(x_batch)  # ValueError: value of x is 0

# %% docs/new_docs/201/callbacks.md cell tags=
from jax.experimental import io_callback
from functools import partial

global_rng = np.random.default_rng(0)

def host_side_random_like(x):
  """Generate a random array like x using the global_rng state"""
  # We have two side-effects here:
  # - printing the shape and dtype
  # - calling global_rng, thus updating its state
  print(f'generating {x.dtype}{list(x.shape)}')
  return global_rng.uniform(size=x.shape).astype(x.dtype)

@jax.jit
def numpy_random_like(x):
  return io_callback(host_side_random_like, x, x)

x = jnp.zeros(5)
numpy_random_like(x)

# %% docs/new_docs/201/callbacks.md cell tags=
jax.vmap(numpy_random_like)(x)

# %% docs/new_docs/201/callbacks.md cell tags=raises-exception
@jax.jit
def numpy_random_like_ordered(x):
  return io_callback(host_side_random_like, x, x, ordered=True)

jax.vmap(numpy_random_like_ordered)(x)

# %% docs/new_docs/201/callbacks.md cell tags=
def body_fun(_, x):
  return _, numpy_random_like_ordered(x)
jax.lax.scan(body_fun, None, jnp.arange(5.0))[1]

# %% docs/new_docs/201/callbacks.md cell tags=raises-exception
jax.grad(numpy_random_like)(x)

# %% docs/new_docs/201/callbacks.md cell tags=
@jax.jit
def f(x):
  io_callback(lambda: print('hello'), None)
  return x

jax.grad(f)(1.0);

# %% docs/new_docs/201/callbacks.md cell tags=
from jax import debug

def log_value(x):
  # This could be an actual logging call; we'll use
  # print() for demonstration
  print("log:", x)

@jax.jit
def f(x):
  debug.callback(log_value, x)
  return x

f(1.0);

# %% docs/new_docs/201/callbacks.md cell tags=
x = jnp.arange(5.0)
jax.vmap(f)(x);

# %% docs/new_docs/201/callbacks.md cell tags=
jax.grad(f)(1.0);

# %% docs/new_docs/201/callbacks.md cell tags=
def host_fn(x):
  print(f"callback received shape {x.shape}")
  return np.asarray(x) * 2

def f(x):
  return jax.pure_callback(host_fn, jax.ShapeDtypeStruct.like(x), x)

mesh = jax.make_mesh((8,), ('i',))

with jax.set_mesh(mesh):
  x = jax.device_put(jnp.arange(8.0), jax.P('i'))
  out = jax.jit(f)(x)  # one callback, with the full gathered array
out

# %% docs/new_docs/201/callbacks.md cell tags=
with jax.set_mesh(mesh):
  out = jax.shard_map(f, in_specs=jax.P('i'), out_specs=jax.P('i'))(x)  # one callback per device
out

# %% docs/new_docs/201/callbacks.md cell tags=
import jax
import jax.numpy as jnp
import scipy.special

def jv(v, z):
  v, z = jnp.asarray(v), jnp.asarray(z)

  # Require the order v to be integer type: this simplifies
  # the JVP rule below.
  assert jnp.issubdtype(v.dtype, jnp.integer)

  # Promote the input to inexact (float/complex).
  # Note that jnp.result_type() accounts for the enable_x64 flag.
  z = z.astype(jnp.result_type(float, z.dtype))

  # Wrap scipy function to return the expected dtype.
  _scipy_jv = lambda v, z: scipy.special.jv(v, z).astype(z.dtype)

  # Define the expected shape & dtype of output.
  result_shape_dtype = jax.ShapeDtypeStruct(
      shape=jnp.broadcast_shapes(v.shape, z.shape),
      dtype=z.dtype)

  # Use vmap_method="broadcast_all" because scipy.special.jv handles broadcasted inputs.
  return jax.pure_callback(_scipy_jv, result_shape_dtype, v, z, vmap_method="broadcast_all")

# %% docs/new_docs/201/callbacks.md cell tags=
from functools import partial
j1 = partial(jv, 1)
z = jnp.arange(5.0)

# %% docs/new_docs/201/callbacks.md cell tags=
print(j1(z))

# %% docs/new_docs/201/callbacks.md cell tags=
print(jax.jit(j1)(z))

# %% docs/new_docs/201/callbacks.md cell tags=
print(jax.vmap(j1)(z))

# %% docs/new_docs/201/callbacks.md cell tags=raises-exception
jax.grad(j1)(z)

# %% docs/new_docs/201/callbacks.md cell tags=
jv = jax.custom_jvp(jv)

@jv.defjvp
def _jv_jvp(primals, tangents):
  v, z = primals
  _, z_dot = tangents  # Note: v_dot is always 0 because v is integer.
  jv_minus_1, jv_plus_1 = jv(v - 1, z), jv(v + 1, z)
  djv_dz = jnp.where(v == 0, -jv_plus_1, 0.5 * (jv_minus_1 - jv_plus_1))
  return jv(v, z), z_dot * djv_dz

# %% docs/new_docs/201/callbacks.md cell tags=
j1 = partial(jv, 1)
print(jax.grad(j1)(2.0))

# %% docs/new_docs/201/callbacks.md cell tags=
jax.hessian(j1)(2.0)
