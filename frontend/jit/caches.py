"""Where jit keeps its traces and programs, and `clear_caches`, which drops them all.

A function's traces are kept with the function, not with one `jit(fun)` object
(`share_cache`): a second `jit(f)` with the same options reuses them, as in JAX (f's
Python side effects, and the globals it read, stay those of the first trace).
"""
from __future__ import annotations

import weakref

from mjax.arrays import eager
from mjax.jit import traces as jit_traces
from mjax.tracing import region_cache
from mjax.arrays.array import Array
from mjax.lax import control_flow
from mjax.runtime.backend import DEFAULT_PLATFORM_LISTENERS, clear_compiled

# Every live jit object (mjax.jit.jitted.Jitted), for clear_caches.
ALL_JITTED: weakref.WeakSet = weakref.WeakSet()

# Other in-memory caches of compiled programs: their clear functions.
CLEARERS: list = [eager.clear_cache, control_flow.clear_cache, region_cache.clear_cache,
                   jit_traces.clear_cache]

# fun -> {jit options: the compiled-call cache}.
_CACHES_OF_FUNCTION = weakref.WeakKeyDictionary()


def share_cache(jitted, fun, options) -> None:
    """Makes `jitted` use the cache of `fun`'s earlier jits with the same options."""
    key = tuple((k, tuple(sorted(v.items())) if isinstance(v, dict) else v)
                for k, v in options.items())
    try:
        per_fun = _CACHES_OF_FUNCTION.setdefault(fun, {})
        jitted._cache = per_fun.setdefault(key, jitted._cache)
    except TypeError:   # fun not weak-referenceable or hashable, or unhashable options
        pass


# JAX shares compiled calls among the jits of one function with the same options: a
# deleted (donated) argument fails in Execute() with a ValueError when that cache holds
# the call, and with the array's RuntimeError on the first call. The calls seen so far:
_CALLS_SEEN: dict = {}


def deleted_on_first_call(jitted, key, leaves) -> None:
    """Raises JAX's first-call RuntimeError for a deleted argument; records the call."""
    # (The function's id, not the function: the record must not keep closures alive.)
    seen = (id(jitted.fun), jitted.static_argnums, jitted.static_argnames,
            jitted.donate_argnums, jitted.donate_argnames, key)
    if seen in _CALLS_SEEN:
        return
    for x in leaves:
        if type(x) is Array:
            x._check_alive()
    if len(_CALLS_SEEN) > 4096:
        _CALLS_SEEN.clear()
    _CALLS_SEEN[seen] = True


def clear_caches() -> None:
    """Drops every trace and compiled program kept in memory: each jit's cache, the
    programs of eager ops and of eager loops and conds (the persistent compilation
    cache on disk stays). JAX: jax.clear_caches."""
    for jitted in list(ALL_JITTED):
        jitted.clear_cache()
    for per_fun in list(_CACHES_OF_FUNCTION.values()):
        for cache in per_fun.values():
            cache.clear()
    for clear in CLEARERS:
        clear()
    clear_compiled()


# (a program compiled for one default platform would run on another's buffers)
DEFAULT_PLATFORM_LISTENERS.append(clear_caches)

__all__ = ["ALL_JITTED", "CLEARERS", "clear_caches", "deleted_on_first_call", "share_cache"]
