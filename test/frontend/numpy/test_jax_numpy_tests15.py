"""Fixes found by running JAX 0.10.2's own jax.numpy tests (lax_numpy_ufuncs_test.py,
lax_numpy_reducers_test.py) under mjax, each checked against real jax (the oracle)."""
import contextlib
import functools

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax._src import test_util as jjtu

import mjax
import mjax.numpy as mnp
from mjax._src import test_util as mjtu
from frontend_util import check


@contextlib.contextmanager
def _both(option, value):
    """A jax.numpy config option set to `value` in mjax and in jax alike."""
    with getattr(mjax, option)(value), getattr(jax, option)(value):
        yield


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
    with _both("numpy_rank_promotion", "raise"):
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


_WHERE_REDUCERS = ["sum", "prod", "max", "min", "nansum", "nanprod", "nanmax", "nanmin",
                   "all", "any", "mean", "var", "std", "nanmean", "nanvar", "nanstd"]


@pytest.mark.parametrize("name", _WHERE_REDUCERS)
def test_reducer_non_boolean_where_raises_as_jax(name):
    """A where= of integers is JAX's ValueError (mjax read it as truth values)."""
    messages = []
    for module in (mnp, jjnp):
        x = module.zeros((10,), np.float32)
        where = module.ones(10, dtype=int)
        kw = {"initial": 0.0} if name in ("max", "min", "nanmax", "nanmin") else {}
        with pytest.raises(ValueError, match=f"jnp.{name}: where must be None or a "
                                             f"boolean array") as e:
            getattr(module, name)(x, where=where, **kw)
        messages.append(str(e.value).split(" (at ")[0])
    assert messages[0] == messages[1]


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
def test_reducer_non_scalar_initial_message(name):
    messages = []
    for module in (mnp, jjnp):
        with pytest.raises(ValueError) as e:
            getattr(module, name)(module.ones((2, 3, 4)), axis=-1,
                                  initial=module.zeros((1, 2, 3)))
        messages.append(str(e.value))
    assert messages[0] == messages[1] == ("initial value must be a scalar. Got array of "
                                          "shape (1, 2, 3)")


@pytest.mark.parametrize("name", ["nanmax", "nanmin"])
@pytest.mark.parametrize("x", [np.zeros((3, 0), np.float32),
                               np.array([[np.nan, np.nan], [1.0, np.nan]], np.float32),
                               np.zeros((2, 0), np.complex64)],
                         ids=["empty", "all_nan_row", "empty_complex"])
def test_nan_extremum_with_initial(name, x):
    """With `initial`, an empty or all-NaN slice gives `initial` (it gave NaN)."""
    for axis in (None, 1):
        for kw in ({"initial": 1}, {"initial": 0, "where": np.array(True)}):
            check(getattr(mnp, name)(x, axis=axis, **kw),
                  getattr(jjnp, name)(x, axis=axis, **kw))
    if x.size:
        check(getattr(mnp, name)(x, axis=1), getattr(jjnp, name)(x, axis=1))


@pytest.mark.parametrize("name", ["mean", "var", "std", "nanmean", "nanvar", "nanstd",
                                  "sum", "nansum"])
@pytest.mark.parametrize("where_shape", [(4,), (3, 1), ()])
def test_reducer_lower_rank_where_under_rank_promotion_raise(name, where_shape):
    """A where= of lower rank is the reducer's own broadcasting, not the user's: no
    rank-promotion error (nanmean combined it with the NaN mask and raised)."""
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    x[0, 1, 2] = np.nan
    where = np.resize(np.array([True, False, True, True]), where_shape)
    with _both("numpy_rank_promotion", "raise"):
        for axis in (None, 1, -1):
            check(getattr(mnp, name)(x, axis=axis, where=where),
                  getattr(jjnp, name)(x, axis=axis, where=where), rtol=1e-5)


@pytest.mark.parametrize("fn", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_cumulative_errors_as_jax(fn, shape):
    messages = []
    for module in (mnp, jjnp):
        with pytest.raises(ValueError) as e:
            getattr(module, fn)(np.ones(shape, np.float32), include_initial=True)
        messages.append(str(e.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int8, np.int32, np.bool_])
def test_average_of_integers_under_strict_promotion(dtype):
    """average's inexact promotion needs no Python float (strict mode refused it)."""
    x = (np.arange(12) % 5).reshape(3, 4).astype(dtype)
    w = (np.arange(4) % 3 + 1).astype(dtype)
    with _both("numpy_dtype_promotion", "strict"):
        for kw in ({}, {"axis": 1}, {"axis": 1, "weights": w, "returned": True},
                   {"axis": None, "weights": x, "keepdims": True}):
            ours, theirs = mnp.average(x, **kw), jjnp.average(x, **kw)
            for o, t in zip(*(r if isinstance(r, tuple) else (r,) for r in (ours, theirs)),
                            strict=True):
                check(o, t, rtol=1e-6)


_COV_CASES = [
    ((5,), None, {}), ((3, 5), None, {}), ((3, 5), (2, 5), {}), ((3, 5), (5,), {}),
    ((2, 5), (2, 1), {"rowvar": False}),
    ((5, 3), None, {"rowvar": False}), ((1, 4), None, {"rowvar": False, "ddof": 0}),
    ((4, 1), None, {"rowvar": False, "ddof": 0}), ((3, 5), None, {"bias": True}),
    ((3, 5), None, {"fweights": True}), ((3, 5), None, {"aweights": True}),
    ((3, 5), None, {"fweights": True, "aweights": True, "ddof": 2}),
    ((0,), None, {}), ((3, 0), None, {}), ((0, 5), None, {"rowvar": False}),
    ((1, 0), None, {}),
]


@pytest.mark.parametrize("shape,y_shape,kw", _COV_CASES)
def test_cov_as_jax(shape, y_shape, kw):
    """cov under rank_promotion='raise' (its weights broadcast explicitly), empty inputs,
    NumPy 2.2's rowvar=False of one row, and the weights' checks."""
    rng = np.random.default_rng(0)
    m = rng.normal(size=shape).astype(np.float32)
    y = None if y_shape is None else rng.normal(size=y_shape).astype(np.float32)
    n = m.shape[-1] if kw.get("rowvar", True) or m.ndim == 1 else m.shape[0]
    kw = dict(kw)
    if kw.get("fweights"):
        kw["fweights"] = np.arange(1, n + 1, dtype=np.int32)
    if kw.get("aweights"):
        kw["aweights"] = np.linspace(0.5, 2.0, n).astype(np.float32)
    # (m and y of two ranks are the user's own rank promotion: allowed only then)
    mode = "raise" if y is None or y.ndim == m.ndim else "allow"
    with _both("numpy_rank_promotion", mode), np.errstate(all="ignore"):
        check(mnp.cov(m, y, **kw), jjnp.cov(m, y, **kw), rtol=2e-5, atol=1e-6)


def test_cov_dtype_and_weight_errors():
    x = np.arange(5)
    with _both("numpy_rank_promotion", "raise"):
        for module in (mnp, jjnp):   # (m and y of two ranks are the user's promotion)
            with pytest.raises(ValueError, match="Operands could not be broadcast together "
                                                 "for cov"):
                module.cov(np.ones((3, 5)), np.ones(5))
    assert mnp.cov(x, dtype="bfloat16").dtype == jjnp.cov(x, dtype="bfloat16").dtype
    check(mnp.cov(x.astype(np.int8)), jjnp.cov(x.astype(np.int8)))
    for module in (mnp, jjnp):
        with pytest.raises(ValueError, match="cov: dtype must be a subclass of float or "
                                             "complex"):
            module.cov(x, dtype=int)
        with pytest.raises(TypeError, match="fweights must be integer"):
            module.cov(x, fweights=np.ones(5, np.float32))
        with pytest.raises(RuntimeError, match="incompatible numbers of samples and "
                                               "aweights"):
            module.cov(x, aweights=np.ones(4, np.float32))
