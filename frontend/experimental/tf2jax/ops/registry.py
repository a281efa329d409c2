"""The table from TensorFlow op name to conversion rule (filled by one module per family
of ops/) and the helpers rules share.

A rule is `rule(ctx, node, *inputs) -> value or list of values` (one per TF output).
`node.attrs` holds the decoded attributes; `ctx` is the interpreter's `Context`.
Rules compute with NumPy when every input is a NumPy array (`xp(...)`), so constant
subgraphs (shapes, axes, paddings) fold at conversion time and stay static for the
rules that need them (`static(...)`).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

import mjax.numpy as jnp
from mjax.specs import dtypes
from mjax.tracing.core import Tracer

RULES: dict[str, Callable] = {}


class UnsupportedOperationError(NotImplementedError):
    """A TF op tf2jax has no rule for (or a case of one it does not handle)."""


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
    return jnp


def static(value, what: str) -> np.ndarray:
    """A value the conversion needs as a constant (a shape, an axis, a permutation)."""
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
    return jnp.asarray(x).astype(dtypes.canonicalize_dtype(dtype))


def shape_of(x) -> tuple:
    return tuple(np.shape(x)) if is_numpy(x) else tuple(x.shape)


__all__ = ["RULES", "UnsupportedOperationError", "register", "static", "static_ints", "xp"]
