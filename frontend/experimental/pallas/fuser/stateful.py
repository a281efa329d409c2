"""Fusions that close over Refs (JAX: fuser_utils.discharge_state as the stateful fusion
values use it): a fusion reading and writing whole Refs becomes a pure function of their
values, returning the written Refs' new values as extra outputs. Partial reads and
writes are a NotImplementedError."""
from __future__ import annotations

import numpy as np

from mjax.dialect.types import RefAval
from mjax.jaxpr.objects import Jaxpr, JaxprEqn, Literal, Var
from mjax.tracing.primitive import op_primitives

_P = op_primitives()
_GET = _P["ref_get_p"]
SWAP = _SWAP = _P["ref_swap_p"]
_ADD = _P["ref_addupdate_p"]
_ADD_VALUES = _P["add_p"]
_WRITES = {_P[n] for n in ("ref_swap_p", "ref_addupdate_p", "masked_swap_p",
                           "strided_swap_p") if n in _P}


def is_ref_var(v) -> bool:
    return isinstance(v, Var) and isinstance(v.aval, RefAval)


def writes_refs(eqn) -> bool:
    """Whether equation `eqn` writes to a Ref."""
    return eqn.primitive in _WRITES


def whole_access(eqn, index_from: int) -> bool:
    """Whether a ref_get (indices from operand 1) or a write (from operand 2) covers
    the whole Ref."""
    shape = tuple(eqn.invars[0].aval.shape)
    idx = eqn.invars[index_from:]
    return (tuple(eqn.params.get("sizes", shape)) == shape
            and not eqn.params.get("squeezed")
            and all(isinstance(i, Literal) and int(np.asarray(i.val)) == 0 for i in idx))


def discharge(jaxpr: Jaxpr):
    """(`jaxpr` with each Ref constvar replaced by a constvar of its value, whole reads
    by the Ref's current value and whole writes by a new current value, the final value
    of each Ref written, by constvar index). The constvars keep their places, so the
    values are the same list: Refs, whose contents the pure jaxpr takes."""
    refs = {v: Var(v.aval.inner_aval) for v in jaxpr.constvars if is_ref_var(v)}
    if not refs:
        return jaxpr, {}
    current = dict(refs)
    sub: dict = {}

    def read(v):
        return sub.get(v, v) if isinstance(v, Var) else v

    eqns = []
    for eqn in jaxpr.eqns:
        ref = eqn.invars[0] if eqn.invars else None
        if eqn.primitive is _GET and ref in refs:
            if not whole_access(eqn, 1):
                raise NotImplementedError(
                    "fuser: a fusion reading part of a Ref (ref[...] reads are "
                    "supported)")
            sub[eqn.outvars[0]] = current[ref]
            continue
        if eqn.primitive in (_SWAP, _ADD) and ref in refs:
            if not whole_access(eqn, 2):
                raise NotImplementedError(
                    "fuser: a fusion writing part of a Ref (ref[...] writes are "
                    "supported)")
            value = read(eqn.invars[1])
            if eqn.primitive is _SWAP:
                sub[eqn.outvars[0]] = current[ref]      # (the old value swap returns)
                current[ref] = value
            else:
                new = Var(ref.aval.inner_aval)
                eqns.append(JaxprEqn([current[ref], value], [new], _ADD_VALUES, {}))
                current[ref] = new
            continue
        if any(v in refs for v in eqn.invars if isinstance(v, Var)):
            raise NotImplementedError(
                f"fuser: a fusion passing a Ref to {eqn.primitive.name} is not supported "
                "yet")
        eqns.append(eqn.replace(invars=[read(v) for v in eqn.invars]))
    written = {k: current[v] for k, v in enumerate(jaxpr.constvars)
               if v in refs and current[v] is not refs[v]}
    return (jaxpr.replace(constvars=[refs.get(v, v) for v in jaxpr.constvars], eqns=eqns,
                          outvars=[read(v) for v in jaxpr.outvars]), written)
