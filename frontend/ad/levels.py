"""How many differentiations enclose the code being traced.

JAX's JVP trace calls a custom_jvp rule (a custom_vjp fwd) as soon as the function is
called under it; everywhere else (jit, vmap, plain calls) the rules are traced only if a
differentiation reaches the call later. mjax stages differentiation as ops, so the
functions a differentiation API traces (grad, jvp, vjp, jacfwd, ...) run one level
deeper (`differentiated`), and a custom call staged at level > 0 traces its rule at once,
one level shallower (the rule consumes the innermost differentiation: its own calls of
the function are differentiated only by the outer ones, as in JAX). The function body of
a custom call runs at level 0: where a rule applies, its body is never differentiated.

    with levels.at(levels.depth() - 1):     # tracing a rule
        ...
"""
from __future__ import annotations

import contextlib
import threading

from mjax.source_info import wraps


class _Depth(threading.local):
    def __init__(self):
        self.value = 0


_depth = _Depth()


def depth() -> int:
    """The number of differentiations enclosing the code being traced now."""
    return _depth.value


@contextlib.contextmanager
def at(level: int):
    """Traces in the body run at `level`."""
    saved, _depth.value = _depth.value, max(level, 0)
    try:
        yield
    finally:
        _depth.value = saved


def differentiated(fun):
    """`fun`, run one differentiation deeper (a function a differentiation API traces)."""
    @wraps(fun)
    def inside(*args, **kwargs):
        with at(_depth.value + 1):
            return fun(*args, **kwargs)
    return inside


__all__ = ["at", "depth", "differentiated"]
