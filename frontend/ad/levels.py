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

from mjax.tracing import registration
from mjax.base import trace_trees
from mjax.ad import symbolic_zeros
from mjax.tracing.source_info import wraps


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


def differentiated(fun, diff_leaves=()):
    """`fun`, run one differentiation deeper (a function a differentiation API traces);
    `diff_leaves`: the indices of the leaves of (args, kwargs) it differentiates (what
    that level perturbs: mjax.ad.symbolic_zeros)."""
    @wraps(fun)
    def inside(*args, **kwargs):
        level = _depth.value + 1
        leaves = trace_trees.tree_leaves((args, kwargs))
        with at(level), symbolic_zeros.differentiating(level, leaves, diff_leaves):
            return fun(*args, **kwargs)
    return inside


__all__ = ["at", "depth", "differentiated", "differentiation_state"]


@registration.DIFFERENTIATION_STATE.fill
def differentiation_state(leaves) -> tuple:
    """The depth of differentiation, and per level which of `leaves` it perturbs (True,
    False, or None when the IR cannot tell)."""
    level = _depth.value
    return level, tuple(tuple(symbolic_zeros.perturbation(x, k) for x in leaves)
                        for k in range(1, level + 1))
