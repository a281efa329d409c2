"""The types of custom rules' tangents and cotangents (JAX's checks), and the weak
types of custom_vjp cotangents, as the frontend learns them (which cotangents of a
reverse-mode differentiation are weakly typed is an analysis of the traced module:
passes/weak_cotangents.py, which reads what `record_bwd` notes).

`record_bwd` notes on a custom_vjp call's record the weak types of the cotangents its
bwd returned, for the analysis to read; `input_cotangent` is a bwd rule's cotangent for
one input, as JAX types it.
"""
from __future__ import annotations

import numpy as np

from mjax.base import trace_trees, tree_util
from mjax.base.tree_util import keystr
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


def check_shapes(g_leaves, in_avals, in_tree) -> None:
    """JAX's ValueError for a bwd cotangent (or SymbolicZero) whose shape is not its
    inexact input's (a differing inexact dtype passes, as in JAX; integer inputs' cotangents
    are dropped unread)."""
    paths = None
    for i, (g, a) in enumerate(zip(g_leaves, in_avals)):
        if g is None or is_float0(g) or not _inexact_aval(a):
            continue
        zero = isinstance(g, SymbolicZero)
        got = g.aval if zero else aval_of_value(g)
        if tuple(got.shape) == tuple(a.shape) and (not zero or got.dtype == a.dtype):
            continue
        if paths is None:
            paths = [keystr(p) for p, _ in tree_util.tree_flatten_with_path(
                tree_util.tree_unflatten(in_tree, [0] * in_tree.num_leaves))[0]]
        if zero:
            raise ValueError(
                f"Custom VJP bwd rule produced a SymbolicZero with a shape/dtype that does "
                f"not match the corresponding input tangent shape/dtype: at output"
                f"{paths[i]} the SymbolicZero had shape/dtype {_short(got)} while the "
                f"corresponding input had shape/dtype {_short(a)}. Consider just "
                f"returning a None here instead of a SymbolicZero object.")
        raise ValueError(
            f"Custom VJP bwd rule must produce an output with the same type as the args "
            f"tuple of the primal function, but at output{paths[i]} the bwd rule produced "
            f"an output of type {_short(got)} corresponding to an input of type "
            f"{_short(a)}, so the shapes do not match")


def jvp_tangents(t_leaves, o_avals, zeros) -> list:
    """A custom_jvp rule's tangents of the inexact outputs `o_avals` (zeros for a float0
    or symbolic zero); JAX's TypeError when one's shape or dtype is not its primal's
    (weak types aside). Tangents of integer outputs are dropped."""
    bad, out = [], []
    for t, a in zip(t_leaves, o_avals):
        if not _inexact_aval(a):
            continue
        if t is None or is_float0(t) or isinstance(t, SymbolicZero):
            out.append(zeros(a, False))
            continue
        got = aval_of_value(t)
        if (tuple(got.shape), got.dtype) != (tuple(a.shape), a.dtype):
            bad.append((a, got))
        out.append(t)     # (of the output's dtype: a weak tangent stays weak, as JAX's)
    if len(bad) == 1 and len(o_avals) == 1:
        (a, got), = bad
        raise TypeError(f"Custom JVP rule must produce primal and tangent outputs with "
                        f"corresponding shapes and dtypes. Expected {_short(a)} (tangent "
                        f"type of {_short(a)}) but got {_short(got)}.")
    if bad:
        raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                        "corresponding shapes and dtypes, but got:\n" + "\n".join(
                            f"  primal {_short(a)} with tangent {_short(g)}, expecting "
                            f"tangent {_short(a)}" for a, g in bad))
    return out


def _short(aval) -> str:
    return f"{np.dtype(aval.dtype).name}[{','.join(map(str, aval.shape))}]"


def input_cotangent(g, aval, convert, zeros):
    """A bwd rule's cotangent `g` for an input of type `aval`: zeros for None, a float0
    or a symbolic zero; converted to the input's dtype only when its dtype differs (a
    weak cotangent of the input's dtype stays weak, as JAX keeps the rule's own type)."""
    if g is None or is_float0(g) or isinstance(g, SymbolicZero):
        return zeros(aval, False)
    return g if aval_of_value(g).dtype == aval.dtype else convert(g, aval.dtype)


__all__ = ["check_shapes", "input_cotangent", "jvp_tangents", "record_bwd"]
