"""Remote DMAs and semaphore signals between devices in Pallas TPU kernels run under
shard_map (JAX 0.10.2's docs/pallas/tpu/distributed.md): mjax's Mosaic module and
custom call for the TPU against JAX's (both lowered for the TPU on this CPU's devices),
and interpret mode's refusal outside a shard_map (inside one: test_remote_dma_interpret.py)."""
from __future__ import annotations

import difflib

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle, from the test extra: missing, the file fails)
import jax.experimental.pallas.tpu  # noqa: E402,F401

import mjax  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402
from mjax.dialect.context import context  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402

from test_mosaic_differential import custom_calls, decode  # noqa: E402


def right_permute(jx, pl, pltpu, n, mesh_id=None, id_type="MESH"):
    """The guide's right_permute: each device sends its block to its right neighbour."""
    def kernel(input_ref, output_ref, send_sem, recv_sem):
        my_id = jx.lax.axis_index("x")
        right = jx.lax.rem(my_id + 1, n)
        device_id = (right,) if mesh_id is None else mesh_id(jx, right)
        copy = pltpu.make_async_remote_copy(
            src_ref=input_ref, dst_ref=output_ref, send_sem=send_sem, recv_sem=recv_sem,
            device_id=device_id, device_id_type=getattr(pl.DeviceIdType, id_type))
        copy.start()
        copy.wait()
    return pl.pallas_call(
        kernel, out_shape=jx.ShapeDtypeStruct((8, 128), np.float32),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=0, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
            out_specs=pl.BlockSpec(memory_space=pl.ANY),
            scratch_shapes=[pltpu.SemaphoreType.DMA] * 2))


def all_gather(jx, pl, pltpu, n):
    """The guide's all_gather: n - 1 steps, each forwarding a slot to the right."""
    def kernel(input_ref, output_ref, local_copy_sem, send_sem, recv_sems):
        step = pl.program_id(0)
        my_id = jx.lax.axis_index("x")
        right = jx.lax.rem(my_id + 1, n)
        slot = jx.lax.rem(my_id - step + n, n)

        @pl.when(step == 0)
        def _():
            local = pltpu.make_async_copy(input_ref, output_ref.at[my_id], local_copy_sem)
            local.start()
            local.wait()
        copy = pltpu.make_async_remote_copy(
            src_ref=output_ref.at[slot], dst_ref=output_ref.at[slot], send_sem=send_sem,
            recv_sem=recv_sems.at[step], device_id=(right,),
            device_id_type=pl.DeviceIdType.MESH)
        copy.start()
        copy.wait()
    return pl.pallas_call(
        kernel, out_shape=jx.ShapeDtypeStruct((n, 8, 128), np.float32),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=0, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
            out_specs=pl.BlockSpec(memory_space=pl.ANY),
            scratch_shapes=[pltpu.SemaphoreType.DMA] * 2
            + [pltpu.SemaphoreType.DMA((n - 1,))], grid=(n - 1,)))


def signal_neighbour(jx, pl, pltpu, n):
    """A semaphore signal to the left neighbour, then a wait for the right one's."""
    def kernel(x_ref, o_ref, sem, dma_sem):
        my_id = jx.lax.axis_index("x")
        left = jx.lax.rem(my_id + n - 1, n)
        pltpu.semaphore_signal(sem, 2, device_id=(left,),
                               device_id_type=pl.DeviceIdType.MESH)
        pltpu.semaphore_wait(sem, 2)
        copy = pltpu.make_async_copy(x_ref, o_ref, dma_sem)
        copy.start()
        copy.wait()
    return pl.pallas_call(kernel, out_shape=jx.ShapeDtypeStruct((8, 128), np.float32),
                          in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                          out_specs=pl.BlockSpec(memory_space=pl.ANY),
                          scratch_shapes=[pltpu.SemaphoreType.REGULAR,
                                          pltpu.SemaphoreType.DMA])


def grid_2d(jx, pl, pltpu, n):
    """A 2 x (n // 2) mesh: send along y, named by both coordinates (a tuple) or by a
    dict naming y alone (x: this device's)."""
    def kernel(x_ref, o_ref, send_sem, recv_sem):
        y = jx.lax.axis_index("y")
        other = jx.lax.rem(y + 1, n // 2)
        a = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem,
                                         device_id=(jx.lax.axis_index("x"), other))
        a.start()
        a.wait_send()
        a.wait_recv()
        b = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem,
                                         device_id={"y": other})
        b.start()
        b.wait()
    return pl.pallas_call(
        kernel, out_shape=jx.ShapeDtypeStruct((8, 128), np.float32),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)


def barrier_permute(jx, pl, pltpu, n):
    """right_permute after a barrier with both neighbours (the guide's barrier
    semaphore; collective_id in the compiler params)."""
    def kernel(input_ref, output_ref, send_sem, recv_sem):
        my_id = jx.lax.axis_index("x")
        right = jx.lax.rem(my_id + 1, n)
        left = jx.lax.rem(my_id + n - 1, n)
        barrier = pltpu.get_barrier_semaphore()
        pl.semaphore_signal(barrier, device_id=right, device_id_type=pl.DeviceIdType.LOGICAL)
        pl.semaphore_signal(barrier, device_id=(left,))
        pl.semaphore_wait(barrier, 2)
        copy = pltpu.make_async_remote_copy(input_ref, output_ref, send_sem, recv_sem,
                                            device_id=(right,))
        copy.start()
        copy.wait()
    return pl.pallas_call(
        kernel, out_shape=jx.ShapeDtypeStruct((8, 128), np.float32),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
        compiler_params=pltpu.CompilerParams(collective_id=7))


N = 4
# name -> (kernel maker, mesh shape, mesh axes, in spec, the global input's shape)
KERNELS = {
    "right_permute": (right_permute, (N,), ("x",), ("x",), (8 * N, 128)),
    "right_permute_logical": (
        lambda jx, pl, pltpu, n: right_permute(jx, pl, pltpu, n, lambda jx, r: r,
                                               "LOGICAL"),
        (N,), ("x",), ("x",), (8 * N, 128)),
    "all_gather": (all_gather, (N,), ("x",), ("x",), (8 * N, 128)),
    "signal_neighbour": (signal_neighbour, (N,), ("x",), ("x",), (8 * N, 128)),
    "barrier_permute": (barrier_permute, (N,), ("x",), ("x",), (8 * N, 128)),
    "grid_2d": (grid_2d, (2, N // 2), ("x", "y"), (("x", "y"),), (8 * N, 128)),
}


def _shard_mapped(lib, name):
    maker, mesh_shape, axes, spec, shape = KERNELS[name]
    if lib is jax:
        call, P = maker(jax, jpl, jpltpu, N), jax.sharding.PartitionSpec
    else:
        call, P = maker(mjax, pl, pltpu, N), mjax.sharding.PartitionSpec
    mesh = lib.make_mesh(mesh_shape, axes, devices=lib.devices()[:N])
    out_spec = P(*spec) if name != "all_gather" else P(None, *spec)
    f = lib.shard_map(call, mesh=mesh, in_specs=P(*spec), out_specs=out_spec,
                      check_vma=False)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    return f, lib.device_put(x, lib.sharding.NamedSharding(mesh, P(*spec)))


def _lowered(lib, name):
    f, x = _shard_mapped(lib, name)
    text = lib.jit(f).trace(x).lower(lowering_platforms=("tpu",)).as_text()
    with context(), ir.Location.unknown():
        module = ir.Module.parse(text)      # (held: its ops die with it)
        (call,) = custom_calls(module)
        return str(call.attributes["kernel_name"]), decode(call)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_remote_dma_mosaic_matches_jax(name):
    jname, (jattrs, jbody) = _lowered(jax, name)
    mname, (mattrs, mbody) = _lowered(mjax, name)
    assert (mname, mattrs) == (jname, jattrs)
    assert "has_communication" in jattrs
    assert mbody == jbody, "".join(difflib.unified_diff(
        jbody.splitlines(True), mbody.splitlines(True), "jax", "mjax", n=2))


def _outside_shard_map(signal):
    def kernel(x_ref, o_ref, send_sem, recv_sem):
        if signal:
            pl.semaphore_signal(pltpu.get_barrier_semaphore())
        else:
            pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem,
                                         device_id=(0,)).start()
    return pl.pallas_call(kernel, out_shape=mjax.ShapeDtypeStruct((8, 128), np.float32),
                          in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                          out_specs=pl.BlockSpec(memory_space=pl.ANY),
                          scratch_shapes=[pltpu.SemaphoreType.DMA] * 2,
                          interpret=pltpu.InterpretParams())


@pytest.mark.parametrize("signal", [False, True])
def test_interpret_mode_refuses_remote_dma_outside_shard_map(signal):
    # (inside a shard_map they run: test_remote_dma_interpret.py)
    with pytest.raises(NotImplementedError, match=r"in interpret mode \(interpret=True or "
                                                  r"pltpu.InterpretParams\) outside a "
                                                  r"shard_map is not supported by mjax"):
        mjax.jit(_outside_shard_map(signal))(np.zeros((8, 128), np.float32))


def test_device_id_must_match_the_mesh():
    # (JAX's message: a MESH device id has one coordinate per mesh axis)
    mesh = mjax.make_mesh((2, 2), ("x", "y"), devices=mjax.devices()[:4])
    P = mjax.sharding.PartitionSpec

    def kernel(x_ref, o_ref, send_sem, recv_sem):
        pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem,
                                     device_id=(0,)).start()
    call = pl.pallas_call(kernel, out_shape=mjax.ShapeDtypeStruct((8, 128), np.float32),
                          in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                          out_specs=pl.BlockSpec(memory_space=pl.ANY),
                          scratch_shapes=[pltpu.SemaphoreType.DMA] * 2)
    f = mjax.shard_map(call, mesh=mesh, in_specs=P(("x", "y")), out_specs=P(("x", "y")),
                       check_vma=False)
    with pytest.raises(ValueError, match="Number of device ids must match the number of "
                                         "mesh axes, but got 1 ids for a 2D mesh"):
        mjax.jit(f).trace(np.zeros((32, 128), np.float32)).lower(
            lowering_platforms=("tpu",))
