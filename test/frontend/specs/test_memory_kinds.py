"""Memory kinds ('device', 'pinned_host', 'unpinned_host'), compared with jax on CPU:
device_put to each memory and back, jit's in/out shardings in host memory (one device and
an 8-device mesh), device_put inside jit, the memory-kind attributes of the lowered
program, the offloading remat policy's gradients and memory sizes, and JAX's errors.
(conftest.py gives the process 8 CPU devices.)"""
import re

import jax
import jax.ad_checkpoint  # noqa: F401  (jax.ad_checkpoint.checkpoint_name)
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp

LIBS = {"jax": (jax, jjnp), "mjax": (mjax, jnp)}
KINDS = ("device", "pinned_host", "unpinned_host")


def _outcome(fn):
    """('ok', value) or (exception class name, first line of its message)."""
    try:
        return "ok", fn()
    except Exception as e:          # noqa: BLE001 - the class is what is compared
        return type(e).__name__, re.sub(r" \(at [^()]*\)$", "", str(e).split("\n")[0])


def _same(case):
    """Runs case(J, jnp) with jax and with mjax: the same outcome (values as lists)."""
    got = {name: _outcome(lambda: _plain(case(*libs))) for name, libs in LIBS.items()}
    assert got["mjax"] == got["jax"], got
    return got["jax"]


def _plain(v):
    if isinstance(v, (tuple, list)):
        return type(v)(_plain(x) for x in v)
    if hasattr(v, "__array__") and not isinstance(v, str):
        a = np.asarray(v)
        return (a.dtype.name, a.tolist())
    return v


def _single(J, kind):
    return J.sharding.SingleDeviceSharding(J.devices()[0], memory_kind=kind)


def _mesh8(J):
    return J.sharding.Mesh(np.array(J.devices()[:8]), ("x",))


def _named(J, kind, spec=("x",)):
    return J.sharding.NamedSharding(_mesh8(J), J.sharding.PartitionSpec(*spec),
                                    memory_kind=kind)


def test_devices_address_three_memories():
    def case(J, np_):
        d = J.devices()[0]
        return ([m.kind for m in d.addressable_memories()], d.default_memory().kind,
                d.memory("pinned_host").kind, [str(s) for s in J.memory.Space])
    assert _same(case)[1][0] == list(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_device_put_to_each_memory_and_back(kind):
    def case(J, np_):
        x = np_.arange(8.0).reshape(2, 4)
        y = J.device_put(x, _single(J, kind))
        back = J.device_put(y, _single(J, "device"))
        return (y.sharding.memory_kind, y, back.sharding.memory_kind, back,
                J.device_put(y).sharding.memory_kind, y.committed)
    out = _same(case)
    assert out[1][0] == kind and out[1][1][1] == np.arange(8.0).reshape(2, 4).tolist()


@pytest.mark.parametrize("kind", KINDS)
def test_device_put_over_a_mesh_to_each_memory_and_back(kind):
    def case(J, np_):
        x = np_.arange(32.0).reshape(8, 4)
        y = J.device_put(x, _named(J, kind))
        back = J.device_put(y, _named(J, "device", (None,)))
        return (repr(y.sharding), [s.data.sharding.memory_kind for s in
                                   y.addressable_shards], y, repr(back.sharding), back)
    # (a shard per device of the mesh: 8 on the CPU, the one chip's on a TPU machine)
    assert _same(case)[1][1] == [kind] * _mesh8(jax).devices.size


def test_device_put_of_host_array_to_a_device_is_jax_error():
    # (JAX 0.10.2 refuses a Device target for an array in host memory)
    def case(J, np_):
        xh = J.device_put(np_.ones(3), _single(J, "pinned_host"))
        return J.device_put(xh, J.devices()[0])
    assert _same(case)[0] == "ValueError"


def test_device_put_to_memory_space():
    def case(J, np_):
        x = np_.arange(4.0)
        h = J.device_put(x, J.memory.Space.Host)
        d = J.device_put(h, J.memory.Space.Device)
        n = J.device_put(J.device_put(np_.arange(8.0), _named(J, "pinned_host")),
                         J.memory.Space.Device)
        return repr(h.sharding), repr(d.sharding), repr(n.sharding), d
    _same(case)


@pytest.mark.parametrize("where", ["out", "in", "in_out", "none"])
def test_jit_shardings_with_memory_kinds_one_device(where):
    def case(J, np_):
        host, dev = _single(J, "pinned_host"), _single(J, "device")
        x = np_.arange(8.0).reshape(2, 4)
        xh = J.device_put(x, host)
        f = lambda v: v * 2 + 1                       # noqa: E731
        if where == "out":
            jf, arg = J.jit(f, out_shardings=host), x
        elif where == "in":
            jf, arg = J.jit(f, in_shardings=host), xh
        elif where == "in_out":
            jf, arg = J.jit(f, in_shardings=host, out_shardings=dev), xh
        else:
            jf, arg = J.jit(f), xh
        y = jf(arg)
        text = jf.lower(arg).as_text()
        return (repr(y.sharding), y, re.findall(r'mhlo.memory_kind = "(\w+)"', text),
                text.count("annotate_device_placement"))
    _same(case)


@pytest.mark.parametrize("where", ["out", "in_out", "none", "reduce"])
def test_jit_shardings_with_memory_kinds_over_a_mesh(where):
    def case(J, np_):
        host, dev = _named(J, "pinned_host"), _named(J, "device")
        x = np_.arange(32.0).reshape(8, 4)
        xh = J.device_put(x, host)
        if where == "out":
            y = J.jit(lambda v: v + 1, out_shardings=host)(x)
        elif where == "in_out":
            y = J.jit(lambda v: v * 3, in_shardings=host, out_shardings=dev)(xh)
        elif where == "none":
            y = J.jit(lambda v: v * 3)(xh)
        else:
            y = J.jit(lambda v: v.sum(0))(xh)
        return repr(y.sharding), y
    _same(case)


@pytest.mark.parametrize("case_name", ["to_device", "to_host", "round_trip", "two_args"])
def test_device_put_inside_jit(case_name):
    def case(J, np_):
        host, dev = _single(J, "pinned_host"), _single(J, "device")
        x = np_.arange(8.0).reshape(2, 4)
        xh = J.device_put(x, host)
        if case_name == "to_device":
            f, args = (lambda v: J.device_put(v, dev) + 1), (xh,)
        elif case_name == "to_host":
            f, args = (lambda v: J.device_put(v * 2, host) + 1), (x,)
        elif case_name == "round_trip":
            f, args = (lambda v: J.device_put(J.device_put(v, dev) * 2, host)), (xh,)
        else:
            f, args = (lambda a, b: (a * 2, b + 1)), (xh, x)
        out = J.jit(f)(*args)
        outs = out if isinstance(out, tuple) else (out,)
        text = J.jit(f).lower(*args).as_text()
        return ([o.sharding.memory_kind for o in outs], outs,
                re.findall(r'mhlo.memory_kind = "(\w+)"', text))
    _same(case)


@pytest.mark.parametrize("op", ["scale", "sin", "sum", "matmul"])
def test_eager_ops_on_host_arrays_stay_in_host_memory(op):
    def case(J, np_):
        xh = J.device_put(np_.arange(8.0).reshape(2, 4), _single(J, "pinned_host"))
        y = {"scale": lambda: xh * 2 + 1, "sin": lambda: np_.sin(xh),
             "sum": lambda: np_.sum(xh), "matmul": lambda: xh @ xh.T}[op]()
        return repr(y.sharding), y
    _same(case)


def test_compiled_stage_over_host_memory():
    def case(J, np_):
        host = _single(J, "pinned_host")
        x = np_.arange(4.0)
        xh = J.device_put(x, host)
        c = J.jit(lambda v: v * 2).lower(xh).compile()
        c2 = J.jit(lambda v: v + 1, out_shardings=host).lower(x).compile()
        return (repr(c.output_shardings), repr(c(xh).sharding), c(xh),
                repr(c2.output_shardings), repr(c2(x).sharding), c2(x))
    _same(case)


def test_memory_analysis_of_a_program_over_host_memory():
    def case(J, np_):
        xh = J.device_put(np_.ones((64, 32)), _single(J, "pinned_host"))
        m = J.jit(lambda v: v * 2, out_shardings=_single(J, "device")).lower(
            xh).compile().memory_analysis()
        return (m.argument_size_in_bytes, m.output_size_in_bytes, m.temp_size_in_bytes,
                m.host_argument_size_in_bytes, m.host_output_size_in_bytes)
    _same(case)


# ---- errors ----------------------------------------------------------------------------
@pytest.mark.parametrize("what", ["single", "named", "device_memory"])
def test_bad_memory_kind_is_jax_error(what):
    def case(J, np_):
        if what == "single":
            return _single(J, "hbm")
        if what == "named":
            return _named(J, "host")
        return J.devices()[0].memory("nvme")
    err = _same(case)[0]
    assert err != "ok"


@pytest.mark.parametrize("which", ["in_host_arg_device", "in_device_arg_host"])
def test_jit_in_shardings_memory_kind_must_match_the_argument(which):
    def case(J, np_):
        host, dev = _single(J, "pinned_host"), _single(J, "device")
        x = J.device_put(np_.arange(4.0), dev)
        if which == "in_host_arg_device":
            return J.jit(lambda v: v, in_shardings=host)(x)
        return J.jit(lambda v: v, in_shardings=dev)(J.device_put(x, host))
    assert _same(case)[0] == "ValueError"


def test_mixing_host_and_device_memory_in_jit_is_jax_error():
    def case(J, np_):
        x = np_.arange(8.0).reshape(2, 4)
        return J.jit(lambda a, b: a * b)(J.device_put(x, _single(J, "pinned_host")), x)
    assert _same(case)[0] == "ValueError"


# ---- the offloading remat policy ---------------------------------------------------------
def _offload_case(policy_name, scan):
    def case(J, np_):
        cp = J.checkpoint_policies
        policy = {"offload": cp.save_and_offload_only_these_names(
                      names_which_can_be_saved=[], names_which_can_be_offloaded=["x"],
                      offload_src="device", offload_dst="pinned_host"),
                  "offload_dots": cp.offload_dot_with_no_batch_dims("device",
                                                                    "pinned_host"),
                  "save": cp.save_only_these_names("x")}[policy_name]

        def layer(x, w):
            w1, w2 = w
            x = J.ad_checkpoint.checkpoint_name(x, "x")
            return np_.tanh(x @ w1) @ w2, None

        def loss(w, x):
            f = J.remat(layer, policy=policy, prevent_cse=False)
            y = J.lax.scan(f, x, w)[0] if scan else f(x, (w[0][0], w[1][0]))[0]
            return np_.sum(y ** 2)
        rng = np.random.default_rng(0)
        w = (np_.asarray(rng.normal(size=(4, 16, 32)), np.float32) * 0.1,
             np_.asarray(rng.normal(size=(4, 32, 16)), np.float32) * 0.1)
        x = np_.asarray(rng.normal(size=(8, 16)), np.float32)
        g = J.jit(J.grad(loss))
        m = g.lower(w, x).compile().memory_analysis()
        return g(w, x), m.temp_size_in_bytes, m.argument_size_in_bytes
    return case


# (save_only_these_names in a scan: the policy that offloading reduces to on CPU, which
# saved the whole body's residuals before partial evaluation of scan bodies applied it.
# Outside a scan JAX's program for it keeps one more copy of x: 512 bytes more temp.)
@pytest.mark.parametrize("policy,scan", [("offload", True), ("offload", False),
                                         ("offload_dots", True), ("offload_dots", False),
                                         ("save", True)])
def test_offload_policy_gradients_and_memory_as_jax(policy, scan):
    got = {name: _outcome(lambda: _offload_case(policy, scan)(*libs))
           for name, libs in LIBS.items()}
    (jc, jv), (mc, mv) = got["jax"], got["mjax"]
    assert jc == mc == "ok", got
    for a, b in zip(mv[0], jv[0]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=1e-6)
    assert mv[1:] == jv[1:]      # (XLA's temp and argument sizes: the same residuals)


def test_offload_policies_answer_as_jax():
    def case(J, np_):
        cp = J.checkpoint_policies
        p = cp.save_and_offload_only_these_names(
            names_which_can_be_saved=["a"], names_which_can_be_offloaded=["b"],
            offload_src="device", offload_dst="pinned_host")
        name = J.ad_checkpoint.checkpoint_name
        names = [str(e.primitive) for e in J.make_jaxpr(lambda v: name(v, "a"))(1.0).eqns]
        prim = J.make_jaxpr(lambda v: name(v, "a"))(1.0).eqns[0].primitive
        return (names, type(p(prim, name="a")).__name__, repr(p(prim, name="b")),
                type(p(prim, name="c")).__name__,
                isinstance(p(prim, name="b"), J.ad_checkpoint.Offloadable))
    _same(case)
