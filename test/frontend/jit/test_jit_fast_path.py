"""The cached-call fast path of `jit` (Jitted.__call__'s memo of the last cache hit)
gives what the general path gives, and steps aside whenever something the memo does not
cover changes: config updates and context managers, tracing, argument structure, avals,
weak types, shardings, deleted arrays. Each call is repeated so that the later ones go
through the memo; results are checked against jax."""
import collections
import os

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax.jit import fast as jit_fast
from mjax.arrays.array import Array

from frontend_util import ON_TPU, python_calls

# (mjax's sources wherever its subpackages live: an editable install keeps dialect/,
# runtime/ and passes/ beside frontend/, a wheel under mjax/)
PKG = tuple(os.path.dirname(m.__file__) + os.sep
            for m in (mjax, mjax.dialect, mjax.runtime, mjax.passes))

Pair = collections.namedtuple("Pair", "a b")


def _same(out, expected):
    """Same pytree structure (container types included), dtypes and values."""
    leaves, tree = jax.tree_util.tree_flatten(out, is_leaf=lambda x: isinstance(x, Array))
    exp_leaves, exp_tree = jax.tree_util.tree_flatten(expected)
    assert str(tree) == str(exp_tree)
    if not isinstance(out, Array):
        assert type(out) is type(expected)
    for got, want in zip(leaves, exp_leaves):
        assert isinstance(got, Array)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.weak_type == want.weak_type
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def _to_jax(tree):
    def convert(x):
        if not isinstance(x, Array):
            return x
        if x.weak_type:     # (the tests' weak arrays are scalars: a Python number is weak)
            return jjnp.asarray(x.item())
        return jjnp.asarray(np.asarray(x))
    return jax.tree_util.tree_map(convert, tree, is_leaf=lambda x: isinstance(x, Array))


def _calls_like_jax(fun, *args, times=3):
    f, g = mjax.jit(fun), jax.jit(fun)
    expected = g(*_to_jax(args))
    for _ in range(times):
        _same(f(*args), expected)
    return f


def _fast_path_only(f):
    """Makes f's general path fail: what still works went through the memo."""
    def general(*a, **k):
        raise AssertionError("took the general path")
    f._call = general


x4 = jnp.arange(4, dtype=jnp.float32)
y4 = jnp.arange(4, 8).astype(jnp.float32)


@pytest.mark.parametrize("fun,args", [
    (lambda x: x + 1.0, (x4,)),
    (lambda x, y: (x * y, x - y, x + y), (x4, y4)),
    (lambda x, y: [x * y, (x, {"s": x + y})], (x4, y4)),
    (lambda d: {k: v * 2.0 for k, v in d.items()}, ({"b": x4, "a": y4},)),
    (lambda p: Pair(p.b, p.a * 3.0), (Pair(x4, y4),)),
    (lambda t: t[0][1] + t[1]["z"][0], (((x4, y4), {"z": [x4]}),)),
    (lambda x, n: x if n is None else x * 2.0, (x4, None)),
    (lambda x: None, (x4,)),
    (lambda x: (), (x4,)),
    (lambda x: (x, None), (x4,)),
    (lambda: jnp.ones(3) if False else 1.0, ()),
    (lambda x: x.sum(), (jnp.arange(3),)),
    (lambda x: x * 2, (jnp.asarray(1.5),)),                    # a weak-typed argument
])
def test_fast_path_results_match_jax(fun, args):
    f = _calls_like_jax(fun, *args)
    assert f._memo is not None
    _fast_path_only(f)
    f(*args)


def test_arguments_the_fast_path_does_not_take():
    # Python scalars, keyword arguments, an OrderedDict (a leaf to the fast path's
    # flattening) and unsortable dict keys: all through the general path (numpy arrays
    # take the fast path: test_numpy_arguments_through_the_memo).
    fun = lambda x, y: x * y
    f = mjax.jit(fun)
    for args in [(x4, np.ones(4, np.float32)), (x4, 2.0), (3, 4.5)]:
        for _ in range(2):
            _same(f(*args), jax.jit(fun)(*_to_jax(args)))
    for _ in range(2):
        _same(f(x4, y=y4), jax.jit(fun)(_to_jax(x4), y=_to_jax(y4)))
    od = collections.OrderedDict(b=x4, a=y4)
    g = mjax.jit(lambda d: d["a"] - d["b"])
    for _ in range(2):
        np.testing.assert_allclose(g(od), np.asarray(y4) - np.asarray(x4))
    h = mjax.jit(lambda d: d[1] + d["a"])
    for lib, h in ((jax, jax.jit(lambda d: d[1] + d["a"])), (mjax, h), (mjax, h)):
        with pytest.raises(ValueError, match="sorting"):     # as jax: unsortable keys
            h({1: x4, "a": y4})


def test_memo_follows_avals_structure_and_weak_types():
    f = mjax.jit(lambda x: x * 2)
    g = jax.jit(lambda x: x * 2)
    args = [x4, jnp.arange(3, dtype=jnp.int32), x4, jnp.asarray(1.5),
            jnp.asarray(1.5, jnp.float32), jnp.ones((2, 2)), x4]
    for a in args + args:
        _same(f(a), g(_to_jax(a)))
    total = lambda d: sum(d.values()) if isinstance(d, dict) else d[0] - d[1]
    h, k = mjax.jit(total), jax.jit(total)
    trees = [{"a": x4, "b": y4}, {"b": y4, "a": x4}, {"a": x4, "c": y4}, {"a": x4},
             {"a": x4, "b": y4}, [x4, y4], (x4, y4), {"a": x4, "b": y4}]
    for t in trees + trees:
        _same(h(t), k(_to_jax(t)))


def test_output_arrays_feed_the_next_call():
    f = mjax.jit(lambda x: x * 0.5 + 1.0)
    g = jax.jit(lambda x: x * 0.5 + 1.0)
    a, b = x4, _to_jax(x4)
    for _ in range(20):
        a, b = f(a), g(b)
    _same(a, b)


def test_config_update_and_context_managers_leave_the_memo():
    calls = []

    def fun(x):
        calls.append(1)
        return x / x
    f = mjax.jit(fun)
    f(x4), f(x4 + 1.0)
    traced = len(calls)
    f(x4 + 1.0)
    assert len(calls) == traced             # cached
    with mjax.disable_jit():
        f(x4 + 1.0)
    assert len(calls) == traced + 1         # ran as Python
    mjax.config.update("jax_disable_jit", True)
    try:
        f(x4 + 1.0)
        assert len(calls) == traced + 2
    finally:
        mjax.config.update("jax_disable_jit", False)
    f(x4 + 1.0)
    assert len(calls) == traced + 2         # cached again, no retrace
    with pytest.raises(FloatingPointError):
        with mjax.debug_nans(True):
            f(x4)                           # 0/0 at x[0]
    mjax.config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError):
            f(x4)
    finally:
        mjax.config.update("jax_debug_nans", False)
    assert np.isnan(np.asarray(f(x4))[0])


def test_numpy_arguments_through_the_memo():
    """NumPy arrays are put on the device by the fast path as by the general one: float64
    ones as float32 without x64, mixed with Arrays, in pytrees, with keyword and static
    arguments; the transfer guard still refuses them; object arrays stay an error."""
    fun = lambda x, y: x * y + 1       # noqa: E731
    f, g = mjax.jit(fun), jax.jit(fun)
    h64 = np.arange(4.0)
    for args in [(h64, h64), (x4, np.ones(4, np.float32)), (np.ones(4, np.int8), h64),
                 (h64, x4), (np.ones((2, 2), np.float32), np.float32(2.0))] * 2:
        _same(f(*args), g(*_to_jax(args)))
    d = {"a": np.ones(3, np.float32), "b": [np.arange(3), x4[:3]]}
    k = mjax.jit(lambda d, s: d["a"] * s + d["b"][0] - d["b"][1], static_argnums=1)
    kj = jax.jit(lambda d, s: d["a"] * s + d["b"][0] - d["b"][1], static_argnums=1)
    for _ in range(3):
        _same(k(d, 2.0), kj(_to_jax(d), 2.0))
        _same(f(x=h64, y=h64), g(x=h64, y=h64))
    want = g(*_to_jax((x4, x4)))     # (jaxlib's guard state is jax's too)
    with mjax.transfer_guard_host_to_device("disallow"):
        with pytest.raises(Exception, match="[Dd]isallowed"):
            f(h64, h64)
        got = f(x4, x4)
    _same(got, want)
    mjax.config.update("jax_transfer_guard_host_to_device", "disallow")
    try:
        with pytest.raises(Exception, match="[Dd]isallowed"):
            f(h64, h64)
    finally:
        mjax.config.update("jax_transfer_guard_host_to_device", "allow")
    with pytest.raises(TypeError):
        f(np.array(["a"], object), h64)


def test_python_scalar_arguments_through_the_memo():
    """Python scalars are traced arguments of the fast path (weakly typed, their device
    buffers reused per value): each call gets its own value, -0.0 and nan kept apart, a
    bool strongly typed, an int beyond int32 JAX's OverflowError; none of mjax's buffers
    shows in jax.live_arrays."""
    fun = lambda x, k: x * k       # noqa: E731
    f, g = mjax.jit(fun), jax.jit(fun)
    for k in [2, 3, 2, 3.5, -0.0, 0.0, float("nan"), True, False, 1j, 7] * 2:
        got, want = f(x4, k), g(_to_jax(x4), k)
        _same(got, want)
        if not isinstance(k, complex):
            np.testing.assert_array_equal(np.signbit(np.asarray(got)), np.signbit(want))
    with pytest.raises(OverflowError):
        f(x4, 2 ** 40)
    h = mjax.jit(lambda i, x: x[i] * 2)
    for i in range(4):
        _same(h(i, x4), jax.jit(lambda i, x: x[i] * 2)(i, _to_jax(x4)))
    scalar_bufs = {id(b) for b in jit_fast._SCALAR_BUFS.values()}
    assert scalar_bufs and not scalar_bufs & {id(a._buf) for a in mjax.live_arrays()}


def test_x64_update_retraces_through_the_memo():
    f = mjax.jit(lambda x: x + jnp.asarray(1.0))
    a = jnp.ones(3, jnp.float32)
    assert f(a).dtype == np.float32 and f(a).dtype == np.float32
    mjax.config.update("jax_enable_x64", True)
    try:
        b = jnp.ones(3)
        assert b.dtype == np.float64
        assert f(b).dtype == np.float64 and f(b).dtype == np.float64
        assert f(a).dtype == np.float32
    finally:
        mjax.config.update("jax_enable_x64", False)
    assert f(a).dtype == np.float32


def test_calls_inside_a_trace_stage_instead_of_running():
    f = mjax.jit(lambda x: jnp.sin(x) * 2.0)
    f(x4), f(x4)
    grad = mjax.grad(lambda x: f(x).sum())(x4)
    np.testing.assert_allclose(grad, 2.0 * np.cos(np.asarray(x4)), rtol=1e-6)
    assert "sin" in str(mjax.make_jaxpr(lambda x: f(x))(x4))
    batched = mjax.vmap(f)(jnp.ones((3, 4)))
    np.testing.assert_allclose(batched, 2.0 * np.sin(np.ones((3, 4))), rtol=1e-6)


def test_deleted_argument_raises_through_the_fast_path():
    # The fast path raises what the general path raises for the same call.
    errors = []
    for fast in (True, False):
        f = mjax.jit(lambda x: x + 1.0)
        a = jnp.ones(4)
        f(a), f(a)
        a.delete()
        with pytest.raises((RuntimeError, ValueError), match="deleted") as info:
            f(a) if fast else f._call((a,), {})
        errors.append((info.type, str(info.value)))
    assert errors[0] == errors[1]


def test_array_whose_sharding_was_read_still_runs():
    f = mjax.jit(lambda x: x + 1.0)
    a = jnp.ones(4)
    f(a), f(a)
    assert a.sharding is not None           # sets the array's sharding object
    np.testing.assert_allclose(f(a), np.full(4, 2.0))


def test_closure_constants_reach_the_fast_path():
    big = jnp.arange(1000, dtype=jnp.float32)
    f = mjax.jit(lambda x: (x[:1] + big).sum())
    for _ in range(3):
        np.testing.assert_allclose(f(x4 + 1.0), (np.arange(1000) + 1.0).sum())


def test_shardings_of_nones_alone_take_the_fast_path():
    # flax's nnx.jit passes out_shardings=(None, None): a prefix constraining nothing,
    # so its calls are ordinary ones, through the memo, and its results JAX's.
    f = mjax.jit(lambda x, y: (x * 2.0, y + 1.0), in_shardings=(None, None),
                 out_shardings=(None, None))
    g = jax.jit(lambda x, y: (x * 2.0, y + 1.0), in_shardings=(None, None),
                out_shardings=(None, None))
    a, b = (x4, x4 + 1.0), (_to_jax(x4), _to_jax(x4 + 1.0))
    for _ in range(3):
        a, b = f(*a), g(*b)
    _same(a, b)
    assert f._memo is not None
    assert python_calls(lambda: f(*a), lambda name: name.startswith(PKG)) in ([], ["__call__"])


def test_typeof_of_one_device_arrays_is_jaxs():
    x = jnp.ones((2, 3), jnp.float32)
    expected = jax.typeof(jjnp.ones((2, 3), jjnp.float32))
    for _ in range(2):       # (the second from the table of one-device types)
        t = mjax.typeof(x)
        assert (t.shape, t.dtype, t.weak_type, str(t)) == \
            (expected.shape, expected.dtype, expected.weak_type, str(expected))
        assert str(t.sharding.spec) == str(expected.sharding.spec)


def test_clear_cache_forgets_the_memo():
    calls = []
    f = mjax.jit(lambda x: (calls.append(1), x * 3.0)[1])
    f(x4), f(x4)
    f.clear_cache()
    assert f._memo is None
    np.testing.assert_allclose(f(x4), np.asarray(x4) * 3.0)
    assert len(calls) == 2


def test_alternating_avals_and_structures_hit_the_memo_table():
    f = mjax.jit(lambda t: jax.tree_util.tree_leaves(t)[0] * 2.0)
    a, b = jnp.ones(4), jnp.ones((2, 3))
    calls = [(a,), (b,), ({"k": a, "j": b},), ([b, a],)]
    for args in calls:
        f(*args)
    _fast_path_only(f)
    for _ in range(2):
        for args in calls:
            first = jax.tree_util.tree_leaves(args[0])[0]
            np.testing.assert_allclose(f(*args), np.asarray(first) * 2.0)


def test_eight_threads_churning_the_memo_get_their_own_results():
    # Four shapes and two argument structures from eight threads at once: the memo and
    # its table are replaced under the threads' feet; every result must be the thread's
    # own, each signature compiles once, and most calls take the fast path.
    import threading
    from mjax.runtime import get_backend
    f = mjax.jit(lambda t: jax.tree_util.tree_leaves(t)[0] * 2.0 + 1.0)
    inputs = [jnp.full((2 + i % 4,), float(i)) for i in range(8)]
    args = [(inputs[i],) if i < 4 else ({"k": inputs[i]},) for i in range(8)]
    general, lock = [0], threading.Lock()
    real_call = f._call

    def counting_call(a, k, *found):
        with lock:
            general[0] += 1
        return real_call(a, k, *found)
    f._call = counting_call
    compiles = get_backend().stats["compiles"]
    barrier, errors = threading.Barrier(8), []

    def worker(i):
        try:
            barrier.wait()
            want = np.asarray(inputs[i]) * 2.0 + 1.0
            for _ in range(300):
                np.testing.assert_allclose(f(*args[i]), want)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors[:3]
    assert f._cache_size() == 8                 # 4 shapes x 2 structures, traced once each
    # (the two structures of one shape lower to the same program: XLA may compile it once)
    assert get_backend().stats["compiles"] - compiles <= 8
    assert general[0] < 8 * 300 // 4, f"{general[0]} of 2400 calls took the general path"


def test_static_and_keyword_calls_through_the_keyed_table():
    def fun(x, n, scale=1.0, *, mode="add"):
        return x * n * scale if mode == "mul" else x + n + scale
    f = mjax.jit(fun, static_argnums=(1,), static_argnames=("mode",))
    g = jax.jit(fun, static_argnums=(1,), static_argnames=("mode",))
    calls = [((x4, 2), {}), ((x4, 3), {}), ((x4, 2), {"mode": "mul"}),
             ((x4, 2), {"scale": y4}), ((x4, 2, y4), {"mode": "mul"}),
             ((y4, 2), {"mode": "mul", "scale": x4}), ((jnp.ones(3), 2), {})]
    for _ in range(2):
        for a, k in calls:
            _same(f(*a, **k), g(*_to_jax(a), **_to_jax(k)))
    _fast_path_only(f)
    for a, k in calls:
        _same(f(*a, **k), g(*_to_jax(a), **_to_jax(k)))
    h = mjax.jit(lambda x, y: x - y)
    for _ in range(2):
        _same(h(x4, y=y4), jax.jit(lambda x, y: x - y)(_to_jax(x4), y=_to_jax(y4)))
        _same(h(x4, y4), jax.jit(lambda x, y: x - y)(_to_jax(x4), _to_jax(y4)))
        _same(h(y=x4, x=y4), jax.jit(lambda x, y: x - y)(y=_to_jax(x4), x=_to_jax(y4)))
    _fast_path_only(h)
    np.testing.assert_allclose(h(y=x4, x=y4), np.asarray(y4) - np.asarray(x4))


def test_keyed_calls_step_aside_like_the_memo():
    traces = []

    def fun(x, n):
        traces.append(n)
        return x / x * n
    f = mjax.jit(fun, static_argnums=1)
    f(x4 + 1.0, 2), f(x4 + 1.0, 2)
    assert traces == [2]
    with pytest.raises(ValueError, match="Non-hashable static"):
        f(x4, [2])
    with mjax.disable_jit():
        f(x4 + 1.0, 2)
    assert traces == [2, 2]
    with pytest.raises(FloatingPointError):
        with mjax.debug_nans(True):
            f(x4, 2)
    np.testing.assert_allclose(mjax.grad(lambda x: f(x, 3).sum())(x4 + 1.0), np.zeros(4),
                               atol=1e-6)
    f(x4 + 1.0, n=2)                              # by keyword: the same static value
    assert f(x4 + 1.0, 5)[0] == 5.0 and traces[-1] == 5


@pytest.fixture
def layouts_in_use():
    """Sets the flag list the Python and C fast paths both read (whether some array of the
    process has had another layout), restoring it afterwards."""
    flag, old = jit_fast.LAYOUTS_IN_USE, jit_fast.LAYOUTS_IN_USE[0]

    def set_to(value):
        flag[0] = value
    yield set_to
    flag[0] = old


def test_committed_arguments_take_the_fast_path_and_commit_results(layouts_in_use):
    """A cached call with arguments committed to one device (device_put) takes the fast
    path and, as the general path and JAX, runs there and commits its results; calls on
    uncommitted arrays, on another device or mixing devices keep their own behaviour."""
    # (as in a process where no array has had another layout: test_layout's make the
    # fast path leave committed arrays to the general path, which relays them out)
    layouts_in_use(False)
    devs = mjax.devices()
    f = mjax.jit(lambda a, b: (a + b, {"twice": a * 2}))
    x0 = mjax.device_put(jnp.arange(4.0), devs[0])
    u = jnp.ones(4)
    for _ in range(3):        # (the first call fills the cache, the next take the memo)
        out, tree = f(x0, u)
        for r in (out, tree["twice"]):
            assert r.committed and r.sharding == x0.sharding and r.devices() == {devs[0]}
        np.testing.assert_array_equal(out, np.arange(4.0) + 1)
        plain = f(u, u)[0]
        assert not plain.committed and float(plain[0]) == 2.0
    assert f._memo is not None and any(e.commit is not None for e in f._memo.table.values())
    # an uncommitted array whose sharding was read stays uncommitted, results too (and
    # takes the fast path, keyed by its aval)
    u.sharding
    for _ in range(2):
        assert not f(u, u)[0].committed
    assert "_call" not in python_calls(lambda: f(u, u), lambda fn: fn.endswith("jitted.py"))
    # a loop feeding results back stays committed, with the one sharding object
    g = mjax.jit(lambda a: a + 1)
    z = x0
    for _ in range(5):
        z = g(z)
    assert z.committed and z._sharding is x0._sharding and float(z[0]) == 5.0
    if jit_fast.C_FASTPATH is not None:     # (the C fast path serves them: no Python runs)
        assert python_calls(lambda: g(z), lambda fn: fn.startswith(PKG)) == []
        v = jnp.ones(4)   # (u's sharding was read: the C path asks host_key about it)
        f(x0, v)      # (the memo is the last call's: the C path compares with it alone)
        assert python_calls(lambda: f(x0, v), lambda fn: fn.startswith(PKG)) == []
        assert python_calls(lambda: f(x0, u), lambda fn: fn.startswith(PKG)) == ["host_key"]
        r = g(z)
        assert r.committed and r._sharding is x0._sharding and float(r[0]) == 6.0
    # once some array has had another layout, committed calls take the general path
    layouts_in_use(True)
    assert "_call" in python_calls(lambda: g(z), lambda fn: fn.endswith("jitted.py"))
    layouts_in_use(False)
    if len(devs) > 1:
        x1 = mjax.device_put(jnp.arange(4.0), devs[1])
        for _ in range(2):
            r = g(x1)
            assert r.committed and r.devices() == {devs[1]}
            np.testing.assert_array_equal(r, np.arange(4.0) + 1)
        # committed to another device than the first: the entry compiled for it, from
        # the fast path (its captured constants moved there once)
        assert "_call" not in python_calls(lambda: g(x1), lambda fn: fn.endswith("jitted.py"))
        c = np.arange(4.0, dtype=np.float32) * 10
        h = mjax.jit(lambda a: a + c)
        for _ in range(3):
            r = h(x1)
            assert r.committed and r.devices() == {devs[1]}
            np.testing.assert_array_equal(r, np.arange(4.0) * 11)
        assert "_call" not in python_calls(lambda: h(x1), lambda fn: fn.endswith("jitted.py"))
        r = h(x0)      # (and the first device's entry next to it)
        assert r.devices() == {devs[0]} and float(r[1]) == 11.0
        with pytest.raises(ValueError, match="incompatible devices"):
            f(x0, x1)


def _general(f, *args):
    """What f's general path gives for args (the fast path bypassed)."""
    return f._call(args, {})


def _same_arrays(fast, general):
    for a, b in zip(mjax.tree_util.tree_leaves(fast), mjax.tree_util.tree_leaves(general)):
        assert a.sharding == b.sharding and a.committed == b.committed
        assert a.aval == b.aval
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_calls_of_sharded_arrays_take_the_fast_path(layouts_in_use):
    """A cached call whose arguments are laid out over a mesh already (NamedSharding
    arrays, or arrays on the one device of a one-device mesh context) runs the program
    over the mesh from the fast path, with the general path's result shardings; calls
    whose arguments need laying out, keyword calls and deleted arrays keep the general
    path's behaviour."""
    layouts_in_use(False)
    devs = mjax.devices()
    if ON_TPU and len(devs) < 4:
        pytest.skip("TPU: a mesh of 4 devices (the TPU machine has one chip)")
    assert len(devs) >= 4
    mesh = mjax.make_mesh((4,), ("x",), devices=devs[:4])
    rows = mjax.sharding.NamedSharding(mesh, mjax.sharding.PartitionSpec("x"))
    xs = mjax.device_put(jnp.arange(8.0), rows)
    ys = mjax.device_put(jnp.ones(8), rows)
    f = mjax.jit(lambda a, b: {"sum": a + b, "total": (a * b).sum(), "a": a})
    for _ in range(3):
        out = f(xs, ys)
    assert "_call" not in python_calls(lambda: f(xs, ys), lambda fn: fn.endswith("jitted.py"))
    _same_arrays(f(xs, ys), _general(f, xs, ys))
    assert f(xs, ys)["sum"].sharding == rows
    if jit_fast.C_FASTPATH is not None:
        assert python_calls(lambda: f(xs, ys), lambda fn: fn.startswith(PKG)) == []
    # a loop feeding results back stays on the fast path and the mesh
    g = mjax.jit(lambda a: a * 2 + 1)
    z = xs
    for _ in range(4):
        z = g(z)
    np.testing.assert_array_equal(z, ((((np.arange(8.0) * 2 + 1) * 2 + 1) * 2 + 1) * 2 + 1))
    assert z.sharding == rows and z.committed
    # an uncommitted argument next to sharded ones is laid out by the general path
    u = jnp.ones(8)
    for _ in range(2):
        _same_arrays(f(xs, u), _general(f, xs, u))
    assert "_call" in python_calls(lambda: f(xs, u), lambda fn: fn.endswith("jitted.py"))
    # keyword calls: the general path
    for _ in range(2):
        _same_arrays(f(a=xs, b=ys), _general(f, xs, ys))
    # a deleted sharded array: JAX's error, after the fast path declined it
    d = mjax.device_put(jnp.arange(8.0), rows)
    f(d, ys)
    d.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        f(d, ys)
    # donation of a sharded array through the fast path
    h = mjax.jit(lambda a: a + 1, donate_argnums=0)
    w = mjax.device_put(jnp.zeros(8), rows)
    for i in range(4):
        old, w = w, h(w)
        assert old.is_deleted()
    np.testing.assert_array_equal(w, np.full(8, 4.0))
    assert w.sharding == rows


def test_calls_under_a_mesh_context_take_the_fast_path(layouts_in_use):
    """Under set_mesh, a cached call of arrays laid out for it takes the fast path with
    the general path's result shardings; leaving the context or entering another mesh
    changes the epoch (the program of that mesh runs)."""
    layouts_in_use(False)
    devs = mjax.devices()
    one = mjax.make_mesh((1,), ("x",), devices=devs[:1])
    two = mjax.make_mesh((2,), ("x",), devices=devs[:2])
    f = mjax.jit(lambda a: a * 3)
    x = jnp.arange(4.0)
    for mesh in (one, two, one):
        with mjax.set_mesh(mesh):
            for _ in range(3):
                r = f(x)
            _same_arrays(r, _general(f, x))
            assert set(r.devices()) == set(mesh.devices.flat)
            np.testing.assert_array_equal(r, np.arange(4.0) * 3)
            if mesh is one:     # (x is laid out for a one-device mesh: the fast path)
                assert "_call" not in python_calls(lambda: f(x),
                                                   lambda fn: fn.endswith("jitted.py"))
        plain = f(x)
        assert not plain.committed and plain.devices() == {devs[0]}
