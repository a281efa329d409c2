"""JAX-private: jax._src.deprecations, JAX's registry of deprecations that first warn and
are later "accelerated" into errors. mjax accelerates none: each still warns, so
`is_accelerated` is False (JAX's tests branch on it: jtu's
assertDeprecationWarnsOrRaises)."""
from __future__ import annotations

import warnings

_registered: set = set()


def register(deprecation_id: str) -> None:
    _registered.add(deprecation_id)


def is_accelerated(deprecation_id: str) -> bool:
    return False


def warn(deprecation_id: str, message: str, stacklevel: int) -> None:
    """A DeprecationWarning with `message` (never an error here)."""
    warnings.warn(message, DeprecationWarning, stacklevel=stacklevel + 1)
