"""mjax.debug: print / callback / breakpoint / visualize_array_sharding, with the printed
output compared to what jax prints for the same program."""
import numpy as np
import pytest

import jax
import jax.numpy as jjnp
import mjax
import mjax.numpy as jnp
from frontend_util import ON_TPU


def printed(capsys, run):
    capsys.readouterr()
    run()
    if ON_TPU:    # (callbacks there run beside the program: JAX's tests wait the same way)
        jax.effects_barrier()
        mjax.effects_barrier()
    return capsys.readouterr().out


def jit_failure_as_jax(J, run, exc, match):
    """A program whose callback fails raises `exc` from its call, as JAX's does on the
    CPU. On a TPU the callback runs beside the program (host transfers), and what the
    caller sees is whatever jax shows on the same chip: compared with it."""
    if not ON_TPU:
        with pytest.raises(exc, match=match):
            run(J)
        return
    import jax
    assert _outcome(jax, run) == _outcome(mjax, run)


def _outcome(J, run):
    try:
        run(J)
        J.effects_barrier()
    except Exception as e:  # noqa: BLE001 - the outcome compared
        if J is jax:    # (jax keeps the failed run's token after its barrier raised: the
            from jax._src import dispatch     # next barrier would raise it again)
            dispatch.runtime_tokens.clear()
        return type(e).__name__
    return None


def same_output(capsys, program):
    """`program(lib, np_module)` run with mjax and with jax prints the same lines."""
    got = printed(capsys, lambda: program(mjax, jnp))
    want = printed(capsys, lambda: program(jax, jjnp))
    if ON_TPU:   # (unordered prints of programs running beside the caller come in any
        # order there, in JAX's too: its eager prints run at once, its jitted ones when
        # the chip reaches them; ordered=True keeps the order, checked below)
        assert sorted(got.splitlines()) == sorted(want.splitlines())
        return got
    assert got == want
    assert got  # the program printed something
    return got


# ---- print ------------------------------------------------------------------------------
def _print_jit(lib, np_):
    @lib.jit
    def f(x):
        lib.debug.print("x = {x}, y = {}", np_.sin(x), x=x)
        return x * 2
    f(np_.arange(3.0))
    f(np_.arange(3.0))


def _print_eager(lib, np_):
    lib.debug.print("{} and {x}", np_.float32(1.5), x=np_.arange(4))
    lib.debug.print("no placeholders", np_.int32(3), 2.5, skip_format_check=True)


def _print_format_spec(lib, np_):
    lib.jit(lambda x: lib.debug.print("{x:.2f} {y}", x=x, y=x * np_.ones((2, 2))))(
        np_.float32(3.14159))


def _print_vmap(lib, np_):
    lib.vmap(lambda x, y: lib.debug.print("x={} y={}", x, y), in_axes=(0, None))(
        np_.arange(3.0), np_.float32(5))
    lib.jit(lib.vmap(lambda x: lib.debug.print("row {}", x)))(np_.ones((2, 3)))


def _print_ordered(lib, np_):
    @lib.jit
    def f(x):
        lib.debug.print("first {}", x, ordered=True)
        y = x + 1
        lib.debug.print("second {}", y, ordered=True)
        lib.debug.print(ordered=True)("third {}", y * 2)
        return y
    f(np_.float32(1))


def _print_grad(lib, np_):
    def f(x):
        lib.debug.print("primal {}", x)
        return x * x
    lib.grad(f)(3.0)
    lib.jit(lib.grad(f))(2.0)
    lib.value_and_grad(f)(1.0)
    lib.jvp(f, (4.0,), (1.0,))
    _, f_vjp = lib.vjp(f, 5.0)          # eager: the forward run prints, the backward not
    f_vjp(1.0)
    _, f_lin = lib.linearize(f, 6.0)
    f_lin(1.0)
    lib.jit(lambda x: lib.vjp(f, x)[1](1.0))(7.0)
    lib.hessian(f)(8.0)


def _print_control_flow(lib, np_):
    def body(c, x):
        lib.debug.print("scan c={} x={}", c, x)
        return c + x, x * 2
    lib.jit(lambda xs: lib.lax.scan(body, np_.float32(0), xs))(np_.arange(3.0))
    lib.lax.scan(body, np_.float32(0), np_.arange(2.0))

    def branch(x):
        lib.debug.print("taken {}", x)
        return x
    f = lib.jit(lambda p, x: lib.lax.cond(p, branch, lambda x: x * 2, x))
    f(True, np_.float32(1))
    f(False, np_.float32(2))

    def wbody(c):
        lib.debug.print("while {}", c)
        return c + 1
    lib.jit(lambda x: lib.lax.while_loop(lambda c: c < 3, wbody, x))(np_.int32(0))


def _print_unused_result(lib, np_):
    # The print does not feed the result: it still runs (never removed as dead code).
    @lib.jit
    def f(x):
        lib.debug.print("side {}", x * 3)
        return x
    f(np_.float32(2))


def _print_printoptions(lib, np_):
    with np.printoptions(precision=2):
        lib.jit(lambda x: lib.debug.print("{}", x / 3))(np_.arange(3.0))


@pytest.mark.parametrize("program", [_print_jit, _print_eager, _print_format_spec,
                                     _print_vmap, _print_ordered, _print_grad,
                                     _print_control_flow, _print_unused_result,
                                     _print_printoptions],
                         ids=lambda p: p.__name__[1:])
def test_print_matches_jax(capsys, program):
    same_output(capsys, program)


def test_print_ordered_keeps_program_order(capsys):
    out = printed(capsys, lambda: _print_ordered(mjax, jnp))
    assert out.splitlines() == ["first 1.0", "second 2.0", "third 4.0"]


def test_print_grad_prints_primals_once(capsys):
    out = printed(capsys, lambda: mjax.grad(lambda x: (mjax.debug.print("p {}", x),
                                                       x * x)[1])(3.0))
    assert out == "p 3.0\n"


@pytest.mark.parametrize("call", [
    lambda lib: lib.debug.print("{}", 1, 2),
    lambda lib: lib.debug.print("{x}", x=1, y=2),
    lambda lib: lib.debug.print("a", 1, x=2),
    lambda lib: lib.debug.print("a", ordered=True)(1),
])
def test_print_argument_errors_match_jax(call):
    with pytest.raises(Exception) as want:
        call(jax)
    with pytest.raises(type(want.value)) as got:
        call(mjax)
    assert str(got.value) == str(want.value)


def test_print_ir_has_debug_callback():
    text = mjax.jit(lambda x: (mjax.debug.print("{}", x), x)[1]).trace(1.0).as_text()
    assert '"jaxpr.callback"' in text and 'effect = "debug"' in text
    assert "callback_id = " in text
    hlo = mjax.jit(lambda x: (mjax.debug.print("{}", x, ordered=True), x)[1]).lower(
        1.0).as_text()
    assert "xla_ffi_python_cpu_callback" in hlo and "!stablehlo.token" in hlo


# ---- callback ---------------------------------------------------------------------------
def _callback_program(lib, np_):
    def cb(a, tag, d):
        print("cb", tag, type(a).__name__ != "ndarray", np.asarray(a).tolist(),
              sorted(d), np.asarray(d["k"]).tolist())

    @lib.jit
    def f(x):
        lib.debug.callback(cb, x, "static", {"k": x * 2, "j": 1.5})
        lib.debug.callback(ordered=True)(cb, x + 1, tag="kw", d={"k": x})
        return x
    f(np_.arange(2.0))
    lib.debug.callback(cb, np_.ones(2), "eager", {"k": np_.zeros(1)})
    lib.vmap(lambda x: lib.debug.callback(cb, x, "vmap", {"k": x}))(np_.arange(2.0))


def test_callback_matches_jax(capsys):
    same_output(capsys, _callback_program)


def test_callback_gets_arrays():
    seen = []
    mjax.jit(lambda x: mjax.debug.callback(lambda v: seen.append(v), x))(jnp.ones(2))
    mjax.effects_barrier()        # (an accelerator runs the callback beside the program)
    assert isinstance(seen[0], mjax.Array)
    np.testing.assert_array_equal(np.asarray(seen[0]), np.ones(2))


def test_callback_not_callable_matches_jax():
    with pytest.raises(TypeError) as want:
        jax.debug.callback(3, 1.0)
    with pytest.raises(TypeError) as got:
        mjax.debug.callback(3, 1.0)
    assert str(got.value) == str(want.value)


def test_callback_exception_reaches_caller():
    def bad(x):
        raise ValueError("debug boom")
    jit_failure_as_jax(mjax, lambda J: J.jit(lambda x: J.debug.callback(bad, x))(1.0),
                       RuntimeError, "debug boom")


# ---- breakpoint and sharding -----------------------------------------------------------
def test_breakpoint_at_the_end_of_stdin_quits_as_jax(monkeypatch):
    import io
    import jax
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    for J in (jax, mjax):    # under jit: a runtime error from the failed callback
        jit_failure_as_jax(J, lambda J: J.jit(lambda x: (J.debug.breakpoint(), x)[1])(1.0),
                           RuntimeError, "SystemExit")
        with pytest.raises(SystemExit):     # eager: the debugger's exit itself
            J.debug.breakpoint()


def test_visualize_array_sharding_single_device(capsys):
    out = printed(capsys, lambda: mjax.debug.visualize_array_sharding(jnp.ones((8, 8))))
    lines = out.splitlines()
    assert lines[0].startswith("┌") and lines[-1].startswith("└")
    assert out == printed(capsys, lambda: jax.debug.visualize_array_sharding(
        jjnp.ones((8, 8))))          # (the device's name as JAX writes it: CPU 0, TPU 0)
    assert len({len(line) for line in lines}) == 1          # a closed box
    with pytest.raises(ValueError, match="<= 2"):
        mjax.debug.visualize_array_sharding(jnp.ones((2, 2, 2)))


@pytest.mark.parametrize("shape,spec", [
    ((8,), ("x",)), ((4, 4), ("x",)), ((8, 4), ("x", "y")), ((8, 4), ("y", "x")),
    ((8, 4), (("x", "y"),)), ((8, 4), ()), ((4, 16), (None, "x")), ((16,), ()),
    ((6, 2), ("x", "y")), ((8,), (("x", "y"),))])
def test_visualize_sharded_arrays_as_jax(capsys, shape, spec):
    # The same table as JAX's (rich's, printed to a non-terminal), cell sizes included.
    import jax
    outs = []
    for J in (mjax, jax):
        mesh = J.make_mesh((3, 2) if shape == (6, 2) else (4, 2), ("x", "y"))
        x = J.device_put(np.arange(np.prod(shape), dtype=np.float32).reshape(shape),
                         J.sharding.NamedSharding(mesh, J.sharding.PartitionSpec(*spec)))
        outs.append(printed(capsys, lambda: J.debug.visualize_array_sharding(x)))
    assert outs[0].strip("\n") == outs[1].strip("\n")


def test_print_and_pure_callback_in_a_partitioned_program(capsys):
    # A sharded jit: callbacks run once, on the whole logical value, as in JAX.
    from mjax.sharding import NamedSharding, PartitionSpec as P
    mesh = mjax.make_mesh((4,), ("x",))
    x = mjax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))

    @mjax.jit
    def f(x):
        mjax.debug.print("x={}", x)
        y = mjax.pure_callback(lambda v: np.asarray(v) * 2,
                               mjax.ShapeDtypeStruct(x.shape, x.dtype), x)
        return y + 1
    capsys.readouterr()
    np.testing.assert_allclose(np.asarray(f(x)), np.arange(8.0) * 2 + 1)
    assert capsys.readouterr().out == f"x={np.arange(8.0, dtype=np.float32)}\n"


def test_inspect_array_sharding_gives_the_arrays_sharding():
    seen = []
    x = jnp.ones(3)
    mjax.debug.inspect_array_sharding({"a": x}, callback=seen.append)
    assert seen == [x.sharding]


def test_effects_barrier_after_prints(capsys):
    f = mjax.jit(lambda x: (mjax.debug.print("v {}", x), x)[1])
    f(1.0)
    mjax.effects_barrier()
    assert capsys.readouterr().out == "v 1.0\n"


_BREAKPOINT_PROGRAM = """
import sys
if sys.argv[1] == "mjax":
    import mjax as jax, mjax.numpy as jnp
else:
    import jax, jax.numpy as jnp

@jax.jit
def f(x):
  y, z = jnp.sin(x), jnp.cos(x)
  jax.debug.breakpoint()
  return y * z

def g(x):
  jax.debug.breakpoint()
  return x + 1

for fn in (f, g):
  try:
    print(fn(2.))
  except BaseException as e:
    print("raised", type(e).__name__)
print("end")
"""


@pytest.mark.parametrize("stdin", ["p y\nw\nu\nd\nl\nnot_a_name\npp z\nc\np x\nc\n", ""])
def test_breakpoint_reads_stdin_as_jax(tmp_path, stdin):
    # JAX's text debugger: commands from stdin over the runtime values; the end of input
    # quits (SystemExit: under jit the call fails with a runtime error), never hangs.
    import subprocess
    import sys
    path = tmp_path / "bp.py"
    path.write_text(_BREAKPOINT_PROGRAM)

    def run(mode):
        return subprocess.run([sys.executable, str(path), mode], input=stdin, text=True,
                              capture_output=True, timeout=120).stdout
    assert run("mjax") == run("jax")


def test_breakpoint_in_a_branch_not_taken_never_stops():
    # (the debugging tutorial: no terminal is needed until the breakpoint runs)
    @mjax.jit
    def f(x, y):
        z = x / y
        mjax.lax.cond(jnp.isfinite(z).all(), lambda z: None,
                      lambda z: mjax.debug.breakpoint(), z)
        return z
    assert float(f(2.0, 1.0)) == 2.0


def test_log_goes_to_the_logger_with_the_users_line(caplog):
    import logging
    with caplog.at_level(logging.INFO, logger="mjax.debug"):
        mjax.jit(lambda x: (mjax.debug.log("logged {x}", x=x), x)[1])(jnp.float32(2))
        mjax.effects_barrier()    # (an accelerator runs the callback beside the program)
        mjax.debug.log("eager {}", 3)
    records = [r for r in caplog.records if r.name == "mjax.debug"]
    assert [r.getMessage() for r in records] == ["logged 2.0", "eager 3"]
    assert all(r.levelno == logging.INFO and r.pathname == __file__ for r in records)


def test_eager_log_after_a_staged_breakpoint_only_logs(caplog, monkeypatch):
    # (a breakpoint's and a log's callables close over a frame and a record: neither is
    # shared with a later call of the same argument structure, which would run it)
    import io
    import logging
    monkeypatch.setattr("sys.stdin", io.StringIO(""))

    def g(z):
        mjax.debug.breakpoint()
        return z
    mjax.make_jaxpr(g)(jnp.float32(1))
    with caplog.at_level(logging.INFO, logger="mjax.debug"):
        mjax.debug.log("eager")       # (the breakpoint's values: none, or z, as the
        mjax.debug.log("eager {}", 3)  # frames it reads are the user's)
    assert [r.getMessage() for r in caplog.records if r.name == "mjax.debug"] == [
        "eager", "eager 3"]


def test_eager_debug_callback_raises_the_callbacks_own_error_as_jax():
    # Eagerly JAX calls a debug callback in Python (pure/io callbacks go through the
    # runtime): the callback's exception reaches the caller as it is.
    import jax

    def bad(x):
        raise KeyError("boom")
    for J in (jax, mjax):
        with pytest.raises(KeyError, match="boom"):
            J.debug.callback(bad, J.numpy.ones(2))
        jit_failure_as_jax(J, lambda J: J.jit(lambda x: (J.debug.callback(bad, x), x)[1])(1.0),
                           RuntimeError, "boom")     # under jit: the runtime's error
