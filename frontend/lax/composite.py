"""`lax.composite`: a named operation defined by a decomposition function.

JAX lowers a composite to a `stablehlo.composite` op whose body is the decomposition, so
a compiler that knows the name may emit something better. mjax stages the decomposition
itself, inside a named scope of the composite's name (its ops carry the name in their
locations): XLA compiles the decomposition either way, so results are the same; the
StableHLO has no composite op."""
from __future__ import annotations

import functools

from mjax.tracing.core import named_scope


def composite(decomposition, name: str, version: int = 0):
    """The function `decomposition` as the composite op `name` (positional arguments are
    its operands, keyword arguments its attributes). JAX: lax.composite."""
    if not isinstance(name, str):
        raise TypeError(f"composite name must be a string, got {name!r}")
    if not isinstance(version, int):
        raise TypeError(f"composite version must be an int, got {version!r}")

    @functools.wraps(decomposition)
    def composite_fn(*args, **kwargs):
        with named_scope(name):
            return decomposition(*args, **kwargs)
    return composite_fn
