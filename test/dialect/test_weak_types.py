"""The weak-type behaviour the op classes state (`JaxprOp.weak_type_inputs`, asked
through `weak_result`) against JAX's: the weak type of a primitive's result in a jaxpr
traced from Python scalars (weakly typed) and NumPy scalars (strongly typed)."""
import jax
import numpy as np
import pytest
from jax import lax

from mjax.dialect import OPS, ShapedArray


def _bcast(v):
    return lax.broadcast_in_dim(v, (3,), ())


# (primitive, JAX function, arguments): Python scalars are weak, NumPy scalars strong.
CASES = [
    ("add", lambda x, y: x + y, (1.0, 2.0)),
    ("add", lambda x, y: x + y, (1.0, np.float32(2))),
    ("lt", lax.lt, (1.0, 2.0)),
    ("select_n", lax.select_n, (True, 1.0, 2.0)),
    ("select_n", lax.select_n, (1, np.float32(1), np.float32(2))),
    ("dynamic_slice", lambda v, i: lax.dynamic_slice(_bcast(v), (i,), (1,)), (1.0, 1)),
    ("dynamic_slice", lambda v, i: lax.dynamic_slice(_bcast(v), (i,), (1,)),
     (np.float32(1), 1)),
    ("argmax", lambda v: lax.argmax(_bcast(v), 0, np.int32), (1.0,)),
    ("bitcast_convert_type", lambda v: lax.bitcast_convert_type(v, np.int32), (1.0,)),
]


@pytest.mark.parametrize("name,fn,args", CASES, ids=[c[0] for c in CASES])
def test_weak_result_matches_jax(name, fn, args):
    jaxpr = jax.make_jaxpr(fn)(*args)
    [eqn] = [e for e in jaxpr.eqns if e.primitive.name == name]
    avals = [ShapedArray(v.aval.shape, v.aval.dtype, weak_type=v.aval.weak_type)
             for v in eqn.invars]
    assert OPS["jaxpr." + name].weak_result(avals) == eqn.outvars[0].aval.weak_type
