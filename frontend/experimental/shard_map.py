"""`mjax.experimental.shard_map`: the older spelling of `mjax.shard_map`.
JAX: jax.experimental.shard_map (deprecated there in favour of jax.shard_map: reading
`shard_map` warns with JAX's DeprecationWarning)."""
from __future__ import annotations

import warnings

from mjax.spmd.shard_map import shard_map as _shard_map

_MESSAGE = "jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map instead."


def _shard_map_positional(f, mesh, in_specs, out_specs, check_rep=True, auto=frozenset()):
    """`f` on per-device blocks (positional mesh/specs, `check_rep`).
    JAX: jax.experimental.shard_map.shard_map."""
    if auto:
        raise NotImplementedError("shard_map(auto=...) (mesh axes left to the compiler) is "
                                  "not supported by mjax yet")
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                      check_vma=check_rep)


def __getattr__(name):
    if name == "shard_map":
        warnings.warn(_MESSAGE, DeprecationWarning, stacklevel=2)
        return _shard_map_positional
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
