"""Semaphores that outlive a grid step in TPU interpret mode on a shard_map's devices
(passes/pallas_mesh.py): a remote signal in step 0 of a kernel's grid waited for in
step 1, on a REGULAR scratch semaphore and on the barrier semaphore (one per kernel, as
JAX's interpreter keeps one per collective id: every get_barrier_semaphore() names it,
carried from step to step). Values against JAX 0.10.2's TPU interpreter and NumPy; a
lost signal would raise (the wait finds too little), an extra one would be reported at
kernel exit ("non-zero")."""
from __future__ import annotations

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle)
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402

from cpu_oracle import on_the_host_cpu  # noqa: E402
import mjax  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402

LIBS = {"jax": (jax, jpl, jpltpu), "mjax": (mjax, pl, pltpu)}
N = 4


def _kernel(J, P, T, which):
    """Step 0 signals the right neighbour by 1 + this device's index; step 1 waits for
    the left neighbour's signal (`which`: the scratch semaphore, the barrier semaphore,
    or the barrier semaphore taken again for the wait)."""
    def kernel(x_ref, o_ref, sem):
        i = P.program_id(0)
        me = J.lax.axis_index("x")
        s = T.get_barrier_semaphore() if which != "regular" else sem

        @P.when(i == 0)
        def _():
            P.semaphore_signal(s, 1 + me, device_id=((me + 1) % N,))

        @P.when(i == 1)
        def _():
            w = T.get_barrier_semaphore() if which == "barrier_again" else s
            P.semaphore_wait(w, 1 + (me + N - 1) % N)
        o_ref[...] = x_ref[...] * 2.0 + i.astype(x_ref.dtype)
    return kernel


def _run(lib, which):
    J, P, T = LIBS[lib]

    def body(x):
        return P.pallas_call(
            _kernel(J, P, T, which), out_shape=J.ShapeDtypeStruct(x.shape, x.dtype),
            grid=(2,), in_specs=[P.BlockSpec((8, 128), lambda i: (i, 0))],
            out_specs=P.BlockSpec((8, 128), lambda i: (i, 0)),
            scratch_shapes=[T.SemaphoreType.REGULAR],
            compiler_params=T.CompilerParams(collective_id=0),
            interpret=T.InterpretParams())(x)
    mesh = J.make_mesh((N,), ("x",), devices=J.devices("cpu")[:N])
    spec = J.sharding.PartitionSpec("x")
    f = J.shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec, check_vma=False)
    x = np.arange(N * 16 * 128, dtype=np.float32).reshape(N * 16, 128)
    return x, np.asarray(J.jit(f)(J.device_put(x, J.sharding.NamedSharding(mesh, spec))))


@on_the_host_cpu
def _jax_run(which):
    """_run of JAX's interpreter (on the chip: in a CPU-only child process,
    test/cpu_oracle.py; with a TPU backend beside it JAX's interpreter fails there)."""
    return _run("jax", which)


@pytest.mark.parametrize("which", ["regular", "barrier", "barrier_again"])
def test_signal_waited_for_in_a_later_grid_step(which, capfd):
    x, got = _run("mjax", which)
    assert "non-zero" not in capfd.readouterr().out
    step = np.tile(np.repeat([0.0, 1.0], 8), N)[:, None]
    np.testing.assert_array_equal(got, x * 2.0 + step)
    _, want = _jax_run(which)
    np.testing.assert_array_equal(got, want)
