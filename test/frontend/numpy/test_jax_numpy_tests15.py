"""Fixes found by running JAX 0.10.2's own jax.numpy tests (lax_numpy_ufuncs_test.py,
lax_numpy_reducers_test.py) under mjax, each checked against real jax (the oracle)."""
import functools

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax._src import test_util as jjtu

import mjax.numpy as mnp
from mjax._src import test_util as mjtu
from frontend_util import check


def _scalar_mul(x, y):
    return x * y


_X = np.arange(1.0, 13.0, dtype=np.float32).reshape(3, 4)
_IDX = np.array([0, 2, 1], np.int32)
# (name, method call on a ufunc module): each method of a built-in ufunc and of one made
# by frompyfunc, as JAX's tests call them.
_CALLS = [
    ("add.reduceat", lambda m: functools.partial(m.add.reduceat, axis=1), (_X, _IDX)),
    ("maximum.reduceat", lambda m: m.maximum.reduceat, (_X, _IDX)),
    ("subtract.accumulate", lambda m: functools.partial(m.subtract.accumulate, axis=-1),
     (_X,)),
    ("negative.at", lambda m: functools.partial(m.negative.at, inplace=False),
     (_X, _IDX)),
    ("minimum.at", lambda m: functools.partial(m.minimum.at, inplace=False),
     (_X, _IDX, _X[:, 0])),
    ("frompyfunc.reduce", lambda m: m.frompyfunc(_scalar_mul, 2, 1, identity=1).reduce,
     (_X,)),
    ("frompyfunc.reduce_where",
     lambda m: functools.partial(m.frompyfunc(_scalar_mul, 2, 1, identity=1).reduce,
                                 where=_X > 4), (_X,)),
    ("frompyfunc.accumulate",
     lambda m: m.frompyfunc(_scalar_mul, 2, 1, identity=1).accumulate, (_X,)),
    ("frompyfunc.reduceat",
     lambda m: m.frompyfunc(_scalar_mul, 2, 1, identity=1).reduceat, (_X, _IDX)),
    ("frompyfunc.at",
     lambda m: functools.partial(m.frompyfunc(_scalar_mul, 2, 1, identity=1).at,
                                 inplace=False), (_X, _IDX, _X[:, 0])),
    ("frompyfunc.outer", lambda m: m.frompyfunc(_scalar_mul, 2, 1, identity=1).outer,
     (_X[0], _X)),
]


@pytest.mark.parametrize("name,make,args", _CALLS, ids=[c[0] for c in _CALLS])
def test_ufunc_method_second_eager_call_compiles_nothing(name, make, args):
    """ufunc methods run as one program cached per ufunc: a second eager call with the
    same shapes compiles nothing, as JAX's jitted methods (it recompiled every call)."""
    ours, theirs = make(mnp), make(jjnp)
    check(ours(*args), theirs(*args), rtol=1e-6)
    with mjtu.count_jit_and_pmap_lowerings() as ours_count:
        again = ours(*args)
    with jjtu.count_jit_and_pmap_lowerings() as theirs_count:
        theirs(*args)
    assert ours_count() == theirs_count() == 0
    check(again, theirs(*args), rtol=1e-6)
    # a new frompyfunc of the same function is an equal ufunc: it reuses the program
    with mjtu.count_jit_and_pmap_lowerings() as ours_count:
        make(mnp)(*args)
    assert ours_count() == 0


@pytest.mark.parametrize("name", ["add", "maximum", "logical_xor", "negative"])
@pytest.mark.parametrize("attr", ["nargs", "nin", "nout", "identity", "_func"])
def test_ufunc_properties_read_only(name, attr):
    for module in (mnp, jjnp):
        u = getattr(module, name)
        getattr(u, attr)
        with pytest.raises(AttributeError):
            setattr(u, attr, None)
        f = module.frompyfunc(_scalar_mul, 2, 1, identity=1)
        with pytest.raises(AttributeError):
            setattr(f, attr, None)


def test_frompyfunc_equality_and_hash():
    for module in (mnp, jjnp):
        f = module.frompyfunc(_scalar_mul, 2, 1, identity=1)
        g = module.frompyfunc(_scalar_mul, 2, 1, identity=1)
        assert f == g and hash(f) == hash(g)
        assert f != module.frompyfunc(_scalar_mul, 2, 1, identity=0)
        assert f != module.frompyfunc(module.add, 2, 1, identity=1)
        assert module.add == module.add and module.add != module.subtract


@pytest.mark.parametrize("a_shape,b_shape", [((3,), (2, 4)), ((2, 1), (3,)), ((), (3,))])
def test_ufunc_outer_under_rank_promotion_raise(a_shape, b_shape):
    """outer's operands differ in rank by design: it broadcasts them itself, so
    jax_numpy_rank_promotion='raise' does not object (it raised under mjax)."""
    a = np.arange(1.0, 1.0 + np.prod(a_shape)).reshape(a_shape).astype(np.float32)
    b = np.arange(2.0, 2.0 + np.prod(b_shape)).reshape(b_shape).astype(np.float32)
    with jax.numpy_rank_promotion("raise"):
        for u in ("add", "multiply"):
            check(getattr(mnp, u).outer(a, b), getattr(jjnp, u).outer(a, b))
        check(mnp.frompyfunc(_scalar_mul, 2, 1).outer(a, b),
              jjnp.frompyfunc(_scalar_mul, 2, 1).outer(a, b))


def _numpy_at(ufunc, x, idx, *args):
    x = x.copy()
    ufunc.at(x, idx, *args)
    return x


def test_ufunc_at_with_slices_and_traced_indices():
    """ufunc.at keeps slices, None and Ellipsis static while tracing its array indices
    (JAX's jitted ufunc.at refuses slices; mjax's gives NumPy's answer)."""
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    for idx in [(slice(None), np.array([0, 0, 3])), (np.array([2, 2]), slice(1, 3)),
                (Ellipsis, np.array([1, 1]))]:
        check(mnp.add.at(x, idx, 2.0, inplace=False), _numpy_at(np.add, x, idx, 2.0))
        check(mnp.negative.at(x, idx, inplace=False), _numpy_at(np.negative, x, idx))
    check(mnp.add.at(x, 1, 2.0, inplace=False), jjnp.add.at(x, 1, 2.0, inplace=False))
    mask = x > 5
    check(mnp.multiply.at(x, mask, 3.0, inplace=False), np.where(mask, x * 3, x))
