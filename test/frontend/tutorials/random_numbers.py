"""Code cells of JAX's tutorial(s) docs/random-numbers.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/random-numbers.md cell tags=
import numpy as np
np.random.seed(0)

# %% docs/random-numbers.md cell tags=
print(np.random.random())
print(np.random.random())
print(np.random.random())

# %% docs/random-numbers.md cell tags=
def print_truncated_random_state():
  """To avoid spamming the outputs, print only part of the state."""
  full_random_state = np.random.get_state()
  print(str(full_random_state)[:460], '...')

print_truncated_random_state()

# %% docs/random-numbers.md cell tags=
np.random.seed(0)
print_truncated_random_state()

# %% docs/random-numbers.md cell tags=
_ = np.random.uniform()
print_truncated_random_state()

# %% docs/random-numbers.md cell tags=
np.random.seed(0)
print(np.random.uniform(size=3))

# %% docs/random-numbers.md cell tags=
np.random.seed(0)
print("individually:", np.stack([np.random.uniform() for _ in range(3)]))

np.random.seed(0)
print("all at once: ", np.random.uniform(size=3))

# %% docs/random-numbers.md cell tags=
import numpy as np

np.random.seed(0)

def bar(): return np.random.uniform()
def baz(): return np.random.uniform()

def foo(): return bar() + 2 * baz()

print(foo())

# %% docs/random-numbers.md cell tags=
from jax import random

key = random.key(42)
print(key)

# %% docs/random-numbers.md cell tags=
print(random.normal(key))
print(random.normal(key))

# %% docs/random-numbers.md cell tags=
for i in range(3):
  new_key, subkey = random.split(key)
  del key  # The old key is consumed by split() -- we must never use it again.

  val = random.normal(subkey)
  del subkey  # The subkey is consumed by normal().

  print(f"draw {i}: {val}")
  key = new_key  # new_key is safe to use in the next iteration.

# %% docs/random-numbers.md cell tags=
key, subkey = random.split(key)

# %% docs/random-numbers.md cell tags=
key, *forty_two_subkeys = random.split(key, num=43)

# %% docs/random-numbers.md cell tags=
key = random.key(42)
subkeys = random.split(key, 3)
sequence = np.stack([random.normal(subkey) for subkey in subkeys])
print("individually:", sequence)

key = random.key(42)
print("all at once: ", random.normal(key, shape=(3,)))

# %% docs/random-numbers.md cell tags=
import jax
print("vectorized:", jax.vmap(random.normal)(subkeys))
