"""Fusions that close over Refs (JAX: fuser_utils.discharge_state as the stateful fusion
values use it): a fusion reading whole Refs becomes a pure function of their values.
Writes to Refs are not supported yet (NotImplementedError naming them)."""
from __future__ import annotations

import numpy as np

from mjax.dialect.types import RefAval
from mjax.jaxpr.objects import Jaxpr, Literal, Var
from mjax.tracing.primitive import op_primitives

_P = op_primitives()
_GET = _P["ref_get_p"]
_WRITES = {_P[n] for n in ("ref_swap_p", "ref_addupdate_p", "masked_swap_p",
                           "strided_swap_p") if n in _P}


def is_ref_var(v) -> bool:
    return isinstance(v, Var) and isinstance(v.aval, RefAval)


def writes_refs(eqn) -> bool:
    """Whether equation `eqn` writes to a Ref."""
    return eqn.primitive in _WRITES


def _whole_read(eqn) -> bool:
    ref = eqn.invars[0]
    shape = tuple(ref.aval.shape)
    idx = eqn.invars[1:]
    return (tuple(eqn.params.get("sizes", shape)) == shape
            and not eqn.params.get("squeezed")
            and all(isinstance(i, Literal) and int(np.asarray(i.val)) == 0 for i in idx))


def discharge_reads(jaxpr: Jaxpr) -> Jaxpr:
    """`jaxpr` with each Ref constvar replaced by a constvar of its value and each whole
    read of it by that value (the constvars keep their places, so the values are the
    same list: Refs, whose contents the pure jaxpr takes)."""
    refs = {v: Var(v.aval.inner_aval) for v in jaxpr.constvars if is_ref_var(v)}
    if not refs:
        return jaxpr
    sub: dict = {}

    def read(v):
        return sub.get(v, v) if isinstance(v, Var) else v

    eqns = []
    for eqn in jaxpr.eqns:
        if eqn.primitive is _GET and eqn.invars[0] in refs:
            if not _whole_read(eqn):
                raise NotImplementedError(
                    "fuser: a fusion reading part of a Ref (ref[...] reads are "
                    "supported)")
            sub[eqn.outvars[0]] = refs[eqn.invars[0]]
            continue
        if any(v in refs for v in eqn.invars if isinstance(v, Var)):
            what = ("writing to a Ref" if eqn.primitive in _WRITES
                    else f"passing a Ref to {eqn.primitive.name}")
            raise NotImplementedError(f"fuser: a fusion {what} is not supported yet")
        eqns.append(eqn.replace(invars=[read(v) for v in eqn.invars]))
    return jaxpr.replace(constvars=[refs.get(v, v) for v in jaxpr.constvars], eqns=eqns,
                         outvars=[read(v) for v in jaxpr.outvars])
