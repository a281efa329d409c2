"""`mjax.Array` and `mjax.numpy.ndarray` as users see them: an abstract class whose
instances are concrete arrays, tracers and key arrays alike, as `jax.Array` is (so
`isinstance(x, jax.Array)` holds inside `jit`). mjax's own code tells them apart by their
classes (`mjax.arrays.array.Array`, `mjax.tracing.tracer.Tracer`, `mjax.lax.prng.PRNGKeyArray`), which
register themselves here."""
from __future__ import annotations

import abc


class Array(abc.ABC):
    """The type of mjax arrays: device arrays, and tracers while a function is traced.
    JAX: jax.Array."""

    __slots__ = ()


Array.__module__ = "mjax"
