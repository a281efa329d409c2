"""`mjax.experimental.xla_metadata`: XLA frontend attributes on the ops of a program.

    set_xla_metadata(y, breakpoint=True)      # tags the op that computes y
    with set_xla_metadata(_xla_log=True): ... # tags every op traced inside (and the ops
                                              # grad/vmap derive from them)
    @set_xla_metadata(_xla_log=True)          # the same, around each call (and around
    @mjax.jit                                 # the jit's .lower/.trace)

Both reach StableHLO as `mhlo.frontend_attributes` (values as strings, bools in lower
case), which XLA keeps on its HLO instructions. How: passes/rules/xla_metadata.py.
JAX: jax.experimental.xla_metadata.
"""
from __future__ import annotations

import functools

from mjax.config import config
from mjax.tracing.core import bind
from mjax.dialect.ops import transforms as T
from mjax.base.trace_trees import tree_map

__all__ = ["set_xla_metadata"]


def set_xla_metadata(x=None, **kwargs):
    """With `x` (a pytree of arrays): `x`, each leaf tagged with the attributes `kwargs`.
    Without: a context manager (and decorator) tagging the ops traced inside."""
    if x is None:
        return XlaMetadataContextManager(kwargs)
    kvs = tuple(sorted(kwargs.items()))
    return tree_map(lambda v: bind(T.XlaMetadataValueOp, v, xla_metadata_kvs=kvs), x)


class XlaMetadataContextManager:
    """Adds its attributes to the active ones (a None value removes a key) in this
    thread; part of jit's cache key, so a function traced under other attributes is
    traced again."""

    def __init__(self, updates: dict):
        self.updates = updates
        self._scopes = []

    def __enter__(self):
        if not self.updates:
            return None
        active = dict(config.read("_xla_metadata") or ())
        active.update(self.updates)
        merged = tuple(sorted((k, v) for k, v in active.items() if v is not None))
        scope = config.override(_xla_metadata=merged or None)
        scope.__enter__()
        self._scopes.append(scope)
        return None

    def __exit__(self, *exc):
        if self.updates:
            self._scopes.pop().__exit__(*exc)
        return False

    def __call__(self, f):
        return _Tagged(f, self)


class _Tagged:
    """A function called inside its metadata context; its callable attributes too (a
    jit's `.lower` and `.trace`), so decorating a jitted function tags what they trace."""

    def __init__(self, f, scope: XlaMetadataContextManager):
        self._f = f
        self._scope = scope
        functools.update_wrapper(self, f)

    def __call__(self, *args, **kwargs):
        with self._scope:
            return self._f(*args, **kwargs)

    def __getattr__(self, name):
        attr = getattr(self._f, name)
        if not callable(attr):
            return attr

        @functools.wraps(attr)
        def inside(*args, **kwargs):
            with self._scope:
                return attr(*args, **kwargs)
        return inside


