"""Code cells of JAX's tutorial(s) docs/new_docs/101/pytrees.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/new_docs/101/pytrees.md cell tags=remove-cell
# This ensures that code cell tracebacks appearing below will be concise.
%xmode minimal

# %% docs/new_docs/101/pytrees.md cell tags=
import jax
import jax.numpy as jnp

example_trees = [
    [1, 'a', object()],
    (1, (2, 3), ()),
    [1, {'k1': 2, 'k2': (3, 4)}, 5],
    {'a': 2, 'b': (2, 3)},
    jnp.array([1, 2, 3]),
]

# Print how many leaves the pytrees have.
for pytree in example_trees:
  leaves = jax.tree.leaves(pytree)
  print(f"{repr(pytree):<45} has {len(leaves)} leaves: {leaves}")

# %% docs/new_docs/101/pytrees.md cell tags=
params = {'W': jnp.zeros((2, 3)), 'b': jnp.zeros(3)}

leaves, treedef = jax.tree.flatten(params)
print(leaves)
print(treedef)
print(jax.tree.unflatten(treedef, leaves))

# %% docs/new_docs/101/pytrees.md cell tags=
list_of_lists = [
    [1, 2, 3],
    [1, 2],
    [1, 2, 3, 4]
]

jax.tree.map(lambda x: x * 2, list_of_lists)

# %% docs/new_docs/101/pytrees.md cell tags=
another_list_of_lists = list_of_lists
jax.tree.map(lambda x, y: x + y, list_of_lists, another_list_of_lists)

# %% docs/new_docs/101/pytrees.md cell tags=
def loss(params, x):
  pred = jnp.dot(x, params['W']) + params['b']
  return jnp.sum(pred ** 2)

params = {'W': jnp.ones(3), 'b': 0.5}
x = jnp.array([[1., 2., 3.],
               [4., 5., 6.]])

jax.grad(loss)(params, x)

# %% docs/new_docs/101/pytrees.md cell tags=
import numpy as np

def init_mlp_params(layer_widths):
  params = []
  for n_in, n_out in zip(layer_widths[:-1], layer_widths[1:]):
    params.append(
        dict(weights=np.random.normal(size=(n_in, n_out)) * np.sqrt(2/n_in),
             biases=np.ones(shape=(n_out,)))
    )
  return params

params = init_mlp_params([1, 128, 128, 1])

# %% docs/new_docs/101/pytrees.md cell tags=
jax.tree.map(lambda x: x.shape, params)

# %% docs/new_docs/101/pytrees.md cell tags=
def forward(params, x):
  *hidden, last = params
  for layer in hidden:
    x = jax.nn.relu(x @ layer['weights'] + layer['biases'])
  return x @ last['weights'] + last['biases']

def loss_fn(params, x, y):
  return jnp.mean((forward(params, x) - y) ** 2)

LEARNING_RATE = 0.0001

def update(params, x, y):
  # `grads` is a pytree with the same structure as `params`.
  grads = jax.grad(loss_fn)(params, x, y)
  # The SGD update is one tree.map over the two matching pytrees.
  return jax.tree.map(
      lambda p, g: p - LEARNING_RATE * g, params, grads
  )

# %% docs/new_docs/101/pytrees.md cell tags=
x = np.random.normal(size=(128, 1))
y = x ** 2

for _ in range(100):
  params = update(params, x, y)

print(loss_fn(params, x, y))

# %% docs/new_docs/101/pytrees.md python tags=
vmap(f, in_axes=(0, {"k1": 0, "k2": None}))

# %% docs/new_docs/101/pytrees.md python tags=
vmap(f, in_axes=(0, 0))   # equivalent to (0, {"k1": 0, "k2": 0})
vmap(f, in_axes=0)        # equivalent to (0, {"k1": 0, "k2": 0}) as well

# %% docs/new_docs/101/pytrees.md cell tags=
import collections

ATuple = collections.namedtuple("ATuple", ('name',))

tree = [1, {'k1': 2, 'k2': (3, 4)}, ATuple('foo')]
flattened, _ = jax.tree_util.tree_flatten_with_path(tree)

for key_path, value in flattened:
  print(f'Value of tree{jax.tree_util.keystr(key_path)}: {value}')

# %% docs/new_docs/101/pytrees.md cell tags=
class Special:
  def __init__(self, x, y):
    self.x = x
    self.y = y

jax.tree.leaves([Special(0, 1), Special(2, 4)])

# %% docs/new_docs/101/pytrees.md cell tags=raises-exception
jax.tree.map(lambda x: x + 1, [Special(0, 1), Special(2, 4)])

# %% docs/new_docs/101/pytrees.md cell tags=
from jax.tree_util import register_pytree_node

class RegisteredSpecial(Special):
  def __repr__(self):
    return f"RegisteredSpecial(x={self.x}, y={self.y})"

def special_flatten(v):
  children = (v.x, v.y)  # the dynamic contents, traversed recursively
  aux_data = None        # static metadata, stored in the treedef
  return children, aux_data

def special_unflatten(aux_data, children):
  return RegisteredSpecial(*children)

register_pytree_node(RegisteredSpecial, special_flatten, special_unflatten)

jax.tree.map(lambda x: x + 1, [RegisteredSpecial(0, 1), RegisteredSpecial(2, 4)])

# %% docs/new_docs/101/pytrees.md cell tags=
jax.grad(lambda s: s.x ** 2 + s.y)(RegisteredSpecial(3.0, 4.0))

# %% docs/new_docs/101/pytrees.md cell tags=
from typing import NamedTuple, Any

class MyOtherContainer(NamedTuple):
  name: str
  a: Any
  b: Any

jax.tree.leaves([MyOtherContainer('Alice', 1, 2),
                 MyOtherContainer('Bob', 4, 5)])

# %% docs/new_docs/101/pytrees.md cell tags=
from dataclasses import dataclass
import functools

@functools.partial(jax.tree_util.register_dataclass,
                   data_fields=['a', 'b'],
                   meta_fields=['name'])
@dataclass
class MyDataclassContainer:
  name: str
  a: Any
  b: Any

jax.tree.leaves([
    MyDataclassContainer('apple', 5.3, 1.2),
    MyDataclassContainer('banana', jnp.zeros(4), -1.0),
])

# %% docs/new_docs/101/pytrees.md cell tags=
a_tree = [jnp.zeros((2, 3)), jnp.zeros((3, 4))]

# Try to make another pytree with ones instead of zeros.
shapes = jax.tree.map(lambda x: x.shape, a_tree)
jax.tree.map(jnp.ones, shapes)

# %% docs/new_docs/101/pytrees.md cell tags=
jax.tree.leaves([None, None, None])

# %% docs/new_docs/101/pytrees.md cell tags=
jax.tree.leaves([None, None, None], is_leaf=lambda x: x is None)

# %% docs/new_docs/101/pytrees.md cell tags=raises-exception
jax.tree.map(lambda x: x + 1, {1: 7, "y": 42})

# %% docs/new_docs/101/pytrees.md cell tags=
def tree_transpose(list_of_trees):
  """Converts a list of trees of identical structure into a single tree of lists."""
  return jax.tree.map(lambda *xs: list(xs), *list_of_trees)

# Convert a dataset from row-major to column-major.
episode_steps = [dict(t=1, obs=3), dict(t=2, obs=4)]
tree_transpose(episode_steps)
