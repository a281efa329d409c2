"""Code cells of JAX's tutorial(s) docs/new_docs/301/remat.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/new_docs/301/remat.md cell tags=
import jax

jax.config.update('jax_remat3', True)

import jax.numpy as jnp

# %% docs/new_docs/301/remat.md cell tags=
def g(W, x):
  y = jnp.dot(W, x)
  return jnp.sin(y)

def f(W1, W2, W3, x):
  x = g(W1, x)
  x = g(W2, x)
  x = g(W3, x)
  return x

W1 = jnp.ones((5, 4))
W2 = jnp.ones((6, 5))
W3 = jnp.ones((7, 6))
x = jnp.ones(4)

# Inspect the 'residual' values to be saved on the forward pass
# if you were to evaluate `jax.grad(f)(W1, W2, W3, x)`
from jax.ad_checkpoint import print_saved_residuals
print_saved_residuals(f, W1, W2, W3, x)

# %% docs/new_docs/301/remat.md cell tags=
def f2(W1, W2, W3, x):
  x = jax.checkpoint(g)(W1, x)
  x = jax.checkpoint(g)(W2, x)
  x = jax.checkpoint(g)(W3, x)
  return x

print_saved_residuals(f2, W1, W2, W3, x)

# %% docs/new_docs/301/remat.md cell tags=
from jax.ad_checkpoint import checkpoint_name

def f4(W1, W2, W3, x):
  x = checkpoint_name(g(W1, x), name='a')
  x = checkpoint_name(g(W2, x), name='b')
  x = checkpoint_name(g(W3, x), name='c')
  return x

f4 = jax.checkpoint(f4, policy=jax.checkpoint_policies.save_only_these_names('a'))
print_saved_residuals(f4, W1, W2, W3, x)

# %% docs/new_docs/301/remat.md cell tags=
from jax.tree_util import tree_flatten, tree_unflatten

from rich.console import Console
from rich.table import Table
import rich.text

def print_fwd_bwd(f, *args, **kwargs) -> None:
  args, in_tree = tree_flatten((args, kwargs))

  def f_(*args):
    args, kwargs = tree_unflatten(in_tree, args)
    return f(*args, **kwargs)

  fwd = jax.jit(lambda *args: jax.vjp(f_, *args)).trace(*args).jaxpr.jaxpr

  y, f_vjp = jax.vjp(f_, *args)
  res, in_tree = tree_flatten(f_vjp)

  def g_(*args):
    *res, y = args
    f_vjp = tree_unflatten(in_tree, res)
    return f_vjp(y)

  bwd = jax.jit(g_).trace(*res, y).jaxpr.jaxpr

  table = Table(show_header=False, show_lines=True, padding=(1, 2, 0, 2), box=None)
  table.add_row("[bold green]forward computation:",
                "[bold green]backward computation:")
  table.add_row(rich.text.Text.from_ansi(str(fwd)),
                rich.text.Text.from_ansi(str(bwd)))
  console = Console(width=240, force_jupyter=True)
  console.print(table)

def _renderable_repr(self):
  return self.html
rich.jupyter.JupyterRenderable._repr_html_ = _renderable_repr

# %% docs/new_docs/301/remat.md cell tags=
# Without using `jax.checkpoint`:
print_fwd_bwd(f, W1, W2, W3, x)

# %% docs/new_docs/301/remat.md cell tags=
# Using `jax.checkpoint` with a save-only-these-names policy:
print_fwd_bwd(f4, W1, W2, W3, x)

# %% docs/new_docs/301/remat.md cell tags=
def sin_vjp(x):
  y = jnp.sin(x)
  cos_x = jnp.cos(x)
  return y, lambda y_bar: cos_x * y_bar

# %% docs/new_docs/301/remat.md cell tags=
def sin_vjp2(x):
  y = jnp.sin(x)
  return y, lambda y_bar: jnp.cos(x) * y_bar

# %% docs/new_docs/301/remat.md cell tags=
def f(x):
  y = g(x)
  z = h(y)
  return z

def f_vjp(x):
  y, g_vjp = jax.vjp(g, x)
  z, h_vjp = jax.vjp(h, y)
  def f_bwd(z_bar):
    y_bar, = h_vjp(z_bar)
    x_bar, = g_vjp(y_bar)
    return x_bar
  return z, f_bwd

# %% docs/new_docs/301/remat.md cell tags=
def f_vjp_checkpoint(x):
  y = g(x)
  z, h_vjp = jax.vjp(h, y)
  def f_bwd2(z_bar):
    y_bar, = h_vjp(z_bar)
    _, g_vjp = jax.vjp(g, x)
    x_bar, = g_vjp(y_bar)
    return x_bar
  return z, f_bwd2

# %% docs/new_docs/301/remat.md cell tags=
def f_checkpoint(x):
  y = jax.checkpoint(g)(x)
  z = h(y)
  return z

# %% docs/new_docs/301/remat.md cell tags=
def f_checkpoint_grad(x):
  y = g(x)                  # step 1
  _, h_vjp = jax.vjp(h)(y)  # step 2
  y_bar, = h_vjp(1.0)       # step 3
  _, g_vjp = jax.vjp(g, x)  # step 4
  x_bar, = g_vjp(y_bar)     # step 5
  return x_bar

# %% docs/new_docs/301/remat.md cell tags=
def f_grad_bad(x):
  _ = f(x)                  # step 1
  _, f_vjp = jax.vjp(f, x)  # step 2
  x_bar, = f_vjp(1.0)       # step 3
  return x_bar

# %% docs/new_docs/301/remat.md cell tags=
def f_grad_bad2(x):
  y, g_vjp = jax.vjp(g, x)  # step 1
  z = h(y)                  # step 2
  _, h_vjp = jax.vjp(h, y)  # step 3
  y_bar, = h_vjp(1.0)       # step 4
  x_bar, = g_vjp(y_bar)     # step 5
  return x_bar

# %% docs/new_docs/301/remat.md cell tags=
def loss(params, x, y):
  return jnp.sum((predict(params, x) - y)**2)

def predict(params, x):
  *Ws, Wlast = params
  for i, W in enumerate(Ws):
    x = layer(W, x)
    x = checkpoint_name(x, name=f'layer{i}_output')
  x = jnp.dot(Wlast, x)
  return x

def layer(W, x):
  return jnp.sin(jnp.dot(W, x))

W1 = W2 = W3 = jnp.ones((4, 4))
params = [W1, W2, W3]
x = jnp.ones(4)
y = jnp.ones(4)

# %% docs/new_docs/301/remat.md cell tags=
print_saved_residuals(loss, params, x, y)

# %% docs/new_docs/301/remat.md cell tags=
loss_checkpoint = jax.checkpoint(
    loss, policy=jax.checkpoint_policies.save_any_names_but_these('layer1_output'))
print_saved_residuals(loss_checkpoint, params, x, y)

# %% docs/new_docs/301/remat.md cell tags=
from functools import partial

policy = jax.checkpoint_policies.save_and_offload_only_these_names(
    names_which_can_be_saved=['y'], names_which_can_be_offloaded=['z'],
    offload_src='device', offload_dst='pinned_host')

@partial(jax.checkpoint, policy=policy)
def f_offload(x):
  y = checkpoint_name(jnp.sin(x), 'y')   # saved on device
  z = checkpoint_name(jnp.sin(y), 'z')   # offloaded to pinned host memory
  w = checkpoint_name(jnp.sin(z), 'w')   # recomputed on the backward pass
  return jnp.sum(w)

print(jax.grad(f_offload)(jnp.arange(4.)))
print_saved_residuals(f_offload, jnp.arange(4.))

# %% docs/new_docs/301/remat.md cell tags=
sin = jax.custom_remat(jnp.sin,
                   lambda _, x: (jnp.sin(x), jnp.cos(x)),   # keep cos(x)
                   lambda cos_x, x: (jnp.sin(x), cos_x),    # rematerialize
                   lambda cos_x, g: (cos_x * g,))           # backward rule

f = jax.remat(lambda x: sin(sin(x)))
print(jax.grad(f)(1.0))
print(jax.grad(jnp.sin)(jnp.sin(1.0)) * jnp.cos(1.0))  # chain rule, for reference

# %% docs/new_docs/301/remat.md cell tags=
SaveOnlyTheseNames = jax.checkpoint_policies.SaveOnlyTheseNames

def sin_fwd(policy, x):
  if isinstance(policy, SaveOnlyTheseNames) and 'cos' in policy.saveable_names:
    return jnp.sin(x), jnp.cos(x)
  else:
    return jnp.sin(x), None

def sin_rem(cos_x, x):
  if cos_x is None:
    cos_x = jnp.cos(x)
  return jnp.sin(x), cos_x

def sin_bwd(cos_x, g):
  return cos_x * g,

sin = jax.custom_remat(jnp.sin, sin_fwd, sin_rem, sin_bwd)

save_cos = jax.checkpoint_policies.save_only_these_names('cos')
f = jax.checkpoint(lambda x: sin(sin(x)), policy=save_cos)
print(jax.grad(f)(3.0))

f = jax.checkpoint(lambda x: sin(sin(x)),
                   policy=jax.checkpoint_policies.nothing_saveable)
print(jax.grad(f)(3.0))

# %% docs/new_docs/301/remat.md cell tags=
def chain_compose(funs):
  def f(x):
    for fun in funs:
      x = fun(x)
    return x
  return f

f = chain_compose([jnp.sin] * 8)
print_saved_residuals(f, 3.)

# %% docs/new_docs/301/remat.md cell tags=
f = chain_compose([jnp.sin] * 16)
print_saved_residuals(f, 3.)

# %% docs/new_docs/301/remat.md cell tags=
def recursive_checkpoint(funs):
  if len(funs) == 1:
    return funs[0]
  elif len(funs) == 2:
    f1, f2 = funs
    return lambda x: f1(f2(x))
  else:
    f1 = recursive_checkpoint(funs[:len(funs)//2])
    f2 = recursive_checkpoint(funs[len(funs)//2:])
    return lambda x: f1(jax.checkpoint(f2)(x))

# %% docs/new_docs/301/remat.md cell tags=
f = recursive_checkpoint([jnp.sin] * 8)
print_saved_residuals(f, 3.)

# %% docs/new_docs/301/remat.md cell tags=
f = recursive_checkpoint([jnp.sin] * 16)
print_saved_residuals(f, 3.)

# %% docs/new_docs/301/remat.md cell tags=
f = chain_compose([jnp.sin] * 8)
print_fwd_bwd(f, 3.)

# %% docs/new_docs/301/remat.md cell tags=
f = recursive_checkpoint([jnp.sin] * 8)
print_fwd_bwd(f, 3.)

# %% docs/new_docs/301/remat.md cell tags=
LayerParam = tuple[jnp.ndarray, jnp.ndarray]  # Weights-bias pair for a layer.
ParamsList = list[LayerParam]

def net(params: ParamsList, x: jnp.ndarray):
  for W, b in params:
    x = jnp.maximum(jnp.dot(x, W) + b, 0.)
  return x

# %% docs/new_docs/301/remat.md cell tags=
params = [(jnp.array([[0.5, 0.5], [1., 1.]]), jnp.array([0.5, 0.5])),
          (jnp.array([[0.5, 0.5], [1., 1.]]), jnp.array([0.5, 0.5]))]

all_weights = jnp.stack([W for W, _ in params])
all_biases = jnp.stack([b for _, b in params])

def layer(x, W_b_pair):
  W, b = W_b_pair
  out = jnp.maximum(jnp.dot(x, W) + b, 0.)
  return out, None

def net(all_weights, all_biases, x):
  x, _ = jax.lax.scan(layer, x, (all_weights, all_biases))
  return x

# %% docs/new_docs/301/remat.md cell tags=
@partial(jax.checkpoint,
         policy=jax.checkpoint_policies.save_only_these_names('preactivation'))
def layer(x, W_b_pair):
  W, b = W_b_pair
  pre = checkpoint_name(jnp.dot(x, W) + b, 'preactivation')
  out = jnp.maximum(pre, 0.)
  return out, None
