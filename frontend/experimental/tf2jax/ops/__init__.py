"""The table from TensorFlow op name to conversion rule, filled by one module per family.

A rule is `rule(ctx, node, *inputs) -> value or list of values` (one per TF output).
`node.attrs` holds the decoded attributes; `ctx` is the interpreter's `Context`.
Rules compute with NumPy when every input is a NumPy array (`xp(...)`), so constant
subgraphs (shapes, axes, paddings) fold at conversion time and stay static for the
rules that need them (`static(...)`).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

RULES: dict[str, Callable] = {}


def register(*names: str):
    """Registers the decorated rule under each TF op name in `names`."""
    def deco(fn):
        for n in names:
            if n in RULES:
                raise ValueError(f"tf2jax: two rules for the TF op '{n}'")
            RULES[n] = fn
        return fn
    return deco


def is_numpy(x) -> bool:
    return isinstance(x, (np.ndarray, np.generic))


def xp(*values):
    """NumPy when every value is a NumPy array (fold at conversion), else mjax.numpy."""
    if all(is_numpy(v) for v in values):
        return np
    import mjax.numpy as jnp
    return jnp


def static(value, what: str) -> np.ndarray:
    """A value the conversion needs as a constant (a shape, an axis, a permutation)."""
    from mjax.core import Tracer
    if isinstance(value, Tracer):
        raise ValueError(f"tf2jax: {what} must be a constant, but it depends on the "
                         f"function's inputs (a value computed at run time)")
    return np.asarray(value)


def static_ints(value, what: str) -> tuple:
    return tuple(int(v) for v in static(value, what).reshape(-1))


def cast(x, dtype):
    """`x` as `dtype` (NumPy stays NumPy)."""
    if is_numpy(x):
        return np.asarray(x).astype(dtype)
    import mjax.numpy as jnp
    from mjax import dtypes
    return jnp.asarray(x).astype(dtypes.canonicalize_dtype(dtype))


def shape_of(x) -> tuple:
    return tuple(np.shape(x)) if is_numpy(x) else tuple(x.shape)


from mjax.experimental.tf2jax.ops import (array, control_flow, linalg, math,  # noqa: E402,F401
                                          nn, random, variables)

__all__ = ["RULES", "register", "static", "static_ints", "xp"]
