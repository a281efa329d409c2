"""mjax.experimental.array_serialization (TensorStore checkpointing of sharded arrays) on
8 CPU devices, against real jax's module: specs, files each writes that the other reads,
round trips into other shardings, shapes and dtypes, and the async manager."""
from __future__ import annotations

import asyncio
import os

import jax
import numpy as np
import pytest
from jax.experimental.array_serialization import serialization as jser
from jax.experimental.array_serialization import tensorstore_impl as jts

import mjax
from mjax.experimental.array_serialization import serialization as mser
from mjax.experimental.array_serialization import tensorstore_impl as mts
from mjax.sharding import Mesh, NamedSharding, P, SingleDeviceSharding

SPECS = [P("x", "y"), P("x"), P(None, "y"), P(), P(("x", "y"))]


@pytest.fixture
def mesh():
    return Mesh(np.array(mjax.devices()[:8]).reshape(4, 2), ("x", "y"))


@pytest.fixture
def jmesh():
    return jax.sharding.Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("x", "y"))


def _host(shape=(8, 6), dtype=np.float32):
    return (np.arange(np.prod(shape)) * 0.5 - 3).astype(dtype).reshape(shape)


def _shards(a):
    return sorted((s.device.id, tuple((i.start, i.stop) for i in s.index), s.replica_id,
                   np.asarray(s.data).tolist()) for s in a.addressable_shards)


@pytest.mark.parametrize("path", ["/ckpt/a/b", "/ckpt/dir/", "gs://bucket/x/arr",
                                  "s3://bucket/x/arr"])
@pytest.mark.parametrize("ocdbt", [True, False])
@pytest.mark.parametrize("driver", ["zarr3", "zarr"])
def test_get_tensorstore_spec_matches_jax(path, ocdbt, driver):
    assert mts.get_tensorstore_spec(path, ocdbt=ocdbt, driver=driver) == \
        jts.get_tensorstore_spec(path, ocdbt=ocdbt, driver=driver)
    assert mts.get_tensorstore_spec(path, ocdbt=ocdbt, process_idx=3, driver=driver) == \
        jts.get_tensorstore_spec(path, ocdbt=ocdbt, process_idx=3, driver=driver)
    assert mser.get_tensorstore_spec(path) == jser.get_tensorstore_spec(path)
    assert mser.is_remote_storage(path) == jser.is_remote_storage(path)


def test_relative_ocdbt_path_is_refused_as_jax():
    with pytest.raises(ValueError, match="should be absolute"):
        jts.get_tensorstore_spec("rel/arr")
    with pytest.raises(ValueError, match="should be absolute"):
        mts.get_tensorstore_spec("rel/arr")


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("driver", ["zarr3", "zarr"])
def test_metadata_matches_jax(mesh, jmesh, spec, driver):
    host = _host((16, 6)) if spec != P(("x", "y")) else _host((16,))
    ours = mjax.device_put(host, NamedSharding(mesh, spec))
    theirs = jax.device_put(host, jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec(*spec)))
    assert mts._get_tensorstore_metadata(ours, driver=driver) == \
        jts._get_tensorstore_metadata(theirs, driver=driver)


def test_chunk_shape_matches_jax():
    for shape, target in [((1024, 1024), 1 << 20), ((6, 10, 14), 64), ((7, 11), 10),
                          ((0, 4), 8), ((), 8), ((2, 3, 5, 49), 16)]:
        assert mts._compute_chunk_shape(shape, np.dtype(np.float32), target) == \
            jts._compute_chunk_shape(shape, np.dtype(np.float32), file_size_target=target)


@pytest.mark.parametrize("spec", SPECS)
def test_round_trip_matches_jax_shards(tmp_path, mesh, jmesh, spec):
    host = _host((16, 6)) if spec != P(("x", "y")) else _host((16,))
    ours = mjax.device_put(host, NamedSharding(mesh, spec))
    jspec = jax.sharding.PartitionSpec(*spec)
    theirs = jax.device_put(host, jax.sharding.NamedSharding(jmesh, jspec))
    mts._run_serialization([ours], [mts.get_tensorstore_spec(str(tmp_path / "m"), arr=ours)])
    jts._run_serialization([theirs], [jts.get_tensorstore_spec(str(tmp_path / "j"),
                                                               arr=theirs)])
    # each reads what the other wrote, into another sharding
    (back,) = mts._run_deserialization([NamedSharding(mesh, P())],
                                       [mts.get_tensorstore_spec(str(tmp_path / "j"))])
    (jback,) = jts._run_deserialization(
        [jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec())],
        [jts.get_tensorstore_spec(str(tmp_path / "m"))])
    np.testing.assert_array_equal(np.asarray(back), host)
    np.testing.assert_array_equal(np.asarray(jback), host)
    (same,) = mts._run_deserialization([NamedSharding(mesh, spec)],
                                       [mts.get_tensorstore_spec(str(tmp_path / "m"))])
    assert same.sharding == ours.sharding
    assert _shards(same) == _shards(theirs)


def test_deserialize_larger_shape_and_dtype(tmp_path, mesh, jmesh):
    host = _host((6, 4), np.float32)
    path = str(tmp_path / "a")
    mts._run_serialization([mjax.device_put(host, NamedSharding(mesh, P("y")))],
                           [mts.get_tensorstore_spec(path, ocdbt=False)])
    shape, dtype = (8, 6), np.int32
    (ours,) = mts._run_deserialization([NamedSharding(mesh, P("x", "y"))],
                                       [mts.get_tensorstore_spec(path, ocdbt=False)],
                                       [shape], [dtype])
    (theirs,) = jts._run_deserialization(
        [jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec("x", "y"))],
        [jts.get_tensorstore_spec(path, ocdbt=False)], [shape], [dtype])
    assert ours.dtype == theirs.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    expected = np.zeros(shape, np.int32)
    expected[:6, :4] = host.astype(np.int32)
    np.testing.assert_array_equal(np.asarray(ours), expected)


def test_async_deserialize_shape_dtype_struct_and_single_device(tmp_path, mesh):
    host = _host((4, 4))
    path = str(tmp_path / "s")
    asyncio.run(mts.async_serialize(host, mts.get_tensorstore_spec(path)))  # (NumPy in)
    target = mjax.ShapeDtypeStruct((4, 4), np.float32, sharding=NamedSharding(mesh, P("x")))
    out = asyncio.run(mts.async_deserialize(target, mts.get_tensorstore_spec(path)))
    assert out.sharding == target.sharding
    np.testing.assert_array_equal(np.asarray(out), host)
    dev = mjax.devices()[3]
    one = asyncio.run(mts.async_deserialize(SingleDeviceSharding(dev),
                                            mts.get_tensorstore_spec(path)))
    assert one.devices() == {dev}
    np.testing.assert_array_equal(np.asarray(one), host)
    with pytest.raises(TypeError, match="jax.sharding.Sharding"):
        asyncio.run(mts.async_deserialize("x", mts.get_tensorstore_spec(path)))


def test_global_async_checkpoint_manager(tmp_path, mesh, jmesh):
    arrays = [mjax.device_put(_host((8, 4)), NamedSharding(mesh, P("x", "y"))),
              mjax.device_put(_host((4,), np.int32), NamedSharding(mesh, P()))]
    paths = [str(tmp_path / "first"), str(tmp_path / "second")]
    committed = []
    manager = mser.GlobalAsyncCheckpointManager()
    assert isinstance(manager, mser.GlobalAsyncCheckpointManagerBase)
    manager.serialize_with_paths(arrays, paths, on_commit_callback=lambda: committed.append(1))
    manager.wait_until_finished()
    assert committed == [1]
    shardings = [NamedSharding(mesh, P(None, "x")), NamedSharding(mesh, P("y"))]
    restored = manager.deserialize_with_paths(shardings, paths)
    jm = jser.GlobalAsyncCheckpointManager()
    jrestored = jm.deserialize_with_paths(
        [jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec(None, "x")),
         jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec("y"))], paths)
    for r, j, a, s in zip(restored, jrestored, arrays, shardings):
        assert r.sharding == s
        np.testing.assert_array_equal(np.asarray(r), np.asarray(a))
        assert _shards(r) == _shards(j)
    assert os.path.isdir(paths[0])


def test_manager_reports_thread_errors(tmp_path, mesh):
    manager = mser.GlobalAsyncCheckpointManager()

    def fail():
        raise OSError("commit failed")
    manager.serialize_with_paths([mjax.numpy.ones(3)], [str(tmp_path / "e")],
                                 on_commit_callback=fail)
    with pytest.raises(OSError, match="commit failed"):
        manager.wait_until_finished()
    manager.check_for_errors()          # (raised once)


def test_limit_in_flight_bytes():
    async def run():
        limit = mts._LimitInFlightBytes(10)
        await limit.wait_for_bytes(6)
        waiter = asyncio.ensure_future(limit.wait_for_bytes(6))
        await asyncio.sleep(0.01)
        assert not waiter.done()
        await limit.release_bytes(6)
        await asyncio.wait_for(waiter, 1)
        with pytest.raises(ValueError, match="Requested more bytes"):
            await limit.wait_for_bytes(11)
    asyncio.run(run())
