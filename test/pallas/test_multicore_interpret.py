"""Multi-core Pallas TPU kernels whose TensorCores talk to each other, in interpret mode
(passes/pallas_cores.py: the cores run in lockstep, their device's HBM shared, their
VMEM, SMEM and semaphores each their own): semaphore_signal(core_index=),
pltpu.core_barrier (a regular and the barrier semaphore), make_async_remote_copy with
device_id={core_axis: c} (the tpu/core_map guide's swap_cores), a core reading from HBM
what the other core wrote (an operand or a run_scoped HBM buffer), semaphore_read of
another core's signals, inside a shard_map; a wait only the other core's later op
satisfies (the cores then run in rounds: passes/pallas_rounds.py, more cases in
test_interpret_rounds.py).

Values against JAX 0.10.2's TPU interpreter (pltpu.InterpretParams: it runs the cores in
threads) and NumPy, both libraries told the target is a v5p of 2 cores
(test_multicore_mosaic's as_v5p). JAX's interpreter refuses a device_id naming the core
axis (NotImplementedError) and its interpret=True refuses kernels over several cores:
there mjax's values are checked against NumPy only, and JAX's refusal is checked too."""
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
from test_multicore_mosaic import (CORES, LIBS, TALKING, _args, as_v5p,  # noqa: E402
                                   interpreting_as_v5p)


def _swapped(x):
    h = x.shape[1] // 2
    return np.concatenate([x[:, h:], x[:, :h]], axis=1) * 2


# ---- more kernels (J, P, T: jax or mjax and their pallas modules) ------------------------
def hbm_handoff(J, P, T, **kw):
    """Each core writes its half of `o` (HBM), then after a core_barrier reads the half
    the other core wrote and stores it, plus 10 times its index, into `p`: run one core
    after the other, core 0 would read what core 1 had not written yet."""
    def f(x):
        rows = x.shape[0] // CORES
        out = J.ShapeDtypeStruct(x.shape, x.dtype)

        def k(x_hbm, o_hbm, p_hbm, v, sem):
            c = J.lax.axis_index("c")
            T.sync_copy(x_hbm.at[P.ds(c * rows, rows)], v)
            T.sync_copy(v, o_hbm.at[P.ds(c * rows, rows)])
            T.core_barrier(sem, core_axis_name="c")
            T.sync_copy(o_hbm.at[P.ds((1 - c) * rows, rows)], v)
            v[...] = v[...] + 10.0 * c.astype(v.dtype)
            T.sync_copy(v, p_hbm.at[P.ds(c * rows, rows)])
        return P.kernel(k, out_type=(out, out),
                        mesh=T.create_tensorcore_mesh("c", num_cores=CORES),
                        scratch_types=[T.VMEM((rows, x.shape[1]), x.dtype),
                                       T.SemaphoreType.REGULAR], **kw)(x)

    def want(x):
        h = x.shape[0] // 2
        return x, np.concatenate([x[h:], x[:h] + 10.0])
    return f, want


def signal_counts(J, P, T, **kw):
    """Core c signals the other core's semaphore by 2 + c, then (after a barrier on the
    barrier semaphore) reads its own count, writes it out and waits it back to zero."""
    def f(x):
        def k(x_hbm, o_hbm, v, sem):
            c = J.lax.axis_index("c")
            P.semaphore_signal(sem, 2 + c, core_index=1 - c)
            T.core_barrier(T.get_barrier_semaphore(), core_axis_name="c")
            n = P.semaphore_read(sem)
            T.sync_copy(x_hbm.at[c], v)
            v[...] = v[...] * 0.0 + n.astype(v.dtype)
            T.sync_copy(v, o_hbm.at[c])
            P.semaphore_wait(sem, n)
        return P.kernel(k, out_type=J.ShapeDtypeStruct(x.shape, x.dtype),
                        mesh=T.create_tensorcore_mesh("c", num_cores=CORES),
                        scratch_types=[T.VMEM(x.shape[1:], x.dtype),
                                       T.SemaphoreType.REGULAR],
                        compiler_params=T.CompilerParams(collective_id=0), **kw)(x)
    return f, lambda x: np.stack([np.full(x.shape[1:], 3.0), np.full(x.shape[1:], 2.0)])


def exact_waits(J, P, T, **kw):
    """Core c signals the other core's semaphore by 2 + c and waits for exactly what the
    other sends it (a wait for more would never be satisfied), then scales its block."""
    def f(x):
        def k(x_hbm, o_hbm, v, sem):
            c = J.lax.axis_index("c")
            P.semaphore_signal(sem, 2 + c, core_index=1 - c)
            P.semaphore_wait(sem, 3 - c)
            T.sync_copy(x_hbm.at[c], v)
            v[...] = v[...] * (3 - c).astype(v.dtype)
            T.sync_copy(v, o_hbm.at[c])
        return P.kernel(k, out_type=J.ShapeDtypeStruct(x.shape, x.dtype),
                        mesh=T.create_tensorcore_mesh("c", num_cores=CORES),
                        scratch_types=[T.VMEM(x.shape[1:], x.dtype),
                                       T.SemaphoreType.REGULAR], **kw)(x)
    return f, lambda x: x * np.array([3.0, 2.0], np.float32)[:, None, None]


def scoped_hbm(J, P, T, **kw):
    """A run_scoped buffer in HBM is the cores' one buffer (JAX's interpreter shares it,
    with allow_hbm_allocation_in_run_scoped): core 0 writes it, core 1 reads it after a
    core_barrier."""
    def f(x):
        x_ref, y_ref = J.new_ref(x), J.new_ref(J.numpy.zeros_like(x))
        params = kw.get("interpret")
        if params is not None and not isinstance(params, bool):
            params = T.InterpretParams(allow_hbm_allocation_in_run_scoped=True)

        @P.core_map(T.create_tensorcore_mesh("x", num_cores=CORES), interpret=params)
        def _():
            c = J.lax.axis_index("x")

            def body(buf, v, sem):
                @P.when(c == 0)
                def _():
                    T.sync_copy(x_ref, v)
                    v[...] = v[...] * 3.0
                    T.sync_copy(v, buf)
                T.core_barrier(sem, core_axis_name="x")

                @P.when(c == 1)
                def _():
                    T.sync_copy(buf, y_ref)
            P.run_scoped(body, T.HBM(x.shape, x.dtype), T.VMEM(x.shape, x.dtype),
                         T.SemaphoreType.REGULAR)
        return y_ref[...]
    return f, lambda x: x * 3.0


def _fixed(kernel, numpy):
    return (lambda J, P, T, **kw: (kernel(J, P, T, **kw), numpy))


KERNELS = {
    "barrier": (_fixed(TALKING["barrier"][0], lambda x: x + 1.0), TALKING["barrier"][1]),
    "barrier_semaphore": (_fixed(TALKING["barrier_semaphore"][0], lambda x: x + 1.0),
                          TALKING["barrier_semaphore"][1]),
    "guide_swap_core_map": (_fixed(TALKING["guide_swap_core_map"][0], _swapped),
                            TALKING["guide_swap_core_map"][1]),
    "guide_swap_kernel": (_fixed(TALKING["guide_swap_kernel"][0], _swapped),
                          TALKING["guide_swap_kernel"][1]),
    "hbm_handoff": (hbm_handoff, [((16, 128), np.float32)]),
    "exact_waits": (exact_waits, [((2, 8, 128), np.float32)]),
    "signal_counts": (signal_counts, [((2, 8, 128), np.float32)]),
    "scoped_hbm": (scoped_hbm, [((16, 128), np.float32)])}
# JAX's TPU interpreter refuses a device_id naming the core axis (the guide's swap) and
# has no semaphore_read rule
JAX_RUNS = ["barrier", "barrier_semaphore", "hbm_handoff", "exact_waits", "scoped_hbm"]


def _leaves(out):
    return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]


def _mjax(make, x, interpret):
    with interpreting_as_v5p(mjax):
        return _leaves(mjax.jit(make(mjax, pl, pltpu, interpret=interpret))(x))


@on_the_host_cpu
def _jax(name, x):
    """JAX's TPU interpret mode's values of kernel `name` (on the chip: in a CPU-only
    child process, test/cpu_oracle.py)."""
    make = _kernel(name)[0]
    with interpreting_as_v5p(jax):
        return _leaves(jax.jit(make(jax, jpl, jpltpu,
                                    interpret=jpltpu.InterpretParams()))(x))


def _kernel(name):
    """(the kernel of `name` for jax or mjax, NumPy's values, the argument)."""
    full, shapes = KERNELS[name]
    return (lambda J, P, T, **kw: full(J, P, T, **kw)[0], full(jax, jpl, jpltpu)[1],
            _args(shapes)[0])


@pytest.mark.parametrize("name", JAX_RUNS)
def test_values_match_jax_interpreter_and_numpy(name):
    make, numpy, x = _kernel(name)
    got = _mjax(make, x, pltpu.InterpretParams())
    want = _jax(name, x)
    expected = _leaves(numpy(x))
    assert len(got) == len(want) == len(expected)
    for g, w, e in zip(got, want, expected):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("name", list(KERNELS))
@pytest.mark.parametrize("mode", ["tpu", "true"])
def test_values_match_numpy(name, mode, capfd):
    """Both interpret modes (JAX's interpret=True refuses kernels over several cores:
    'Multiple core support not implemented'), the guide's swap_cores included; no
    semaphore is left non-zero."""
    make, numpy, x = _kernel(name)
    interpret = pltpu.InterpretParams() if mode == "tpu" else True
    for g, e in zip(_mjax(make, x, interpret), _leaves(numpy(x)), strict=True):
        np.testing.assert_array_equal(g, e)
    assert "non-zero" not in capfd.readouterr().out


def _leftover(J, P, T, x):
    """Core c signals the other core's semaphore by 2 + c and waits for 2: core 0 is
    left with 1."""
    def k(x_hbm, o_hbm, sem):
        c = J.lax.axis_index("c")
        P.semaphore_signal(sem, 2 + c, core_index=1 - c)
        P.semaphore_wait(sem, 2)
        T.sync_copy(x_hbm, o_hbm)
    return P.kernel(k, out_type=J.ShapeDtypeStruct(x.shape, x.dtype),
                    mesh=T.create_tensorcore_mesh("c", num_cores=CORES),
                    scratch_types=[T.SemaphoreType.REGULAR],
                    interpret=T.InterpretParams())(x)


@on_the_host_cpu
def _jax_leftover(x):
    """JAX's interpreter runs _leftover and prints its report (on the chip: in a
    CPU-only child process, test/cpu_oracle.py, whose stdout is this process's)."""
    with interpreting_as_v5p(jax):
        jax.jit(lambda x: _leftover(jax, jpl, jpltpu, x))(x).block_until_ready()


def test_semaphore_left_non_zero_is_reported(capfd):
    """As JAX's interpreter reports it: the device and the global core."""
    x = np.ones((8, 128), np.float32)
    tail = "has non-zero count for 0 (global core 0) at kernel exit: 1"
    _jax_leftover(x)
    assert tail in capfd.readouterr().out
    with interpreting_as_v5p(mjax):
        got = mjax.jit(lambda x: _leftover(mjax, pl, pltpu, x))(x)
    np.testing.assert_array_equal(np.asarray(got), x)
    lines = [line for line in capfd.readouterr().out.splitlines() if "non-zero" in line]
    assert lines == [f"Semaphore 0 (scratch semaphore 0) {tail}"]


def test_jax_interpreter_refuses_a_core_device_id():
    """(Where mjax goes further: JAX's interpreter refuses device_id={core_axis: c}.)"""
    shapes = TALKING["guide_swap_kernel"][1]
    with pytest.raises(NotImplementedError, match="core"):
        _jax("guide_swap_kernel", _args(shapes)[0])


def test_unsatisfied_wait_raises():
    """A core waits for a signal nobody sends: JAX's interpreter hangs, mjax's raises."""
    def f(x):
        def k(x_hbm, o_hbm, sem):
            c = mjax.lax.axis_index("c")

            @pl.when(c == 0)
            def _():
                pl.semaphore_signal(sem, 1, core_index=1)
            pl.semaphore_wait(sem, 1)
            pltpu.sync_copy(x_hbm, o_hbm)
        return pl.kernel(k, out_type=mjax.ShapeDtypeStruct(x.shape, x.dtype),
                         mesh=pltpu.create_tensorcore_mesh("c", num_cores=CORES),
                         scratch_types=[pltpu.SemaphoreType.REGULAR],
                         interpret=pltpu.InterpretParams())(x)
    errors = (PallasDeadlockError, mjax.errors.JaxRuntimeError)
    with interpreting_as_v5p(mjax), pytest.raises(errors, match="found count 0 < 1"):
        mjax.jit(f)(np.ones((8, 128), np.float32))


def test_cores_of_each_device_inside_a_shard_map():
    """A multi-core kernel under a shard_map of 2 devices: each core adds its index and
    100 times its device's to its copy, sends it to the other core's VMEM, and writes
    its half of what it got; then a copy to the same core of the other device."""
    J, P, T = LIBS["mjax"]
    rows = 8

    def k(x_hbm, o_hbm, v, w, send, recv):
        c = J.lax.axis_index("core")
        d = J.lax.axis_index("d")
        T.sync_copy(x_hbm, v)
        v[...] = v[...] + c.astype(v.dtype) + 100.0 * d.astype(v.dtype)
        T.core_barrier(T.get_barrier_semaphore(), core_axis_name="core")
        copy = T.make_async_remote_copy(v, w, send, recv, device_id={"core": 1 - c})
        copy.start()
        copy.wait()
        T.core_barrier(T.get_barrier_semaphore(), core_axis_name="core")
        copy = T.make_async_remote_copy(w, v, send, recv, device_id={"d": 1 - d})
        copy.start()
        copy.wait()
        T.sync_copy(v.at[P.ds(c * rows, rows)], o_hbm.at[P.ds(c * rows, rows)])

    def body(x):
        return P.kernel(k, out_type=J.ShapeDtypeStruct(x.shape, x.dtype),
                        mesh=T.create_tensorcore_mesh("core", num_cores=CORES),
                        scratch_types=[T.VMEM(x.shape, x.dtype)] * 2 +
                        [T.SemaphoreType.DMA] * 2,
                        compiler_params=T.CompilerParams(collective_id=0),
                        interpret=T.InterpretParams())(x)
    mesh = J.make_mesh((2,), ("d",), devices=J.devices("cpu")[:2])
    spec = J.sharding.PartitionSpec("d")
    f = J.shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec, check_vma=False)
    x = _args([((32, 128), np.float32)])[0]
    with as_v5p(J):
        got = np.asarray(J.jit(f)(J.device_put(x, J.sharding.NamedSharding(mesh, spec))))
    # device d's block: rows of half c come from core 1-c of device 1-d (via core c)
    want = np.empty_like(x)
    for d in range(2):
        for c in range(2):
            src = x[(1 - d) * 16:(2 - d) * 16] + (1 - c) + 100.0 * (1 - d)
            want[d * 16 + c * rows:d * 16 + (c + 1) * rows] = src[c * rows:(c + 1) * rows]
    np.testing.assert_array_equal(got, want)


def test_one_core_signals_itself():
    """A mesh of one core: core_index=0 names this core."""
    def f(x):
        def k(x_hbm, o_hbm, sem):
            pl.semaphore_signal(sem, 1, core_index=0)
            pl.semaphore_wait(sem, 1)
            pltpu.sync_copy(x_hbm, o_hbm)
        return pl.kernel(k, out_type=mjax.ShapeDtypeStruct(x.shape, x.dtype),
                         mesh=pltpu.create_tensorcore_mesh("c", num_cores=1),
                         scratch_types=[pltpu.SemaphoreType.REGULAR], interpret=True)(x)
    x = _args([((8, 128), np.float32)])[0]
    np.testing.assert_array_equal(np.asarray(mjax.jit(f)(x)), x)


def test_vmap_of_a_talking_kernel_refused():
    """vmap batches the kernel's call (a grid axis before the cores): its cores no longer
    run in lockstep, so mjax refuses the signal to another core, naming it."""
    make, _, x = _kernel("exact_waits")
    with interpreting_as_v5p(mjax), pytest.raises(NotImplementedError,
                                     match="to another core .* vmap or jvp"):
        mjax.jit(mjax.vmap(make(mjax, pl, pltpu, interpret=True)))(np.stack([x, x]))


def _wait_then_copy(J, P, T, x):
    """JAX's test_allocate_shared_buffer_in_core_map (first core 0): core 1 waits for a
    signal core 0 sends only after its copy through a shared run_scoped HBM buffer."""
    y = J.numpy.zeros_like(x)

    def inner(refs):
        x_ref, y_ref = refs

        @P.core_map(T.create_tensorcore_mesh("x", num_cores=CORES),
                    interpret=T.InterpretParams(allow_hbm_allocation_in_run_scoped=True))
        def _():
            def body(sem):
                @P.when(J.lax.axis_index("x") == 1)
                def _():
                    P.semaphore_wait(sem, 1)

                def copy(x_hbm_ref):
                    T.sync_copy(x_ref, x_hbm_ref)
                    T.sync_copy(x_hbm_ref, y_ref)
                P.run_scoped(copy, T.HBM(x_ref.shape, x_ref.dtype))

                @P.when(J.lax.axis_index("x") == 0)
                def _():
                    P.semaphore_signal(sem, 1, core_index=1)
            P.run_scoped(body, T.SemaphoreType.REGULAR)
    return P.run_state(inner)((x, y))[1]


@on_the_host_cpu
def _jax_wait_then_copy(x):
    """JAX's interpreter's values (on the chip: in a CPU-only child process)."""
    with interpreting_as_v5p(jax):
        return np.asarray(jax.jit(lambda x: _wait_then_copy(jax, jpl, jpltpu, x))(x))


def test_wait_for_a_later_signal_gives_jax_values():
    """A core's wait satisfied only by an op the other core runs later in its program
    (JAX's threads let core 1 sleep): lockstep cannot run it, so mjax runs the cores in
    rounds (passes/pallas_rounds.py) and gives the copy, as JAX's interpreter does."""
    x = np.arange(16 * 128, dtype=np.int32).reshape(16, 128)
    want = _jax_wait_then_copy(x)
    np.testing.assert_array_equal(want, x)
    with interpreting_as_v5p(mjax):
        got = np.asarray(mjax.jit(lambda x: _wait_then_copy(mjax, pl, pltpu, x))(x))
    np.testing.assert_array_equal(got, want)


def _uninitialized_scratch(J, P, T, x, mode):
    """Cores meeting at a barrier each write an uninitialized int32 VMEM scratch (and a
    float32 one) to their half of the output."""
    def k(x_hbm, o_hbm, o2_hbm, s, f):
        c = J.lax.axis_index("c")
        T.core_barrier(T.get_barrier_semaphore(), core_axis_name="c")
        T.sync_copy(s, o_hbm.at[P.ds(c * 8, 8)])
        T.sync_copy(f, o2_hbm.at[P.ds(c * 8, 8)])
    return P.kernel(k, out_type=(J.ShapeDtypeStruct((16, 128), J.numpy.int32),
                                 J.ShapeDtypeStruct((16, 128), J.numpy.float32)),
                    mesh=T.create_tensorcore_mesh("c", num_cores=CORES),
                    scratch_types=[T.VMEM((8, 128), J.numpy.int32),
                                   T.VMEM((8, 128), J.numpy.float32)],
                    compiler_params=T.CompilerParams(collective_id=0),
                    interpret=T.InterpretParams(uninitialized_memory=mode))(x)


@on_the_host_cpu
def _jax_uninitialized(x, mode):
    with interpreting_as_v5p(jax):
        return _leaves(jax.jit(lambda x: _uninitialized_scratch(jax, jpl, jpltpu, x,
                                                                 mode))(x))


@pytest.mark.parametrize("mode", ["nan", "zero"])
def test_talking_cores_scratch_starts_as_jax_uninitialized_memory(mode):
    """The cores' scratch starts as InterpretParams(uninitialized_memory=) says, as in
    JAX's interpreter: 'nan' gives int32's maximum and NaN, 'zero' zeros."""
    x = np.zeros((16, 128), np.float32)
    with interpreting_as_v5p(mjax):
        got = _leaves(mjax.jit(lambda x: _uninitialized_scratch(mjax, pl, pltpu, x,
                                                                  mode))(x))
    want = _jax_uninitialized(x, mode)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    ints = np.iinfo(np.int32).max if mode == "nan" else 0
    np.testing.assert_array_equal(got[0], np.full((16, 128), ints, np.int32))
    assert (np.isnan(got[1]).all() if mode == "nan" else (got[1] == 0).all())
