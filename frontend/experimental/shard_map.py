"""`mjax.experimental.shard_map`: the older spelling of `mjax.shard_map`.
JAX: jax.experimental.shard_map (deprecated there in favour of jax.shard_map)."""
from __future__ import annotations

from mjax.spmd.shard_map import shard_map as _shard_map


def shard_map(f, mesh, in_specs, out_specs, check_rep=True, auto=frozenset()):
    """`f` on per-device blocks (positional mesh/specs, `check_rep`).
    JAX: jax.experimental.shard_map.shard_map."""
    if auto:
        raise NotImplementedError("shard_map(auto=...) (mesh axes left to the compiler) is "
                                  "not supported by mjax yet")
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                      check_vma=check_rep)


__all__ = ["shard_map"]
