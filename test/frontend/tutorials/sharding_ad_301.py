"""Code cells of JAX's tutorial(s) docs/new_docs/301/sharding-ad.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/new_docs/301/sharding-ad.md cell tags=
import jax
import jax.numpy as jnp
jax.config.update('jax_num_cpu_devices', 2)

jax.set_mesh(jax.make_mesh((2,), ('X',)))  # explicit mode by default

# %% docs/new_docs/301/sharding-ad.md cell tags=
x = jax.device_put(jnp.arange(8 * 4.).reshape(8, 4), jax.P('X', None))
w = jax.device_put(jnp.arange(4 * 2.).reshape(4, 2) / 10., jax.P(None, None))

def loss(w, x):
  return jnp.sum((x @ w) ** 2)

dw, dx = jax.grad(loss, argnums=(0, 1))(w, x)
print(jax.typeof(w), '->', jax.typeof(dw))
print(jax.typeof(x), '->', jax.typeof(dx))

# %% docs/new_docs/301/sharding-ad.md cell tags=
print(jax.jit(jax.grad(loss)).trace(w, x).jaxpr)

# %% docs/new_docs/301/sharding-ad.md cell tags=
a = jax.device_put(jnp.arange(4.).reshape(2, 2), jax.P(None, 'X'))
b = jax.device_put(jnp.arange(4., 8.).reshape(2, 2), jax.P('X', None))
print(jax.typeof(a))
print(jax.typeof(b))

# %% docs/new_docs/301/sharding-ad.md cell tags=raises-exception
a @ b

# %% docs/new_docs/301/sharding-ad.md cell tags=
c = jnp.einsum('ij,jk->ik', a, b, out_sharding=jax.P(None, None))
print(jax.typeof(c))
print(c)

# %% docs/new_docs/301/sharding-ad.md cell tags=
c = jnp.einsum('ij,jk->ik', a, b,
               out_sharding=jax.P(None, None, unreduced={'X'}))
print(jax.typeof(c))

# %% docs/new_docs/301/sharding-ad.md cell tags=
for shard in c.addressable_shards:
  print(f'device {shard.device.id}:\n{shard.data}')

# %% docs/new_docs/301/sharding-ad.md cell tags=
print(jax.reshard(c, jax.P(None, None)))

# %% docs/new_docs/301/sharding-ad.md cell tags=
c2 = jnp.einsum('ij,jk->ik', 2. * a, b,
                out_sharding=jax.P(None, None, unreduced={'X'}))
print(jax.typeof(c + c2))

# %% docs/new_docs/301/sharding-ad.md cell tags=raises-exception
jnp.cos(c)

# %% docs/new_docs/301/sharding-ad.md cell tags=
w_ = jax.reshard(w, jax.P(None, None, reduced={'X'}))
print(jax.typeof(w_))

# %% docs/new_docs/301/sharding-ad.md cell tags=
def loss2(w, x):
  w = jax.reshard(w, jax.P(None, None, reduced={'X'}))
  return jnp.sum((x @ w) ** 2)

print(jax.jit(jax.grad(loss2)).trace(w, x).jaxpr)

# %% docs/new_docs/301/sharding-ad.md cell tags=
def loss_fanout(w, x1, x2):
  w = jax.reshard(w, jax.P(None, None, reduced={'X'}))
  return jnp.sum(x1 @ w) + jnp.sum(x2 @ w)

x1 = jax.device_put(jnp.ones((8, 4)), jax.P('X', None))
x2 = jax.device_put(jnp.ones((8, 4)), jax.P('X', None))
print(jax.jit(jax.grad(loss_fanout)).trace(w, x1, x2).jaxpr)

# %% docs/new_docs/301/sharding-ad.md cell tags=
def predict(stacked_ws, xs):  # stacked_ws: [layer, features, features]
  def apply_layer(xs, w):
    return jnp.tanh(xs @ w), None
  final_xs, _ = jax.lax.scan(apply_layer, xs, stacked_ws)
  return final_xs

def loss3(stacked_ws, batch):
  return jnp.sum(predict(stacked_ws, batch) ** 2)

@jax.jit
def step(stacked_ws, xs):  # xs: [microbatch, batch@X, features]
  def microbatch_step(grad_acc, xs_mb):
    grads = jax.grad(loss3)(stacked_ws, xs_mb)
    # ws are reduced, so grads are unreduced -- and we can check it!
    assert jax.typeof(grads).sharding.spec.unreduced == {'X'}
    return grad_acc + grads, None

  grad_acc = jax.reshard(jnp.zeros_like(stacked_ws), jax.P(unreduced={'X'}))
  grad_acc, _ = jax.lax.scan(microbatch_step, grad_acc, xs)
  grads = jax.reshard(grad_acc, jax.P())        # the one AllReduce
  ws = jax.reshard(stacked_ws, jax.P())         # free: full copies already
  return ws - 0.01 * grads

stacked_ws = jax.device_put(jnp.stack([jnp.eye(4) / 2] * 3),
                            jax.P(reduced={'X'}))
xs = jax.device_put(jnp.ones((5, 2, 4)), jax.P(None, 'X', None))

new_ws = step(stacked_ws, xs)
print(jax.typeof(new_ws))

# %% docs/new_docs/301/sharding-ad.md cell tags=
import re

def print_all_reduces(jitted, *args):
  hlo = jitted.lower(*args).compile().as_text()
  for line in hlo.splitlines():
    if 'all-reduce(' in line or 'all-reduce-start(' in line:
      print(re.search(r'op_name="([^"]*)"', line).group(1))

print_all_reduces(step, stacked_ws, xs)

# %% docs/new_docs/301/sharding-ad.md cell tags=
@jax.jit
def step_replicated(stacked_ws, xs):
  def microbatch_step(grad_acc, xs_mb):
    grads = jax.grad(loss3)(stacked_ws, xs_mb)  # replicated: AllReduce inside!
    return grad_acc + grads, None
  grad_acc = jnp.zeros_like(stacked_ws)
  grad_acc, _ = jax.lax.scan(microbatch_step, grad_acc, xs)
  return stacked_ws - 0.01 * grad_acc

ws_replicated = jax.reshard(stacked_ws, jax.P())
print_all_reduces(step_replicated, ws_replicated, xs)

# %% docs/new_docs/301/sharding-ad.md cell tags=
@jax.shard_map(in_specs=(jax.P(None, 'X'), jax.P('X', None)),
               out_specs=jax.P(None, None, unreduced={'X'}))
def matmul_partial(a, b):
  out = a @ b   # a local matmul of this device's pieces: a partial sum
  return jax.lax.pcast(out, 'X', to='unreduced')

c = matmul_partial(a, b)
print(jax.typeof(c))

# %% docs/new_docs/301/sharding-ad.md cell tags=
def matmul_loss(a, b):
  return jnp.sum(jax.reshard(matmul_partial(a, b), jax.P(None, None)))

print(jax.jit(jax.grad(matmul_loss, argnums=(0, 1))).trace(a, b).jaxpr)

# %% docs/new_docs/301/sharding-ad.md cell tags=
w_r = jax.reshard(w, jax.P(None, None, reduced={'X'}))

@jax.shard_map(in_specs=(jax.P('X', None), jax.P(None, None, reduced={'X'})),
               out_specs=jax.P('X', None))
def apply_layer(x, w):
  return jnp.tanh(x @ w)

dw = jax.grad(lambda w, x: jnp.sum(apply_layer(x, w) ** 2))(w_r, x)
print(jax.typeof(dw))
