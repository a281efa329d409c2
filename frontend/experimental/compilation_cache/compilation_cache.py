"""The persistent compilation cache's functions at JAX's module path
(jax.experimental.compilation_cache.compilation_cache); the cache is
mjax.runtime.compilation_cache, configured by the jax_compilation_cache_dir and
jax_persistent_cache_* options."""
from __future__ import annotations

from mjax.config import config


def set_cache_dir(path) -> None:
    """Compiled executables are saved to (and first looked up in) directory `path`.
    Same as config.update("jax_compilation_cache_dir", path)."""
    config.update("jax_compilation_cache_dir", path)


def reset_cache() -> None:
    """Back to the uninitialized state. mjax opens no cache object (each compile reads
    the options and the directory afresh), so there is nothing to drop; the directory
    option is kept, as in JAX."""


__all__ = ["reset_cache", "set_cache_dir"]
