"""Fusions that close over Refs (JAX: fuser_utils.discharge_state as the stateful fusion
values use it): a fusion reading and writing Refs becomes a pure function of their
values, returning the written Refs' new values as extra outputs. The jaxpr is traced
again with each Ref's contents as a value: a whole read is the value, a read of part of
it a `slice` (static slices) or a `dynamic_slice` then `squeeze` (an integer index or a
traced start), a write of part of it a `dynamic_update_slice`, the ops JAX's state
discharge gives, so the pull rules treat them as JAX's do."""
from __future__ import annotations

import numpy as np

from mjax import lax
from mjax.dialect.types import RefAval
from mjax.jaxpr.api import make_jaxpr
from mjax.jaxpr.objects import Jaxpr, Literal, Var, eval_equations
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct
from mjax.tracing.primitive import op_primitives

_P = op_primitives()
_GET = _P["ref_get_p"]
SWAP = _SWAP = _P["ref_swap_p"]
_ADD = _P["ref_addupdate_p"]
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


class _Contents:
    """A discharged Ref's current value while the jaxpr is traced again."""

    def __init__(self, value):
        self.value, self.written = value, False


def _static(starts) -> bool:
    return all(isinstance(s, (int, np.integer)) or (
        isinstance(s, np.ndarray) and s.shape == ()) for s in starts)


def _read(x, starts, sizes, squeezed):
    if not squeezed and _static(starts):
        begin = [int(s) for s in starts]
        return lax.slice(x, begin, [b + n for b, n in zip(begin, sizes)])
    part = lax.dynamic_slice(x, list(starts), list(sizes))
    return lax.squeeze(part, tuple(squeezed)) if squeezed else part


def _write(x, starts, sizes, squeezed, value):
    if squeezed:      # (the value without the dims integers index: put them back)
        kept = [d for d in range(len(sizes)) if d not in squeezed]
        value = lax.broadcast_in_dim(value, tuple(sizes), tuple(kept))
    return lax.dynamic_update_slice(x, value, list(starts))


def _access(eqn, index_from):
    shape = tuple(eqn.invars[0].aval.shape)
    return (tuple(eqn.params.get("sizes", shape)),
            tuple(eqn.params.get("squeezed", ())), whole_access(eqn, index_from))


def _apply(eqn, vals):
    """An equation on discharged Refs' contents (others bind as they are)."""
    cell = vals[0] if vals else None
    if not isinstance(cell, _Contents):
        if any(isinstance(v, _Contents) for v in vals):
            raise NotImplementedError(
                f"fuser: a fusion passing a Ref to {eqn.primitive.name} is not supported "
                "yet")
        return eqn.primitive.bind(*vals, **eqn.params)
    if eqn.primitive is _GET:
        sizes, squeezed, whole = _access(eqn, 1)
        return cell.value if whole else _read(cell.value, vals[1:], sizes, squeezed)
    if eqn.primitive not in (_SWAP, _ADD):
        raise NotImplementedError(
            f"fuser: a fusion applying {eqn.primitive.name} to a Ref is not supported yet")
    sizes, squeezed, whole = _access(eqn, 2)
    value, starts = vals[1], vals[2:]
    old = cell.value if whole else _read(cell.value, starts, sizes, squeezed)
    new = value if eqn.primitive is _SWAP else lax.add(old, value)
    cell.value = new if whole else _write(cell.value, starts, sizes, squeezed, new)
    cell.written = True
    return old if eqn.primitive is _SWAP else []


def _spec(aval):
    aval = aval.inner_aval if isinstance(aval, RefAval) else aval
    return ShapeDtypeStruct(tuple(aval.shape), aval.dtype)


def discharge(jaxpr: Jaxpr, values: list):
    """(`jaxpr` with each Ref constvar replaced by a constvar of its contents and the
    Ref reads and writes by pure ops, its values (constants the trace adds appended), the
    final contents of each Ref written, by constvar index: a variable of the new jaxpr).
    The constvars keep their places, so the values are the same list: Refs, whose
    contents the pure jaxpr takes."""
    if not any(is_ref_var(v) for v in jaxpr.constvars):
        return jaxpr, values, {}
    n_consts = len(jaxpr.constvars)
    written: list = []

    def pure(*args):
        consts = [_Contents(a) if is_ref_var(v) else a
                  for v, a in zip(jaxpr.constvars, args[:n_consts])]
        outs = eval_equations(jaxpr, consts, list(args[n_consts:]), apply=_apply)
        written[:] = [k for k, c in enumerate(consts)
                      if isinstance(c, _Contents) and c.written]
        return [*outs, *(consts[k].value for k in written)]

    closed = make_jaxpr(pure)(*(_spec(v.aval) for v in (*jaxpr.constvars, *jaxpr.invars)))
    new = closed.jaxpr
    n_out = len(jaxpr.outvars)
    finals = dict(zip(written, new.outvars[n_out:]))
    out = new.replace(constvars=[*new.invars[:n_consts], *new.constvars],
                      invars=list(new.invars[n_consts:]), outvars=list(new.outvars[:n_out]))
    return out, [*values, *closed.consts], finals
