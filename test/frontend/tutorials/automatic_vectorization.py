"""Code cells of JAX's tutorial(s) docs/automatic-vectorization.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/automatic-vectorization.md cell tags=
import jax
import jax.numpy as jnp

x = jnp.arange(5)
w = jnp.array([2., 3., 4.])

def convolve(x, w):
  output = []
  for i in range(1, len(x)-1):
    output.append(jnp.dot(x[i-1:i+2], w))
  return jnp.array(output)

convolve(x, w)

# %% docs/automatic-vectorization.md cell tags=
xs = jnp.stack([x, x])
ws = jnp.stack([w, w])

# %% docs/automatic-vectorization.md cell tags=
def manually_batched_convolve(xs, ws):
  output = []
  for i in range(xs.shape[0]):
    output.append(convolve(xs[i], ws[i]))
  return jnp.stack(output)

manually_batched_convolve(xs, ws)

# %% docs/automatic-vectorization.md cell tags=
def manually_vectorized_convolve(xs, ws):
  output = []
  for i in range(1, xs.shape[-1] -1):
    output.append(jnp.sum(xs[:, i-1:i+2] * ws, axis=1))
  return jnp.stack(output, axis=1)

manually_vectorized_convolve(xs, ws)

# %% docs/automatic-vectorization.md cell tags=
auto_batch_convolve = jax.vmap(convolve)

auto_batch_convolve(xs, ws)

# %% docs/automatic-vectorization.md cell tags=
auto_batch_convolve_v2 = jax.vmap(convolve, in_axes=1, out_axes=1)

xst = jnp.transpose(xs)
wst = jnp.transpose(ws)

auto_batch_convolve_v2(xst, wst)

# %% docs/automatic-vectorization.md cell tags=
batch_convolve_v3 = jax.vmap(convolve, in_axes=[0, None])

batch_convolve_v3(xs, w)

# %% docs/automatic-vectorization.md cell tags=
jitted_batch_convolve = jax.jit(auto_batch_convolve)

jitted_batch_convolve(xs, ws)

# %% docs/automatic-vectorization.md cell tags=
def pairwise(f, xs):
  return jax.vmap(lambda x: jax.vmap(lambda y: f(x, y))(xs))(xs)
