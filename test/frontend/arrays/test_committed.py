"""Committed and uncommitted arrays, as JAX's: which arrays are committed, where a
computation on them runs, and the error for operands committed to two devices; in a
fresh process per library (8 CPU devices), compared line by line with jax."""
from __future__ import annotations

import os
import subprocess
import sys

import jax  # noqa: F401  (the oracle runs in its own process; the import checks it is here)

PROGRAM = r'''
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
lib = __import__(sys.argv[1])
jnp = __import__(sys.argv[1] + ".numpy", fromlist=["numpy"])
import numpy as np
d = lib.devices()
x = jnp.arange(4.0)

def show(name, f):
    try:
        v = f()
        print(name, v.committed, sorted(dv.id for dv in v.devices()))
    except ValueError as e:
        print(name, "ValueError", str(e).split(" and argument")[0].split("Got argument")[0])

show("arange", lambda: x)
show("array", lambda: jnp.array([1.0, 2.0]))
show("numpy scalar type", lambda: jnp.float32(3.0))
show("eager op", lambda: x + 1)
show("jit", lambda: lib.jit(lambda v: v * 2)(x))
show("device_put, no device", lambda: lib.device_put(np.ones(2)))
show("device_put numpy", lambda: lib.device_put(np.ones(2), d[1]))
show("device_put array", lambda: lib.device_put(x, d[1]))
a0 = lib.device_put(x, d[0])
a1 = lib.device_put(x, d[1])
a2 = lib.device_put(x, d[2])
show("x after device_put to its own device", lambda: x)
f = lib.jit(lambda v: v * 2)
for i in range(3):             # (repeated: the calls the fast paths serve)
    show("jit, uncommitted", lambda: f(x))
    show("jit, committed to device 0", lambda: f(a0))
    show("jit, committed to device 1", lambda: f(a1))
    show("eager, committed to device 0", lambda: a0 * 2)
    show("eager, committed to device 1", lambda: a1 * 2)
    show("eager, uncommitted", lambda: x * 2)
show("eager, committed and uncommitted", lambda: a1 + x)
show("jit, committed and uncommitted", lambda: lib.jit(lambda u, v: u * v)(a1, x))
show("eager, two devices", lambda: a1 + a2)
show("jit, two devices", lambda: lib.jit(lambda u, v: u + v)(a1, a2))
show("zeros_like of committed", lambda: jnp.zeros_like(a1))
show("reshape of committed", lambda: a1.reshape(2, 2))
show("index of committed", lambda: a1[1])
show("host round trip", lambda: jnp.asarray(lib.device_get(a1)))
m = lib.make_mesh((2,), ("x",), devices=d[:2])
s = lib.device_put(x, lib.sharding.NamedSharding(m, lib.P("x")))
show("sharded", lambda: s)
show("sharded op", lambda: s * 2)
'''


def run(lib: str) -> tuple[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    out = subprocess.run([sys.executable, "-c", PROGRAM, lib], capture_output=True,
                         text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout, out.stderr


def test_committed_semantics_as_jax():
    mine, mine_err = run("mjax")
    theirs, _ = run("jax")
    assert mine.splitlines() == theirs.splitlines()
    # (no execution tried on the wrong device first: jaxlib would log an error line)
    assert mine_err == ""


def test_devices_error_names_the_jit_arguments():
    import mjax
    d = mjax.devices()
    if len(d) < 3:
        return
    import mjax.numpy as jnp
    a1, a2 = mjax.device_put(jnp.ones(2), d[1]), mjax.device_put(jnp.ones(2), d[2])

    def add(u, v):
        return u + v
    try:
        mjax.jit(add)(a1, v=a2)
    except ValueError as e:
        text = str(e)
    assert text.startswith("Received incompatible devices for jitted computation. Got "
                           "argument u of test_devices_error_names_the_jit_arguments."
                           "<locals>.add with shape float32[2] and with device ids [1] on "
                           "platform CPU and argument v of ")


def test_device_put_inside_jit_lays_the_value_out():
    # (JAX's device_put of a traced value to a NamedSharding: the program lays it out so)
    import mjax
    import mjax.numpy as jnp
    import numpy as np
    import pytest
    from frontend_util import ON_TPU
    devices = mjax.devices()
    if ON_TPU and len(devices) < 4:
        pytest.skip("TPU: multi-device: a mesh of 4 devices (the TPU machine has one chip)")
    assert len(devices) >= 4
    mesh = mjax.make_mesh((4,), ("x",), devices=devices[:4],
                          axis_types=(mjax.sharding.AxisType.Auto,))
    target = mjax.sharding.NamedSharding(mesh, mjax.P("x"))
    out = mjax.jit(lambda v: mjax.device_put(v * 2, target))(jnp.arange(8.0))
    np.testing.assert_array_equal(np.asarray(out), np.arange(8.0) * 2)
    assert out.sharding.spec == mjax.P("x")
    assert sorted(d.id for d in out.devices()) == [d.id for d in devices[:4]]
    assert [s.index for s in sorted(out.addressable_shards, key=lambda s: s.device.id)] == \
        [(slice(2 * i, 2 * i + 2),) for i in range(4)]


def test_device_put_inside_jit_to_other_devices_is_jax_error():
    import jax as real
    import mjax
    import numpy as np

    def program(lib):
        devices = lib.devices()
        auto = (lib.sharding.AxisType.Auto,)
        a = lib.make_mesh((4,), ("x",), devices=devices[:4], axis_types=auto)
        b = lib.make_mesh((4,), ("x",), devices=devices[4:8], axis_types=auto)
        NS = lib.sharding.NamedSharding
        xa = lib.device_put(np.arange(8.0), NS(a, lib.P("x")))

        def f(x):
            return lib.device_put(x, NS(b, lib.P("x")))

        def g(x):
            return lib.lax.with_sharding_constraint(x * 2, NS(b, lib.P()))
        messages = []
        for fn in (f, g):
            try:
                lib.jit(fn)(xa)
            except ValueError as e:     # (the same source lines: the same locations)
                messages.append(str(e))
        return messages
    mine, theirs = program(mjax), program(real)
    assert len(mine) == len(theirs) == 2
    assert mine == theirs


def test_programs_under_a_mesh_context_compile_for_it():
    # (eager ops and a jit called before, whose fast paths must not serve these calls)
    import jax as real
    import mjax

    def program(lib, jnp):
        mesh = lib.make_mesh((2,), ("i",))
        f = lib.jit(lambda v: v * 2)
        x = jnp.ones(4)
        for _ in range(3):
            f(x), x + 1
        out = []
        with lib.set_mesh(mesh):
            for _ in range(2):
                for v in (jnp.ones((4, 4)), jnp.arange(4.0), f(x), x + 1,
                          lib.jit(lambda: jnp.zeros(3))()):
                    out.append((repr(v.sharding), str(lib.typeof(v))))
        out.append(repr(f(x).sharding))          # (and after it, as before)
        return out
    assert program(mjax, mjax.numpy) == program(real, real.numpy)


def test_device_put_inside_jit_over_other_devices_than_in_shardings():
    # (the jit's mesh comes from in_shardings, not from an argument: the error names it)
    import mjax
    import numpy as np
    import pytest
    devices = mjax.devices()
    auto = (mjax.sharding.AxisType.Auto,)
    a = mjax.make_mesh((4,), ("x",), devices=devices[:4], axis_types=auto)
    b = mjax.make_mesh((4,), ("x",), devices=devices[4:8], axis_types=auto)
    NS = mjax.sharding.NamedSharding
    f = mjax.jit(lambda v: mjax.device_put(v, NS(b, mjax.P("x"))),
                 in_shardings=NS(a, mjax.P("x")))
    with pytest.raises(ValueError, match=r"Got jit's mesh with device ids \[0, 1, 2, 3\] "
                                         r"on platform CPU and device_put inside jit with "
                                         r"device ids \[4, 5, 6, 7\]"):
        f(np.arange(8.0))
