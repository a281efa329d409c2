"""Gradients of functions of arrays in host memory, compared with jax on CPU: a
cotangent comes back in its primal's memory (JAX's transpose of device_put moves it back
to host memory), under jit, eagerly, through scan and remat, for grad, value_and_grad and
vjp; and JAX's ValueError for an elementwise op over host and device arrays, which
jnp.isclose/allclose names `and` (its first op over both operands)."""
import re

import jax
import jax.ad_checkpoint  # noqa: F401  (jax.ad_checkpoint.checkpoint_name)
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from frontend_util import ON_TPU

LIBS = {"jax": (jax, jjnp), "mjax": (mjax, jnp)}


def _outcome(fn):
    """('ok', value) or (exception class name, first line of its message, without the
    op_name metadata of an HLO instruction XLA quotes: names of the traced ops, JAX's and
    mjax's)."""
    try:
        return "ok", fn()
    except Exception as e:          # noqa: BLE001 - the class is what is compared
        message = re.sub(r", metadata=\{[^{}]*\}", "", str(e).split("\n")[0])
        return type(e).__name__, re.sub(r" \(at [^()]*\)$", "", message)


def _plain(v):
    """Arrays as (memory kind, dtype, values); containers kept."""
    if isinstance(v, (tuple, list)):
        return type(v)(_plain(x) for x in v)
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in sorted(v.items())}
    if hasattr(v, "sharding"):
        a = np.asarray(v)
        return (v.sharding.memory_kind, a.dtype.name, np.round(a, 5).tolist())
    return v


def _same(case):
    got = {name: _outcome(lambda: _plain(case(*libs))) for name, libs in LIBS.items()}
    assert got["mjax"] == got["jax"], got
    return got["jax"]


def _single(J, kind):
    return J.sharding.SingleDeviceSharding(J.devices()[0], memory_kind=kind)


def _host(J, np_, shape=(2, 3)):
    x = np_.arange(float(np.prod(shape))).reshape(shape) / 10
    return J.device_put(x, _single(J, "pinned_host"))


def _sq_on_device(J, np_):
    return lambda x: np_.sum(J.device_put(x, _single(J, "device")) ** 2)


@pytest.mark.parametrize("wrap", ["jit", "eager"])
def test_grad_of_host_argument_moved_to_device_is_in_host_memory(wrap):
    def case(J, np_):
        g = J.grad(_sq_on_device(J, np_))
        return (J.jit(g) if wrap == "jit" else g)(_host(J, np_))
    assert _same(case)[1][0] == "pinned_host"


def test_value_and_grad_and_several_arguments():
    def case(J, np_):
        dev = _single(J, "device")
        f = lambda x, y: np_.sum(J.device_put(x, dev) * y)   # noqa: E731
        y = np_.ones((2, 3))
        vg = J.jit(J.value_and_grad(f, argnums=(0, 1)))(_host(J, np_), y)
        tree = J.jit(J.grad(lambda p: np_.sum(J.device_put(p["a"], dev) * p["b"])))(
            {"a": _host(J, np_), "b": y})
        return vg, tree
    _same(case)


def test_device_put_to_a_memory_space():
    def case(J, np_):
        f = lambda x: np_.sum(J.device_put(x, J.memory.Space.Device) ** 2)  # noqa: E731
        return J.jit(J.grad(f))(_host(J, np_))
    _same(case)


def test_unpinned_host_argument_gradient_in_device_memory():
    def case(J, np_):
        x = J.device_put(np_.arange(6.0).reshape(2, 3), _single(J, "unpinned_host"))
        return J.jit(J.grad(_sq_on_device(J, np_)))(x)
    got = _same(case)
    # (on a TPU XLA fails to compile JAX's program, and mjax's alike: "Shape mismatch between
    # parameter number 0 and its operand", the unpinned_host parameter in a device fusion)
    if not (ON_TPU and got[0] == "JaxRuntimeError"):
        assert got[1][0] == "device", got


@pytest.mark.parametrize("remat", [False, True])
@pytest.mark.parametrize("wrap", ["jit", "eager"])
def test_scan_over_host_weights(remat, wrap):
    if ON_TPU:
        pytest.skip("TPU: JAX's own program (jit, no remat) halts the TPU core "
                    "(RuntimeUnexpectedCoreHalt), after which the process's later programs "
                    "fail; the other cases move the same scanned cotangents back to "
                    "pinned_host in the loop")

    def case(J, np_):
        dev = _single(J, "device")

        def body(c, w):
            return c * J.device_put(w, dev), None
        step = J.remat(body) if remat else body
        f = lambda w, c: np_.sum(J.lax.scan(step, c, w)[0])   # noqa: E731
        g = J.grad(f, argnums=(0, 1))
        ws = J.device_put(np_.ones((4, 2, 3)) * 1.1, _single(J, "pinned_host"))
        return (J.jit(g) if wrap == "jit" else g)(ws, np_.ones((2, 3)))
    got = _same(case)
    assert [k for k, _, _ in got[1]] == ["pinned_host", "device"]


def test_hybrid_scan_with_offloading_policy():
    # host_offloading's hybrid version: weights in host memory, activations offloaded.
    def case(J, np_):
        dev, host = _single(J, "device"), _single(J, "pinned_host")
        policy = J.checkpoint_policies.save_and_offload_only_these_names(
            names_which_can_be_saved=[], names_which_can_be_offloaded=["x"],
            offload_src="device", offload_dst="pinned_host")

        def layer(x, w):
            w1, w2 = J.tree.map(lambda v: J.device_put(v, dev), w)
            x = J.ad_checkpoint.checkpoint_name(x, "x")
            return (x @ w1) @ w2, None

        def scanned(w, x):
            return np_.sum(J.lax.scan(J.remat(layer, policy=policy, prevent_cse=False),
                                      x, w)[0])
        w1 = J.device_put(np_.ones((3, 4, 8)) * 0.1, host)
        w2 = J.device_put(np_.ones((3, 8, 4)) * 0.1, host)
        return J.jit(J.grad(scanned))((w1, w2), np_.ones((4, 4)) * 0.1)
    got = _same(case)
    assert [k for k, _, _ in got[1]] == ["pinned_host", "pinned_host"]


def test_vjp_under_jit_and_eagerly():
    def case(J, np_):
        f = lambda x: J.device_put(x, _single(J, "device")) * 2   # noqa: E731
        ct = np_.ones((2, 3))
        traced = J.jit(lambda x: J.vjp(f, x)[1](ct))(_host(J, np_))
        eager = J.vjp(f, _host(J, np_))[1](ct)
        return traced, eager
    _same(case)


def test_device_put_to_host_inside_the_function_then_grad():
    def case(J, np_):
        host = _single(J, "pinned_host")
        g = J.grad(_sq_on_device(J, np_))
        return J.jit(lambda x: g(J.device_put(x, host)))(np_.arange(6.0).reshape(2, 3))
    _same(case)


def test_allclose_of_host_gradient_and_device_array_is_jax_error():
    def case(J, np_):
        g = J.jit(J.grad(_sq_on_device(J, np_)))(_host(J, np_))
        d = J.device_put(np_.arange(6.0).reshape(2, 3), _single(J, "device"))
        return np_.allclose(d, g, rtol=1e-5, atol=1e-5)
    got = _same(case)
    assert got[0] == "ValueError" and "passed to `and`" in got[1], got


@pytest.mark.parametrize("how", ["isclose", "allclose_rev", "jit_isclose", "int",
                                 "numpy", "jit_add", "eager_add"])
def test_mixed_memory_errors(how):
    def case(J, np_):
        xh = _host(J, np_)
        xd = J.device_put(np_.arange(6.0).reshape(2, 3), _single(J, "device"))
        return {"isclose": lambda: np_.isclose(xd, xh),
                "allclose_rev": lambda: np_.allclose(xh, xd),
                "jit_isclose": lambda: J.jit(np_.isclose)(xd, xh),
                "int": lambda: np_.isclose(np_.arange(3), J.device_put(
                    np_.arange(3), _single(J, "pinned_host"))),
                "numpy": lambda: np_.allclose(np.ones((2, 3), np.float32), xh),
                "jit_add": lambda: J.jit(np_.add)(xd, xh),
                "eager_add": lambda: xd + xh}[how]()
    assert _same(case)[0] == "ValueError"


def test_isclose_in_host_memory_and_its_values():
    def case(J, np_):
        host = _single(J, "pinned_host")
        a = np_.array([1.0, np.inf, -np.inf, np.nan, 1e6, 0.0, np.inf])
        b = np_.array([1.0 + 1e-7, np.inf, np.inf, np.nan, 1.00001e6, 1e-9, 1.0])
        # (on a TPU, computing on pinned_host operands outside compute_on aborts the
        # process in JAX's program: the chip computes in device memory)
        on_host = () if ON_TPU else (
            np_.isclose(J.device_put(a, host), J.device_put(b, host)),)
        return on_host + (np_.isclose(a, b), np_.isclose(a, b, equal_nan=True),
                          np_.isclose(a + 1j, b + 1j))
    _same(case)


def test_grad_inside_jit_prints_the_move_back():
    def case(J, np_):
        text = str(J.make_jaxpr(J.grad(_sq_on_device(J, np_)))(_host(J, np_)))
        return text.count("device_put")
    _same(case)


_SPACES = {"S(5)": "pinned_host", "S(6)": "unpinned_host"}    # (XLA's memory spaces)


def _parameter_memories(exe) -> list:
    """The memory each parameter of a compiled program is in: its layout's memory space
    in the entry computation layout XLA compiled (S(5) pinned host, S(6) unpinned host,
    none: device memory; also on the CPU, whose runtime, unlike a TPU's, runs a program
    on buffers in another memory than its parameters')."""
    text = exe.loaded.hlo_modules()[0].to_string()
    params = re.search(r"entry_computation_layout=\{\((.*?)\)->", text).group(1)
    out, depth, start = [], 0, 0
    for i, c in enumerate(params + ","):
        depth += 1 if c in "([{" else -1 if c in ")]}" else 0
        if c == "," and depth == 0:
            space = re.search(r"S\(\d+\)", params[start:i])
            out.append(_SPACES.get(space.group(0), space.group(0)) if space else "device")
            start = i + 1
    return out if params else []


@pytest.fixture
def placements():
    """Every program run checked, as a TPU's runtime checks it (its E0102
    RuntimeProgramInputMismatch): each buffer handed to a program lies in the memory its
    parameter was compiled for. Yields the list of programs run."""
    from mjax.runtime.xla import Executable
    run = Executable._execute_sharded
    seen = []

    def checked(self, buffers):
        want = _parameter_memories(self)
        have = [b.sharding.memory_kind or "device" for b in buffers]
        assert want == have, (f"program input memory mismatch: parameters in {want}, "
                              f"buffers in {have}\n{self.text}")
        seen.append(self)
        return run(self, buffers)
    mp = pytest.MonkeyPatch()
    mp.setattr(Executable, "_execute_sharded", checked)
    mp.setattr(Executable, "sharded_call", lambda self: None)   # (all through execute)
    try:
        yield seen
    finally:
        mp.undo()


@pytest.mark.parametrize("how", ["vjp", "vjp_jit", "vjp_residual", "linearize", "grad",
                                 "python_branch"])
def test_programs_get_arguments_in_their_parameters_memory(placements, how):
    # On a TPU an eager vjp of a function of a host array failed (E0102): its forward and
    # linear programs, split off the traced function, were compiled without the memory
    # kinds of their arguments, and so expected device memory where a pinned_host array
    # was handed to them. JAX's eager results are compared too.
    def case(J, np_):
        dev = _single(J, "device")
        f = lambda x: J.device_put(x, dev) * 2        # noqa: E731
        g = lambda x, y: J.device_put(x, dev) * y     # noqa: E731  (y: a residual)
        ct = np_.ones((2, 3))
        if how == "vjp":
            return J.vjp(f, _host(J, np_))[1](ct)
        if how == "vjp_jit":
            return J.jit(lambda x: J.vjp(f, x)[1](ct))(_host(J, np_))
        if how == "vjp_residual":
            y = np_.arange(6.0).reshape(2, 3)
            out, pb = J.vjp(g, _host(J, np_), y)
            return out, pb(ct)
        if how == "linearize":
            out, lin = J.linearize(f, _host(J, np_))
            return out, lin(_host(J, np_))
        if how == "python_branch":      # (a cond's value asked for by Python: run eagerly)
            def h(w, x):
                s = J.lax.cond(True, lambda v: J.device_put(v, dev) * 2,
                               lambda v: J.device_put(v, dev), x)
                return np_.sum(w * (s * 3 if float(np_.sum(s)) > 0 else s))
            return J.grad(h)(np_.ones((2, 3)), _host(J, np_))
        return J.grad(lambda x: np_.sum(f(x)))(_host(J, np_))
    _same(case)
    assert placements
