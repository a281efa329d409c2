"""The fuser's work on traced jaxprs (mjax/jaxpr/objects.py's `Jaxpr` view of a traced
function): tracing a function with its closed-over arrays as constvars, dead-code
elimination and forward dependence. JAX: fuser_utils.make_jaxpr, pe.dce_jaxpr_consts,
pe.partial_eval_jaxpr_custom (as the fuser uses it).
"""
from __future__ import annotations

import numpy as np

from mjax.base import tree_util
from mjax.jaxpr.api import make_jaxpr as _make_jaxpr
from mjax.jaxpr.objects import Jaxpr, Literal, Var
from mjax.experimental.pallas.fuser.stateful import (SWAP as _SWAP, whole_access,
                                                      writes_refs)


def trace(f, *args, **kwargs):
    """(jaxpr, consts, in_tree, out_tree) of `f(*args, **kwargs)`: the jaxpr's invars are
    the flattened `(args, kwargs)`, its constvars the values `f` closes over (array
    constants included, as JAX's trace_to_jaxpr_dynamic makes them; scalars stay literals)."""
    flat, in_tree = tree_util.tree_flatten((args, kwargs))
    out_trees = []

    def flat_f(*xs):
        a, k = tree_util.tree_unflatten(in_tree, xs)
        out_flat, out_tree = tree_util.tree_flatten(f(*a, **k))
        out_trees.append(out_tree)
        return out_flat

    closed = _make_jaxpr(flat_f)(*flat)
    jaxpr, consts = hoist_array_literals(closed.jaxpr, list(closed.consts))
    return jaxpr, consts, in_tree, out_trees[-1]


def hoist_array_literals(jaxpr: Jaxpr, consts: list):
    """`jaxpr` with its non-scalar literals made constvars (so a fusion's arrays are
    values a kernel gets in blocks, as in JAX)."""
    hoisted: dict[int, Var] = {}
    new_consts, new_constvars = list(consts), list(jaxpr.constvars)

    def lift(v):
        if not isinstance(v, Literal) or not np.shape(v.val):
            return v
        if id(v) not in hoisted:
            var = Var(v.aval)
            hoisted[id(v)] = var
            new_constvars.append(var)
            new_consts.append(np.asarray(v.val))
        return hoisted[id(v)]

    eqns = [e.replace(invars=[lift(v) for v in e.invars]) for e in jaxpr.eqns]
    outvars = [lift(v) for v in jaxpr.outvars]
    return jaxpr.replace(constvars=new_constvars, eqns=eqns, outvars=outvars), new_consts


def is_var(v) -> bool:
    return isinstance(v, Var)


def dce(jaxpr: Jaxpr, used_outputs=None) -> Jaxpr:
    """`jaxpr` keeping only the equations its (used) outputs need; the constvars and
    invars stay as they are."""
    outvars = (jaxpr.outvars if used_outputs is None else
               [v for v, u in zip(jaxpr.outvars, used_outputs) if u])
    live = {v for v in outvars if is_var(v)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        # (writes to Refs are kept: mjax's ref ops declare no effects)
        if any(v in live for v in eqn.outvars) or eqn.effects or writes_refs(eqn):
            kept.append(eqn)
            live.update(v for v in eqn.invars if is_var(v))
    return jaxpr.replace(eqns=kept[::-1], outvars=outvars)


def used_vars(jaxpr: Jaxpr) -> set:
    """The variables `jaxpr`'s equations and outputs read."""
    used = {v for v in jaxpr.outvars if is_var(v)}
    for eqn in jaxpr.eqns:
        used.update(v for v in eqn.invars if is_var(v))
    return used


def prune_inputs(jaxpr: Jaxpr, values: list, keep=()):
    """(jaxpr, values) with the constvars nothing reads (and not in `keep`) dropped."""
    used = used_vars(jaxpr) | set(keep)
    keep = [i for i, v in enumerate(jaxpr.constvars) if v in used]
    return (jaxpr.replace(constvars=[jaxpr.constvars[i] for i in keep]),
            [values[i] for i in keep])


def written_refs(jaxpr: Jaxpr) -> list:
    """The Refs `jaxpr` writes, in the order of their first writes."""
    return list(dict.fromkeys(e.invars[0] for e in jaxpr.eqns if writes_refs(e)))


def downstream(jaxpr: Jaxpr, sources, with_writes: bool = False) -> list[bool]:
    """For each output of `jaxpr` (then, with_writes, each Ref it writes: its final
    contents), whether it depends on any variable in `sources`. A Ref's contents depend
    on them once a write puts a value that does (a whole swap replaces them), so later
    reads of the Ref do: JAX's query on the discharged jaxpr."""
    reached = {v for v in sources if is_var(v)}
    contents: dict = {}      # (Ref -> whether its current contents depend on sources)

    def dep(v):
        return is_var(v) and (v in reached or contents.get(v, False))

    for eqn in jaxpr.eqns:
        if writes_refs(eqn):
            ref = eqn.invars[0]
            old = dep(ref)
            if old:
                reached.update(eqn.outvars)        # (the old contents swap returns)
            value = any(dep(v) for v in eqn.invars[1:])
            replaces = eqn.primitive is _SWAP and whole_access(eqn, 2)
            contents[ref] = value or (old and not replaces)
            continue
        if any(dep(v) for v in eqn.invars):
            reached.update(eqn.outvars)
    outs = [is_var(v) and v in reached for v in jaxpr.outvars]
    writes = [contents[r] for r in written_refs(jaxpr)]
    return outs + writes if with_writes else outs
