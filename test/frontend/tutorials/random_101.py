"""Code cells of JAX's tutorial(s) docs/new_docs/101/random.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/new_docs/101/random.md cell tags=
import numpy as np

np.random.seed(0)
print(np.random.uniform())
print(np.random.uniform())  # different: the hidden state advanced

# %% docs/new_docs/101/random.md cell tags=
np.random.seed(0)

def bar(): return np.random.uniform()
def baz(): return np.random.uniform()

def foo(): return bar() + 2 * baz()

print(foo())

# %% docs/new_docs/101/random.md cell tags=
import jax
from jax import random

key = random.key(42)
key

# %% docs/new_docs/101/random.md cell tags=
print(jax.typeof(key))

# %% docs/new_docs/101/random.md cell tags=
print(random.normal(key))
print(random.normal(key))  # same key, same value — necessarily

# %% docs/new_docs/101/random.md cell tags=
key = random.key(42)
key, subkey = random.split(key)
print(random.normal(subkey))

# %% docs/new_docs/101/random.md cell tags=
key = random.key(42)
subkeys = random.split(key, num=4)
[float(random.normal(k)) for k in subkeys]

# %% docs/new_docs/101/random.md cell tags=
key = random.key(42)
for step in range(3):
  step_key = random.fold_in(key, step)
  print(f"step {step}: {random.normal(step_key)}")

# %% docs/new_docs/101/random.md python tags=
for step in range(num_steps):
  key, subkey = random.split(key)   # each key derived from the last: avoid!
  ...

# %% docs/new_docs/101/random.md cell tags=
key = random.key(42)
subkeys = random.split(key, 3)
print("individually:", np.stack([random.normal(k) for k in subkeys]))

key = random.key(42)
print("all at once: ", random.normal(key, shape=(3,)))

# %% docs/new_docs/101/random.md cell tags=
import jax
jax.vmap(random.normal)(subkeys)
