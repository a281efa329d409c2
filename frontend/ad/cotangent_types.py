"""The weak types of custom_vjp cotangents, as the frontend learns them (which
cotangents of a reverse-mode differentiation are weakly typed is an analysis of the
traced module: passes/weak_cotangents.py, which reads what `record_bwd` notes).

`record_bwd` notes on a custom_vjp call's record the weak types of the cotangents its
bwd returned, for the analysis to read; `input_cotangent` is a bwd rule's cotangent for
one input, as JAX types it.
"""
from __future__ import annotations

import numpy as np

from mjax.base import trace_trees
from mjax.ad.symbolic_zeros import SymbolicZero
from mjax.tracing.core import aval_of_value
from mjax.specs.float0 import is_float0


def record_bwd(call, ct_avals, cts, g_leaves) -> None:
    """Notes on `call` (mjax.ad.custom's record of a custom_vjp call) the weak types of
    the cotangents its bwd, traced on cotangents of `ct_avals` (`cts`: as it got them,
    per output), returned (`g_leaves`, per input leaf): per inexact input, None for a
    zero. Unknown (the generic rule then) when bwd got symbolic zeros: mjax's
    instantiate as strong zeros where JAX's keep the output's weak type."""
    seen = tuple(a.weak_type for a in ct_avals)
    if any(isinstance(c, SymbolicZero) for c in trace_trees.tree_leaves(
            cts, is_leaf=lambda c: isinstance(c, SymbolicZero))):
        call.bwd_weak = (seen, None)
        return
    call.bwd_weak = (seen, tuple(
        None if g is None or is_float0(g) or isinstance(g, SymbolicZero) else
        bool(getattr(aval_of_value(g), "weak_type", False))
        for g, a in zip(g_leaves, call.in_avals) if _inexact_aval(a)))


def _inexact_aval(aval) -> bool:
    return np.issubdtype(aval.dtype, np.inexact)


def input_cotangent(g, aval, convert, zeros):
    """A bwd rule's cotangent `g` for an input of type `aval`: zeros for None, a float0
    or a symbolic zero; converted to the input's dtype only when its dtype differs (a
    weak cotangent of the input's dtype stays weak, as JAX keeps the rule's own type)."""
    if g is None or is_float0(g) or isinstance(g, SymbolicZero):
        return zeros(aval, False)
    return g if aval_of_value(g).dtype == aval.dtype else convert(g, aval.dtype)


__all__ = ["input_cotangent", "record_bwd"]
