"""`mjax.experimental.pallas.triton` (`plgpu`): the Triton backend's public names —
compiler parameters, whole-ref loads and stores, atomics and dot. Kernels using them run
in interpret mode on CPU and through `--jaxpr-pallas-to-triton` on GPUs.
JAX: jax.experimental.pallas.triton."""
from __future__ import annotations

import dataclasses

from mjax import numpy as jnp
from mjax.experimental.pallas import primitives as _p
from mjax.experimental.pallas.core import CompilerParams as _BaseParams
from mjax.experimental.pallas.primitives import (atomic_add, atomic_and, atomic_max,
                                                 atomic_min, atomic_or, atomic_xchg,
                                                 atomic_xor, dot, max_contiguous)


@dataclasses.dataclass(frozen=True)
class CompilerParams(_BaseParams):
    """Triton's launch parameters: `num_warps` (32 threads each) and `num_stages`
    (software-pipelining depth). JAX: plgpu.CompilerParams."""
    num_warps: int | None = None
    num_stages: int | None = None


def load(ref, *, mask=None, other=None, cache_modifier=None, eviction_policy=None,
         volatile=False):
    """Loads the whole ref (or view), masked like pl.load. JAX: plgpu.load."""
    return _p.load(ref, ..., mask=mask, other=other)


def store(ref, val, *, mask=None, eviction_policy=None) -> None:
    """Stores into the whole ref (or view), masked like pl.store. JAX: plgpu.store."""
    _p.store(ref, ..., val, mask=mask)


def approx_tanh(x):
    """tanh (Triton uses a fast approximation; interpret mode the exact one)."""
    return jnp.tanh(x)


__all__ = ["CompilerParams", "approx_tanh", "atomic_add", "atomic_and", "atomic_max",
           "atomic_min", "atomic_or", "atomic_xchg", "atomic_xor", "dot", "load",
           "max_contiguous", "store"]
