"""`jax.experimental.random`: a stateful generator (`stateful_rng(seed)`) in the style of
`numpy.random.default_rng`, over mjax.random's stateless keys.

The generator holds a typed base key and a counter in an array ref. Each draw folds the
counter's current value into the base key and increments the counter, so draws differ
from one another and the same seed repeats the same sequence. The counter is a ref, so
draws inside `jit`, `vmap`, loops and `grad` update it as refs are updated there.
"""
from __future__ import annotations

import dataclasses
import operator

import numpy as np

from mjax import random
from mjax.specs import dtypes
from mjax.base import tree_util
from mjax import numpy as jnp
from mjax import ref as _ref
from mjax.tracing.core import current_trace


def _size(size, *args) -> tuple:
    """A draw's shape: `size` as a tuple, or the broadcast shape of the parameters."""
    if size is None:
        return tuple(np.broadcast_shapes(*(np.shape(a) for a in args)))
    if isinstance(size, (int, np.integer)):
        return (operator.index(size),)
    return tuple(operator.index(d) for d in size)


@dataclasses.dataclass(frozen=True, slots=True)
class StatefulPRNG:
    """A stateful generator: a typed PRNG key (`_base_key`) and the count of keys drawn
    from it so far (`_counter`, an integer array ref). Make one with `stateful_rng`.
    JAX: jax.experimental.random.StatefulPRNG."""
    _base_key: object
    _counter: object

    def __post_init__(self):
        key = self._base_key
        if not (hasattr(key, "dtype") and dtypes.issubdtype(key.dtype, dtypes.prng_key)):
            raise ValueError(f"Expected base_key to be a typed PRNG key; got {key}")
        if not isinstance(self._counter, _ref.Ref):
            raise ValueError(f"Expected counter to be a scalar integer ref; got "
                             f"{self._counter}")

    def key(self, shape=()):
        """A new key (or keys of `shape`) of the base key's implementation; advances the
        generator."""
        if self._base_key.shape:
            raise ValueError("cannot operate on split stateful generator: its keys are "
                             f"of shape {self._base_key.shape}; map over it with vmap")
        key = random.fold_in(self._base_key, _ref.get(self._counter, ...))
        _ref.addupdate(self._counter, ..., 1)
        shape = _size(shape)
        return random.split(key, shape) if shape else key

    def random(self, size=None, dtype=float):
        """Floats uniform in [0, 1)."""
        return random.uniform(self.key(), shape=_size(size), dtype=dtype)

    def uniform(self, low=0, high=1, size=None, *, dtype=float):
        """Floats uniform in [low, high)."""
        return random.uniform(self.key(), _size(size, low, high), minval=low, maxval=high,
                              dtype=dtype)

    def normal(self, loc=0, scale=1, size=None, *, dtype=float):
        """Normally distributed floats of mean `loc` and standard deviation `scale`."""
        z = random.normal(self.key(), _size(size, loc, scale), dtype)
        return (jnp.asarray(loc) + jnp.asarray(scale) * z).astype(dtype)

    def integers(self, low, high=None, size=None, *, dtype=int):
        """Integers uniform in [low, high) ([0, low) when `high` is None)."""
        if high is None:
            low, high = 0, low
        return random.randint(self.key(), _size(size, low, high), minval=low, maxval=high,
                              dtype=dtype)

    def split(self, num):
        """One generator whose keys have shape `num` (each with its own counter), for
        `vmap` to map over."""
        return StatefulPRNG(self.key(num), _ref.new_ref(jnp.zeros(num, dtype=int)))

    def spawn(self, n_children: int) -> list:
        """A list of `n_children` independent generators."""
        return [type(self)(k, _ref.new_ref(0)) for k in self.key(n_children)]


tree_util.register_dataclass(StatefulPRNG, data_fields=["_base_key", "_counter"],
                             meta_fields=[])


def stateful_rng(seed=None, *, impl=None) -> StatefulPRNG:
    """A stateful generator seeded with the integer `seed` (when None, outside
    transformations only: from NumPy's fresh entropy), with keys of PRNG `impl`.
    JAX: jax.experimental.random.stateful_rng."""
    if seed is None:
        if current_trace() is not None:
            raise TypeError("When used within transformed code, jax.experimental.random."
                            "stateful_rng() requires an explicit seed to be set.")
        seed = np.int64(np.random.SeedSequence().entropy & np.iinfo(np.int64).max)
    return StatefulPRNG(random.key(seed, impl=impl), _ref.new_ref(0))


__all__ = ["StatefulPRNG", "stateful_rng"]
