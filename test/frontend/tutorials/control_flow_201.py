"""Code cells of JAX's tutorial(s) docs/new_docs/201/control-flow.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/new_docs/201/control-flow.md cell tags=remove-cell
# This ensures that code cell tracebacks appearing below will be concise.
%xmode minimal

# %% docs/new_docs/201/control-flow.md cell tags=
from jax import grad, jit
import jax.numpy as jnp

# %% docs/new_docs/201/control-flow.md cell tags=
@jit
def f(x):
  for i in range(3):
    x = 2 * x
  return x

print(f(3))

# %% docs/new_docs/201/control-flow.md cell tags=
@jit
def g(x):
  y = 0.
  for i in range(x.shape[0]):
    y = y + x[i]
  return y

print(g(jnp.array([1., 2., 3.])))

# %% docs/new_docs/201/control-flow.md cell tags=raises-exception
@jit
def f(x):
  if x < 3:
    return 3. * x ** 2
  else:
    return -4 * x

# This will fail!
f(2)

# %% docs/new_docs/201/control-flow.md cell tags=raises-exception
@jit
def g(x):
  return (x > 0) and (x < 3)

# This will fail!
g(2)

# %% docs/new_docs/201/control-flow.md cell tags=
def f(x):
  if x < 3:
    return 3. * x ** 2
  else:
    return -4 * x

f = jit(f, static_argnames='x')

print(f(2.))

# %% docs/new_docs/201/control-flow.md cell tags=
def f(x, n):
  y = 0.
  for i in range(n):
    y = y + x[i]
  return y

f = jit(f, static_argnames='n')

f(jnp.array([2., 3., 4.]), 2)

# %% docs/new_docs/201/control-flow.md cell tags=
def example_fun(length, val):
  return jnp.ones((length,)) * val
# un-jit'd works fine
print(example_fun(5, 4))

# %% docs/new_docs/201/control-flow.md cell tags=raises-exception
bad_example_jit = jit(example_fun)
# this will fail:
bad_example_jit(10, 4)

# %% docs/new_docs/201/control-flow.md cell tags=
# static_argnames tells JAX to recompile on changes at these argument positions:
good_example_jit = jit(example_fun, static_argnames='length')
# first compile
print(good_example_jit(10, 4))
# recompiles
print(good_example_jit(5, 4))

# %% docs/new_docs/201/control-flow.md cell tags=
@jit
def f(x):
  print(x)
  y = 2 * x
  print(y)
  return y
f(2)

# %% docs/new_docs/201/control-flow.md python tags=
def cond(pred, true_fun, false_fun, operand):
  if pred:
    return true_fun(operand)
  else:
    return false_fun(operand)

# %% docs/new_docs/201/control-flow.md cell tags=
from jax import lax

operand = jnp.array([0.])
print(lax.cond(True, lambda x: x+1, lambda x: x-1, operand))
# --> array([1.], dtype=float32)
print(lax.cond(False, lambda x: x+1, lambda x: x-1, operand))
# --> array([-1.], dtype=float32)

# %% docs/new_docs/201/control-flow.md python tags=
def while_loop(cond_fun, body_fun, init_val):
  val = init_val
  while cond_fun(val):
    val = body_fun(val)
  return val

# %% docs/new_docs/201/control-flow.md cell tags=
init_val = 0
cond_fun = lambda x: x < 10
body_fun = lambda x: x + 1
lax.while_loop(cond_fun, body_fun, init_val)
# --> array(10, dtype=int32)

# %% docs/new_docs/201/control-flow.md python tags=
def fori_loop(start, stop, body_fun, init_val):
  val = init_val
  for i in range(start, stop):
    val = body_fun(i, val)
  return val

# %% docs/new_docs/201/control-flow.md cell tags=
init_val = 0
start = 0
stop = 10
body_fun = lambda i, x: x + i
lax.fori_loop(start, stop, body_fun, init_val)
# --> array(45, dtype=int32)

# %% docs/new_docs/201/control-flow.md python tags=
def scan(f, init, xs):
  carry = init
  ys = []
  for x in xs:
    carry, y = f(carry, x)
    ys.append(y)
  return carry, np.stack(ys)

# %% docs/new_docs/201/control-flow.md cell tags=
def cumsum_step(carry, x):
  new_carry = carry + x
  return new_carry, new_carry   # (next state, this step's output)

final, cumulative = lax.scan(cumsum_step, 0.0, jnp.arange(1., 5.))
print(final)
print(cumulative)

# %% docs/new_docs/201/control-flow.md cell tags=
def python_check_positive_even(x):
  is_even = x % 2 == 0
  # `and` short-circuits, so when `is_even` is `False`, `x > 0` is not evaluated.
  return is_even and (x > 0)

@jit
def jax_check_positive_even(x):
  is_even = x % 2 == 0
  # `logical_and` does not short circuit, so `x > 0` is always evaluated.
  return jnp.logical_and(is_even, x > 0)

print(python_check_positive_even(24))
print(jax_check_positive_even(24))

# %% docs/new_docs/201/control-flow.md cell tags=
x = jnp.array([-1, 2, 5])
print(jax_check_positive_even(x))

# %% docs/new_docs/201/control-flow.md cell tags=raises-exception
print(python_check_positive_even(x))
