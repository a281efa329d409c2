"""Ref views of traced size in Pallas TPU kernels: `pl.ds(start, size)` with a traced
size, DMAs of such views (interpret mode against JAX's TPU interpret mode and NumPy;
the Mosaic module against JAX's is in test_mosaic_differential.py, kernel
dynamic_dma), and pltpu.emit_pipeline over `pl.BoundedSlice` blocks (the TPU
pipelining guide's dynamic-block kernel)."""
import re

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import pallas as jpl
from jax.experimental.pallas import tpu as jpltpu

import mjax
import mjax.numpy as jnp
from mjax.experimental import pallas as pl
from mjax.experimental.pallas import tpu as pltpu

MJAX = (mjax, jnp, pl, pltpu)
JAX = (jax, jjnp, jpl, jpltpu)


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def dynamic_copies(libs, s, x, interpret):
    """Doubles rows [start, start + size) of x[b] (s = (b, start, size)) through a VMEM
    buffer, by DMAs of views of traced size: a chained view on the HBM side, a squeezed
    dim and an offset on the VMEM side."""
    jax_, jnp_, pl_, pltpu_ = libs

    def kernel(s_ref, x_hbm, o_hbm, buf, sem):
        b, start, size = s_ref[0], s_ref[1], s_ref[2]
        src = x_hbm.at[b].at[pl_.ds(start, size)]
        rows = buf.at[1, pl_.ds(2, size)]
        c = pltpu_.make_async_copy(src, rows, sem)
        c.start()
        c.wait()
        buf[...] = buf[...] * 2.0
        pltpu_.sync_copy(rows, o_hbm.at[b, pl_.ds(start, size)])

    return pl_.pallas_call(
        kernel,
        in_specs=[pl_.BlockSpec(memory_space=pltpu_.SMEM),
                  pl_.BlockSpec(memory_space=pl_.ANY)],
        out_specs=pl_.BlockSpec(memory_space=pl_.ANY),
        scratch_shapes=[pltpu_.VMEM((2, 8, 128), jnp_.float32), pltpu_.SemaphoreType.DMA],
        input_output_aliases={1: 0}, interpret=interpret,
        out_shape=jax_.ShapeDtypeStruct(x.shape, x.dtype))(s, x)


@pytest.mark.parametrize("s", [(0, 3, 5), (1, 0, 6), (1, 10, 6), (0, 4, 0)])
def test_dma_of_traced_size_matches_jax(s):
    x = rnd(2, 16, 128)
    b, start, size = s
    want = x.copy()
    want[b, start:start + size] *= 2
    s = np.array(s, np.int32)
    got = mjax.jit(lambda s, x: dynamic_copies(MJAX, s, x, True))(s, x)
    np.testing.assert_array_equal(np.asarray(got), want)
    ref = jax.jit(lambda s, x: dynamic_copies(JAX, s, x, jpltpu.InterpretParams()))(s, x)
    np.testing.assert_array_equal(np.asarray(ref), want)


def test_dma_of_traced_size_in_the_ir_and_mosaic():
    x, s = rnd(2, 16, 128), np.array([0, 3, 5], np.int32)
    f = mjax.jit(lambda s, x: dynamic_copies(MJAX, s, x, False))
    text = f.trace(s, x).as_text()
    # (a traced size is -1 in the sizes, its value an operand)
    assert re.search(r"jaxpr\.dma_start.*dst_sizes = array<i64: 1, -1, 128>", text)
    mosaic = f.trace(s, x).lower(lowering_platforms=("tpu",)).as_text()
    assert "tpu_custom_call" in mosaic


def test_view_of_traced_size_is_for_dmas_only():
    def kernel(s_ref, x_ref, o_ref):
        o_ref[...] = x_ref[...]
        o_ref.at[pl.ds(0, s_ref[0])][...] = x_ref[...]

    with pytest.raises(NotImplementedError, match="only be copied by a DMA"):
        pl.pallas_call(kernel, in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM),
                                         pl.BlockSpec()],
                       out_shape=mjax.ShapeDtypeStruct((8, 128), np.float32),
                       interpret=True)(np.array([3], np.int32), rnd(8, 128))
    with pytest.raises(TypeError, match="traced size"):
        mjax.jit(lambda x, n: x[pl.ds(0, n)])(rnd(8), np.int32(3))


def dynamic_block_pipeline(libs, x, slices, interpret):
    """The TPU pipelining guide's dynamic-block kernel (emit_pipeline over
    pl.BoundedSlice blocks whose pl.ds sizes are read from SMEM)."""
    jax_, jnp_, pl_, pltpu_ = libs

    def kernel(x_hbm, slices_hbm, o_hbm, slices_smem):
        pltpu_.sync_copy(slices_hbm, slices_smem)

        def body(x_vmem, o_vmem):
            o_vmem[...] = x_vmem[...] + 1.0

        def index_map(i):
            start = slices_smem[i, 0]
            return (pl_.ds(start, slices_smem[i, 1] - start), 0)
        spec = pl_.BlockSpec(block_shape=(pl_.BoundedSlice(8), 128), index_map=index_map)
        pltpu_.emit_pipeline(body, grid=(slices.shape[0],), in_specs=[spec],
                             out_specs=spec)(x_hbm, o_hbm)

    hbm = pl_.BlockSpec(memory_space=pl_.ANY)
    return pl_.pallas_call(
        kernel, in_specs=[hbm, hbm], out_specs=hbm,
        out_shape=jax_.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=(pltpu_.SMEM(slices.shape, jnp_.int32),),
        interpret=interpret)(x, slices)


def test_emit_pipeline_bounded_slices():
    # (JAX's emit_pipeline asks for the TPU's tiling even when interpreting: NumPy
    # decides; rows outside every slice keep the output's uninitialized value)
    x = rnd(16, 128)
    slices = np.array([[0, 2], [2, 3], [3, 8], [8, 16], [16, 16]], np.int32)
    got = np.asarray(dynamic_block_pipeline(MJAX, x, slices, True))
    np.testing.assert_array_equal(got, x + 1.0)
    gaps = np.array([[0, 2], [5, 8]], np.int32)
    got = np.asarray(dynamic_block_pipeline(MJAX, x, gaps, True))
    np.testing.assert_array_equal(got[0:2], x[0:2] + 1.0)
    np.testing.assert_array_equal(got[5:8], x[5:8] + 1.0)


def test_emit_pipeline_bounded_slices_lower_to_dynamic_dmas():
    x, slices = rnd(16, 128), np.array([[0, 2], [2, 16]], np.int32)
    f = mjax.jit(lambda x, s: dynamic_block_pipeline(MJAX, x, s, False))
    text = f.trace(x, slices).lower(lowering_platforms=("tpu",)).as_text()
    assert "tpu_custom_call" in text
    ir_text = f.trace(x, slices).as_text()
    # one buffer per block (8 rows at most), a DMA of traced size in and one out
    assert ir_text.count('"jaxpr.dma_start"') == 3       # (the guide's sync_copy too)
    assert ir_text.count("sizes = array<i64: -1, 128>") >= 4


def test_pallas_call_refuses_bounded_slices_as_jax_mosaic_does():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    spec = pl.BlockSpec((pl.BoundedSlice(8), 128), lambda i: (pl.ds(0, 8), 0))
    with pytest.raises(NotImplementedError, match="emit_pipeline takes them"):
        pl.pallas_call(kernel, grid=(1,), in_specs=[spec],
                       out_shape=mjax.ShapeDtypeStruct((8, 128), np.float32))(rnd(8, 128))


def chained_semaphores(libs, x):
    """Semaphores named by chained .at[]s (a traced index among them), interpreted."""
    jax_, jnp_, pl_, pltpu_ = libs

    def kernel(x_ref, o_ref, sems):
        b = pl_.program_id(0)
        pl_.semaphore_signal(sems.at[b].at[1], 3)
        pl_.semaphore_wait(sems.at[b].at[1], 2)
        count = pl_.semaphore_read(sems.at[b].at[1]) * 10 + pl_.semaphore_read(
            sems.at[1 - b].at[1])
        o_ref[...] = x_ref[...] + count.astype(jnp_.float32)

    return pl_.pallas_call(
        kernel, grid=(2,), in_specs=[pl_.BlockSpec((8, 128), lambda i: (i, 0))],
        out_specs=pl_.BlockSpec((8, 128), lambda i: (i, 0)),
        scratch_shapes=[pltpu_.SemaphoreType.REGULAR((2, 2))],
        out_shape=jax_.ShapeDtypeStruct(x.shape, x.dtype), interpret=True)(x)


def test_chained_semaphore_views_match_jax():
    x = rnd(16, 128)
    got = np.asarray(chained_semaphores(MJAX, x))
    np.testing.assert_array_equal(got, np.asarray(chained_semaphores(JAX, x)))
    # (the scratch semaphores persist over the grid: step 1 sees step 0's count)
    np.testing.assert_array_equal(got, x + np.repeat(np.float32([10, 11]), 8)[:, None])
    text = mjax.jit(lambda x: chained_semaphores(MJAX, x)).trace(x).as_text()
    assert re.search(r"jaxpr\.semaphore_signal.*levels = array<i64: 2, 1>", text)


def dma_semaphore_views(libs, x):
    """A DMA signalling a semaphore named by chained .at[]s, interpreted."""
    jax_, jnp_, pl_, pltpu_ = libs

    def kernel(x_hbm, o_ref, buf, sems):
        b = pl_.program_id(0)
        c = pltpu_.make_async_copy(x_hbm.at[b], buf.at[1], sems.at[b].at[1])
        c.start()
        c.wait()
        o_ref[...] = buf[1] * 2.0

    return pl_.pallas_call(
        kernel, grid=(2,), in_specs=[pl_.BlockSpec(memory_space=pl_.ANY)],
        out_specs=pl_.BlockSpec((8, 128), lambda i: (i, 0)),
        scratch_shapes=[pltpu_.VMEM((2, 8, 128), jnp_.float32),
                        pltpu_.SemaphoreType.DMA((2, 2))],
        out_shape=jax_.ShapeDtypeStruct((16, 128), x.dtype), interpret=True)(x)


def test_dma_semaphore_views_match_jax():
    x = rnd(2, 8, 128)
    got = np.asarray(dma_semaphore_views(MJAX, x))
    np.testing.assert_array_equal(got, x.reshape(16, 128) * 2)
    np.testing.assert_array_equal(got, np.asarray(dma_semaphore_views(JAX, x)))
    text = mjax.jit(lambda x: dma_semaphore_views(MJAX, x)).trace(x).as_text()
    assert "dst_sem_levels = array<i64: 2, 1>" in text
    assert "sem_levels = array<i64: 2, 1>" in text
