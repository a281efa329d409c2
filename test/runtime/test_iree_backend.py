"""The IREE backend: same results as XLA through jit, AD and vmap; 64-bit types kept;
CHLO ops; clear errors; selection by jit(backend=) and MJAX_BACKEND."""
from __future__ import annotations

import os
import subprocess
import sys

import iree.runtime  # noqa: F401  (the `iree` packages are test dependencies)
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax.runtime import get_backend
from mjax.runtime.iree import IreeBackend, IreeBuffer


def mlp(params, x):
    (w1, b1), (w2, b2) = params
    return jnp.tanh(x @ w1 + b1) @ w2 + b2


def loss(params, x, y):
    return jnp.mean((mlp(params, x) - y) ** 2)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    params = [(rng.normal(size=(5, 8)).astype(np.float32), np.zeros(8, np.float32)),
              (rng.normal(size=(8, 2)).astype(np.float32), np.zeros(2, np.float32))]
    x = rng.normal(size=(16, 5)).astype(np.float32)
    y = rng.normal(size=(16, 2)).astype(np.float32)
    return params, x, y


def test_backend_compiles_and_runs_stablehlo():
    be = get_backend("iree")
    assert isinstance(be, IreeBackend)
    exe = be.compile("""func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
      %0 = stablehlo.multiply %a, %b : tensor<3xf32>
      return %0 : tensor<3xf32>
    }""")
    (out,) = exe.run_numpy(np.arange(3, dtype=np.float32), np.full(3, 2, np.float32))
    np.testing.assert_array_equal(out, [0, 2, 4])


def test_jit_grad_vmap_match_xla(data):
    params, x, y = data
    for fn in (mlp, mjax.grad(loss), mjax.vmap(mjax.grad(loss), in_axes=(None, 0, 0))):
        args = (params, x) if fn is mlp else (params, x, y)
        on_iree = mjax.jit(fn, backend="iree")(*args)
        on_xla = mjax.jit(fn)(*args)
        for a, b in zip(mjax.tree_util.tree_leaves(on_iree), mjax.tree_util.tree_leaves(on_xla)):
            assert isinstance(a._buf, IreeBuffer)
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=2e-6)


def test_iree_results_feed_xla_and_back():
    f_iree = mjax.jit(lambda a: a * 2.0, backend="iree")
    a = f_iree(np.arange(4, dtype=np.float32))
    b = a + 1.0                              # an eager XLA op on an IREE buffer
    c = f_iree(b)                            # and an XLA buffer into IREE
    np.testing.assert_array_equal(np.asarray(c), (np.arange(4) * 2 + 1) * 2)


def test_64_bit_types_are_kept():
    with mjax.config.override(jax_enable_x64=True) if hasattr(mjax.config, "override") \
            else _x64():
        f = mjax.jit(lambda a, n: (a * 3.0, n * 2 ** 33), backend="iree")
        a, n = f(np.arange(3, dtype=np.float64), np.arange(3, dtype=np.int64))
        assert a.dtype == np.float64 and n.dtype == np.int64
        np.testing.assert_array_equal(np.asarray(n), np.arange(3) * 2 ** 33)


def _x64():
    import contextlib

    @contextlib.contextmanager
    def ctx():
        mjax.config.update("jax_enable_x64", True)
        try:
            yield
        finally:
            mjax.config.update("jax_enable_x64", False)
    return ctx()


def test_chlo_ops_compile():
    x = np.linspace(-0.9, 0.9, 7).astype(np.float32)
    out = mjax.jit(lambda v: jnp.arccos(v) + jnp.arcsinh(v), backend="iree")(x)
    np.testing.assert_allclose(np.asarray(out), np.arccos(x) + np.arcsinh(x), rtol=1e-5)


def test_float64_transcendentals_compile():
    # IREE leaves float64 sin/exp as libm calls, which its embedded ELF cannot link.
    with _x64():
        x = np.linspace(-2, 2, 5)
        out = mjax.jit(lambda v: jnp.exp(jnp.sin(v)), backend="iree")(x)
        assert out.dtype == np.float64
        np.testing.assert_allclose(np.asarray(out), np.exp(np.sin(x)), rtol=1e-14)


def test_stable_sort_keeps_equal_keys_in_order():
    # IREE's sort ignores is_stable; the backend rewrites stable sorts to break ties by
    # index, so argsort and unique's first indices equal NumPy's stable sort.
    x = np.random.default_rng(1).integers(0, 4, (5, 300)).astype(np.float32)
    for axis in (0, 1):
        got = mjax.jit(lambda v: jnp.argsort(v, axis=axis), backend="iree")(x)
        np.testing.assert_array_equal(np.asarray(got), np.argsort(x, axis, kind="stable"))
    keys, vals = mjax.jit(lambda k, v: mjax.lax.sort((k, v), num_keys=1, is_stable=True),
                          backend="iree")(np.array([1, 0, 1, 0]), np.arange(4.0))
    np.testing.assert_array_equal(np.asarray(vals), [1.0, 3.0, 0.0, 2.0])


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32])
def test_unsigned_reverse_and_padded_windows(dtype):
    # IREE fails to compile reverse and padded reduce_window on unsigned integers.
    x = np.array([250, 3, 7, 3, 255, 9, 1, 3]).astype(dtype)
    f = mjax.jit(lambda v: (v[::-1], jnp.cumsum(v), mjax.lax.cummax(v)), backend="iree")
    rev, csum, cmax = f(x)
    np.testing.assert_array_equal(np.asarray(rev), x[::-1])
    np.testing.assert_array_equal(np.asarray(csum), np.cumsum(x, dtype=csum.dtype))
    np.testing.assert_array_equal(np.asarray(cmax), np.maximum.accumulate(x))


def test_donated_input_is_deleted_and_not_clobbered():
    # IREE writes an aliased output into the donated input even when the program still
    # reads the input afterwards; the backend keeps donation as deletion only.
    f = mjax.jit(lambda w, s: (w * 2, s + 1), donate_argnums=1, backend="iree")
    w, s = jnp.ones(3), jnp.zeros(3)
    w2, s2 = f(w, s)
    assert s.is_deleted() and not w.is_deleted()
    np.testing.assert_array_equal(np.asarray(s2), np.ones(3))
    np.testing.assert_array_equal(np.asarray(w2), 2 * np.ones(3))


def test_float64_cbrt_and_folded_constants():
    # IREE has no float64 cbrt (rewritten), and its compile-time constant evaluation
    # cannot link libm calls such as sin of a constant (turned off when linking libm).
    with _x64():
        x = np.array([27.0, -8.0, 0.0, 2.0, 1e-300, 1e300, np.inf, -np.inf, np.nan])
        got = np.asarray(mjax.jit(jnp.cbrt, backend="iree")(x))
        np.testing.assert_allclose(got, np.cbrt(x), rtol=4e-16)
        assert got[0] == 3.0 and got[1] == -2.0
        f = mjax.jit(lambda v: v * jnp.sin(jnp.arange(3.0)) + jnp.cbrt(v), backend="iree")
        np.testing.assert_allclose(np.asarray(f(np.ones(3))), np.sin(np.arange(3.0)) + 1,
                                   rtol=1e-15)


def test_reshaped_result_does_not_alias_its_input():
    # IREE returns a reshape's result as a view of the argument; a later in-place
    # update (scatter) of that view must not change the original array.
    to_iree = mjax.jit(lambda v: v * 1, backend="iree")
    x = to_iree(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    flat = mjax.jit(lambda v: v.reshape(-1), backend="iree")(x)
    upd = mjax.jit(lambda v: v.at[np.arange(12)].set(-1.0), backend="iree")(flat)
    np.testing.assert_array_equal(np.asarray(x), np.arange(24).reshape(2, 3, 4))
    np.testing.assert_array_equal(np.asarray(flat), np.arange(24))
    assert (np.asarray(upd)[:12] == -1).all()


def test_out_of_range_scatter_indices_are_skipped():
    # StableHLO skips scatter updates at out-of-range indices; IREE wrote them out of
    # bounds (a later crash). The backend points them into padding it slices off.
    data = np.arange(24, dtype=np.float32).reshape(8, 3)
    ids = np.array([0, 2, 2, -1, 5, 1, 0, 9])
    got = mjax.jit(lambda d, i: mjax.ops.segment_sum(d, i, num_segments=6),
                   backend="iree")(data, ids)
    want = np.zeros((6, 3), np.float32)
    for i, row in zip(ids, data):
        if 0 <= i < 6:
            want[i] += row
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("mode", ["drop", "clip"])
def test_batched_scatters_with_out_of_range_indices(mode):
    # vmap of a scatter is a scatter with batching dimensions, which IREE rejected: the
    # backend turns the batch into iota index components. Out-of-range indices are still
    # dropped or clamped.
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 5, 3)).astype(np.float32)
    upd = rng.normal(size=(4, 2, 3)).astype(np.float32)
    ids = np.array([[1, 1], [0, 9], [4, 4], [-1, 3]])
    dn = mjax.lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                          scatter_dims_to_operand_dims=(0,))
    f = mjax.vmap(lambda a, i, u: mjax.lax.scatter_add(a, i[:, None], u, dn, mode=mode))
    got = np.asarray(mjax.jit(f, backend="iree")(x, ids, upd))
    want = x.copy()
    for b in range(4):
        for i, row in zip(ids[b], upd[b]):
            if mode == "clip" or 0 <= i < 5:
                want[b, min(max(i, 0), 4)] += row
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    nested = mjax.vmap(mjax.vmap(lambda a, i: a.at[i].set(-1.0)))
    rows, cols = np.zeros((2, 3, 6), np.float32), rng.integers(0, 6, size=(2, 3, 2))
    got = np.asarray(mjax.jit(nested, backend="iree")(rows, cols))
    np.testing.assert_array_equal(got, np.asarray(mjax.jit(nested)(rows, cols)))


def test_scatter_of_no_updates_leaves_the_operand():
    # IREE's compiler crashed on a scatter of zero updates (x.at[False].add(1)).
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    f = mjax.jit(lambda v, i, u: v.at[i].add(u), backend="iree")
    got = f(a, np.zeros((0,), np.int32), np.zeros((0, 3), np.float32))
    np.testing.assert_array_equal(np.asarray(got), a)
    on_iree = mjax.jit(lambda v: (v.at[False].add(1.0), v.at[True].set(7.0)), backend="iree")
    kept, set_all = on_iree(a)
    np.testing.assert_array_equal(np.asarray(kept), a)
    np.testing.assert_array_equal(np.asarray(set_all), np.full_like(a, 7.0))


def test_while_loop_passing_one_carry_on_as_another():
    # A fixed-point loop (x_prev, x -> x, f(x)): IREE's stream conversion failed on it.
    def newton_sqrt2(x_prev, x):
        def body(carry):
            _, x = carry
            return x, 0.5 * (x + 2.0 / x)     # (no other carry: 2.0 is a constant)
        return mjax.lax.while_loop(lambda c: jnp.abs(c[0] - c[1]) > 1e-6, body,
                                   (x_prev, x))    # (both carries are results)
    start = (np.float32(2.0), np.float32(1.5))
    on_iree = np.asarray(mjax.jit(newton_sqrt2, backend="iree")(*start))
    np.testing.assert_allclose(on_iree, np.asarray(mjax.jit(newton_sqrt2)(*start)), rtol=1e-6)
    np.testing.assert_allclose(on_iree, np.sqrt(2.0), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int8, np.uint32])
def test_float_to_int_conversion_saturates_as_xla(dtype):
    # XLA saturates (NaN -> 0, out of range -> min/max); IREE gave INT_MIN.
    x = np.float32([1.7, -1.7, 1e10, -1e10, np.nan, np.inf, -np.inf, 2.0 ** 31, 3e9])
    for v in (x, x.astype(np.float16)):
        f = lambda a: mjax.lax.convert_element_type(a, dtype)
        np.testing.assert_array_equal(np.asarray(mjax.jit(f, backend="iree")(v)),
                                      np.asarray(mjax.jit(f)(v)))


def test_reduction_of_a_constant_expression():
    # IREE summed f(splat) along the inner dimension to one element (-1, not -4): the
    # gradient of log_softmax was wrong. Constant reduce inputs go behind a barrier.
    f = lambda x: x.sum() + jnp.sum(-jnp.ones((4, 4)), axis=1) + jnp.exp(jnp.ones((4, 3))).sum(1)
    x = np.float32(0.5)
    np.testing.assert_allclose(np.asarray(mjax.jit(f, backend="iree")(x)),
                               0.5 - 4 + 3 * np.e, rtol=1e-6)
    X = np.random.default_rng(0).normal(size=(4, 4)).astype(np.float32)
    g = mjax.grad(lambda v: jnp.sum(mjax.nn.log_softmax(v)))
    np.testing.assert_allclose(np.asarray(mjax.jit(g, backend="iree")(X)),
                               np.asarray(mjax.jit(g)(X)), rtol=1e-5, atol=1e-6)


def test_scan_shifting_its_carry_runs_every_step():
    # (a, b) -> (a + b, a): a barrier at the start of the body made IREE run one step
    # short (13, 8 for 21, 13); the rewrite's barrier sits at the end of the body.
    def fib(x):
        (a, b), _ = mjax.lax.scan(lambda c, _: ((c[0] + c[1], c[0]), None),
                                  (x, x * 0 + 1.0), None, length=6)
        return a, b
    got = mjax.jit(fib, backend="iree")(np.float32(1.0))
    assert [float(v) for v in got] == [21.0, 13.0]


def test_two_loops_feeding_one_select_compile():
    # igamma (a series loop and a continued-fraction loop, selected between): IREE's
    # stream partitioning reported a circular dependency until loop results were
    # put behind a barrier.
    import scipy.special
    a = np.float32([[0.5, 1.0, 3.0], [2.0, 0.2, 7.0]])
    x = np.float32([[1.5, 0.3, 2.0], [4.0, 0.1, 5.0]])
    got = np.asarray(mjax.jit(mjax.lax.igamma, backend="iree")(a, x))
    np.testing.assert_allclose(got, np.asarray(mjax.jit(mjax.lax.igamma)(a, x)), rtol=1e-5)
    np.testing.assert_allclose(got, scipy.special.gammainc(a, x), rtol=1e-5)


def test_top_k_puts_the_lower_index_first_among_ties():
    x = np.array([[3, -5, -4, -3, -4, 3, 3, -5]], np.int32)
    values, idx = mjax.jit(lambda v: mjax.lax.top_k(v, 5), backend="iree")(x)
    np.testing.assert_array_equal(np.asarray(idx), [[0, 5, 6, 3, 2]])
    np.testing.assert_array_equal(np.asarray(values), [[3, 3, 3, -3, -4]])


def test_uncompilable_program_is_a_clear_error():
    a = np.eye(3, dtype=np.float32) * 2
    f = mjax.jit(lambda v: jnp.linalg.cholesky(v), backend="iree")
    with pytest.raises(RuntimeError, match=r"IREE could not compile.*stablehlo\.cholesky"
                                           r"` at .*test_iree_backend\.py:\d+: IREE does "
                                           r"not lower Cholesky.*XLA backend"):
        f(a)


def test_default_backend_from_environment():
    code = ("import numpy as np, mjax, mjax.numpy as jnp\n"
            "from mjax.runtime.iree import IreeBuffer\n"
            "x = jnp.arange(5.0) * 2\n"
            "y = mjax.jit(lambda a: a.sum())(x)\n"
            "assert isinstance(x._buf, IreeBuffer) and isinstance(y._buf, IreeBuffer)\n"
            "print(float(y), mjax.default_backend())\n")
    env = dict(os.environ, MJAX_BACKEND="iree")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["20.0", "iree"]


def test_config_option_selects_backend():
    f = mjax.jit(lambda a: a * 2)
    try:
        mjax.config.update("mjax_backend", "iree")
        y = f(np.ones(3, np.float32))
        assert isinstance(y._buf, IreeBuffer) and mjax.default_backend() == "iree"
    finally:
        mjax.config.update("mjax_backend", "xla")
    z = f(np.ones(3, np.float32))          # retraced for XLA: the option is in the key
    assert not isinstance(z._buf, IreeBuffer)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(z))


def test_device_put_to_an_iree_device_and_back():
    dev = mjax.devices("iree")[0]
    assert isinstance(dev, type(get_backend("iree").devices()[0]))
    x = jnp.arange(4.0)
    for value in (x, np.arange(4.0, dtype=np.float32)):
        y = mjax.device_put(value, dev)
        assert isinstance(y._buf, IreeBuffer) and y.devices() == {dev}
        assert y.dtype == np.float32
        np.testing.assert_array_equal(np.asarray(y), np.arange(4.0))
    assert mjax.device_put(y, dev) is y
    tree = mjax.device_put({"a": np.ones(3, np.int32)}, mjax.sharding.SingleDeviceSharding(dev))
    assert isinstance(tree["a"]._buf, IreeBuffer) and tree["a"].dtype == np.int32
    np.testing.assert_array_equal(mjax.jit(lambda a: a * 2, backend="iree")(y), [0, 2, 4, 6])
    cpu = mjax.devices("cpu")[0]
    back = mjax.device_put(y, cpu)
    assert not isinstance(back._buf, IreeBuffer) and back.devices() == {cpu}
    np.testing.assert_array_equal(np.asarray(back + 1), [1, 2, 3, 4])


def _at_offset(n, offset, align=64):
    """A float32 NumPy array whose data starts `offset` bytes past an `align` boundary."""
    raw = np.empty(n * 4 + 2 * align, np.uint8)
    start = (-raw.ctypes.data) % align + offset
    return raw[start:start + n * 4].view(np.float32)


def test_jit_placed_on_another_backends_device_compiles_there():
    """A jit placed on a device of a backend other than the default's (as the host CPU
    beside a TPU) compiles with that device's backend, for its platform, and moves its
    arguments there; the same jit's default placement stays the default backend's."""
    dev = get_backend("iree").devices()[0]
    x = np.arange(3.0, dtype=np.float32)
    f = mjax.jit(lambda v: v * 2, device=dev)
    out = f(x)
    assert out.devices() == {dev} and isinstance(out._buf, IreeBuffer)
    np.testing.assert_array_equal(np.asarray(out), x * 2)
    g = mjax.jit(lambda v: v + 1)
    with mjax.default_device(dev):
        assert g(x).devices() == {dev}
    assert g(x).devices() == {mjax.devices()[0]}
    with pytest.raises(NotImplementedError, match="IREE backend cannot call Python"):
        mjax.jit(lambda v: mjax.debug.callback(print, v), device=dev)(x)
    # computations follow arrays committed there (eager ops, jit, grad), as in JAX; with
    # arrays committed to another device, JAX's ValueError
    y = mjax.device_put(x, dev)
    for out in (y + 1, jnp.sin(y), mjax.jit(jnp.sum)(y),
                mjax.grad(lambda v: (v * v).sum())(y)):
        assert out.devices() == {dev} and isinstance(out._buf, IreeBuffer)
    np.testing.assert_allclose(np.asarray(mjax.grad(lambda v: (v * v).sum())(y)), 2 * x)
    with pytest.raises(ValueError, match="incompatible devices"):
        y + mjax.device_put(x, get_backend("cpu").devices()[0])


@pytest.mark.parametrize("offset", [0, 4, 16])
def test_dlpack_import_is_zero_copy_when_aligned_and_programs_read_it(offset):
    # IREE's kernels assume 64-byte aligned buffers: a program reading a less aligned
    # zero-copy import crashed the process. Those are copied (as XLA's client does).
    be = get_backend("iree")
    host = _at_offset(1000, offset)
    host[:] = np.arange(1000)
    buf = be.from_dlpack(host)
    assert (buf.unsafe_buffer_pointer() == host.ctypes.data) == (offset == 0)
    exe = be.compile("""func.func @main(%a: tensor<1000xf32>) -> tensor<1000xf32> {
      %0 = stablehlo.add %a, %a : tensor<1000xf32>
      return %0 : tensor<1000xf32>
    }""")
    (out,) = exe.execute([buf])
    np.testing.assert_array_equal(out.to_numpy(), np.arange(1000) * 2)


def test_interpreter_exit_is_clean_with_iree_objects_in_cycles():
    # Buffers, imports and pending results held by reference cycles at exit: the backend
    # releases them in order (atexit), no crash, nothing reported leaked.
    code = ("import numpy as np, mjax, mjax.numpy as jnp\n"
            "class Node: pass\n"
            "f = mjax.jit(lambda a: jnp.cumsum(a * 2))\n"
            "for i in range(8):\n"
            "    n = Node(); n.n = n; n.f = f\n"
            "    raw = np.empty(4096 + 64, np.uint8); h = raw[i * 4:i * 4 + 4096].view(np.float32)\n"
            "    h[:] = i; n.h = h; n.d = mjax.dlpack.from_dlpack(h)\n"
            "    n.y = f(n.d); n.g = mjax.grad(lambda a: jnp.sum(jnp.sin(a)))(n.y)\n"
            "last = f(jnp.ones(10 ** 6))\n"
            "print(float(n.y[-1]))\n")
    env = dict(os.environ, MJAX_BACKEND="iree")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == [str(float(7 * 2 * 1024))]
    assert "leaked" not in out.stderr, out.stderr[-3000:]


def test_unread_results_do_not_queue_executions_without_bound():
    # Dispatch is asynchronous; a loop that never reads its results queued every call
    # (10^5 calls: ~50,000 waiting executions, ~100 MB). At most _MAX_IN_FLIGHT wait now,
    # and a finished execution is not kept alive by the queue.
    import weakref

    from mjax.runtime.iree import _MAX_IN_FLIGHT
    f = mjax.jit(lambda a: a * 2.0 + 1.0, backend="iree")
    x = mjax.device_put(np.arange(256, dtype=np.float32), mjax.devices("iree")[0])
    f(x).block_until_ready()
    outs = []
    for _ in range(1000):
        outs.append(f(x))
        assert sum(not y._buf.is_ready() for y in outs[-2 * _MAX_IN_FLIGHT:]) \
            <= _MAX_IN_FLIGHT + 1
    want = np.arange(256, dtype=np.float32) * 2.0 + 1.0
    for y in outs[::97] + outs[-1:]:
        np.testing.assert_array_equal(np.asarray(y), want)
    future = weakref.ref(f(x)._buf._pending[0])     # result dropped unread
    f(x).block_until_ready()
    import gc
    gc.collect()
    assert future() is None
