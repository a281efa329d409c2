"""The order JAX's TPU interpreter (pltpu.InterpretParams) runs a grid in, and how it
spreads the grid over `num_cores_or_threads` cores; used by --jaxpr-pallas-interpret.

JAX visits each `parallel` dimension's indices in a random order: a permutation drawn
with its threefry PRNG from `random_seed` (0 when None), one split of the key per
parallel dimension, the permutation its sort of random 32-bit keys (partitionable
threefry, as JAX 0.10.2 runs by default). Its cores each take a contiguous run of the
flattened loop, of ceil(parallel points / cores) * (arbitrary points) iterations,
each core with its own scratch and its own copies of the input blocks. The PRNG is
computed here in NumPy (the grid is static) with the shared Threefry schedule.

JAX: pallas/mosaic/interpret/interpret_pallas_call.py (_get_randomized_grid_coordinates).
"""
from __future__ import annotations

import numpy as np

from mjax.passes.rules.random import threefry_rounds

_U32 = np.uint32


def _rotl(v, d):
    return (v << _U32(d)) | (v >> _U32(32 - d))


def _threefry(key, x1, x2):
    """Threefry-2x32 of counter words (x1, x2) under `key` (two uint32 words)."""
    with np.errstate(over="ignore"):
        return threefry_rounds(_U32(key[0]), _U32(key[1]), x1.astype(_U32),
                               x2.astype(_U32), add=lambda a, b: a + b,
                               xor=lambda a, b: a ^ b, rotl=_rotl,
                               const=lambda v, like: _U32(v))


def _key(seed: int):
    seed = int(seed)
    return (_U32((seed >> 32) & 0xFFFFFFFF), _U32(seed & 0xFFFFFFFF))


def _split(key):
    """Two keys from one (partitionable threefry: the hash of counters 0 and 1)."""
    b1, b2 = _threefry(key, np.zeros(2, _U32), np.arange(2, dtype=_U32))
    return (b1[0], b2[0]), (b1[1], b2[1])


def _bits32(key, n: int):
    b1, b2 = _threefry(key, np.zeros(n, _U32), np.arange(n, dtype=_U32))
    return b1 ^ b2


def permutation(key, n: int) -> np.ndarray:
    """arange(n) shuffled as jax.random.permutation(key, n) does."""
    x = np.arange(n, dtype=np.int32)
    rounds = int(np.ceil(3 * np.log(max(1, n)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        key, sub = _split(key)
        x = x[np.argsort(_bits32(sub, n), kind="stable")]
    return x


def parallel_orders(grid, semantics, seed) -> list:
    """Per grid dimension, the order JAX's TPU interpreter visits a `parallel`
    dimension's indices in (None for the others)."""
    key = _key(seed or 0)
    orders = []
    for size, sem in zip(grid, tuple(semantics or ()) + ("arbitrary",) * len(grid)):
        if sem != "parallel":
            orders.append(None)
            continue
        key, sub = _split(key)
        orders.append(permutation(sub, int(size)))
    return orders


def iterations_per_core(grid, semantics, cores: int) -> int | None:
    """How many iterations of the flattened loop each core runs (None: one core)."""
    if cores <= 1:
        return None
    sems = tuple(semantics or ())
    parallel = int(np.prod([g for g, s in zip(grid, sems) if s == "parallel"],
                           dtype=np.int64))
    rest = int(np.prod(grid, dtype=np.int64)) // max(parallel, 1)
    return -(-parallel // cores) * rest


__all__ = ["iterations_per_core", "parallel_orders", "permutation"]
