"""What checkpoint libraries (orbax) use besides array serialization, against real jax:
jax.experimental.pjit, jax._src.distributed.global_state, the JAX-private device
assignments of shardings, jit over two meshes of the same devices, and
make_array_from_single_device_arrays without a host round trip."""
from __future__ import annotations

import subprocess
import sys
import tracemalloc

import jax
import jax.extend.ifrt_programs as jax_ifrt_programs
import numpy as np
import pytest

import mjax
from mjax import _src
from mjax.experimental import pjit as mpjit
from mjax.extend import ifrt_programs
from mjax.sharding import Mesh, NamedSharding, P

from frontend_util import ON_TPU


def _jmesh(shape, names, devices=None):
    return jax.sharding.Mesh(np.array(devices or jax.devices()).reshape(shape), names)


def _mmesh(shape, names, devices=None):
    return Mesh(np.array(devices or mjax.devices()).reshape(shape), names)


def _needs_devices(n):
    """Skips on the TPU machine, whose one chip is mjax's and jax's only device, a test of
    `n` devices (elsewhere the suite has 8 CPU devices)."""
    if ON_TPU and min(len(mjax.devices()), len(jax.devices())) < n:
        pytest.skip(f"TPU: a mesh of {n} devices (the TPU machine has one chip)")


def test_pjit_is_deprecated_jit():
    with pytest.warns(DeprecationWarning, match="pjit.pjit has been deprecated"):
        pjit = mpjit.pjit
    mesh = _mmesh((len(mjax.devices()),), ("x",))     # (8 CPU devices; one chip)
    x = mjax.device_put(np.arange(8.0), NamedSharding(mesh, P("x")))
    out = pjit(lambda a: a * 2, out_shardings=NamedSharding(mesh, P()))(x)
    np.testing.assert_array_equal(np.asarray(out), np.arange(8.0) * 2)
    assert out.sharding == NamedSharding(mesh, P())
    with pytest.raises(AttributeError):
        mpjit.not_there   # noqa: B018


def test_src_distributed_global_state():
    state = _src.distributed.global_state
    jstate = jax._src.distributed.global_state
    assert (state.client, state.process_id, state.num_processes) == \
        (jstate.client, jstate.process_id, jstate.num_processes) == (None, 0, 1)
    assert _src.tree_util.flatten_one_level({"a": 1, "b": 2})[0] == \
        jax._src.tree_util.flatten_one_level({"a": 1, "b": 2})[0]


@pytest.mark.parametrize("order", [list(range(8)), [3, 1, 0, 2, 7, 6, 5, 4]])
def test_device_assignment(order):
    _needs_devices(8)
    ours = NamedSharding(_mmesh((4, 2), ("x", "y"), [mjax.devices()[i] for i in order]),
                         P("x"))
    theirs = jax.sharding.NamedSharding(
        _jmesh((4, 2), ("x", "y"), [jax.devices()[i] for i in order]),
        jax.sharding.PartitionSpec("x"))
    for attr in ("_device_assignment", "_addressable_device_assignment"):
        assert [d.id for d in getattr(ours, attr)] == [d.id for d in getattr(theirs, attr)]


@pytest.mark.parametrize("out_spec", [P(), P(None), P("x"), P(None, "x")])
def test_jit_over_two_meshes_of_the_same_devices(out_spec):
    _needs_devices(8)
    host = np.arange(64.0, dtype=np.float32).reshape(8, 8)
    m1, m2 = _mmesh((2, 4), ("x", "y")), _mmesh((8,), ("x",))
    j1, j2 = _jmesh((2, 4), ("x", "y")), _jmesh((8,), ("x",))
    x = mjax.device_put(host, NamedSharding(m1, P("x", "y")))
    jx = jax.device_put(host, jax.sharding.NamedSharding(j1, jax.sharding.PartitionSpec("x", "y")))
    out = mjax.jit(lambda a: a * 2 + 1, out_shardings=NamedSharding(m2, out_spec))(x)
    jout = jax.jit(lambda a: a * 2 + 1, out_shardings=jax.sharding.NamedSharding(
        j2, jax.sharding.PartitionSpec(*out_spec)))(jx)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(jout))
    assert out.sharding == NamedSharding(m2, out_spec)
    assert sorted((s.device.id, np.asarray(s.data).tolist()) for s in out.addressable_shards) \
        == sorted((s.device.id, np.asarray(s.data).tolist()) for s in jout.addressable_shards)


def test_jit_over_meshes_of_reordered_devices_is_refused_as_jax():
    _needs_devices(8)
    rev = mjax.devices()[::-1]
    x = mjax.device_put(np.ones((2, 4)), NamedSharding(_mmesh((2, 4), ("x", "y")), P("x")))
    with pytest.raises(ValueError, match="Received incompatible devices for jitted"):
        mjax.jit(lambda a: a, out_shardings=NamedSharding(_mmesh((8,), ("x",), rev), P()))(x)


@pytest.mark.parametrize("spec", [P("x", "y"), P(), P(None, "y")])
def test_single_device_arrays_assembled_on_device(spec):
    _needs_devices(8)
    mesh = _mmesh((4, 2), ("x", "y"))
    s = NamedSharding(mesh, spec)
    host = (np.arange(512 * 256) % 7).astype(np.float32).reshape(512, 256)
    index = s.devices_indices_map(host.shape)
    parts = [mjax.device_put(host[index[d]], d) for d in s._device_assignment]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        arr = mjax.make_array_from_single_device_arrays(host.shape, s, parts)
        grown = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert grown < host.nbytes // 4      # (no host copy of the shards: JAX makes none)
    np.testing.assert_array_equal(np.asarray(arr), host)
    assert arr.sharding == s
    np.testing.assert_array_equal(np.asarray(mjax.jit(lambda a: a.sum(0))(arr)),
                                  host.sum(0))


def test_scalar_with_unsharded_spec_entries():
    _needs_devices(2)
    mesh = _mmesh((2,), ("x",), mjax.devices()[:2])
    s = NamedSharding(mesh, P(None))
    js = jax.sharding.NamedSharding(_jmesh((2,), ("x",), jax.devices()[:2]),
                                    jax.sharding.PartitionSpec(None))
    assert s.shard_shape(()) == js.shard_shape(()) == ()
    assert list(s.devices_indices_map(()).values()) == list(js.devices_indices_map(()).values())
    a = mjax.make_array_from_callback((), s, lambda idx: np.array(4.0, np.float32)[idx])
    assert float(a) == 4.0


def test_extend_ifrt_programs_is_jaxlibs():
    assert ifrt_programs.ifrt_programs is jax_ifrt_programs.ifrt_programs


@pytest.mark.parametrize("module", ["jax", "mjax"])
def test_parse_flags_with_absl_parses_absl_flags(module):
    # absltest cases read --test_tmpdir once a program parsed flags through JAX (flax's
    # tests, orbax's); a fresh process, so that absl's flags start unparsed.
    if ON_TPU:      # (elsewhere a missing absl-py fails the test, as a missing dependency)
        pytest.importorskip("absl", reason="TPU: needs absl-py, a test dependency the TPU "
                                           "machine may lack")
    code = ("import sys; from absl import flags; from absl.testing import absltest; "
            f"import {module}; sys.argv = ['prog', '--jax_enable_x64', 'x']; "
            f"{module}.config.parse_flags_with_absl(); "
            f"print(flags.FLAGS.is_parsed(), bool(flags.FLAGS.test_tmpdir), "
            f"{module}.config.read('jax_enable_x64'))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["True", "True", "True"]
