"""Code cells of JAX's tutorial(s) docs/jep/28845-stateful-rng.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/jep/28845-stateful-rng.md python tags=
def stateful_rng(seed: ArrayLike) -> StatefulPRNG:
  """Create a stateful PRNG Generator given an integer seed."""
  return StatefulPRNG(jax.random.key(seed), jax.new_ref(0))


@tree_util.register_dataclass
@dataclass(frozen=True)
class StatefulPRNG:
  """Stateful PRNG Generator class."""
  base_key: jax.Array
  counter: jax.core.Ref

  def key(self) -> jax.Array:
    """Generate a new jax PRNG key"""
    key = jax.random.fold_in(self.base_key, self.counter[...])
    jax.ref.addupdate(self.counter, ..., 1)  # increment counter
    return key

  def random(self, size: Sequence[int], dtype: DType = float):
    """Return random floats in the half-open interval [0, 1)"""
    return random.uniform(self.key(), shape=size, dtype=dtype)

  # uniform(), normal(), integers(), and others implemented similarly.

# %% docs/jep/28845-stateful-rng.md doctest tags=
from jax.experimental.random import stateful_rng

# %% docs/jep/28845-stateful-rng.md doctest tags=
rng = stateful_rng(1701)

# %% docs/jep/28845-stateful-rng.md doctest tags=
rng.random((5,))

# %% docs/jep/28845-stateful-rng.md doctest tags=
rng.random((5,))  # state is updated -> new random draws!

# %% docs/jep/28845-stateful-rng.md doctest tags=
import numpy as np

# %% docs/jep/28845-stateful-rng.md doctest tags=
rng = np.random.default_rng(1701)

# %% docs/jep/28845-stateful-rng.md doctest tags=
rng.random((5,))

# %% docs/jep/28845-stateful-rng.md doctest tags=
rng.random((5,))

# %% docs/jep/28845-stateful-rng.md python tags=
rng = stateful_rng(0)

def f(x):
  return x + rng.uniform()

jax.vmap(f)(jnp.arange(10))

# %% docs/jep/28845-stateful-rng.md python tags=
class StatefulPRNG:
  ...

  def split(self, num: int | Sequence[int]) -> StatefulPRNG:
    return StatefulPRNG(
      base_key=jax.random.split(self.key(), num),
      counter=jnp.zeros(num, dtype=int),
    )

# %% docs/jep/28845-stateful-rng.md python tags=
rng = jax.experimental.random.stateful_rng(0)

def f(x, rng):
  return x + rng.uniform()

result = jax.vmap(f)(jnp.arange(5), rng.split(5))
print(result)  # [0.07174575 1.0163325  2.0435536  3.4391735  4.534091  ]
