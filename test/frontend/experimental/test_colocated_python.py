"""mjax.experimental.colocated_python in one process on 8 CPU devices, against real
jax's colocated Python (which also runs single-process on CPU): colocated devices and
meshes, calls, specializations, their errors, classes, and the serialization helpers."""
from __future__ import annotations

import jax
import numpy as np
import pytest
from jax.experimental import colocated_python as jcp

import mjax
from mjax.experimental import colocated_python as mcp
from mjax.experimental.colocated_python import serialization as mser
from mjax.sharding import Mesh, NamedSharding, P
from frontend_util import ON_TPU

# The tests that place arrays on several of the 8 CPU devices (devices()[1], meshes of 8).
several_devices = pytest.mark.skipif(ON_TPU, reason=(
    "TPU: multi-device: arrays on several of 8 devices (the TPU machine has one chip)"))


def _add_one(x):
    return x + 1


def _both(fn):
    """fn(jax_module, colocated_python_module) under each; their results as NumPy."""
    out = []
    for mod, cp in ((jax, jcp), (mjax, mcp)):
        r = fn(mod, cp)
        out.append(mod.tree.map(np.asarray, r))
    return out


@several_devices
def test_colocated_cpu_devices_and_mesh():
    assert [d.id for d in mcp.colocated_cpu_devices(mjax.devices())] == \
        [d.id for d in jcp.colocated_cpu_devices(jax.devices())]
    mesh = Mesh(np.array(mjax.devices()).reshape(4, 2), ("x", "y"))
    cpu = mcp.colocated_cpu_devices(mesh)
    jcpu = jcp.colocated_cpu_devices(
        jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y")))
    assert cpu.axis_names == jcpu.axis_names and cpu.devices.shape == jcpu.devices.shape
    assert [d.id for d in cpu.devices.flat] == [d.id for d in jcpu.devices.flat]


@several_devices
@pytest.mark.parametrize("where", ["one", "sharded"])
def test_call_matches_jax(where):
    def run(mod, cp):
        if where == "one":
            s = mod.sharding.SingleDeviceSharding(mod.devices()[2])
        else:
            mesh = mod.sharding.Mesh(np.array(mod.devices()).reshape(4, 2), ("x", "y"))
            s = mod.sharding.NamedSharding(mesh, mod.sharding.PartitionSpec("x"))
        x = mod.device_put(np.arange(8.0, dtype=np.float32).reshape(4, 2), s)
        f = cp.colocated_python(lambda a, b: {"sum": a + b["y"], "neg": -a})
        r = f(x, {"y": x})
        assert r["sum"].sharding == s
        return r
    ours, theirs = _both(run)[::-1]
    for k in theirs:
        np.testing.assert_array_equal(ours[k], theirs[k])


@several_devices
def test_specialize_out_specs_fn_and_devices():
    def run(mod, cp):
        x = mod.device_put(np.ones((3,), np.float32), mod.devices()[0])
        f = cp.colocated_python(_add_one).specialize(
            out_specs_fn=lambda spec: spec)
        make = cp.colocated_python(
            lambda: mod.device_put(np.full((2,), 7, np.int32), mod.devices()[1]))
        return f(x), make.specialize(devices=[mod.devices()[1]])()
    ours, theirs = _both(run)[::-1]
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("case", ["no_devices", "twice",
                                  pytest.param("two_lists", marks=several_devices)])
def test_errors_match_jax(case):
    messages = []
    for mod, cp in ((jax, jcp), (mjax, mcp)):
        f = cp.colocated_python(_add_one)
        with pytest.raises(ValueError) as e:
            if case == "no_devices":
                cp.colocated_python(lambda: None)()
            elif case == "twice":
                f.specialize(devices=mod.devices()[:1]).specialize(devices=mod.devices()[:1])
            else:
                cp.colocated_python(lambda a, b: a)(
                    mod.device_put(np.ones(2), mod.devices()[0]),
                    mod.device_put(np.ones(2), mod.devices()[1]))
        messages.append(str(e.value).split(":")[0].split(",")[0])
    assert messages[0] == messages[1]


def test_non_array_argument_refused():
    # (JAX's message for it; its unspecialized path fails reading `.sharding` instead)
    with pytest.raises(ValueError, match="only supports jax.Array as input and output, "
                                         "but got <class 'numpy.ndarray'>"):
        mcp.colocated_python(_add_one)(np.ones(3))


def test_in_specs_checked():
    x = mjax.device_put(np.ones((3,), np.float32), mjax.devices()[0])
    f = mcp.colocated_python(_add_one).specialize(
        in_specs=((mjax.ShapeDtypeStruct((3,), np.float32),), {}))
    np.testing.assert_array_equal(np.asarray(f(x)), np.full(3, 2.0))
    with pytest.raises(ValueError, match=r"input 0 is int32\[3\], but its spec is float32"):
        f(mjax.device_put(np.ones((3,), np.int32), mjax.devices()[0]))
    g = mcp.colocated_python(_add_one).specialize(
        out_specs_fn=lambda s: mjax.ShapeDtypeStruct((4,), s.dtype))
    with pytest.raises(ValueError, match=r"output 0 is float32\[3\], but its spec is"):
        g(x)


def test_colocated_class_matches_jax():
    class Counter:
        def __init__(self, start):
            self.total = start

        def add(self, x):
            self.total = self.total + x
            return self.total

    results = []
    for mod, cp in ((jax, jcp), (mjax, mcp)):
        wrapped = cp.colocated_python_class(Counter)
        counter = wrapped(np.float32(10))
        x = mod.device_put(np.arange(3, dtype=np.float32), mod.devices()[0])
        results.append([np.asarray(counter.add(x)), np.asarray(counter.add(x))])
        assert wrapped.__name__ == "Counter"
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@several_devices
def test_serialization_round_trip():
    mesh = Mesh(np.array(mjax.devices()).reshape(2, 4), ("a", "b"))
    specs = {"w": mjax.ShapeDtypeStruct((4, 8), np.float32,
                                        sharding=NamedSharding(mesh, P("a", "b")))}
    leaves, treedef = mjax.tree_util.tree_flatten(specs)
    data = mser._serialize_specs(treedef, leaves, mjax.devices())
    back_treedef, back_leaves = mser._deserialize_specs(data)
    assert back_treedef == treedef
    (leaf,) = back_leaves
    assert leaf.shape == (4, 8) and leaf.dtype == np.float32
    assert leaf.sharding == specs["w"].sharding
    dl = mser.DeviceList(tuple(mjax.devices()[:3]))
    assert list(mser._deserialize(mser._serialize(dl))) == mjax.devices()[:3]
