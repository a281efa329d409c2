"""Code cells of JAX's tutorial(s) docs/jep/10657-sequencing-effects.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/jep/10657-sequencing-effects.md python tags=
def f():
  print("hello")
  return 2
def g():
  print("world")
  return 3
f()
g()

# %% docs/jep/10657-sequencing-effects.md python tags=
@jax.jit(device=<device 0>)
def f():
  return 2

@jax.jit(device=<device 1>)
def g():
  return 3
f()
g()

# %% docs/jep/10657-sequencing-effects.md python tags=
@jax.jit(device=<device 0>)
def f():
  jax.print("hello")
  return 2

@jax.jit(device=<device 1>)
def g():
  jax.print("world")
  return 3
f()
g()

# %% docs/jep/10657-sequencing-effects.md python tags=
@jax.jit
def f(x):
  jax.print("hello")
  jax.print("world")
  return x

# %% docs/jep/10657-sequencing-effects.md python tags=
@jax.jit
def f(x, y):
  log_value(x)
  log_value(y)
f(1, 2)

# %% docs/jep/10657-sequencing-effects.md python tags=
@jax.jit
def f(token, x):
  token = jax.print(token, "hello")
  token = jax.print(token, "world")
  return token, x

# %% docs/jep/10657-sequencing-effects.md python tags=
@jax.jit
def f(runtime_token, x):
  compiler_token = new_compiler_token()
  compiler_token = jax.print(compiler_token, "hello")
  compiler_token = jax.print(compiler_token, "world")
  return runtime_token, x

# %% docs/jep/10657-sequencing-effects.md python tags=
def _execute(compiled_computation, *args):
  outputs = compiled_computation.execute(*args)
  return outputs

# %% docs/jep/10657-sequencing-effects.md python tags=
def _execute(compiled_computation, *args):
  runtime_token = get_runtime_token() # Grab global token
  runtime_token, *outputs = compiled_computation.execute(runtime_token, *args)
  update_runtime_token(runtime_token) # Update global token
  return outputs

# %% docs/jep/10657-sequencing-effects.md python tags=
@jax.jit
def f():
  jax.print("hello world")
  return
f() # Executed asynchronously

# %% docs/jep/10657-sequencing-effects.md python tags=
@jax.jit
def f():
  jax.print("hello world")
  return new_runtime_token()
f() # Executed asynchronously

# %% docs/jep/10657-sequencing-effects.md python tags=
@jax.jit
def f():
  jax.print("hello")

@jax.jit
def g():
  jax.print("world")

f()
g()

# %% docs/jep/10657-sequencing-effects.md python tags=
@jax.jit(device=<device 0>)
def f():
  jax.print("hello")

@jax.jit(device=<device 1>)
def g():
  jax.print("world")

f()
g()

# %% docs/jep/10657-sequencing-effects.md python tags=
@jax.jit(device=<device 0>)
def f():
  jax.print("hello")
  return new_runtime_token()

@jax.jit(device=<device 1>)
def g():
  jax.print("world")
  return new_runtime_token()

t0 = f()
t1 = g()
block_until_ready((t0, t1))

# %% docs/jep/10657-sequencing-effects.md python tags=
def _execute(compiled_computation, *args):
  output_token, *outputs = compiled_computation.execute(runtime_token, *args)
  update_output_token(output_token, compiled_computation.device)
  return outputs

# %% docs/jep/10657-sequencing-effects.md python tags=
def effects_barrier():
  output_token.block_until_ready()
