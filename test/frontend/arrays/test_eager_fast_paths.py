"""The eager hot path's shortcuts (same-dtype promotion, cached scalar constants) give
exactly JAX's dtypes, weak types and values, and keep the debug/config behaviour."""
import math
import operator

import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax.arrays import eager
from mjax.numpy import promotion as mnp_module  # (the scalar-constant cache)

import jax  # noqa: E402  (the test-only oracle)
import jax.numpy as jjnp

_ARRAYS = [("float32", [1.5, -2.0, 0.0]), ("int32", [1, -2, 7]), ("int8", [1, -2, 7]),
           ("uint8", [1, 2, 7]), ("bool", [True, False, True]), ("float16", [1.5, -2.0, 0.5]),
           ("bfloat16", [1.5, -2.0, 0.5]), ("complex64", [1 + 1j, -2, 0.5j])]
_SCALARS = [1, 2.5, -0.0, 0.0, True, 1 + 2j, -3]


def _same(got, want, signs=True):
    assert isinstance(got, mjax.Array)
    # (JAX marks a comparison of two weak operands weak; mjax's bools are never weak, a
    # difference older than these shortcuts and not on this path.)
    weak_ok = got.weak_type == want.weak_type or (got.dtype == bool and want.weak_type)
    assert (got.dtype, got.shape) == (want.dtype, want.shape) and weak_ok
    g, w = np.asarray(got), np.asarray(want)
    if g.dtype.kind in "fc" or str(g.dtype) == "bfloat16":
        g, w = g.astype(np.complex128), w.astype(np.complex128)
        np.testing.assert_allclose(g, w, rtol=1e-2)
        # signs of zeros too (x + -0.0 keeps -0.0, x + 0.0 does not)
        assert not signs or [math.copysign(1, v) for v in g.real.ravel()] == [
            math.copysign(1, v) for v in w.real.ravel()]
    else:
        np.testing.assert_array_equal(g, w)


def _both(fn, *args):
    try:
        want = fn(jjnp, *args)
    except Exception as e:   # noqa: BLE001 (the oracle's error class must be ours too)
        with pytest.raises(Exception) as ours:
            fn(jnp, *args)
        # (by name: jax.dtypes.TypePromotionError is mjax.dtypes.TypePromotionError here)
        assert type(ours.value).__name__ == type(e).__name__, (ours.value, e)
        return None, None
    return fn(jnp, *args), want


@pytest.mark.parametrize("dtype,values", _ARRAYS)
def test_array_with_python_scalar_matches_jax_both_orders_twice(dtype, values):
    for scalar in _SCALARS:
        # (truediv runs as one jit program with the scalar static: not this path)
        for op in (operator.add, operator.sub, operator.mul, operator.lt, operator.eq,
                   jnp.maximum):
            if op is operator.lt and (isinstance(scalar, complex) or dtype == "complex64"):
                continue  # (complex ordering: another matter than this path)
            for reflected in (False, True):
                def fn(m, s=scalar, op=op, reflected=reflected):
                    x = m.asarray(np.array(values, dtype=jnp.dtype(dtype)))
                    if op is jnp.maximum:
                        op = m.maximum
                    return op(s, x) if reflected else op(x, s)
                for _ in range(2):          # the second call hits the constant cache
                    got, want = _both(fn)
                    if got is not None:
                        # (bool * -0.0: JAX's False * -0.0 is 0.0, an older difference
                        # of the multiply itself)
                        _same(got, want, signs=dtype != "bool")


@pytest.mark.parametrize("x64", [False, True])
def test_scalar_constants_follow_x64(x64):
    with mjax.config.override(jax_enable_x64=x64), jax.enable_x64(x64):
        for dtype in ("int32", "float32", "int64", "float64", "uint8"):
            for scalar in (3, 0.5, True):
                got = jnp.asarray(np.arange(3, dtype=dtype)) * scalar
                want = jjnp.asarray(np.arange(3, dtype=dtype)) * scalar
                _same(got, want)


def test_weak_arrays_and_scalar_constants_like_jax():
    for make in (lambda m: m.asarray(2.0) + 1, lambda m: m.asarray(2) * 1.5,
                 lambda m: 1.0 - m.asarray(3), lambda m: m.ones(3) * 2,
                 lambda m: m.asarray(2) - m.asarray(5), lambda m: m.sin(m.asarray(1.0)),
                 lambda m: m.asarray(1) + m.asarray(2.0)):
        _same(make(jnp), make(jjnp))


def test_same_dtype_fast_path_matches_jax():
    for dtype in ("float32", "int32", "int8", "bool", "float16", "complex64", "uint32"):
        a = np.array([1, 0, 3], dtype=dtype)
        b = np.array([2, 1, 1], dtype=dtype)
        for fn in (lambda m, x, y: x * y, lambda m, x, y: x + y, lambda m, x, y: x != y if np.dtype(dtype).kind == "c" else x < y,
                   lambda m, x, y: m.maximum(x, y), lambda m, x, y: m.sin(x) if
                   np.dtype(dtype).kind in "fc" else x - y,
                   lambda m, x, y: x / y, lambda m, x, y: m.arctan2(x, y) if
                   np.dtype(dtype).kind == "f" else x == y):
            got, want = _both(lambda m: fn(m, m.asarray(a), m.asarray(b)))
            if got is not None:
                _same(got, want)


def test_sixty_four_bit_arrays_after_x64_is_turned_off_are_narrowed():
    with mjax.config.override(jax_enable_x64=True):
        x = jnp.asarray(np.arange(3.0))
        assert x.dtype == np.float64
    # Promotion canonicalizes, as before the fast path: the product computes in float32.
    assert (x * x).dtype == np.float32 and (x + 1.0).dtype == np.float32
    with mjax.config.override(jax_enable_x64=True):
        assert (x * x).dtype == np.float64


def test_python_int_out_of_range_still_raises():
    x = jnp.arange(3)
    with pytest.raises(OverflowError):
        x + 2 ** 40
    with pytest.raises(OverflowError):
        2 ** 40 * x


def test_cached_constant_never_reaches_the_user():
    x = jnp.arange(4.0)
    a = x + 1.0
    b = x + 1.0
    assert a is not b
    # Deleting results (or donating them) cannot break later ops with the same scalar.
    a.delete()
    b.delete()
    np.testing.assert_array_equal(x + 1.0, np.arange(4.0) + 1)
    for const in mnp_module._SCALAR_CONSTS.values():
        assert const is not a and const is not b


def test_scalar_constant_cache_is_bounded():
    x = jnp.arange(3.0)
    for k in range(mnp_module._SCALAR_CONSTS_MAX + 20):
        x + float(k)
    assert len(mnp_module._SCALAR_CONSTS) <= mnp_module._SCALAR_CONSTS_MAX
    big = jnp.zeros(mnp_module._SCALAR_CONST_MAX_SIZE + 1)
    n = len(mnp_module._SCALAR_CONSTS)
    np.testing.assert_array_equal(big + 123.25, np.full(big.shape, 123.25))
    assert not any(k[1] == 123.25 for k in mnp_module._SCALAR_CONSTS) or \
        len(mnp_module._SCALAR_CONSTS) == n


def test_nan_scalars_and_debug_nans_as_before():
    x = jnp.arange(3.0)
    assert np.isnan(np.asarray(x + float("nan"))).all()
    assert np.isnan(np.asarray(x * jnp.nan)).all()
    with mjax.config.override(jax_debug_nans=True):
        x + 1.0                                 # fine: no NaN
        with pytest.raises(FloatingPointError):
            x + float("nan")
        with pytest.raises(FloatingPointError):
            x * jnp.nan
        with pytest.raises(FloatingPointError):
            jnp.log(-x)
    with mjax.config.override(jax_debug_infs=True):
        with pytest.raises(FloatingPointError):
            x + float("inf")
        with pytest.raises(FloatingPointError):
            x / 0.0


def test_disable_jit_and_tracing_still_stage_scalars():
    x = jnp.arange(3.0)
    with mjax.disable_jit():
        np.testing.assert_array_equal(x + 2.0, [2, 3, 4])
    text = str(mjax.make_jaxpr(lambda v: v + 2.0)(x))
    assert "add" in text and "2.0" in text


def test_eager_cache_key_includes_default_device():
    x = jnp.arange(3.0)
    cpu = mjax.devices("cpu")[0]
    with mjax.default_device(cpu):
        y = x * x + 1.0
    assert y.devices() == {cpu}
    np.testing.assert_array_equal(y, np.arange(3.0) ** 2 + 1)
    n = len(eager._CACHE)
    x * x
    assert len(eager._CACHE) >= n


def test_fused_jnp_functions_plain_arguments_path_matches_jax():
    a = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    for fn in (lambda m, x: m.sum(x), lambda m, x: x.sum(), lambda m, x: x.sum(0),
               lambda m, x: m.sum(x, axis=1, keepdims=True), lambda m, x: m.max(x, 1),
               lambda m, x: m.mean(x, axis=None), lambda m, x: m.sum(x, dtype="int32"),
               lambda m, x: m.nonzero(x > 0)[1], lambda m, x: m.cumsum(x, axis=-1)):
        want = fn(jjnp, jjnp.asarray(a))
        for _ in range(2):                   # the second call takes the cached program
            got = fn(jnp, jnp.asarray(a))
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    with mjax.disable_jit():
        np.testing.assert_allclose(jnp.sum(jnp.asarray(a)), a.sum())
        np.testing.assert_allclose(jnp.sum(jnp.asarray(a), axis=0), a.sum(0))


def test_scalar_constants_follow_the_promotion_mode():
    for mode in ("standard", "strict", "standard"):
        with mjax.config.override(jax_numpy_dtype_promotion=mode), \
                jax.numpy_dtype_promotion(mode):
            for dtype, scalar in (("float32", 1.5), ("int32", 2), ("int32", 1.5),
                                  ("uint8", 3), ("bfloat16", 2.0)):
                def fn(m, dtype=dtype, scalar=scalar):
                    return m.asarray(np.arange(3), dtype=dtype) * scalar
                got, want = _both(fn)
                if got is not None:
                    _same(got, want)


def test_fused_functions_tell_apart_equal_static_scalars():
    """jnp functions that run as one jit program when eager pass Python scalars as static
    arguments; 1, 1.0 and True (result dtypes) and 0.0 and -0.0 (signs) compare equal but
    must not share a compiled program."""
    x, i = np.arange(1., 4., dtype=np.float32), np.arange(3, dtype=np.int32)
    calls = [lambda m: m.divide(x, 0.0), lambda m: m.divide(x, -0.0),
             lambda m: m.copysign(x, 0.0), lambda m: m.copysign(x, -0.0),
             lambda m: m.where(i > 0, i, 1.0), lambda m: m.where(i > 0, i, 1),
             lambda m: m.where(i > 0, i, True), lambda m: m.power(i, 2),
             lambda m: m.power(i, 2.0), lambda m: m.clip(i, 1, 2),
             lambda m: m.clip(i, 1.0, 2.0), lambda m: m.clip(i, min=1),
             lambda m: m.clip(i, min=1.0), lambda m: m.heaviside(x - 1, 0.0),
             lambda m: m.heaviside(x - 1, -0.0), lambda m: m.heaviside(x - 1, float("nan"))]
    for call in calls:
        got, want = call(jnp), call(jax.numpy)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        np.testing.assert_array_equal(got, want)


# ---- eager basic indexing and x.at[idx] updates as one cached jit (issue 25) ----------
from mjax.arrays.array import Array  # noqa: E402
from mjax.numpy import eager_indexing  # noqa: E402
from mjax.numpy.index_update import _IndexUpdateRef  # noqa: E402
from mjax.numpy.indexing import getitem as general_getitem  # noqa: E402

_E = Ellipsis
_BASIC = [1, -1, np.int32(2), np.int64(-3), np.uint8(0), (slice(None), 1), (1, slice(None)),
          (_E, 2), (None, 1), (1, None, _E, -2), (slice(1, 3), -1), (slice(None, None, -1), 0),
          (slice(None, None, 2), 1, 2), (0, 0, 0), (-1, -1, -1), (slice(-2, None), None),
          (None,), (slice(5, 1),), (slice(1, 2), slice(0, 3, 2)), (_E, None),
          (2, _E, slice(None, 1)), (slice(-100, 100), 1), (None, None, 1, None)]


def _same_exactly(got, want):
    """Same value, dtype, shape, weak type, placement and committed-ness."""
    assert type(got) is type(want) is Array
    assert (got.dtype, got.shape, got.weak_type) == (want.dtype, want.shape, want.weak_type)
    assert got.devices() == want.devices() and got.committed == want.committed
    g, w = np.asarray(got), np.asarray(want)
    if str(g.dtype) == "bfloat16":
        g, w = g.astype(np.float32), w.astype(np.float32)
    np.testing.assert_array_equal(g, w)
    if g.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


def _arrays():
    base = np.arange(60).reshape(3, 4, 5)
    out = [jnp.asarray(base.astype(t)) for t in (np.float32, np.int32, np.uint8, np.bool_,
                                                 np.complex64)]
    out.append(jnp.asarray((base - 30.5).astype(jnp.bfloat16)))
    out.append(jnp.broadcast_to(jnp.asarray(2.5), (3, 4, 5)) * jnp.asarray(base % 7 - 3.0,
                                                                            np.float32))
    out.append(jnp.broadcast_to(7, (3, 4, 5)))   # weak int32
    return out


def test_eager_basic_indexing_is_one_cached_jit_with_the_general_path_results():
    for x in _arrays():
        xn = np.asarray(x)
        for idx in _BASIC:
            hits = eager_indexing.STATS["hits"]
            got = x[idx]
            assert eager_indexing.STATS["hits"] == hits + 1, idx
            want = general_getitem(x, idx)
            _same_exactly(got, want)
            np.testing.assert_array_equal(np.asarray(got), xn[idx])
            _same_exactly(x[idx], want)   # (the cache hit)
    # 1-d, 0-d and empty arrays
    v = jnp.arange(5.0)
    for idx in (0, 4, -5, (None, 2), slice(1, None, 2), (_E, None)):
        _same_exactly(v[idx], general_getitem(v, idx))
    s = jnp.asarray(3.0)
    for idx in (None, (None, None), (_E, None)):
        _same_exactly(s[idx], general_getitem(s, idx))
        np.testing.assert_array_equal(s[idx], np.asarray(3.0)[idx])
    e = jnp.zeros((0, 3), np.int32)
    for idx in ((slice(None), 1), (slice(None), -3), (None, slice(None), 2)):
        _same_exactly(e[idx], general_getitem(e, idx))


def test_eager_index_ints_are_operands_one_program_for_all():
    x = jnp.arange(20.0).reshape(4, 5)
    x[0, :]
    n = len(eager_indexing._PLANS)
    for i in range(-4, 4):
        _same_exactly(x[i, :], general_getitem(x, (i, slice(None))))
        _same_exactly(x[:, i], general_getitem(x, (slice(None), i)))
    assert len(eager_indexing._PLANS) <= n + 1
    jitted = eager_indexing._PLANS[((eager_indexing._INT, (None, None, None)), x.aval)][0]
    assert jitted._cache_size() == 1   # (every i: one compiled program)


def test_eager_indexing_other_indices_take_the_general_path_unchanged():
    x = jnp.arange(24.0).reshape(2, 3, 4)
    xn = np.asarray(x)
    others = [True, (False,), np.array([0, 1]), jnp.asarray([1, 0]), (slice(None), [0, 2]),
              xn > 5, (0, jnp.asarray(1)), (slice(jnp.asarray(0), 2),), (np.bool_(True), 0)]
    for idx in others:
        hits = eager_indexing.STATS["hits"]
        got = x[idx]
        want = general_getitem(x, idx)
        _same_exactly(got, want)
        if not isinstance(idx, (jnp.ndarray,)) and not (
                isinstance(idx, tuple) and any(isinstance(i, mjax.Array) for i in idx)):
            np.testing.assert_array_equal(np.asarray(got),
                                          xn[idx if not isinstance(idx, tuple) else tuple(
                                              np.asarray(i) if isinstance(i, mjax.Array)
                                              else i for i in idx)])
        assert eager_indexing.STATS["hits"] == hits
    # Out-of-range ints: clamped as in JAX (the general path), an empty axis raises.
    jx = jjnp.arange(24.0).reshape(2, 3, 4)
    for idx in (5, -7, (0, 3), (slice(None), -4, 0), (1, 2, 99)):
        hits = eager_indexing.STATS["hits"]
        np.testing.assert_array_equal(np.asarray(x[idx]), np.asarray(jx[idx]))
        assert eager_indexing.STATS["hits"] == hits
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0"):
        jnp.zeros((0, 3))[0]
    with pytest.raises(IndexError, match="Too many indices"):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[_E, 0, _E]
    with pytest.raises(ValueError, match="step cannot be zero"):
        x[::0]
    with pytest.raises(TypeError):
        x[1.5]
    with pytest.raises(TypeError):
        x["a"]
    assert x[:] is general_getitem(x, slice(None)) or x[:].shape == x.shape
    assert x[...] is x and x[()] is x


def test_eager_index_updates_match_the_general_path_numpy_and_jax():
    forms = [1, -1, (slice(None), 2), (_E, -1), (0, slice(1, 3)), (None, 1, 2),
             (slice(None, None, -2), 0), np.int64(2)]
    for x in _arrays()[:2] + [jnp.asarray(np.arange(12).reshape(3, 4), np.int8)]:
        x = x.reshape(3, -1)[:, :4] if x.ndim == 3 else x
        xn = np.asarray(x)
        vals = [2, True, jnp.asarray(np.full((), 3, x.dtype))]
        if x.dtype.kind == "f":
            vals += [2.5, -0.0]
        for idx in forms:
            for v in vals:
                for kind in ("set", "add", "subtract", "multiply", "min", "max"):
                    if kind == "subtract" and v is True:
                        continue   # (-True: a TypeError, whichever path)
                    hits = eager_indexing.STATS["hits"]
                    got = getattr(x.at[idx], kind)(v)
                    assert eager_indexing.STATS["hits"] == hits + 1, (idx, v, kind)
                    want = getattr(_IndexUpdateRef(x, idx), kind)(v)
                    _same_exactly(got, want)
                    jwant = getattr(jjnp.asarray(xn).at[idx], kind)(
                        np.asarray(v) if isinstance(v, mjax.Array) else v)
                    np.testing.assert_array_equal(np.asarray(got), np.asarray(jwant))
    # An array of values broadcast over the selection; x.at[i].mul is multiply.
    x = jnp.arange(12.0).reshape(3, 4)
    _same_exactly(x.at[:, 1].set(jnp.asarray([7.0, 8.0, 9.0])),
                  _IndexUpdateRef(x, (slice(None), 1)).set(jnp.asarray([7.0, 8.0, 9.0])))
    _same_exactly(x.at[1].mul(3.0), _IndexUpdateRef(x, 1).multiply(3.0))
    # Weak x keeps its weak type.
    w = jnp.broadcast_to(jnp.asarray(1.5), (3,))
    _same_exactly(w.at[0].add(1.0), _IndexUpdateRef(w, 0).add(1.0))
    assert w.at[0].add(1.0).weak_type


def test_eager_index_updates_other_calls_take_the_general_path():
    x = jnp.arange(12.0).reshape(3, 4)
    xi = jnp.arange(6, dtype=np.int32)
    cases = [(lambda: x.at[1].set(np.float32(2)), None),          # NumPy value
             (lambda: x.at[1].set(jnp.ones(4, np.int32)), None),  # another dtype
             (lambda: xi.at[1].set(2.5), None),                   # float into ints
             (lambda: x.at[9].set(1.0), None),                    # out of range: dropped
             (lambda: x.at[1].set(1.0, mode="drop"), None),       # a keyword
             (lambda: x.at[jnp.asarray([0, 2])].add(1.0), None),  # an array index
             (lambda: jnp.zeros((0, 2)).at[0].set(1.0), None),    # empty x
             (lambda: jnp.asarray(jnp.float16(1)).at[()].add(1.0), None),
             (lambda: x.astype(jnp.float16).at[0].add(1.0), None)]  # 16-bit float add
    jx = jjnp.arange(12.0).reshape(3, 4)
    for fn, _ in cases:
        hits = eager_indexing.STATS["hits"]
        fn()
        assert eager_indexing.STATS["hits"] == hits
    np.testing.assert_array_equal(np.asarray(x.at[9].set(1.0)), np.asarray(jx.at[9].set(1.0)))
    np.testing.assert_array_equal(np.asarray(xi.at[1].set(2.5)),
                                  np.asarray(jjnp.arange(6, dtype=np.int32).at[1].set(2.5)))
    # Errors are the general path's (raised once the cached jit declines).
    with pytest.raises(ValueError) as ours:
        x.at[1].set(jnp.ones(3))
    with pytest.raises(ValueError) as theirs:
        _IndexUpdateRef(x, 1).set(jnp.ones(3))
    # (each names its own line: the user's)
    assert str(ours.value).split(" (at ")[0] == str(theirs.value).split(" (at ")[0]
    assert "test_eager_fast_paths.py" in str(ours.value)
    with pytest.raises(OverflowError):
        x.astype(np.int32).at[0].set(2 ** 40)


def test_eager_indexing_steps_aside_under_configs_traces_and_placement():
    x = jnp.asarray([[1.0, np.nan], [3.0, 4.0]])
    for name, value in (("jax_debug_nans", True), ("jax_disable_jit", True),
                        ("jax_transfer_guard", "disallow")):
        old = mjax.config.read(name if name != "jax_transfer_guard"
                               else "jax_transfer_guard_host_to_device")
        mjax.config.update(name, value)
        try:
            hits = eager_indexing.STATS["hits"]
            for fast, general in ((lambda: x[0], lambda: general_getitem(x, 0)),
                                  (lambda: x[:, 1], lambda: general_getitem(x, (slice(None), 1))),
                                  (lambda: x.at[1].set(0.0),
                                   lambda: _IndexUpdateRef(x, 1).set(0.0))):
                try:
                    want = general()
                except Exception as e:   # noqa: BLE001 (the same error, both ways)
                    with pytest.raises(type(e)):
                        fast()
                else:
                    _same_exactly(fast(), want)
            assert eager_indexing.STATS["hits"] == hits, name
        finally:
            mjax.config.update(name, old if name != "jax_transfer_guard" else None)
    with mjax.config.override(jax_debug_nans=True):
        with pytest.raises(FloatingPointError):
            x[0]
    with mjax.transfer_guard("disallow"):
        with pytest.raises(Exception, match="Disallowed host-to-device"):
            x[1]
    # Under a trace: staged as before.
    text = str(mjax.make_jaxpr(lambda v: v[:, 1])(x))
    assert "slice" in text and "jit" not in text
    # Committed arrays and other devices: the general path (JAX's placement rules).
    devs = mjax.devices()
    if len(devs) > 1:
        c = mjax.device_put(x, devs[1])
        for r in (c[0], c[:, 1], c.at[0].set(2.0)):
            assert r.devices() == {devs[1]} and r.committed
        with mjax.default_device(devs[2]):
            u = jnp.arange(6.0)
        _same_exactly(u[2], general_getitem(u, 2))
        _same_exactly(u.at[2].set(1.0), _IndexUpdateRef(u, 2).set(1.0))
        assert u[2].devices() == {devs[0]}   # (uncommitted: the default device, as JAX)


def test_eager_indexing_constants_stay_internal_and_clear_with_the_caches():
    x = jnp.arange(10.0)
    x[3], x.at[4].set(1.25)
    live = {id(a) for a in mjax.live_arrays()}
    for a in list(eager_indexing._INDEX_ARRAYS.values()) + list(
            eager_indexing._SCALARS.values()):
        assert id(a) not in live
    mjax.clear_caches()
    assert not eager_indexing._PLANS and not eager_indexing._INDEX_ARRAYS
    _same_exactly(x[3], general_getitem(x, 3))
    d = jnp.arange(4.0)
    d.delete()
    with pytest.raises(RuntimeError) as ours:
        d[1]
    with pytest.raises(RuntimeError) as theirs:
        general_getitem(d, 1)
    assert str(ours.value) == str(theirs.value)
