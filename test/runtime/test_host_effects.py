"""Programs whose host callbacks run beside them (an accelerator's host transfers): their
runs are tracked so that effects_barrier waits for them. The CPU runs callbacks before an
execution returns, so here the flag is set by hand on a CPU program."""
import numpy as np

import mjax
from mjax.runtime import get_backend, host_effects

TEXT = """func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<3xf32>
  return %0 : tensor<3xf32>
}
"""


def test_runs_of_programs_calling_back_beside_them_are_waited_for():
    backend = get_backend("cpu")
    exe = backend.compile(TEXT, out_avals=[mjax.ShapeDtypeStruct((3,), np.float32)])
    assert not exe.async_callbacks and exe.direct_call() is not None
    exe.async_callbacks = True
    assert exe.direct_call() is None          # (the fast path would not keep the token)
    out, = exe.execute([backend.put(np.arange(3, dtype=np.float32))])
    assert list(host_effects.PENDING) == [tuple(exe.devices)]
    mjax.effects_barrier()
    assert host_effects.PENDING == {}
    np.testing.assert_array_equal(np.asarray(out), [0, 2, 4])


def test_callbacks_on_the_cpu_finish_before_the_call_returns():
    seen = []
    cpu = mjax.devices("cpu")[0]           # (also beside an accelerator)
    mjax.jit(lambda x: mjax.debug.callback(seen.append, x), device=cpu)(np.float32(2))
    assert seen and host_effects.PENDING == {}


def test_a_mesh_of_cpu_devices_runs_on_the_cpu_backend():
    """A jit over a mesh of the host CPU's devices compiles and runs on the CPU's backend,
    also beside a TPU (where it was compiled by the TPU's client before, and a program
    calling back failed: 'Unknown PjRt global device ID for IFRT device ID 1')."""
    cpus = mjax.devices("cpu")[:2]
    mesh = mjax.make_mesh((2,), ("d",), devices=cpus)
    spec = mjax.sharding.PartitionSpec("d")
    seen = []

    def body(x):
        mjax.debug.callback(lambda v: seen.append(np.asarray(v)), x)
        return x * 2.0
    f = mjax.shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec)
    x = np.arange(8, dtype=np.float32)
    out = mjax.jit(f)(mjax.device_put(x, mjax.sharding.NamedSharding(mesh, spec)))
    mjax.effects_barrier()
    np.testing.assert_array_equal(np.asarray(out), x * 2.0)
    assert {d.platform for d in out.devices()} == {"cpu"}
    assert sorted(np.concatenate(seen).tolist()) == x.tolist()
