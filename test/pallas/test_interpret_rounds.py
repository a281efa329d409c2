"""Interpreted Pallas TPU kernels whose instances (a chip's 2 cores, a shard_map's 2
devices) wait inside a pl.when for what another instance does LATER in its program:
passes/pallas_rounds.py runs them in rounds (lockstep cannot: the waiting instance's
wait comes first). Producer and consumer both ways round, a wait followed by work and a
signal back (ping-pong, also then a core_barrier on the barrier semaphore), a handoff
then a core_barrier, a wait in a nested pl.when, a remote DMA waited for before it is
started, a wait in each step of a grid, the cores of each device of a shard_map, and
true deadlocks, which raise PallasDeadlockError (JAX's interpreter would hang: never
run there). Values against JAX 0.10.2's TPU interpreter (its threads let the waiting
instance sleep) and NumPy; both interpret modes for the cores (JAX's interpret=True
refuses several cores: NumPy only). What rounds leave refused: a print (each round
would print again); a loop holding signals keeps lockstep and its limit."""
from __future__ import annotations

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle)
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402

import mjax  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402
from mjax.experimental.pallas.lockstep import PallasDeadlockError  # noqa: E402

from cpu_oracle import on_the_host_cpu  # noqa: E402
from test_multicore_mosaic import CORES, LIBS, _args, interpreting_as_v5p  # noqa: E402

ROWS = 8


def _mesh_kernel(J, P, T, k, x, n_out, interpret, sems=1, **kw):
    out = J.ShapeDtypeStruct(x.shape, x.dtype)
    return P.kernel(k, out_type=(out,) * n_out if n_out > 1 else out,
                    mesh=T.create_tensorcore_mesh("c", num_cores=CORES),
                    scratch_types=[T.VMEM(x.shape, x.dtype)] +
                    [T.SemaphoreType.REGULAR] * sems, interpret=interpret, **kw)(x)


def consumer_first(J, P, T, x, interpret, producer):
    """The consumer core's pl.when comes first: it waits, then reads the HBM buffer the
    producer core fills (and signals) in its later pl.when."""
    consumer = 1 - producer

    def k(x_hbm, o_hbm, buf_hbm, v, sem):
        c = J.lax.axis_index("c")

        @P.when(c == consumer)
        def _():
            P.semaphore_wait(sem, 1)
            T.sync_copy(buf_hbm, v)
            v[...] = v[...] * 2.0 + 1.0
            T.sync_copy(v, o_hbm)

        @P.when(c == producer)
        def _():
            T.sync_copy(x_hbm, v)
            v[...] = v[...] + 3.0
            T.sync_copy(v, buf_hbm)
            P.semaphore_signal(sem, 1, core_index=consumer)
    return _mesh_kernel(J, P, T, k, x, 2, interpret)


def ping_pong(J, P, T, x, interpret, barrier=False):
    """Core 1 waits inside its pl.when, works on what core 0 left in HBM and signals
    back; core 0 (later in the program) works, signals core 1, waits for its answer and
    works on. With `barrier`, then a core_barrier on the barrier semaphore, after which
    core 1 writes what core 0 wrote plus 100 into the buffer."""
    def k(x_hbm, o_hbm, buf_hbm, v, sem):
        c = J.lax.axis_index("c")
        pong(c, x_hbm, o_hbm, buf_hbm, v, sem)
        if barrier:
            T.core_barrier(T.get_barrier_semaphore(), core_axis_name="c")

            @P.when(c == 1)
            def _():
                T.sync_copy(o_hbm, v)
                v[...] = v[...] + 100.0
                T.sync_copy(v, buf_hbm)

    def pong(c, x_hbm, o_hbm, buf_hbm, v, sem):

        @P.when(c == 1)
        def _():
            P.semaphore_wait(sem, 1)
            T.sync_copy(buf_hbm, v)
            v[...] = v[...] * 2.0
            T.sync_copy(v, buf_hbm)
            P.semaphore_signal(sem, 1, core_index=0)

        @P.when(c == 0)
        def _():
            T.sync_copy(x_hbm, v)
            v[...] = v[...] + 1.0
            T.sync_copy(v, buf_hbm)
            P.semaphore_signal(sem, 1, core_index=1)
            P.semaphore_wait(sem, 1)
            T.sync_copy(buf_hbm, v)
            v[...] = v[...] + 5.0
            T.sync_copy(v, o_hbm)
    params = T.CompilerParams(collective_id=0) if barrier else None
    return _mesh_kernel(J, P, T, k, x, 2, interpret, compiler_params=params)


def handoff_then_barrier(J, P, T, x, interpret):
    """Core 1 waits for core 0's later handoff; then a core_barrier (its waits outside
    any pl.when, in the rounds too) before core 0 reads what core 1 wrote."""
    def k(x_hbm, o_hbm, buf_hbm, v, sem, sem2):
        c = J.lax.axis_index("c")

        @P.when(c == 1)
        def _():
            P.semaphore_wait(sem, 1)
            T.sync_copy(buf_hbm, v)
            v[...] = v[...] * 2.0 + 1.0
            T.sync_copy(v, o_hbm)

        @P.when(c == 0)
        def _():
            T.sync_copy(x_hbm, v)
            v[...] = v[...] + 3.0
            T.sync_copy(v, buf_hbm)
            P.semaphore_signal(sem, 1, core_index=1)
        T.core_barrier(sem2, core_axis_name="c")

        @P.when(c == 0)
        def _():
            T.sync_copy(o_hbm, v)
            v[...] = v[...] + 1.0
            T.sync_copy(v, buf_hbm)
    return _mesh_kernel(J, P, T, k, x, 2, interpret, sems=2)


KERNELS = {
    "consumer_first_0_to_1": (lambda J, P, T, x, i: consumer_first(J, P, T, x, i, 0),
                              lambda x: ((x + 3.0) * 2.0 + 1.0, x + 3.0)),
    "consumer_first_1_to_0": (lambda J, P, T, x, i: consumer_first(J, P, T, x, i, 1),
                              lambda x: ((x + 3.0) * 2.0 + 1.0, x + 3.0)),
    "ping_pong": (ping_pong, lambda x: ((x + 1.0) * 2.0 + 5.0, (x + 1.0) * 2.0)),
    "ping_pong_barrier_semaphore": (
        lambda J, P, T, x, i: ping_pong(J, P, T, x, i, barrier=True),
        lambda x: ((x + 1.0) * 2.0 + 5.0, (x + 1.0) * 2.0 + 5.0 + 100.0)),
    "handoff_then_barrier": (handoff_then_barrier,
                             lambda x: ((x + 3.0) * 2.0 + 1.0, (x + 3.0) * 2.0 + 2.0))}


def _x():
    return _args([((2 * ROWS, 128), np.float32)])[0]


def _mjax(name, x, interpret):
    with interpreting_as_v5p(mjax):
        return [np.asarray(o) for o in mjax.jit(
            lambda x: KERNELS[name][0](mjax, pl, pltpu, x, interpret))(x)]


@on_the_host_cpu
def _jax(name, x):
    """JAX's TPU interpret mode's values (on the chip: in a CPU-only child process)."""
    with interpreting_as_v5p(jax):
        return [np.asarray(o) for o in jax.jit(lambda x: KERNELS[name][0](
            jax, jpl, jpltpu, x, jpltpu.InterpretParams()))(x)]


@pytest.mark.parametrize("name", list(KERNELS))
def test_cores_values_match_jax_interpreter_and_numpy(name, capfd):
    x = _x()
    got = _mjax(name, x, pltpu.InterpretParams())
    want = _jax(name, x)
    expected = KERNELS[name][1](x)
    assert len(got) == len(want) == len(expected)
    for g, w, e in zip(got, want, expected):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(g, e)
    assert "non-zero" not in capfd.readouterr().out


@pytest.mark.parametrize("name", list(KERNELS))
def test_cores_values_match_numpy_with_interpret_true(name):
    x = _x()
    for g, e in zip(_mjax(name, x, True), KERNELS[name][1](x), strict=True):
        np.testing.assert_array_equal(g, e)


def test_true_deadlock_between_cores_raises():
    """Core 1 waits for 2 inside its pl.when; core 0 sends 1 later: JAX's interpreter
    hangs (not run), mjax's rounds find no instance able to move and raise."""
    def k(x_hbm, o_hbm, v, sem):
        c = mjax.lax.axis_index("c")

        @pl.when(c == 1)
        def _():
            pl.semaphore_wait(sem, 2)

        @pl.when(c == 0)
        def _():
            pl.semaphore_signal(sem, 1, core_index=1)
        pltpu.sync_copy(x_hbm, o_hbm)
    x = _x()
    errors = (PallasDeadlockError, mjax.errors.JaxRuntimeError)
    with interpreting_as_v5p(mjax), pytest.raises(errors, match="can never be satisfied"):
        mjax.jit(lambda x: _mesh_kernel(mjax, pl, pltpu, k, x, 1,
                                        pltpu.InterpretParams()))(x)


# ---- a shard_map's devices ----------------------------------------------------------------
N = 2


def _on_devices(J, P, T, kernel, n_scratch_vmem, sems, grid=None):
    def body(x):
        if grid is None:
            specs = dict(in_specs=[P.BlockSpec(memory_space=P.ANY)],
                         out_specs=P.BlockSpec(memory_space=P.ANY))
        else:
            block = P.BlockSpec((ROWS // grid, 128), lambda i: (i, 0))
            specs = dict(grid=(grid,), in_specs=[block], out_specs=block)
        return P.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype), **specs,
            scratch_shapes=[T.VMEM(x.shape, x.dtype)] * n_scratch_vmem + sems,
            compiler_params=T.CompilerParams(collective_id=0),
            interpret=T.InterpretParams())(x)
    mesh = J.make_mesh((N,), ("x",), devices=J.devices("cpu")[:N])
    spec = J.sharding.PartitionSpec("x")
    f = J.shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec, check_vma=False)
    x = np.arange(N * ROWS * 128, dtype=np.float32).reshape(N * ROWS, 128)
    return x, np.asarray(J.jit(f)(J.device_put(x, J.sharding.NamedSharding(mesh, spec))))


def remote_dma_waited_first(J, P, T):
    """Device 1 waits for a remote DMA (its wait_recv) that device 0 starts later in the
    program, then doubles what came; device 0 adds 1 to its own block."""
    def kernel(x_hbm, o_hbm, v, w, send, recv):
        me = J.lax.axis_index("x")
        copy = T.make_async_remote_copy(v, w, send, recv, device_id=(1,),
                                        device_id_type=P.DeviceIdType.MESH)

        @P.when(me == 1)
        def _():
            copy.wait_recv()
            w[...] = w[...] * 2.0
            T.sync_copy(w, o_hbm)

        @P.when(me == 0)
        def _():
            T.sync_copy(x_hbm, v)
            v[...] = v[...] + 1.0
            T.sync_copy(v, o_hbm)
            copy.start()
            copy.wait_send()
    return _on_devices(J, P, T, kernel, 2, [T.SemaphoreType.DMA] * 2)


def signal_ping_pong(J, P, T):
    """Device 1 waits inside its pl.when, then sends its block plus 10 to device 0 and
    signals; device 0 (later in the program) signals device 1, then waits for it and
    adds its own block."""
    def kernel(x_hbm, o_hbm, v, w, sem, send, recv):
        me = J.lax.axis_index("x")

        @P.when(me == 1)
        def _():
            P.semaphore_wait(sem, 1)
            T.sync_copy(x_hbm, v)
            v[...] = v[...] + 10.0
            T.sync_copy(v, o_hbm)
            copy = T.make_async_remote_copy(v, w, send, recv, device_id=(0,),
                                            device_id_type=P.DeviceIdType.MESH)
            copy.start()
            copy.wait_send()

        @P.when(me == 0)
        def _():
            P.semaphore_signal(sem, 1, device_id=(1,), device_id_type=P.DeviceIdType.MESH)
            copy = T.make_async_remote_copy(v, w, send, recv, device_id=(0,),
                                            device_id_type=P.DeviceIdType.MESH)
            copy.wait_recv()
            T.sync_copy(x_hbm, v)
            v[...] = v[...] + w[...]
            T.sync_copy(v, o_hbm)
    return _on_devices(J, P, T, kernel, 2, [T.SemaphoreType.REGULAR] +
                       [T.SemaphoreType.DMA] * 2)


def wait_in_each_grid_step(J, P, T):
    """A grid of 2 steps: in each, device 1 waits inside its pl.when for device 0's
    later signal, then writes its block doubled plus the step; device 0 its block plus
    the step."""
    def kernel(x_ref, o_ref, sem):
        me = J.lax.axis_index("x")
        i = P.program_id(0)

        @P.when(me == 1)
        def _():
            P.semaphore_wait(sem, 1)
            o_ref[...] = x_ref[...] * 2.0 + i.astype(x_ref.dtype)

        @P.when(me == 0)
        def _():
            o_ref[...] = x_ref[...] + i.astype(x_ref.dtype)
            P.semaphore_signal(sem, 1, device_id=(1,), device_id_type=P.DeviceIdType.MESH)
    return _on_devices(J, P, T, kernel, 0, [T.SemaphoreType.REGULAR], grid=2)


def _grid_steps(x):
    step = np.tile(np.repeat([0.0, 1.0], ROWS // 2), N)[:, None]
    doubled = np.concatenate([np.ones((ROWS, 1)), np.full((ROWS, 1), 2.0)])
    return x * doubled + step


DEVICE_KERNELS = {
    "wait_in_each_grid_step": (wait_in_each_grid_step, _grid_steps),
    "remote_dma_waited_first": (remote_dma_waited_first,
                                lambda x: np.concatenate([x[:ROWS] + 1.0,
                                                          (x[:ROWS] + 1.0) * 2.0])),
    "signal_ping_pong": (signal_ping_pong,
                         lambda x: np.concatenate([x[:ROWS] + x[ROWS:] + 10.0,
                                                   x[ROWS:] + 10.0]))}


@on_the_host_cpu
def _jax_devices(name):
    return DEVICE_KERNELS[name][0](*LIBS["jax"])


@pytest.mark.parametrize("name", list(DEVICE_KERNELS))
def test_devices_values_match_jax_interpreter_and_numpy(name, capfd):
    x, got = DEVICE_KERNELS[name][0](*LIBS["mjax"])
    assert "non-zero" not in capfd.readouterr().out
    np.testing.assert_array_equal(got, DEVICE_KERNELS[name][1](x))
    _, want = _jax_devices(name)
    np.testing.assert_array_equal(got, want)


def test_true_deadlock_between_devices_raises():
    """Both devices wait inside their pl.when for a signal the other sends only after
    its own wait: JAX's interpreter hangs (not run), mjax's raises."""
    J, P, T = LIBS["mjax"]

    def kernel(x_hbm, o_hbm, v, sem):
        me = J.lax.axis_index("x")
        for d in range(N):
            @P.when(me == d)
            def _():
                P.semaphore_wait(sem, 1)
                P.semaphore_signal(sem, 1, device_id=(1 - d,),
                                   device_id_type=P.DeviceIdType.MESH)
        T.sync_copy(x_hbm, o_hbm)
    errors = (PallasDeadlockError, mjax.errors.JaxRuntimeError)
    with pytest.raises(errors, match="can never be satisfied.*before step 1 "):
        _on_devices(J, P, T, kernel, 1, [T.SemaphoreType.REGULAR])


# ---- cores of each device, nested pl.when, what stays refused ----------------------------
def _cores_handoff(J, P, T, extra):
    """consumer_first's handoff from core 0 to core 1, the consumer's wait inside a
    pl.when nested in another; core 1 adds 100 times its device's index."""
    def k(x_hbm, o_hbm, buf_hbm, v, sem):
        c = J.lax.axis_index("c")
        d = J.lax.axis_index("d") if extra == "device" else 0

        @P.when(c == 1)
        def _():
            @P.when(c >= 1)
            def _():
                P.semaphore_wait(sem, 1)
                T.sync_copy(buf_hbm, v)
                v[...] = v[...] * 2.0 + 100.0 * J.numpy.float32(d)
                T.sync_copy(v, o_hbm)

        @P.when(c == 0)
        def _():
            T.sync_copy(x_hbm, v)
            v[...] = v[...] + 3.0
            if extra == "print":
                P.debug_print("sent")
            T.sync_copy(v, buf_hbm)
            P.semaphore_signal(sem, 1, core_index=1)
    return k


def test_cores_of_each_device_run_in_rounds():
    """The rounds of a multi-core kernel under a shard_map of 2 devices: each device's
    cores hand off as consumer_first does (NumPy's values: JAX's interpreter here is
    checked on the cores alone)."""
    J, P, T = LIBS["mjax"]

    def body(x):
        return _mesh_kernel(J, P, T, _cores_handoff(J, P, T, "device"), x, 2,
                            T.InterpretParams())
    mesh = J.make_mesh((2,), ("d",), devices=J.devices("cpu")[:2])
    spec = J.sharding.PartitionSpec("d")
    f = J.shard_map(body, mesh=mesh, in_specs=spec, out_specs=(spec, spec),
                    check_vma=False)
    x = _args([((4 * ROWS, 128), np.float32)])[0]
    with interpreting_as_v5p(J):
        o, buf = J.jit(f)(J.device_put(x, J.sharding.NamedSharding(mesh, spec)))
    sent = x + 3.0
    want = np.concatenate([sent[:2 * ROWS] * 2.0, sent[2 * ROWS:] * 2.0 + 100.0])
    np.testing.assert_array_equal(np.asarray(o), want)
    np.testing.assert_array_equal(np.asarray(buf), sent)


@on_the_host_cpu
def _jax_nested(x):
    with interpreting_as_v5p(jax):
        return [np.asarray(o) for o in jax.jit(lambda x: _mesh_kernel(
            jax, jpl, jpltpu, _cores_handoff(jax, jpl, jpltpu, None), x, 2,
            jpltpu.InterpretParams()))(x)]


def test_wait_in_a_nested_when():
    x = _x()
    with interpreting_as_v5p(mjax):
        got = mjax.jit(lambda x: _mesh_kernel(mjax, pl, pltpu, _cores_handoff(
            mjax, pl, pltpu, None), x, 2, pltpu.InterpretParams()))(x)
    want = _jax_nested(x)
    for g, w, e in zip(got, want, ((x + 3.0) * 2.0, x + 3.0), strict=True):
        np.testing.assert_array_equal(np.asarray(g), w)
        np.testing.assert_array_equal(w, e)


def test_print_in_a_kernel_needing_rounds_refused():
    x = _x()
    with interpreting_as_v5p(mjax), pytest.raises(NotImplementedError,
                                                  match="print .* rounds"):
        mjax.jit(lambda x: _mesh_kernel(mjax, pl, pltpu, _cores_handoff(
            mjax, pl, pltpu, "print"), x, 2, pltpu.InterpretParams()))(x)


def test_signal_in_a_loop_keeps_lockstep():
    """A loop holding a semaphore op keeps the kernel in lockstep (a step runs
    predicated, which such a loop cannot): its wait for a later signal raises the
    lockstep limit, as before, a NotImplementedError."""
    def k(x_hbm, o_hbm, v, sem):
        c = mjax.lax.axis_index("c")

        @pl.when(c == 1)
        def _():
            pl.semaphore_wait(sem, 2)

        def body(i, carry):
            @pl.when(c == 0)
            def _():
                pl.semaphore_signal(sem, 1, core_index=1)
            return carry
        mjax.lax.fori_loop(0, 2, body, 0)
        pltpu.sync_copy(x_hbm, o_hbm)
    # (the limit is a NotImplementedError, and a PallasDeadlockError as before)
    with interpreting_as_v5p(mjax), pytest.raises(NotImplementedError,
                                                  match="lockstep cannot run") as info:
        mjax.jit(lambda x: _mesh_kernel(mjax, pl, pltpu, k, x, 1,
                                        pltpu.InterpretParams()))(_x())
    assert isinstance(info.value, PallasDeadlockError)


def test_bounds_checked_in_rounds():
    """A kernel run in rounds keeps the TPU interpreter's bounds checks: the consumer
    core reads past its VMEM buffer after its wait (JAX's 'Out-of-bounds read');
    interpret=True, which checks no bounds, runs it."""
    def k(x_hbm, o_hbm, v, sem):
        c = mjax.lax.axis_index("c")

        @pl.when(c == 1)
        def _():
            pl.semaphore_wait(sem, 1)
            v[pl.ds(0, ROWS), :] = v[pl.ds(c * 100, ROWS), :] + 1.0

        @pl.when(c == 0)
        def _():
            pl.semaphore_signal(sem, 1, core_index=1)
        pltpu.sync_copy(x_hbm, o_hbm)
    x = _x()
    with interpreting_as_v5p(mjax), pytest.raises(Exception, match="Out-of-bounds read"):
        np.asarray(mjax.jit(lambda x: _mesh_kernel(mjax, pl, pltpu, k, x, 1,
                                                   pltpu.InterpretParams()))(x))
    ok = lambda x: _mesh_kernel(mjax, pl, pltpu, k, x, 1, True)  # noqa: E731
    with interpreting_as_v5p(mjax):     # (interpret=True checks no bounds)
        np.testing.assert_array_equal(np.asarray(mjax.jit(ok)(x)), x)
