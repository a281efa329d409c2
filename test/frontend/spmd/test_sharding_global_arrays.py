"""make_array_from_callback / _single_device_arrays / _process_local_data on 8 CPU
devices, against NumPy and jax (shard contents, shardings, errors)."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import mjax
from mjax.sharding import Mesh, NamedSharding, P, SingleDeviceSharding


@pytest.fixture
def mesh():
    return Mesh(np.array(mjax.devices()[:8]).reshape(4, 2), ("x", "y"))


@pytest.fixture
def jmesh():
    return jax.sharding.Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("x", "y"))


def _shards(a):
    return sorted((s.device.id, tuple((i.start, i.stop) for i in s.index),
                   np.asarray(s.data).tolist()) for s in a.addressable_shards)


@pytest.mark.parametrize("spec", [P("x", "y"), P("x"), P(None, "y"), P(), P(("x", "y"))])
def test_make_array_from_callback_matches_jax(mesh, jmesh, spec):
    host = np.arange(8 * 6, dtype=np.float32).reshape(8, 6)
    if spec == P(("x", "y")):
        host = host.reshape(48)[:16].reshape(16)
    asked = []

    def cb(index):
        asked.append(index)
        return host[index]
    ours = mjax.make_array_from_callback(host.shape, NamedSharding(mesh, spec), cb)
    theirs = jax.make_array_from_callback(
        host.shape, jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec(*spec)),
        lambda i: host[i])
    np.testing.assert_array_equal(np.asarray(ours), host)
    assert ours.sharding == NamedSharding(mesh, spec)
    assert ours.dtype == theirs.dtype
    assert _shards(ours) == _shards(theirs)
    # Replicas of one shard ask the callback once.
    assert len(asked) == len({tuple((s.start, s.stop) for s in i) for i in asked})


def test_make_array_from_callback_computes_under_jit(mesh):
    host = np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)
    x = mjax.make_array_from_callback((8, 4), NamedSharding(mesh, P("x")),
                                      lambda i: host[i])
    out = mjax.jit(lambda v: (v * 2).sum(0))(x)
    np.testing.assert_allclose(out, (host * 2).sum(0), rtol=1e-6)


def test_make_array_from_callback_dtype_and_errors(mesh):
    x = mjax.make_array_from_callback((8,), NamedSharding(mesh, P("x")),
                                      lambda i: np.arange(8.0)[i])
    assert x.dtype == np.float32          # float64 with x64 off, as JAX
    one = mjax.make_array_from_callback((3,), SingleDeviceSharding(mjax.devices()[1]),
                                        lambda i: np.arange(3, dtype=np.int32)[i])
    assert one.devices() == {mjax.devices()[1]}
    np.testing.assert_array_equal(one, [0, 1, 2])
    with pytest.raises(ValueError, match="shard shape"):
        mjax.make_array_from_callback((8,), NamedSharding(mesh, P("x")),
                                      lambda i: np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="evenly divide"):
        mjax.make_array_from_callback((6,), NamedSharding(mesh, P("x")),
                                      lambda i: np.zeros(2, np.float32))


def test_make_array_from_single_device_arrays(mesh, jmesh):
    host = np.arange(48, dtype=np.int32).reshape(8, 6)
    s = NamedSharding(mesh, P("x", "y"))
    index = s.devices_indices_map(host.shape)
    parts = [mjax.device_put(host[index[d]], d) for d in mesh.devices.flat]
    ours = mjax.make_array_from_single_device_arrays(host.shape, s, parts[::-1])
    np.testing.assert_array_equal(np.asarray(ours), host)
    js = jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec("x", "y"))
    jindex = js.devices_indices_map(host.shape)
    theirs = jax.make_array_from_single_device_arrays(
        host.shape, js, [jax.device_put(host[jindex[d]], d) for d in jmesh.devices.flat])
    assert _shards(ours) == _shards(theirs)
    with pytest.raises(ValueError, match="7 arrays"):
        mjax.make_array_from_single_device_arrays(host.shape, s, parts[:7])
    with pytest.raises(ValueError, match="shard shape"):
        mjax.make_array_from_single_device_arrays(
            host.shape, s, [mjax.device_put(np.zeros((4, 3), np.int32), d)
                            for d in mesh.devices.flat])
    with pytest.raises(ValueError, match="two arrays"):
        mjax.make_array_from_single_device_arrays(host.shape, s, [parts[0]] * 8)


def test_make_array_from_process_local_data_one_process(mesh, jmesh):
    host = np.arange(32, dtype=np.float32).reshape(8, 4)
    ours = mjax.make_array_from_process_local_data(NamedSharding(mesh, P("x")), host)
    theirs = jax.make_array_from_process_local_data(
        jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec("x")), host)
    np.testing.assert_array_equal(np.asarray(ours), host)
    assert _shards(ours) == _shards(theirs)
    # (one process: a global shape other than the data's is JAX's ValueError)
    for lib, sharding in ((mjax, NamedSharding(mesh, P("x"))),
                          (jax, jax.sharding.NamedSharding(jmesh,
                                                           jax.sharding.PartitionSpec("x")))):
        with pytest.raises(ValueError, match="global_shape should be None or equal"):
            lib.make_array_from_process_local_data(sharding, host, global_shape=(16, 4))
    # A pytree of host data, with a PartitionSpec of the set_mesh mesh, as JAX takes it.
    batch = {"ids": np.arange(16, dtype=np.int32).reshape(8, 2), "w": host}
    with mjax.set_mesh(mesh):
        ours = mjax.make_array_from_process_local_data(P("x"), batch)
    with jax.set_mesh(jmesh):
        theirs = jax.make_array_from_process_local_data(jax.sharding.PartitionSpec("x"),
                                                        batch)
    for k in batch:
        np.testing.assert_array_equal(np.asarray(ours[k]), batch[k])
        assert _shards(ours[k]) == _shards(theirs[k])


def test_addressable_data_and_devices_indices_map_as_jax():
    def run(lib):
        mesh = lib.make_mesh((4, 2), ("a", "b"))
        sharding = lib.sharding.NamedSharding(mesh, lib.P("a", "b"))
        arr = lib.device_put(np.arange(64.0).reshape(8, 8), sharding)
        index = sharding.addressable_devices_indices_map((8, 8))
        return ({d.id: i for d, i in index.items()},
                [np.asarray(arr.addressable_data(k)) for k in (0, 5)])
    mine, theirs = run(mjax), run(jax)
    assert mine[0] == theirs[0]
    for m, t in zip(mine[1], theirs[1]):
        np.testing.assert_array_equal(m, t)
