"""Code cells of JAX's tutorial(s) docs/notebooks/Common_Gotchas_in_JAX.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
import numpy as np
from jax import jit
from jax import lax
from jax import random
import jax
import jax.numpy as jnp

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
def impure_print_side_effect(x):
  print("Executing function")  # This is a side-effect
  return x

# The side-effects appear during the first run
print ("First call: ", jit(impure_print_side_effect)(4.))

# Subsequent runs with parameters of same type and shape may not show the side-effect
# This is because JAX now invokes a cached compilation of the function
print ("Second call: ", jit(impure_print_side_effect)(5.))

# JAX re-runs the Python function when the type or shape of the argument changes
print ("Third call, different type: ", jit(impure_print_side_effect)(jnp.array([5.])))

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
g = 0.
def impure_uses_globals(x):
  return x + g

# JAX captures the value of the global during the first run
print ("First call: ", jit(impure_uses_globals)(4.))
g = 10.  # Update the global

# Subsequent runs may silently use the cached value of the globals
print ("Second call: ", jit(impure_uses_globals)(5.))

# JAX re-runs the Python function when the type or shape of the argument changes
# This will end up reading the latest value of the global
print ("Third call, different type: ", jit(impure_uses_globals)(jnp.array([4.])))

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
g = 0.
def impure_saves_global(x):
  global g
  g = x
  return x

# JAX runs once the transformed function with special Traced values for arguments
print ("First call: ", jit(impure_saves_global)(4.))
print ("Saved global: ", g)  # Saved global has an internal JAX value

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
def pure_uses_internal_state(x):
  state = dict(even=0, odd=0)
  for i in range(10):
    state['even' if i % 2 == 0 else 'odd'] += x
  return state['even'] + state['odd']

print(jit(pure_uses_internal_state)(5.))

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
import jax.numpy as jnp
from jax import make_jaxpr

# lax.fori_loop
array = jnp.arange(10)
print(lax.fori_loop(0, 10, lambda i,x: x+array[i], 0)) # expected result 45
iterator = iter(range(10))
print(lax.fori_loop(0, 10, lambda i,x: x+next(iterator), 0)) # unexpected result 0

# lax.scan
def func11(arr, extra):
    ones = jnp.ones(arr.shape)
    def body(carry, aelems):
        ae1, ae2 = aelems
        return (carry + ae1 * ae2 + extra, carry)
    return lax.scan(body, 0., (arr, ones))
make_jaxpr(func11)(jnp.arange(16), 5.)
# make_jaxpr(func11)(iter(range(16)), 5.) # throws error

# lax.cond
array_operand = jnp.array([0.])
lax.cond(True, lambda x: x+1, lambda x: x-1, array_operand)
iter_operand = iter(range(10))
# lax.cond(True, lambda x: next(x)+1, lambda x: next(x)-1, iter_operand) # throws error

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
numpy_array = np.zeros((3,3), dtype=np.float32)
print("original array:")
print(numpy_array)

# In place, mutating update
numpy_array[1, :] = 1.0
print("updated array:")
print(numpy_array)

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
%xmode Minimal

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=raises-exception
jax_array = jnp.zeros((3,3), dtype=jnp.float32)

# In place update of JAX's array will yield an error!
jax_array[1, :] = 1.0

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
jax_array = jnp.array([10, 20])
jax_array_new = jax_array
jax_array_new += 10
print(jax_array_new)  # `jax_array_new` is rebound to a new value [20, 30], but...
print(jax_array)      # the original value is unmodified as [10, 20] !

numpy_array = np.array([10, 20])
numpy_array_new = numpy_array
numpy_array_new += 10
print(numpy_array_new)  # `numpy_array_new is numpy_array`, and it was updated
print(numpy_array)      # in-place, so both are [20, 30] !

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
jax_array = jnp.zeros((3,3), dtype=jnp.float32)
updated_array = jax_array.at[1, :].set(1.0)
print("updated array:\n", updated_array)

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
print("original array unchanged:\n", jax_array)

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
print("original array:")
jax_array = jnp.ones((5, 6))
print(jax_array)

new_jax_array = jax_array.at[::2, 3:].add(7.)
print("new array post-addition:")
print(new_jax_array)

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
import jax.numpy as jnp
from jax import jit

class CustomClass:
  def __init__(self, x: jnp.ndarray, mul: bool):
    self.x = x
    self.mul = mul

  @jit  # <---- How to do this correctly?
  def calc(self, y):
    if self.mul:
      return self.x * y
    return y

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=raises-exception
c = CustomClass(2, True)
c.calc(3)

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
class CustomClass:
  def __init__(self, x: jnp.ndarray, mul: bool):
    self.x = x
    self.mul = mul

  def calc(self, y):
    return _calc(self.mul, self.x, y)

@jit(static_argnums=0)
def _calc(mul, x, y):
  if mul:
    return x * y
  return y

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
c = CustomClass(2, True)
print(c.calc(3))

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
class CustomClass:
  def __init__(self, x: jnp.ndarray, mul: bool):
    self.x = x
    self.mul = mul

  # WARNING: this example is broken, as we'll see below. Don't copy & paste!
  @jit(static_argnums=0)
  def calc(self, y):
    if self.mul:
      return self.x * y
    return y

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
c = CustomClass(2, True)
print(c.calc(3))

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
c.mul = False
print(c.calc(3))  # Should print 3

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
class CustomClass:
  def __init__(self, x: jnp.ndarray, mul: bool):
    self.x = x
    self.mul = mul

  @jit(static_argnums=0)
  def calc(self, y):
    if self.mul:
      return self.x * y
    return y

  def __hash__(self):
    return hash((self.x, self.mul))

  def __eq__(self, other):
    return (isinstance(other, CustomClass) and
            (self.x, self.mul) == (other.x, other.mul))

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
class CustomClass:
  def __init__(self, x: jnp.ndarray, mul: bool):
    self.x = x
    self.mul = mul

  @jit
  def calc(self, y):
    if self.mul:
      return self.x * y
    return y

  def _tree_flatten(self):
    children = (self.x,)  # arrays / dynamic values
    aux_data = {'mul': self.mul}  # static values
    return (children, aux_data)

  @classmethod
  def _tree_unflatten(cls, aux_data, children):
    return cls(*children, **aux_data)

from jax import tree_util
tree_util.register_pytree_node(CustomClass,
                               CustomClass._tree_flatten,
                               CustomClass._tree_unflatten)

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
c = CustomClass(2, True)
print(c.calc(3))

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
c.mul = False  # mutation is detected
print(c.calc(3))

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
c = CustomClass(jnp.array(2), True)  # non-hashable x is supported
print(c.calc(3))

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=raises-exception
np.arange(10)[11]

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
jnp.arange(10)[11]

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
jnp.arange(10.0).at[11].get()

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
jnp.arange(10.0).at[11].get(mode='fill', fill_value=jnp.nan)

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
np.sum([1, 2, 3])

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=raises-exception
jnp.sum([1, 2, 3])

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
def permissive_sum(x):
  return jnp.sum(jnp.array(x))

x = list(range(10))
permissive_sum(x)

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
make_jaxpr(permissive_sum)(x)

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
jnp.sum(jnp.array(x))

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
def nansum(x):
  mask = ~jnp.isnan(x)  # boolean mask selecting non-nan values
  x_without_nans = x[mask]
  return x_without_nans.sum()

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
x = jnp.array([1, 2, jnp.nan, 3, 4])
print(nansum(x))

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=raises-exception
jax.jit(nansum)(x)

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
@jax.jit
def nansum_2(x):
  mask = ~jnp.isnan(x)  # boolean mask selecting non-nan values
  return jnp.where(mask, x, 0).sum()

print(nansum_2(x))

# %% docs/notebooks/Common_Gotchas_in_JAX.md cell tags=
x = random.uniform(random.key(0), (1000,), dtype=jnp.float64)
x.dtype

# %% docs/notebooks/Common_Gotchas_in_JAX.md python tags=
import jax
import jax.numpy as jnp
from jax import random

jax.config.update("jax_enable_x64", True)
x = random.uniform(random.key(0), (1000,), dtype=jnp.float64)
x.dtype # --> dtype('float64')
