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
