"""Remote DMAs and semaphore signals between devices of a shard_map in TPU interpret mode
on CPU devices (passes/pallas_mesh.py: every device's kernel instance runs in lockstep
in the one batched call). Each kernel's values against JAX 0.10.2's TPU interpreter
(interpret=pltpu.InterpretParams(), its devices simulated) and NumPy: the guide's
kernels (test_remote_dma.py's) on 4 and 8 devices and a 2x4 mesh, and JAX's
tpu_pallas_interpret_distributed_test.py kernels (all-reduce and reduce-scatter rings
with barrier and capacity semaphores), written again here for both libraries."""
from __future__ import annotations

import functools
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle, from the test extra)
import jax.experimental.pallas.tpu  # noqa: E402,F401

import mjax  # noqa: E402
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402
from mjax.experimental.pallas.lockstep import PallasDeadlockError  # noqa: E402

import test_remote_dma as G  # noqa: E402  (the guide's kernels, for both libraries)
from test_mosaic_differential import _cpu_as_v5e  # noqa: E402


def _libs(lib):
    if lib is jax:
        return jax, jpl, jpltpu
    return mjax, pl, pltpu


def _run(lib, make, mesh_shape, axes, in_spec, out_spec, x, n):
    """`make(lib, pl, pltpu, n)`'s pallas_call under a shard_map over the first n
    devices, traced in TPU interpret mode; its values."""
    jx, lpl, lpltpu = _libs(lib)
    P = jx.sharding.PartitionSpec

    def body(*args):
        with lpltpu.force_tpu_interpret_mode(lpltpu.InterpretParams()):
            return make(jx, lpl, lpltpu, n)(*args)
    mesh = jx.make_mesh(mesh_shape, axes, devices=jx.devices()[:n])
    f = jx.shard_map(body, mesh=mesh, in_specs=in_spec(P), out_specs=out_spec(P),
                     check_vma=False)
    x = jx.device_put(x, jx.sharding.NamedSharding(mesh, in_spec(P)))
    return np.asarray(jx.jit(f)(x))


def _check(make, mesh_shape, axes, in_spec, out_spec, x, expected, n, atol=0, jax_too=True):
    got = _run(mjax, make, mesh_shape, axes, in_spec, out_spec, x, n)
    np.testing.assert_allclose(got, expected, atol=atol, rtol=0)
    if jax_too:
        want = _run(jax, make, mesh_shape, axes, in_spec, out_spec, x, n)
        np.testing.assert_allclose(want, expected, atol=atol, rtol=0)
        np.testing.assert_allclose(got, want, atol=atol, rtol=0)


def _blocks(x, n):
    return x.reshape(n, -1, x.shape[-1])


# ---- the guide's kernels (test_remote_dma.py) -------------------------------------------
def _expected(name, x, n, mesh_shape):
    b = _blocks(x, n)
    if name in ("right_permute", "right_permute_logical", "barrier_permute"):
        return np.roll(b, 1, axis=0).reshape(x.shape)
    if name == "all_gather":
        return np.concatenate([b] * n, axis=1)
    if name == "signal_neighbour":
        return x
    if name == "grid_2d":      # (x, y) gets the block of (x, y + 1 mod ny), twice over
        rows, cols = mesh_shape
        g = b.reshape(rows, cols, *b.shape[1:])
        return np.roll(g, 1, axis=1).reshape(x.shape)
    raise AssertionError(name)


GUIDE_CASES = [(name, n) for name in sorted(G.KERNELS) for n in (4, 8)]


@pytest.mark.parametrize("name,n", GUIDE_CASES)
def test_guide_kernels_interpreted_as_jax(name, n):
    maker, _, axes, spec, _ = G.KERNELS[name]
    mesh_shape = (2, n // 2) if name == "grid_2d" else (n,)
    x = np.arange(8 * n * 128, dtype=np.float32).reshape(8 * n, 128)
    out = (lambda P: P(None, *spec)) if name == "all_gather" else (lambda P: P(*spec))
    _check(maker, mesh_shape, axes, lambda P: P(*spec), out, x,
           _expected(name, x, n, mesh_shape), n)


# ---- JAX's tpu_pallas_interpret_distributed_test.py kernels -----------------------------
def _barrier(jx, lpl, lpltpu, left, right):
    sem = lpltpu.get_barrier_semaphore()
    for nb in (left, right):
        lpl.semaphore_signal(sem, inc=1, device_id=(nb,),
                             device_id_type=lpl.DeviceIdType.MESH)
    lpl.semaphore_wait(sem, 2)


def _ring(jx, n):
    my_id = jx.lax.axis_index("x")
    return my_id, jx.lax.rem(my_id + 1, np.int32(n)), jx.lax.rem(my_id + n - 1, np.int32(n))


def barrier_right_permute(jx, lpl, lpltpu, n):
    """JAX's test_right_permute_example: a barrier with both neighbours first."""
    def kernel(input_ref, output_ref, send_sem, recv_sem):
        _, right, left = _ring(jx, n)
        _barrier(jx, lpl, lpltpu, left, right)
        copy = lpltpu.make_async_remote_copy(
            src_ref=input_ref, dst_ref=output_ref, send_sem=send_sem, recv_sem=recv_sem,
            device_id=(right,), device_id_type=lpl.DeviceIdType.MESH)
        copy.start()
        copy.wait()
    return lpl.pallas_call(
        kernel, out_shape=jx.ShapeDtypeStruct((8, 128), np.float32),
        grid_spec=lpltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=0, in_specs=[lpl.BlockSpec(memory_space=lpl.ANY)],
            out_specs=lpl.BlockSpec(memory_space=lpl.ANY),
            scratch_shapes=[lpltpu.SemaphoreType.DMA] * 2),
        compiler_params=lpltpu.CompilerParams(collective_id=13))


def barrier_all_gather(jx, lpl, lpltpu, n):
    """JAX's test_all_gather_example: the ring all-gather with a barrier at step 0."""
    def kernel(input_ref, output_ref, local_copy_sem, send_sem, recv_sems):
        step = lpl.program_id(0)
        my_id, right, left = _ring(jx, n)
        slot = jx.lax.rem(my_id - step + n, np.int32(n))

        @lpl.when(step == 0)
        def _():
            _barrier(jx, lpl, lpltpu, left, right)
            local = lpltpu.make_async_copy(input_ref, output_ref.at[my_id], local_copy_sem)
            local.start()
            local.wait()
        copy = lpltpu.make_async_remote_copy(
            src_ref=output_ref.at[slot], dst_ref=output_ref.at[slot], send_sem=send_sem,
            recv_sem=recv_sems.at[step], device_id=(right,),
            device_id_type=lpl.DeviceIdType.MESH)
        copy.start()
        copy.wait()
    return lpl.pallas_call(
        kernel, out_shape=jx.ShapeDtypeStruct((n, 8, 128), np.float32),
        grid_spec=lpltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=0, in_specs=[lpl.BlockSpec(memory_space=lpl.ANY)],
            out_specs=lpl.BlockSpec(memory_space=lpl.ANY),
            scratch_shapes=[lpltpu.SemaphoreType.DMA] * 2
            + [lpltpu.SemaphoreType.DMA((n - 1,))], grid=(n - 1,)),
        compiler_params=lpltpu.CompilerParams(collective_id=0))


def all_reduce_sum(jx, lpl, lpltpu, n):
    """JAX's test_all_reduce_sum_example: a ring with double-buffered HBM scratch and a
    capacity semaphore; output 0 is the sum over devices."""
    def kernel(x_ref, o_ref, hbm_scratch, copy_sem, recv_sem, send_sem, capacity_sem,
               receive_scratch):
        step = lpl.program_id(0)
        working = jx.lax.rem(step, np.int32(2))
        receiving = 1 - working
        _, right, left = _ring(jx, n)

        @lpl.when(step == 0)
        def _():
            _barrier(jx, lpl, lpltpu, left, right)
            o_ref[...] = jx.numpy.zeros_like(o_ref)
            receive_scratch[...] = jx.numpy.zeros_like(receive_scratch)
            first = lpltpu.make_async_remote_copy(
                src_ref=x_ref, dst_ref=hbm_scratch.at[working], send_sem=send_sem,
                recv_sem=recv_sem, device_id=(right,),
                device_id_type=lpl.DeviceIdType.MESH)
            first.start()
            first.wait()
        lpl.semaphore_signal(capacity_sem, inc=1, device_id=(left,),
                             device_id_type=lpl.DeviceIdType.MESH)
        local = lpltpu.make_async_copy(hbm_scratch.at[working], receive_scratch, copy_sem)
        local.start()
        lpl.semaphore_wait(capacity_sem, 1)
        remote = lpltpu.make_async_remote_copy(
            src_ref=hbm_scratch.at[working], dst_ref=hbm_scratch.at[receiving],
            send_sem=send_sem, recv_sem=recv_sem, device_id=(right,),
            device_id_type=lpl.DeviceIdType.MESH)
        remote.start()
        local.wait()
        o_ref[...] += receive_scratch[...]
        remote.wait()
    call = lpl.pallas_call(
        kernel, out_shape=(jx.ShapeDtypeStruct((8, 128), np.float32),
                           jx.ShapeDtypeStruct((2, 8, 128), np.float32)),
        grid_spec=lpltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=0, in_specs=[lpl.BlockSpec(memory_space=lpltpu.VMEM)],
            out_specs=[lpl.BlockSpec(memory_space=lpltpu.VMEM),
                       lpl.BlockSpec(memory_space=lpl.ANY)],
            grid=(n,),
            scratch_shapes=[lpltpu.SemaphoreType.DMA] * 3 + [lpltpu.SemaphoreType.REGULAR]
            + [lpltpu.VMEM((8, 128), np.float32)]),
        compiler_params=lpltpu.CompilerParams(collective_id=0))
    return lambda x: call(x)[0]


def _ring_copies(lpl, lpltpu, x_ref, hbm_scratch, my_id, working, receiving, left_slice,
                 right_slice, sems, left, right):
    """The bidirectional ring's remote copies of JAX's reduce-scatter examples: the first
    to each neighbour (from this device's input), then each step's (between the
    scratch's working and receiving slots)."""
    left_send, left_recv, right_send, right_recv = sems

    def remote(src, dst, send, recv, nb):
        return lpltpu.make_async_remote_copy(
            src_ref=src, dst_ref=dst, send_sem=send, recv_sem=recv, device_id=(nb,),
            device_id_type=lpl.DeviceIdType.MESH)
    return (remote(x_ref.at[my_id, left_slice], hbm_scratch.at[working, left_slice],
                   left_send, left_recv, left),
            remote(x_ref.at[my_id, right_slice], hbm_scratch.at[working, right_slice],
                   right_send, right_recv, right),
            remote(hbm_scratch.at[working, left_slice], hbm_scratch.at[receiving, left_slice],
                   left_send, left_recv, left),
            remote(hbm_scratch.at[receiving, right_slice],
                   hbm_scratch.at[working, right_slice], right_send, right_recv, right))


def reduce_scatter_sum(jx, lpl, lpltpu, n, block=(16, 128)):
    """JAX's test_reduce_scatter_sum_example: a bidirectional ring (left and right halves
    of each block), grid (n, 2)."""
    LEFT, RIGHT = 0, 1
    jnp = jx.numpy

    def mod(a, m):
        return jx.lax.rem(a + m, m)

    def signal(side, sem):
        my_id = jx.lax.axis_index("x")
        nb = mod(my_id - 1, np.int32(n)) if side == LEFT else mod(my_id + 1, np.int32(n))
        lpl.semaphore_signal(sem, inc=1, device_id=(nb,),
                             device_id_type=lpl.DeviceIdType.MESH)

    def kernel(x_ref, o_ref, hbm_scratch, local_copy_sem, left_recv_sem, left_send_sem,
               right_recv_sem, right_send_sem, left_capacity_sem, right_capacity_sem,
               accum_scratch):
        outer_step = lpl.program_id(0)
        phase = lpl.program_id(1)
        is_start = jnp.logical_and(outer_step == 0, phase == 0)
        last_iteration = outer_step == lpl.num_programs(0) - 1
        working = jx.lax.rem(outer_step, np.int32(2))
        receiving = 1 - working
        my_id = jx.lax.axis_index("x")
        right = mod(my_id + 1, np.int32(n))
        left = mod(my_id - 1, np.int32(n))
        left_copy_device = mod(my_id + outer_step + 1, np.int32(n))
        right_copy_device = mod(my_id - outer_step - 1, np.int32(n))
        half = block[0] // 2
        left_slice, right_slice = lpl.ds(0, half), lpl.ds(half, half)
        phase_slice = lpl.ds(phase * half, half)

        @lpl.when(is_start)
        def _():
            _barrier(jx, lpl, lpltpu, left, right)

        initial_left, initial_right, left_copy, right_copy = _ring_copies(
            lpl, lpltpu, x_ref, hbm_scratch, my_id, working, receiving, left_slice,
            right_slice, (left_send_sem, left_recv_sem, right_send_sem, right_recv_sem),
            left, right)

        @lpl.when(is_start)
        def _():
            o_ref[...] = jnp.zeros_like(o_ref[...])
            accum_scratch[...] = jnp.zeros_like(accum_scratch[...])
            initial_left.start()
            initial_left.wait()
            initial_right.start()
            signal(LEFT, right_capacity_sem)
            signal(RIGHT, left_capacity_sem)

        @lpl.when(~is_start)
        def _():
            @lpl.when(phase == LEFT)
            def _():
                lpl.semaphore_wait(right_capacity_sem, 1)
                right_copy.start()

            @lpl.when(phase == RIGHT)
            def _():
                lpl.semaphore_wait(left_capacity_sem, 1)
                left_copy.start()
        local = lpltpu.make_async_copy(hbm_scratch.at[working, phase_slice], accum_scratch,
                                       local_copy_sem)
        local.start()
        local.wait()

        @lpl.when(~last_iteration)
        def _():
            @lpl.when(phase == LEFT)
            def _():
                accum_scratch[...] += x_ref[left_copy_device, left_slice]

            @lpl.when(phase == RIGHT)
            def _():
                accum_scratch[...] += x_ref[right_copy_device, right_slice]
        local = lpltpu.make_async_copy(accum_scratch, hbm_scratch.at[working, phase_slice],
                                       local_copy_sem)
        local.start()
        local.wait()

        @lpl.when(is_start)
        def _():
            initial_right.wait()

        @lpl.when(~is_start)
        def _():
            @lpl.when(phase == LEFT)
            def _():
                right_copy.wait()
                signal(LEFT, right_capacity_sem)

            @lpl.when(phase == RIGHT)
            def _():
                left_copy.wait()
                signal(RIGHT, left_capacity_sem)

        @lpl.when(last_iteration)
        def _():
            @lpl.when(phase == LEFT)
            def _():
                o_ref[left_slice, ...] = accum_scratch[...]
                lpl.semaphore_wait(right_capacity_sem, 1)

            @lpl.when(phase == RIGHT)
            def _():
                o_ref[right_slice, ...] = accum_scratch[...]
                lpl.semaphore_wait(left_capacity_sem, 1)
    call = lpl.pallas_call(
        kernel, out_shape=(jx.ShapeDtypeStruct(block, np.float32),
                           jx.ShapeDtypeStruct((2,) + block, np.float32)),
        grid_spec=lpltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=0, in_specs=[lpl.BlockSpec(memory_space=lpltpu.VMEM)],
            out_specs=[lpl.BlockSpec(memory_space=lpltpu.VMEM),
                       lpl.BlockSpec(memory_space=lpl.ANY)],
            grid=(n, 2),
            scratch_shapes=[lpltpu.SemaphoreType.DMA] * 5
            + [lpltpu.SemaphoreType.REGULAR] * 2
            + [lpltpu.VMEM((block[0] // 2, block[1]), np.float32)]),
        compiler_params=lpltpu.CompilerParams(collective_id=7))
    return lambda x: call(x.reshape(n, *block))[0]


def _rand(shape, seed=0):
    return np.random.default_rng(seed).uniform(size=shape).astype(np.float32)


@pytest.mark.parametrize("n", [4, 8])
def test_jax_right_permute_example(n):
    x = _rand((8, 128 * n))
    want = np.roll(x.reshape(8, n, 128), 1, axis=1).reshape(x.shape)
    _check(barrier_right_permute, (n,), ("x",), lambda P: P(None, "x"),
           lambda P: P(None, "x"), x, want, n)


@pytest.mark.parametrize("n", [4, 8])
def test_jax_all_gather_example(n):
    x = _rand((8 * n, 128))
    want = np.concatenate([x.reshape(n, 8, 128)] * n, axis=0)
    _check(barrier_all_gather, (n,), ("x",), lambda P: P("x", None),
           lambda P: P("x", None), x, want, n)


@pytest.mark.parametrize("n", [4, 8])
def test_jax_all_reduce_sum_example(n):
    x = _rand((8, 128 * n))
    total = x.reshape(8, n, 128).sum(axis=1)
    want = np.concatenate([total] * n, axis=1)
    _check(all_reduce_sum, (n,), ("x",), lambda P: P(None, "x"), lambda P: P(None, "x"),
           x, want, n, atol=1e-5)


@pytest.mark.parametrize("n", [4, 8])
def test_jax_reduce_scatter_sum_example(n):
    x = _rand((16 * n, 128 * n))
    want = x.reshape(n, 16, n, 128).sum(axis=2).reshape(16 * n, 128)
    _check(reduce_scatter_sum, (n,), ("x",), lambda P: P(None, "x"),
           lambda P: P("x", None), x, want, n, atol=1e-5)


def even_to_odd(jx, lpl, lpltpu, n):
    """Device-dependent branches around the DMAs: the even devices keep their block and
    send it to the right, the odd ones wait for it."""
    def kernel(x_ref, o_ref, local_sem, send_sem, recv_sem):
        my_id = jx.lax.axis_index("x")
        local = lpltpu.make_async_copy(x_ref, o_ref, local_sem)
        copy = lpltpu.make_async_remote_copy(
            src_ref=x_ref, dst_ref=o_ref, send_sem=send_sem, recv_sem=recv_sem,
            device_id=(jx.lax.rem(my_id + 1, np.int32(n)),),
            device_id_type=lpl.DeviceIdType.MESH)

        @lpl.when(jx.lax.rem(my_id, np.int32(2)) == 0)
        def _():
            local.start()
            local.wait()
            copy.start()
            copy.wait_send()

        @lpl.when(jx.lax.rem(my_id, np.int32(2)) == 1)
        def _():
            copy.wait_recv()
    return lpl.pallas_call(
        kernel, out_shape=jx.ShapeDtypeStruct((8, 128), np.float32),
        in_specs=[lpl.BlockSpec(memory_space=lpl.ANY)],
        out_specs=lpl.BlockSpec(memory_space=lpl.ANY),
        scratch_shapes=[lpltpu.SemaphoreType.DMA] * 3)


@pytest.mark.parametrize("n", [4, 8])
def test_device_dependent_branches(n):
    # (each device runs the branch its id picks: the even ones' writes land in the odd
    # ones, which take the other branch)
    x = _rand((8 * n, 128))
    b = x.reshape(n, 8, 128).copy()
    b[1::2] = b[0::2]
    _check(even_to_odd, (n,), ("x",), lambda P: P("x"), lambda P: P("x"), x,
           b.reshape(x.shape), n)


def _waiter(signal_first):
    """Each device waits for its right neighbour's signal: sent before the wait (runs),
    or after it (every device waits first: a deadlock, where JAX's interpreter hangs)."""
    def make(jx, lpl, lpltpu, n):
        def kernel(x_ref, o_ref, sem, dma_sem):
            my_id = jx.lax.axis_index("x")
            left = jx.lax.rem(my_id + n - 1, np.int32(n))
            if signal_first:
                lpl.semaphore_signal(sem, 1, device_id=(left,))
            lpl.semaphore_wait(sem, 1)
            if not signal_first:
                lpl.semaphore_signal(sem, 1, device_id=(left,))
            copy = lpltpu.make_async_copy(x_ref, o_ref, dma_sem)
            copy.start()
            copy.wait()
        return lpl.pallas_call(
            kernel, out_shape=jx.ShapeDtypeStruct((8, 128), np.float32),
            in_specs=[lpl.BlockSpec(memory_space=lpl.ANY)],
            out_specs=lpl.BlockSpec(memory_space=lpl.ANY),
            scratch_shapes=[lpltpu.SemaphoreType.REGULAR, lpltpu.SemaphoreType.DMA])
    return make


def test_wait_signalled_before_runs():
    x = _rand((32, 128))
    _check(_waiter(True), (4,), ("x",), lambda P: P("x"), lambda P: P("x"), x, x, 4)


def test_deadlock_is_reported():
    # (JAX's interpreter waits forever: not run here. The callback's error reaches the
    # caller as it is or, read back from the devices, in XLA's JaxRuntimeError)
    x = _rand((32, 128))
    with pytest.raises((PallasDeadlockError, mjax.errors.JaxRuntimeError),
                       match=r"found count 0 < 1: mjax runs the devices' kernel "
                             r"instances in lockstep"):
        _run(mjax, _waiter(False), (4,), ("x",), lambda P: P("x"), lambda P: P("x"), x, 4)


def pairs_kernel(jx, lpl, lpltpu, n):
    """JAX's test_race_detection kernel: the (source, destination) pairs in SMEM pick
    which devices send (a pl.when on the device id around the DMA) and how many
    blocks each waits for (a wait of a traced size)."""
    jnp = jx.numpy

    def kernel(src_dst_ids_ref, x_ref, o_ref, send_sem, recv_sem):
        my_id = jx.lax.axis_index("x")
        src_dst_ids = src_dst_ids_ref[:]
        recv_count = 0
        for i in range(src_dst_ids.shape[0]):
            src_id = src_dst_ids[i, 0]
            dst_id = src_dst_ids[i, 1]

            @lpl.when(src_id == my_id)
            def _():
                dma = lpltpu.make_async_remote_copy(
                    src_ref=x_ref, dst_ref=o_ref, send_sem=send_sem, recv_sem=recv_sem,
                    device_id=(dst_id,), device_id_type=lpl.DeviceIdType.MESH)
                dma.start()
                dma.wait_send()
            recv_count += jnp.where(dst_id == my_id, 1, 0)

        @lpl.when(recv_count > 0)
        def _():
            fake = lpltpu.make_async_remote_copy(
                src_ref=x_ref.at[lpl.ds(0, 8 * recv_count)],
                dst_ref=o_ref.at[lpl.ds(0, 8 * recv_count)], send_sem=send_sem,
                recv_sem=recv_sem, device_id=(my_id,),
                device_id_type=lpl.DeviceIdType.MESH)
            fake.wait_recv()
    call = lpl.pallas_call(
        kernel, out_shape=jx.ShapeDtypeStruct((8, 128), np.float32),
        in_specs=[lpl.BlockSpec(memory_space=lpltpu.SMEM),
                  lpl.BlockSpec(memory_space=lpl.ANY)],
        out_specs=lpl.BlockSpec(memory_space=lpl.ANY),
        scratch_shapes=[lpltpu.SemaphoreType.DMA, lpltpu.SemaphoreType.DMA])
    return call


def test_jax_race_detection_kernel_without_races():
    # (the pairs of JAX's race-free run: device d + 1 gets device d's block; device 0's
    # output is never written, NaN in both interpreters)
    n = 4
    ids = np.array([[0, 1], [1, 2], [2, 3]], np.int32)
    x = _rand((8 * n, 128))
    results = []
    for lib in (mjax, jax):
        jx, lpl, lpltpu = _libs(lib)
        P = jx.sharding.PartitionSpec
        mesh = jx.make_mesh((n,), ("x",), devices=jx.devices()[:n])

        def body(pairs, xs, lib=lib):
            jx, lpl, lpltpu = _libs(lib)
            with lpltpu.force_tpu_interpret_mode(lpltpu.InterpretParams()):
                return pairs_kernel(jx, lpl, lpltpu, n)(pairs, xs)
        f = jx.shard_map(body, mesh=mesh, in_specs=(P(None), P("x", None)),
                         out_specs=P("x", None), check_vma=False)
        xs = jx.device_put(x, jx.sharding.NamedSharding(mesh, P("x", None)))
        pairs = jx.device_put(ids, jx.sharding.NamedSharding(mesh, P(None)))
        results.append(np.asarray(jx.jit(f)(pairs, xs)))
    got, want = results
    np.testing.assert_array_equal(want[8:], x[:24])
    np.testing.assert_array_equal(got[8:], want[8:])
    assert np.isnan(want[:8]).all() and np.isnan(got[:8]).all()


def pipelined_reduce_scatter(jx, lpl, lpltpu, n, outer=(32, 256), inner=(8, 128)):
    """JAX's test_reduce_scatter_sum_with_emit_pipeline_example (smaller blocks): the
    bidirectional ring whose accumulation is an emit_pipeline over HBM, after a double
    barrier (the second on a run_scoped REGULAR semaphore)."""
    LEFT, RIGHT = 0, 1
    jnp = jx.numpy

    def mod(a, m):
        return jx.lax.rem(a + m, m)

    def signal(side, sem):
        my_id = jx.lax.axis_index("x")
        nb = mod(my_id - 1, np.int32(n)) if side == LEFT else mod(my_id + 1, np.int32(n))
        lpl.semaphore_signal(sem, inc=1, device_id=(nb,),
                             device_id_type=lpl.DeviceIdType.MESH)

    def local_barrier(left, right):
        _barrier(jx, lpl, lpltpu, left, right)

        @functools.partial(lpl.run_scoped, second_barrier=lpltpu.SemaphoreType.REGULAR)
        def _(second_barrier):
            for nb in (left, right):
                lpl.semaphore_signal(second_barrier, inc=1, device_id=(nb,),
                                     device_id_type=lpl.DeviceIdType.MESH)
            lpl.semaphore_wait(second_barrier, 2)
    spec = lpl.BlockSpec(index_map=lambda i, j: (i, j), block_shape=inner,
                         memory_space=lpltpu.VMEM)
    inner_grid = (outer[0] // inner[0] // 2, outer[1] // inner[1])

    def kernel(x_ref, o_ref, hbm_scratch, left_recv_sem, left_send_sem, copy_sem,
               right_recv_sem, right_send_sem, left_capacity_sem, right_capacity_sem):
        outer_step = lpl.program_id(0)
        phase = lpl.program_id(1)
        is_start = jnp.logical_and(outer_step == 0, phase == 0)
        last_iteration = outer_step == lpl.num_programs(0) - 1
        working = jx.lax.rem(outer_step, np.int32(2))
        receiving = 1 - working
        my_id = jx.lax.axis_index("x")
        right = mod(my_id + 1, np.int32(n))
        left = mod(my_id - 1, np.int32(n))
        left_copy_device = mod(my_id + outer_step + 1, np.int32(n))
        right_copy_device = mod(my_id - outer_step - 1, np.int32(n))
        half = outer[0] // 2
        left_slice, right_slice = lpl.ds(0, half), lpl.ds(half, half)
        phase_slice = lpl.ds(phase * half, half)

        initial_left, initial_right, left_copy, right_copy = _ring_copies(
            lpl, lpltpu, x_ref, hbm_scratch, my_id, working, receiving, left_slice,
            right_slice, (left_send_sem, left_recv_sem, right_send_sem, right_recv_sem),
            left, right)

        @lpl.when(is_start)
        def _():
            local_barrier(left, right)
            initial_left.start()
            initial_left.wait()
            initial_right.start()
            signal(LEFT, right_capacity_sem)
            signal(RIGHT, left_capacity_sem)

        @lpl.when(~is_start)
        def _():
            @lpl.when(phase == LEFT)
            def _():
                lpl.semaphore_wait(right_capacity_sem, 1)
                right_copy.start()

            @lpl.when(phase == RIGHT)
            def _():
                lpl.semaphore_wait(left_capacity_sem, 1)
                left_copy.start()

        def inner_kernel(input_ref, accum_in_ref, accum_out_ref):
            accum_out_ref[...] = accum_in_ref[...] + input_ref[...]

        @lpl.when(~last_iteration)
        def _():
            @lpl.when(phase == LEFT)
            def _():
                lpltpu.emit_pipeline(inner_kernel, in_specs=[spec, spec], out_specs=spec,
                                     grid=inner_grid)(
                    x_ref.at[left_copy_device, left_slice],
                    hbm_scratch.at[working, left_slice],
                    hbm_scratch.at[working, left_slice])

            @lpl.when(phase == RIGHT)
            def _():
                lpltpu.emit_pipeline(inner_kernel, in_specs=[spec, spec], out_specs=spec,
                                     grid=inner_grid)(
                    x_ref.at[right_copy_device, right_slice],
                    hbm_scratch.at[working, right_slice],
                    hbm_scratch.at[working, right_slice])

        @lpl.when(is_start)
        def _():
            initial_right.wait()

        @lpl.when(~is_start)
        def _():
            @lpl.when(phase == LEFT)
            def _():
                right_copy.wait()
                signal(LEFT, right_capacity_sem)

            @lpl.when(phase == RIGHT)
            def _():
                left_copy.wait()
                signal(RIGHT, left_capacity_sem)

        @lpl.when(last_iteration)
        def _():
            out = lpltpu.make_async_copy(hbm_scratch.at[working, phase_slice],
                                         o_ref.at[phase_slice], copy_sem)
            out.start()
            out.wait()

            @lpl.when(phase == LEFT)
            def _():
                lpl.semaphore_wait(right_capacity_sem, 1)

            @lpl.when(phase == RIGHT)
            def _():
                lpl.semaphore_wait(left_capacity_sem, 1)
    call = lpl.pallas_call(
        kernel, out_shape=(jx.ShapeDtypeStruct(outer, np.float32),
                           jx.ShapeDtypeStruct((2,) + outer, np.float32)),
        grid_spec=lpltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=0, in_specs=[lpl.BlockSpec(memory_space=lpl.ANY)],
            out_specs=[lpl.BlockSpec(memory_space=lpl.ANY),
                       lpl.BlockSpec(memory_space=lpl.ANY)],
            grid=(n, 2),
            scratch_shapes=[lpltpu.SemaphoreType.DMA] * 5
            + [lpltpu.SemaphoreType.REGULAR] * 2),
        compiler_params=lpltpu.CompilerParams(collective_id=19))
    return lambda x: call(x.reshape(n, *outer))[0]


@pytest.mark.parametrize("n", [4, 8])
def test_jax_reduce_scatter_sum_with_emit_pipeline_example(n):
    outer = (32, 256)
    x = _rand((outer[0] * n, outer[1] * n))
    want = x.reshape(n, outer[0], n, outer[1]).sum(axis=2).reshape(outer[0] * n, outer[1])
    # (on 8 devices JAX's interpreter did not finish in 200 s on this 2-core machine: its
    # 8 device threads; checked against NumPy alone there)
    with _cpu_as_v5e():     # (JAX's pipeline asks the chip for its tiling)
        _check(pipelined_reduce_scatter, (n,), ("x",), lambda P: P(None, "x"),
               lambda P: P("x", None), x, want, n, atol=1e-5, jax_too=n == 4)


def _leftover(jx, lpl, lpltpu, n):
    """Signals its left neighbour twice and waits once: each device ends with count 1."""
    def kernel(x_ref, o_ref, sem, dma_sem):
        my_id = jx.lax.axis_index("x")
        lpl.semaphore_signal(sem, 2, device_id=(jx.lax.rem(my_id + n - 1, np.int32(n)),))
        lpl.semaphore_wait(sem, 1)
        copy = lpltpu.make_async_copy(x_ref, o_ref, dma_sem)
        copy.start()
        copy.wait()
    return lpl.pallas_call(
        kernel, out_shape=jx.ShapeDtypeStruct((8, 128), np.float32),
        in_specs=[lpl.BlockSpec(memory_space=lpl.ANY)],
        out_specs=lpl.BlockSpec(memory_space=lpl.ANY),
        scratch_shapes=[lpltpu.SemaphoreType.REGULAR, lpltpu.SemaphoreType.DMA])


def test_semaphores_left_non_zero_are_printed(capfd):
    # (JAX's interpreter prints one line per device, naming its own semaphore ids)
    x = _rand((32, 128))
    results = [_run(lib, _leftover, (4,), ("x",), lambda P: P("x"), lambda P: P("x"), x, 4)
               for lib in (jax, mjax)]
    np.testing.assert_array_equal(results[1], results[0])
    np.testing.assert_array_equal(results[1], x)
    lines = [ln for ln in capfd.readouterr().out.splitlines() if "non-zero count" in ln]
    jax_lines = [ln for ln in lines if "global core" in ln]
    mjax_lines = sorted(ln for ln in lines if "global core" not in ln)
    assert len(jax_lines) == 4 and all(ln.endswith("at kernel exit: 1") for ln in jax_lines)
    assert mjax_lines == [f"Semaphore 0 (scratch semaphore 0) has non-zero count for {d} "
                          f"at kernel exit: 1" for d in range(4)]


def axis_index_only(jx, lpl, lpltpu, n):
    """No DMA at all: the block plus the device's index along each mesh axis (mjax
    refused lax.axis_index in an interpreted kernel: no vmap bound its axis there)."""
    def kernel(x_ref, o_ref):
        o_ref[...] = (x_ref[...] + 10 * jx.lax.axis_index("x")
                      + jx.lax.axis_index("y")).astype(np.float32)
    return lpl.pallas_call(kernel, out_shape=jx.ShapeDtypeStruct((8, 128), np.float32))


def logical_2d(jx, lpl, lpltpu, n):
    """A right permute over the logical ids of a 2 x (n // 2) mesh (x * ny + y)."""
    ny = n // 2

    def kernel(x_ref, o_ref, send_sem, recv_sem):
        me = jx.lax.axis_index("x") * ny + jx.lax.axis_index("y")
        copy = lpltpu.make_async_remote_copy(
            x_ref, o_ref, send_sem, recv_sem, device_id=jx.lax.rem(me + 1, np.int32(n)),
            device_id_type=lpl.DeviceIdType.LOGICAL)
        copy.start()
        copy.wait()
    return lpl.pallas_call(
        kernel, out_shape=jx.ShapeDtypeStruct((8, 128), np.float32),
        in_specs=[lpl.BlockSpec(memory_space=lpl.ANY)],
        out_specs=lpl.BlockSpec(memory_space=lpl.ANY),
        scratch_shapes=[lpltpu.SemaphoreType.DMA] * 2)


@pytest.mark.parametrize("n", [4, 8])
def test_axis_index_on_a_2d_mesh(n):
    x = _rand((8 * n, 128))
    ny = n // 2
    ids = np.array([10 * (d // ny) + d % ny for d in range(n)], np.float32)
    want = (x.reshape(n, 8, 128) + ids[:, None, None]).reshape(x.shape)
    _check(axis_index_only, (2, ny), ("x", "y"), lambda P: P(("x", "y")),
           lambda P: P(("x", "y")), x, want, n)


@pytest.mark.parametrize("n", [4, 8])
def test_logical_device_ids_on_a_2d_mesh(n):
    x = _rand((8 * n, 128))
    want = np.roll(x.reshape(n, 8, 128), 1, axis=0).reshape(x.shape)
    _check(logical_2d, (2, n // 2), ("x", "y"), lambda P: P(("x", "y")),
           lambda P: P(("x", "y")), x, want, n)


def _past_the_edge(jx, lpl, lpltpu, n):
    """Each device sends to my_id + 1: the last one names a device outside the mesh."""
    def kernel(x_ref, o_ref, send_sem, recv_sem):
        me = jx.lax.axis_index("x")
        copy = lpltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem,
                                             device_id=(me + 1,))
        copy.start()
        copy.wait_send()
    return lpl.pallas_call(
        kernel, out_shape=jx.ShapeDtypeStruct((8, 128), np.float32),
        in_specs=[lpl.BlockSpec(memory_space=lpl.ANY)],
        out_specs=lpl.BlockSpec(memory_space=lpl.ANY),
        scratch_shapes=[lpltpu.SemaphoreType.DMA] * 2)


_OUTSIDE = """
import numpy as np, mjax, test_remote_dma_interpret as T
try:
    T._run(mjax, T._past_the_edge, (4,), ("x",), lambda P: P("x"), lambda P: P("x"),
           T._rand((32, 128)), 4)
except (IndexError, mjax.errors.JaxRuntimeError) as e:
    print("raised:", type(e).__name__, e)
"""


def test_device_outside_the_mesh_is_an_error():
    # (JAX's interpreter raises a JaxRuntimeError around an IndexError from its device
    # table, and leaves its failed state behind for later kernels: not run here. mjax's
    # error reaches the caller as it is or inside XLA's JaxRuntimeError. Run in a
    # process of its own: XLA runs a program's host callbacks on one of its devices,
    # so when one raises the other devices wait in the program's next collective, and
    # XLA's CPU runtime ends the process 40 s later; a raising jax.experimental.
    # io_callback before a psum does the same to JAX's process)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               PYTHONPATH=os.pathsep.join([os.path.dirname(__file__)] + sys.path))
    out = subprocess.run([sys.executable, "-c", _OUTSIDE], capture_output=True, text=True,
                         env=env, timeout=300).stdout
    assert "raised:" in out and re.search(r"mesh coordinates \(4,\), outside the mesh",
                                          out), out


def _fails_then_barrier(jx, lpl, lpltpu, n):
    """JAX's test_that_barrier_does_not_hang_after_exception kernel: device 0 reads out
    of bounds, then every device meets its neighbours at the barrier (device ids as
    dicts)."""
    def kernel(x_ref, o_ref):
        my_id = jx.lax.axis_index("x")

        @lpl.when(my_id == 0)
        def _():
            o_ref[0, 0] = x_ref[100, 0]
        sem = lpltpu.get_barrier_semaphore()
        lpl.semaphore_signal(sem, device_id={"x": jx.lax.rem(my_id + n - 1, np.int32(n))})
        lpl.semaphore_signal(sem, device_id={"x": jx.lax.rem(my_id + 1, np.int32(n))})
        lpl.semaphore_wait(sem, 2)
    return lpl.pallas_call(
        kernel, out_shape=jx.ShapeDtypeStruct((8, 128), np.float32),
        in_specs=[lpl.BlockSpec(memory_space=lpltpu.VMEM)],
        out_specs=lpl.BlockSpec(memory_space=lpltpu.VMEM),
        compiler_params=lpltpu.CompilerParams(collective_id=42))


def test_error_before_a_barrier_does_not_hang():
    # (JAX's interpreter fails at run time with a JaxRuntimeError, its out-of-bounds
    # read found by device 0's thread; mjax's ref indexing refuses the static index
    # while tracing on a shard_map's devices (an error one device raised at run time
    # would leave the others waiting in a collective). JAX's is not run here: it leaves
    # its failed state behind)
    x = np.ones((8, 128 * 4), np.float32)
    with pytest.raises(IndexError, match="index 100 is out of bounds for dimension 0"):
        _run(mjax, _fails_then_barrier, (4,), ("x",), lambda P: P(None, "x"),
             lambda P: P(None, "x"), x, 4)


def loop_gather(trips):
    """The ring all-gather with its steps a fori_loop inside one kernel instance
    (`trips(my_id, n)`: n - 1, or a count that differs across the devices)."""
    def make(jx, lpl, lpltpu, n):
        def kernel(input_ref, output_ref, local_sem, send_sem, recv_sems):
            my_id = jx.lax.axis_index("x")
            right = jx.lax.rem(my_id + 1, np.int32(n))
            local = lpltpu.make_async_copy(input_ref, output_ref.at[my_id], local_sem)
            local.start()
            local.wait()

            def body(step, carry):
                slot = jx.lax.rem(my_id - step + n, np.int32(n))
                copy = lpltpu.make_async_remote_copy(
                    src_ref=output_ref.at[slot], dst_ref=output_ref.at[slot],
                    send_sem=send_sem, recv_sem=recv_sems.at[step], device_id=(right,),
                    device_id_type=lpl.DeviceIdType.MESH)
                copy.start()
                copy.wait()
                return carry
            jx.lax.fori_loop(0, trips(my_id, n), body, 0)
        return lpl.pallas_call(
            kernel, out_shape=jx.ShapeDtypeStruct((n, 8, 128), np.float32),
            in_specs=[lpl.BlockSpec(memory_space=lpl.ANY)],
            out_specs=lpl.BlockSpec(memory_space=lpl.ANY),
            scratch_shapes=[lpltpu.SemaphoreType.DMA] * 2
            + [lpltpu.SemaphoreType.DMA((n - 1,))])
    return make


@pytest.mark.parametrize("n", [4, 8])
def test_ring_in_a_fori_loop(n):
    x = _rand((8 * n, 128))
    want = np.concatenate([x.reshape(n, 8, 128)] * n, axis=0)
    _check(loop_gather(lambda my_id, n: n - 1), (n,), ("x",), lambda P: P("x", None),
           lambda P: P("x", None), x, want, n)


def test_loop_count_differing_across_devices_is_refused():
    # (a batched while_loop runs until every device is done: the finished devices'
    # remote writes cannot be told apart from the running ones' in lockstep here)
    x = _rand((32, 128))
    with pytest.raises(NotImplementedError, match="in a loop whose trip count differs "
                                                  "across the devices"):
        _run(mjax, loop_gather(lambda my_id, n: my_id), (4,), ("x",),
             lambda P: P("x", None), lambda P: P("x", None), x, 4)
