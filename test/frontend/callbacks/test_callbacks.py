"""pure_callback and experimental.io_callback against jax: jit/eager/vmap/scan/cond,
effects and their order, dead-code removal, errors raised in callbacks, result checks,
autodiff errors."""
import numpy as np
import pytest

import jax
import jax.numpy as jjnp
from jax.experimental import io_callback as jax_io_callback
import mjax
import mjax.numpy as jnp
from mjax.experimental import io_callback
from frontend_util import ON_TPU

LIBS = {"mjax": (mjax, jnp, io_callback), "jax": (jax, jjnp, jax_io_callback)}


def both(program):
    """program(lib, np_module, io_callback) for mjax and jax."""
    return [program(*LIBS[name]) for name in ("mjax", "jax")]


def _identity(v):
    return np.asarray(v)


# (one jitted program per library, compiled once: see _no_failed_run_left_behind)
_SETTLE = {name: lib.jit(lambda x, lib=lib: lib.pure_callback(
    _identity, lib.ShapeDtypeStruct((), np.float32), x)) for name, (lib, _, _) in LIBS.items()}


@pytest.fixture(autouse=True)
def _no_failed_run_left_behind():
    """After each test a callback program that succeeds runs in both libraries, then
    effects_barrier. On a TPU the callbacks run beside the program, and the runtime token
    of a device's last such run is kept for effects_barrier until a later run on the
    device replaces it or a barrier waits on it (JAX's dispatch.runtime_tokens, mjax's
    runtime/host_effects). A test that checks a callback's error, raised when the result
    is read, leaves a failed token, and the next test's effects_barrier would raise that
    error again (test_result_checks_match_jax, then
    test_unused_pure_callback_is_removed_effectful_ones_are_not), in jax as in mjax.
    mjax's barrier raises such an error once; jax keeps the failed token (its barrier
    raises before it clears its set), so here it is dropped by hand."""
    yield
    for name, (lib, np_, _) in LIBS.items():
        _SETTLE[name](np_.float32(0)).block_until_ready()
        try:
            lib.effects_barrier()
        except RuntimeError:
            if lib is not jax:
                raise
            from jax._src import dispatch
            dispatch.runtime_tokens.clear()


def assert_trees_close(got, want):
    gl, gt = jax.tree_util.tree_flatten(jax.tree_util.tree_map(np.asarray, got))
    wl, wt = jax.tree_util.tree_flatten(jax.tree_util.tree_map(np.asarray, want))
    assert gt == wt
    for g, w in zip(gl, wl):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6)


def _np_sin(x):
    return np.sin(np.asarray(x))


# ---- pure_callback ------------------------------------------------------------------------
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_pure_callback_values(jit):
    def program(lib, np_, _):
        def f(x):
            sd = lib.ShapeDtypeStruct(x.shape, x.dtype)
            return lib.pure_callback(_np_sin, sd, x) * 2
        f = lib.jit(f) if jit else f
        return f(np_.arange(4.0))
    got, want = both(program)
    assert isinstance(got, mjax.Array)
    assert_trees_close(got, want)
    np.testing.assert_allclose(np.asarray(got), 2 * np.sin(np.arange(4.0)), rtol=1e-6)


def test_pure_callback_pytrees_and_kwargs():
    def host(a, pair, scale=1.0):
        a, (b, c) = np.asarray(a), pair
        return {"sum": a + np.asarray(b), "prod": (a * np.asarray(c) * scale).astype(np.int32)}

    def program(lib, np_, _):
        def f(x, y):
            shapes = {"sum": lib.ShapeDtypeStruct((3,), np.float32),
                      "prod": lib.ShapeDtypeStruct((3,), np.int32)}
            return lib.pure_callback(host, shapes, x, (y, x), scale=np_.float32(2))
        return lib.jit(f)(np_.arange(3.0), np_.ones(3))
    got, want = both(program)
    assert_trees_close(got, want)


def test_pure_callback_python_scalar_result_is_canonicalized():
    got, want = both(lambda lib, np_, _: lib.jit(lambda x: lib.pure_callback(
        lambda x: 1.0, lib.ShapeDtypeStruct((), np.float32), x))(np_.ones(2)))
    assert_trees_close(got, want)


def test_pure_callback_gets_arrays():
    seen = []
    # (read once the result is ready: on a TPU the callback runs beside the program)
    mjax.jit(lambda x: mjax.pure_callback(lambda v: (seen.append(type(v)), v)[1],
                                          mjax.ShapeDtypeStruct((2,), np.float32), x))(
        jnp.ones(2)).block_until_ready()
    assert seen == [mjax.arrays.array.Array]   # (concrete arrays; mjax.Array is the abstract class)


@pytest.mark.parametrize("vmap_method", ["sequential", "sequential_unrolled", "expand_dims",
                                         "broadcast_all", "legacy_vectorized"])
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_pure_callback_vmap_methods(vmap_method, jit):
    def program(lib, np_, _):
        shapes = []

        def host(x, y):
            shapes.append((np.shape(x), np.shape(y)))
            return np.asarray(x) * 10 + np.asarray(y)

        def f(x, y):
            return lib.pure_callback(host, lib.ShapeDtypeStruct(x.shape, x.dtype), x, y,
                                     vmap_method=vmap_method)
        g = lib.vmap(f, in_axes=(1, None))
        g = lib.jit(g) if jit else g
        out = g(np_.arange(6.0).reshape(2, 3), np_.array([1.0, -1.0], np.float32))
        return out, shapes
    (got, got_shapes), (want, want_shapes) = both(program)
    assert_trees_close(got, want)
    assert got_shapes == want_shapes


def test_pure_callback_vmap_without_method_matches_jax():
    def program(lib, np_, _):
        return lib.vmap(lambda x: lib.pure_callback(
            _np_sin, lib.ShapeDtypeStruct((), np.float32), x))(np_.arange(3.0))
    for name in ("jax", "mjax"):
        with pytest.raises(NotImplementedError) as e:
            program(*LIBS[name])
        if name == "jax":
            want = str(e.value)
    assert str(e.value) == want


def test_pure_callback_bad_vmap_method_matches_jax():
    msgs = []
    for lib in (jax, mjax):
        with pytest.raises(ValueError) as e:
            lib.pure_callback(_np_sin, lib.ShapeDtypeStruct((), np.float32), 1.0,
                              vmap_method="parallel")
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_pure_callback_64bit_result_without_x64_matches_jax():
    msgs = []
    for lib in (jax, mjax):
        with pytest.raises(ValueError) as e:
            lib.pure_callback(_np_sin, lib.ShapeDtypeStruct((), np.float64), 1.0)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_unused_pure_callback_is_removed_effectful_ones_are_not():
    def program(lib, np_, io_cb):
        calls = []

        def host(x):
            calls.append(1)
            return np.asarray(x)
        sd = lib.ShapeDtypeStruct((), np.float32)
        lib.jit(lambda x: (lib.pure_callback(host, sd, x), x)[1])(np_.float32(1))
        lib.effects_barrier()
        pure_calls = len(calls)
        lib.jit(lambda x: (io_cb(host, sd, x), x)[1])(np_.float32(1))
        lib.jit(lambda x: (io_cb(host, sd, x, ordered=True), x)[1])(np_.float32(1))
        lib.effects_barrier()   # (on a TPU callbacks run beside the program, as in JAX)
        return pure_calls, len(calls)
    got, want = both(program)
    assert got == want == (0, 2)


def test_pure_callback_without_results_is_dropped():
    def program(lib, np_, _):
        calls = []
        lib.pure_callback(lambda x: calls.append(1), (), np_.float32(1))
        lib.jit(lambda x: (lib.pure_callback(lambda v: calls.append(2), (), x), x)[1])(
            np_.float32(1))
        return calls
    got, want = both(program)
    assert got == want == []


# ---- io_callback --------------------------------------------------------------------------
def test_io_callback_ordered_keeps_program_order():
    def program(lib, np_, io_cb):
        log = []

        def rec(tag):
            def host(x):
                log.append((tag, float(np.asarray(x))))
                return np.asarray(x)
            return host
        sd = lib.ShapeDtypeStruct((), np.float32)

        @lib.jit
        def f(x):
            a = io_cb(rec("a"), sd, x, ordered=True)
            b = io_cb(rec("b"), sd, x * 2, ordered=True)  # independent of a
            lib.debug.print("between", ordered=True)
            c = io_cb(rec("c"), sd, b + a, ordered=True)
            return c
        out = f(np_.float32(1))
        return out, log
    (got, got_log), (want, want_log) = both(program)
    assert_trees_close(got, want)
    assert got_log == want_log == [("a", 1.0), ("b", 2.0), ("c", 3.0)]


def test_ordered_effects_keep_order_through_control_flow():
    def program(lib, np_, io_cb):
        log = []

        def rec(tag):
            def host(x):
                log.append(tag)
                return np.asarray(x)
            return host
        sd = lib.ShapeDtypeStruct((), np.float32)

        @lib.jit
        def f(x, xs):
            io_cb(rec("before"), sd, x, ordered=True)

            def body(c, v):
                io_cb(rec("loop"), sd, v, ordered=True)
                return c, v
            lib.lax.scan(body, x, xs)
            lib.lax.cond(x > 0, lambda v: io_cb(rec("branch"), sd, v, ordered=True),
                         lambda v: v, x)
            lib.lax.fori_loop(0, 2, lambda i, c: (lib.debug.print("fori {}", i,
                                                                  ordered=True), c)[1], x)
            io_cb(rec("after"), sd, x * 3, ordered=True)
            return x
        f(np_.float32(1), np_.arange(3.0))
        lib.effects_barrier()       # (on a TPU the callbacks run beside the program)
        return log
    got, want = both(program)
    assert got == want == ["before", "loop", "loop", "loop", "branch", "after"]


def test_io_callback_vmap_loops_and_ordered_vmap_errors():
    def program(lib, np_, io_cb):
        log = []

        def host(x):
            log.append(np.asarray(x).tolist())
            return np.asarray(x) + 1
        sd = lib.ShapeDtypeStruct((2,), np.float32)
        out = lib.vmap(lambda x: io_cb(host, sd, x))(np_.arange(6.0).reshape(3, 2))
        with pytest.raises(ValueError) as e:
            lib.vmap(lambda x: io_cb(host, sd, x, ordered=True))(np_.ones((3, 2)))
        return out, log, str(e.value)
    got, want = both(program)
    assert_trees_close(got[0], want[0])
    assert got[1:] == want[1:]


def test_callbacks_in_scan_and_cond():
    def program(lib, np_, io_cb):
        log = []
        sd = lib.ShapeDtypeStruct((), np.float32)

        def body(c, x):
            y = lib.pure_callback(lambda v: np.asarray(v) * 10, sd, x)
            z = io_cb(lambda v: (log.append(float(np.asarray(v))), np.asarray(v) + 1)[1],
                      sd, x, ordered=True)
            return c + y, z

        def f(xs, p):
            c, zs = lib.lax.scan(body, np_.float32(0), xs)
            w = lib.lax.cond(p, lambda v: lib.pure_callback(lambda u: np.asarray(u) - 1,
                                                            sd, v),
                             lambda v: v, c)
            return c, zs, w
        outs = [lib.jit(f)(np_.arange(3.0), p) for p in (True, False)]
        return outs, log
    (got, got_log), (want, want_log) = both(program)
    assert_trees_close(got, want)
    assert got_log == want_log


# ---- errors -------------------------------------------------------------------------------
def _boom(x):
    raise ValueError("boom from the host")


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("kind", ["pure", "io"])
def test_exception_in_callback_reaches_caller(jit, kind):
    def f(x):
        sd = mjax.ShapeDtypeStruct((), np.float32)
        if kind == "pure":
            return mjax.pure_callback(_boom, sd, x)
        return io_callback(_boom, sd, x)
    f = mjax.jit(f) if jit else f
    with pytest.raises(RuntimeError, match="boom from the host") as e:
        f(1.0)
    assert type(e.value) is jax.errors.JaxRuntimeError   # jaxlib's class, as JAX raises
    assert "ValueError" in str(e.value)


@pytest.mark.parametrize("J", [mjax, jax], ids=["mjax", "jax"])
def test_exception_in_callback_is_logged_as_jax_logs_it(J, caplog):
    """JAX's logger and message (equinox filters exactly these records)."""
    import logging
    with caplog.at_level(logging.ERROR, logger="jax._src.callback"):
        with pytest.raises(RuntimeError):
            J.jit(lambda x: J.pure_callback(
                _boom, J.ShapeDtypeStruct((), np.float32), x))(1.0).block_until_ready()
    (record,) = [r for r in caplog.records if r.name == "jax._src.callback"]
    assert record.getMessage() == "jax.pure_callback failed"
    assert "boom from the host" in caplog.text


@pytest.mark.parametrize("host, declared", [
    (lambda x: np.ones(4, np.float32), ((3,), np.float32)),
    (lambda x: np.ones(3, np.int32), ((3,), np.float32)),
    (lambda x: (np.ones(3, np.float32), np.ones(3, np.float32)), ((3,), np.float32)),
], ids=["shape", "dtype", "count"])
def test_result_checks_match_jax(host, declared):
    lines = []
    for lib, np_ in ((jax, jjnp), (mjax, jnp)):
        sd = lib.ShapeDtypeStruct(*declared)
        try:
            lib.jit(lambda x: lib.pure_callback(host, sd, x))(np_.ones(3)).block_until_ready()
            lib.effects_barrier()
            lines.append("(nothing raised)")
        except RuntimeError as e:
            lines.append(str(e).strip().splitlines()[-1])
    assert lines[0] == lines[1]
    # On the CPU the call raises JAX's RuntimeError. On a TPU the callback runs beside
    # the program (host transfers), and what the caller sees is what jax shows on the
    # same chip (compared above).
    if not ON_TPU:
        assert lines[1].startswith("RuntimeError: ")


def test_grad_errors_match_jax():
    def program(lib, np_, io_cb):
        sd = lib.ShapeDtypeStruct((), np.float32)
        msgs = []
        for f in (lambda x: lib.pure_callback(lambda v: v, sd, x),
                  lambda x: io_cb(lambda v: v, sd, x)):
            with pytest.raises(ValueError) as e:
                lib.grad(f)(1.0)
            msgs.append(str(e.value))
        return msgs
    got, want = both(program)
    assert got == want


def test_grad_through_custom_jvp_around_pure_callback():
    def program(lib, np_, _):
        @lib.custom_jvp
        def sin(x):
            return lib.pure_callback(_np_sin, lib.ShapeDtypeStruct(x.shape, x.dtype), x,
                                     vmap_method="expand_dims")

        @sin.defjvp
        def _(primals, tangents):
            (x,), (t,) = primals, tangents
            return sin(x), np_.cos(x) * t
        return (lib.grad(sin)(np_.float32(1)), lib.jit(lib.vmap(lib.grad(sin)))(np_.arange(3.0)))
    got, want = both(program)
    assert_trees_close(got, want)
    np.testing.assert_allclose(np.asarray(got[1]), np.cos(np.arange(3.0)), rtol=1e-6)


# ---- IR and backends ---------------------------------------------------------------------
def test_ir_shows_callback_op_and_effect():
    def f(x):
        y = mjax.pure_callback(_np_sin, mjax.ShapeDtypeStruct((), np.float32), x)
        return io_callback(_np_sin, mjax.ShapeDtypeStruct((), np.float32), y, ordered=True)
    text = mjax.jit(f).trace(1.0).as_text()
    assert text.count('"jaxpr.callback"') == 2
    assert 'effect = "pure"' in text and 'effect = "ordered"' in text
    hlo = mjax.jit(f).lower(1.0).as_text()
    assert hlo.count("@xla_ffi_python_cpu_callback") == 2
    assert "stablehlo.create_token" in hlo
    np.testing.assert_allclose(np.asarray(mjax.jit(f).lower(1.0).compile()(1.0)),
                               np.sin(np.sin(np.float32(1))), rtol=1e-6)


def test_same_callable_keeps_its_id_across_traces():
    def f(x):
        return mjax.pure_callback(_np_sin, mjax.ShapeDtypeStruct((), np.float32), x)
    assert mjax.jit(f).trace(1.0).as_text() == mjax.jit(f).trace(1.0).as_text()


def test_iree_backend_refuses_host_callbacks():
    from mjax.runtime.iree import IreeBackend
    with pytest.raises(NotImplementedError, match="host callbacks"):
        IreeBackend.compile(object(), "module {}", host_callbacks=[lambda: ()])


def test_programs_with_callbacks_bypass_the_persistent_cache(tmp_path, monkeypatch):
    from mjax.runtime import compilation_cache as cc
    monkeypatch.setattr(cc.settings, "directory", str(tmp_path))
    monkeypatch.setattr(cc.settings, "min_compile_time_secs", 0.0)
    seen = []

    def f(x):
        mjax.debug.callback(lambda v: seen.append(float(np.asarray(v))), x)
        return mjax.pure_callback(lambda v: np.asarray(v) + 1,
                                  mjax.ShapeDtypeStruct((), np.float32), x)
    for _ in range(2):       # a second compile must not load a callback-less executable
        assert float(mjax.jit(f)(jnp.float32(2))) == 3.0
    assert seen == [2.0, 2.0]
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".mjaxexe"]


@pytest.mark.parametrize("J", [mjax, jax], ids=["mjax", "jax"])
def test_grad_runs_debug_callbacks_in_loops_once(J):
    """A loop no tangent reaches is copied whole into reverse mode's forward part: the
    debug callbacks in it must not run a second time beside the primal run."""
    seen = []

    def f(p):
        J.debug.callback(lambda: seen.append("init"))

        def body(c, i):
            J.debug.callback(lambda i: seen.append(int(i)), i)
            return c + 1, None
        c, _ = J.lax.scan(body, 0, J.numpy.arange(3))
        return p * p
    for g in (J.grad(f), J.jit(J.grad(f)), J.value_and_grad(f)):
        seen.clear()
        g(np.float32(1.0))
        J.effects_barrier()
        assert sorted(seen, key=str) == [0, 1, 2, "init"]


def _io_callbacks_under_grad(lib, jnp_, io_cb):
    """The calls the host sees for grad and jit(grad) of functions whose io_callbacks
    (with results) do not depend on the differentiated input."""
    calls = []

    def value(tag):
        def cb():
            calls.append(tag)
            return np.int32(1)
        return io_cb(cb, lib.ShapeDtypeStruct((), jnp_.int32))

    def plain(x):             # the callback's result reaches the output
        return x * value("plain").astype(jnp_.float32) * 2.

    def progress(x):          # a meter: an init callback, a loop, a closing print
        idx = value("init")
        s, _ = lib.lax.scan(lambda c, i: (c + i, None), idx, jnp_.arange(3))
        io_cb(lambda v: calls.append(("close", int(v))), None, s)
        return x * x

    for f in (plain, progress):
        for g in (lib.grad(f), lib.jit(lib.grad(f))):
            g(np.float32(3.))
            lib.effects_barrier()
    return calls


def test_io_callbacks_under_grad_run_once_as_in_jax():
    # (reverse mode's forward part and the primal call beside it both held the callback)
    want = _io_callbacks_under_grad(jax, jjnp, jax_io_callback)
    got = _io_callbacks_under_grad(mjax, jnp, io_callback)
    assert got == want, (got, want)
