"""JAX-private names (`jax._src.X`) that several libraries of JAX's ecosystem import (so
those libraries run unmodified): only small, stable ones, each a thin alias of mjax's
own. Under mjax.alias_jax, `jax._src.X` resolves here; docs/ecosystem.md lists which
library uses which. Everything else of `jax._src` is missing on purpose."""
import importlib as _importlib

# Submodules that libraries reach as attributes without importing them (orbax:
# `jax._src.distributed.global_state`, `jax._src.tree_util.flatten_one_level`; chex:
# `jax._src.xla_bridge._backends`): loaded at first access, as JAX has them loaded.
_LAZY = ("distributed", "interpreters", "tree_util", "xla_bridge")


def __getattr__(name):
    if name in _LAZY:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
