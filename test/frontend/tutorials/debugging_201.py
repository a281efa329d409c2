"""Code cells of JAX's tutorial(s) docs/new_docs/201/debugging.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/new_docs/201/debugging.md cell tags=
import jax
import jax.numpy as jnp

@jax.jit
def f(x):
  print("print(x) ->", x)
  y = jnp.sin(x)
  print("print(y) ->", y)
  return y

result = f(2.)

# %% docs/new_docs/201/debugging.md cell tags=
@jax.jit
def f(x):
  jax.debug.print("jax.debug.print(x) -> {x}", x=x)
  y = jnp.sin(x)
  jax.debug.print("jax.debug.print(y) -> {y}", y=y)
  return y

result = f(2.)

# %% docs/new_docs/201/debugging.md cell tags=
def f(x):
  jax.debug.print("jax.debug.print(x) -> {}", x)
  y = jnp.sin(x)
  jax.debug.print("jax.debug.print(y) -> {}", y)
  return y

xs = jnp.arange(3.)

result = jax.vmap(f)(xs)

# %% docs/new_docs/201/debugging.md cell tags=
result = jax.lax.map(f, xs)

# %% docs/new_docs/201/debugging.md cell tags=
def f(x):
  jax.debug.print("jax.debug.print(x) -> {}", x)
  return x ** 2

result = jax.grad(f)(1.)

# %% docs/new_docs/201/debugging.md cell tags=
@jax.jit
def f(x, y):
  jax.debug.print("jax.debug.print(x) -> {}", x, ordered=True)
  jax.debug.print("jax.debug.print(y) -> {}", y, ordered=True)
  return x + y

f(1, 2)

# %% docs/new_docs/201/debugging.md cell tags=
@jax.custom_vjp
def print_grad(x):
  return x

def print_grad_fwd(x):
  return x, None

def print_grad_bwd(_, x_grad):
  jax.debug.print("x_grad: {}", x_grad)
  return (x_grad,)

print_grad.defvjp(print_grad_fwd, print_grad_bwd)

def f(x):
  x = print_grad(x)
  return x * 2.

jax.grad(f)(1.)

# %% docs/new_docs/201/debugging.md cell tags=
@jax.jit
def f(x):
  jax.debug.print("x: {}", x)
  return x

f(2.).block_until_ready()
jax.effects_barrier()

# %% docs/new_docs/201/debugging.md cell tags=
import logging

def log_value(x):
  logging.warning(f'Logged value: {x}')

@jax.jit
def f(x):
  jax.debug.callback(log_value, x)
  return x

f(1.0);

# %% docs/new_docs/201/debugging.md cell tags=
x = jnp.arange(5.0)
jax.vmap(f)(x);

# %% docs/new_docs/201/debugging.md cell tags=
jax.grad(f)(1.0);

# %% docs/new_docs/201/debugging.md cell tags=
import traceback
jax.config.update("jax_debug_nans", True)

def f(x):
  w = 3 * jnp.square(x)
  return jnp.log(-w)

# The stack trace is very long, so only print a couple of lines.
try:
  f(5.)
except FloatingPointError as e:
  print(traceback.format_exc(limit=2))

# %% docs/new_docs/201/debugging.md cell tags=raises-exception
jax.jit(f)(5.)

# %% docs/new_docs/201/debugging.md cell tags=
with jax.debug_nans(False):
  print(jax.jit(f)(5.))

# %% docs/new_docs/201/debugging.md cell tags=
jax.config.update("jax_debug_nans", False)  # back off for the rest of this page

# %% docs/new_docs/201/debugging.md python tags=
import jax
jax.config.update("jax_disable_jit", True)

def f(x):
  y = jnp.log(x)
  if jnp.isnan(y):
    breakpoint()
  return y

jax.jit(f)(-2.)  # ==> Enters PDB breakpoint!
