"""Whether two block-index transforms compute the same indices: both traced on symbolic
int32 block indices and compared as value-numbered DAGs (insensitive to variable names
and equation order). JAX: fuser_utils.compare_jaxprs."""
from __future__ import annotations

import numpy as np

from mjax.jaxpr.objects import ClosedJaxpr, Jaxpr, Literal
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct
from mjax.experimental.pallas.fuser import jaxpr_util


def _hashable(val):
    if isinstance(val, ClosedJaxpr):
        return signature(val.jaxpr)
    if isinstance(val, Jaxpr):
        return signature(val)
    if isinstance(val, (list, tuple)):
        return tuple(_hashable(v) for v in val)
    if isinstance(val, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in val.items()))
    if hasattr(val, "shape") and hasattr(val, "dtype"):
        a = np.asarray(val)
        return ("array", a.shape, str(a.dtype), a.tobytes())
    try:
        hash(val)
        return val
    except TypeError:
        return str(val)


def signature(jaxpr: Jaxpr):
    env = {v: ("const", i) for i, v in enumerate(jaxpr.constvars)}
    env.update((v, ("in", i)) for i, v in enumerate(jaxpr.invars))

    def sig(v):
        if isinstance(v, Literal):
            return ("lit", _hashable(v.val))
        return env.get(v, ("unknown", id(v)))

    eqns = []
    for eqn in jaxpr.eqns:
        s = (eqn.primitive.name, tuple(sig(v) for v in eqn.invars),
             _hashable(eqn.params))
        eqns.append(s)
        for k, v in enumerate(eqn.outvars):
            env[v] = ("out", s, k)
    return (tuple(sig(v) for v in jaxpr.outvars), tuple(sorted(eqns, key=repr)))


def same_index_maps(f1, f2, n_indices) -> bool:
    args = tuple(None if n is None else (ShapeDtypeStruct((), np.int32),) * n
                 for n in n_indices)
    try:
        j1, c1, _, _ = jaxpr_util.trace(f1, *args)
        j2, c2, _, _ = jaxpr_util.trace(f2, *args)
    except Exception:      # (an index needing scalar prefetch: not comparable here)
        return False
    if len(c1) != len(c2) or any(_hashable(a) != _hashable(b) for a, b in zip(c1, c2)):
        return False
    return signature(j1) == signature(j2)
