"""The Pallas TPU API in interpret mode: pltpu.PrefetchScalarGridSpec, CompilerParams,
VMEM scratch accumulators, DMAs with semaphores, run_scoped, and the IR they make.

Each kernel is written once over a library (jax or mjax) and checked against NumPy and
against real jax running the same kernel with interpret=True."""
import functools

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import pallas as jpl
from jax.experimental.pallas import tpu as jpltpu

import mjax
import mjax.numpy as jnp
from mjax.experimental import pallas as pl
from mjax.passes.registry import PassError
from mjax.experimental.pallas import tpu as pltpu

MJAX = (mjax, jnp, pl, pltpu)
JAX = (jax, jjnp, jpl, jpltpu)


def rnd(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# ---- the Pallas TPU guide's matmul: a VMEM accumulator over an "arbitrary" K axis -------
def guide_matmul(libs, x, y, bm=16, bk=16, bn=16, semantics=("parallel", "parallel",
                                                             "arbitrary")):
    jax_, jnp_, pl_, pltpu_ = libs

    def kernel(x_ref, y_ref, z_ref, acc_ref, *, nsteps):
        @pl_.when(pl_.program_id(2) == 0)
        def _():
            acc_ref[...] = jnp_.zeros_like(acc_ref)

        acc_ref[...] += jnp_.dot(x_ref[...], y_ref[...],
                                 preferred_element_type=jnp_.float32)

        @pl_.when(pl_.program_id(2) == nsteps - 1)
        def _():
            z_ref[...] = acc_ref[...].astype(z_ref.dtype)

    m, k = x.shape
    n = y.shape[1]
    return pl_.pallas_call(
        functools.partial(kernel, nsteps=k // bk),
        grid_spec=pltpu_.PrefetchScalarGridSpec(
            num_scalar_prefetch=0,
            in_specs=[pl_.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
                      pl_.BlockSpec((bk, bn), lambda i, j, k: (k, j))],
            out_specs=pl_.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
            scratch_shapes=[pltpu_.VMEM((bm, bn), jnp_.float32)],
            grid=(m // bm, n // bn, k // bk)),
        out_shape=jax_.ShapeDtypeStruct((m, n), x.dtype),
        compiler_params=pltpu_.CompilerParams(dimension_semantics=semantics),
        interpret=True)(x, y)


def test_guide_matmul_vmem_accumulator():
    x, y = rnd(32, 48), rnd(48, 32, seed=1)
    want = x @ y
    close(guide_matmul(MJAX, x, y), want)
    close(guide_matmul(JAX, x, y), want)
    close(mjax.jit(lambda a, b: guide_matmul(MJAX, a, b))(x, y), want)
    # the enum spelling of the semantics
    close(guide_matmul(MJAX, x, y, semantics=(pltpu.PARALLEL, pltpu.PARALLEL,
                                              pltpu.GridDimensionSemantics.ARBITRARY)),
          want)


def test_guide_matmul_records_compiler_params():
    x, y = rnd(32, 32), rnd(32, 32, seed=1)
    jaxpr = str(mjax.make_jaxpr(lambda a, b: guide_matmul(MJAX, a, b))(x, y))
    assert "'dimension_semantics': ('parallel', 'parallel', 'arbitrary')" in jaxpr
    assert "'backend': 'mosaic_tpu'" in jaxpr


def test_guide_matmul_vmap_prepends_parallel():
    x, y = rnd(2, 32, 32), rnd(32, 32, seed=1)
    out = mjax.vmap(lambda a: guide_matmul(MJAX, a, y))(x)
    close(out, np.einsum("bij,jk->bik", x, y))
    close(jax.vmap(lambda a: guide_matmul(JAX, a, y))(x), out)


def test_compiler_params_fields_match_jax():
    import dataclasses
    ours = [f.name for f in dataclasses.fields(pltpu.CompilerParams)]
    theirs = [f.name for f in dataclasses.fields(jpltpu.CompilerParams)]
    assert ours == theirs
    p = pltpu.CompilerParams(dimension_semantics=["parallel"], vmem_limit_bytes=1 << 20,
                             flags={"xla_tpu_foo": True})
    assert p.dimension_semantics == ("parallel",)
    assert p.replace(vmem_limit_bytes=7).vmem_limit_bytes == 7
    with pytest.raises(ValueError, match="dimension_semantics"):
        pltpu.CompilerParams(dimension_semantics=("sideways",))


def test_dimension_semantics_must_match_grid():
    x, y = rnd(32, 32), rnd(32, 32, seed=1)
    with pytest.raises(Exception, match="dimension_semantics"):
        guide_matmul(MJAX, x, y, semantics=("parallel", "arbitrary"))


def test_api_names_match_jax():
    assert [m.name for m in pltpu.MemorySpace] == [m.name for m in jpltpu.MemorySpace]
    assert [m.name for m in pltpu.SemaphoreType] == [m.name for m in jpltpu.SemaphoreType]
    assert ([(m.name, m.value) for m in pl.MemorySpace]
            == [(m.name, m.value) for m in jpl.MemorySpace])
    for enum_name in ("ChipVersion", "BufferType", "CoreType", "SideEffectType"):
        assert ([(m.name, m.value) for m in getattr(pltpu, enum_name)]
                == [(m.name, m.value) for m in getattr(jpltpu, enum_name)])
    assert ([m.value for m in pltpu.GridDimensionSemantics]
            == [m.value for m in jpltpu.GridDimensionSemantics])
    import dataclasses
    assert ([f.name for f in dataclasses.fields(pltpu.InterpretParams)]
            == [f.name for f in dataclasses.fields(jpltpu.InterpretParams)])
    import inspect
    assert (list(inspect.signature(pltpu.core_barrier).parameters)
            == list(inspect.signature(jpltpu.core_barrier).parameters))
    assert [(m.name, m.shape) for m in pltpu.Tiling] == [(m.name, m.shape)
                                                         for m in jpltpu.Tiling]
    with pytest.raises(NotImplementedError, match="Mesh must be 1D"):
        pl.core_map(None)


def test_tpu_sc_imports_and_its_meshes_raise():
    # (JAX's SparseCore guide code imports plsc beside TensorCore kernels: the import works)
    from mjax.experimental.pallas import tpu_sc as plsc
    with pytest.raises(NotImplementedError, match="VectorSubcoreMesh"):
        plsc.VectorSubcoreMesh(core_axis_name="core", subcore_axis_name="subcore",
                               num_cores=1)
    with pytest.raises(NotImplementedError, match="get_sparse_core_info"):
        plsc.get_sparse_core_info()


# ---- scalar prefetch: a block-sparse gather by prefetched indices -------------------------
def block_gather(libs, idx, x, scale):
    jax_, jnp_, pl_, pltpu_ = libs

    def kernel(idx_ref, s_ref, x_ref, o_ref):
        i = pl_.program_id(0)
        o_ref[...] = x_ref[...] * s_ref[i].astype(jnp_.float32) + idx_ref[i].astype(
            jnp_.float32)

    nb = idx.shape[0]
    return pl_.pallas_call(
        kernel,
        grid_spec=pltpu_.PrefetchScalarGridSpec(
            num_scalar_prefetch=2, grid=(nb,),
            in_specs=[pl_.BlockSpec((8, 128), lambda i, idx_ref, s_ref: (idx_ref[i], 0))],
            out_specs=pl_.BlockSpec((8, 128), lambda i, idx_ref, s_ref: (i, 0))),
        out_shape=jax_.ShapeDtypeStruct((nb * 8, 128), x.dtype),
        interpret=True)(idx, scale, x)


def test_scalar_prefetch_block_gather():
    idx = np.array([3, 0, 2, 2, 1], np.int32)
    scale = np.array([1, 2, 3, 4, 5], np.int32)
    x = rnd(32, 128)
    want = np.concatenate([x[j * 8:(j + 1) * 8] * s + j for j, s in zip(idx, scale)])
    close(block_gather(MJAX, idx, x, scale), want)
    close(block_gather(JAX, idx, x, scale), want)
    close(mjax.jit(lambda i, x: block_gather(MJAX, i, x, scale))(idx, x), want)


def test_scalar_prefetch_in_the_ir():
    idx = np.array([1, 0], np.int32)
    x = rnd(16, 128)
    jaxpr = str(mjax.make_jaxpr(lambda i, x: block_gather(MJAX, i, x, i))(idx, x))
    assert "num_scalar_prefetch=2" in jaxpr


def test_scalar_prefetch_jvp_is_not_implemented():
    idx = np.array([1, 0], np.int32)
    x = rnd(16, 128)
    with pytest.raises(NotImplementedError):
        mjax.jvp(lambda x: block_gather(MJAX, idx, x, idx), (x,), (x,))


def test_scalar_prefetch_bad_index_map_arity():
    x = rnd(16, 128)

    def kernel(idx_ref, x_ref, o_ref):
        o_ref[...] = x_ref[...]
    call = pl.pallas_call(
        kernel, grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(2,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i, r: (i, 0))),
        out_shape=mjax.ShapeDtypeStruct((16, 128), np.float32), interpret=True)
    with pytest.raises(TypeError, match="scalar-prefetch"):
        call(np.array([0, 1], np.int32), x)


# ---- DMAs and semaphores ----------------------------------------------------------------
def dma_double_buffer(libs, x):
    """x stays in HBM (pl.ANY); each step copies its rows into a two-slot VMEM buffer
    with DMAs on an array of two DMA semaphores."""
    jax_, jnp_, pl_, pltpu_ = libs

    def kernel(x_hbm, o_ref, buf, sems):
        i = pl_.program_id(0)
        c0 = pltpu_.make_async_copy(x_hbm.at[pl_.ds(i * 8, 8)], buf.at[0], sems.at[0])
        c1 = pltpu_.make_async_copy(x_hbm.at[pl_.ds((i + 1) % 4 * 8, 8)], buf.at[1],
                                    sems.at[1])
        c0.start()
        c1.start()
        c0.wait()
        c1.wait()
        o_ref[...] = buf[0] * 2.0 + buf[1]

    return pl_.pallas_call(
        kernel, grid=(4,),
        in_specs=[pl_.BlockSpec(memory_space=pl_.ANY)],
        out_specs=pl_.BlockSpec((8, 128), lambda i: (i, 0)),
        scratch_shapes=[pltpu_.VMEM((2, 8, 128), jnp_.float32),
                        pltpu_.SemaphoreType.DMA((2,))],
        out_shape=jax_.ShapeDtypeStruct(x.shape, x.dtype),
        interpret=True)(x)


def test_dma_double_buffer():
    x = rnd(32, 128)
    want = 2 * x + np.roll(x, -8, axis=0)
    close(dma_double_buffer(MJAX, x), want)
    close(dma_double_buffer(JAX, x), want)


def dma_chained_views(libs, x):
    """Copies through views made by chained .at[...]s, two of them offsetting the same
    dim (the interpreter adds their starts), and waits in another block."""
    jax_, jnp_, pl_, pltpu_ = libs

    def kernel(x_hbm, o_ref, buf, sems):
        i = pl_.program_id(0)
        rows = x_hbm.at[1].at[pl_.ds(8, 16)]
        slot = buf.at[1]
        c = pltpu_.make_async_copy(rows.at[pl_.ds(i * 4, 8)], slot.at[pl_.ds(0, 8)],
                                   sems.at[1])

        @pl_.when(i >= 0)
        def _():
            c.start()
        c.wait()
        o_ref[...] = buf[1] + 1.0

    return pl_.pallas_call(
        kernel, grid=(2,),
        in_specs=[pl_.BlockSpec(memory_space=pl_.ANY)],
        out_specs=pl_.BlockSpec((8, 128), lambda i: (i, 0)),
        scratch_shapes=[pltpu_.VMEM((2, 8, 128), jnp_.float32),
                        pltpu_.SemaphoreType.DMA((2,))],
        out_shape=jax_.ShapeDtypeStruct((16, 128), x.dtype),
        interpret=True)(x)


def test_dma_chained_views():
    x = rnd(2, 32, 128)
    want = np.concatenate([x[1, 8:16], x[1, 12:20]]) + 1
    close(dma_chained_views(MJAX, x), want)
    close(dma_chained_views(JAX, x), want)
    text = mjax.jit(lambda x: dma_chained_views(MJAX, x)).trace(x).as_text()
    assert "src_levels = array<i64: 3, 2, 2>" in text and "has_src = true" in text


def semaphores_and_scoped(libs, x, params):
    jax_, jnp_, pl_, pltpu_ = libs

    def kernel(x_ref, o_ref):
        def body(tmp, sem, dsem):
            pltpu_.async_copy(x_ref, tmp, dsem).wait()
            pl_.semaphore_signal(sem, 3)
            pl_.semaphore_wait(sem, 2)
            # (JAX's TPU interpreter has no semaphore_read: the count, 1, is added then)
            count = (pl_.semaphore_read(sem).astype(jnp_.float32) if params is True
                     else 1.0)
            return tmp[...] * 3.0 + count
        o_ref[...] = pl_.run_scoped(body, pltpu_.VMEM((8, 128), jnp_.float32),
                                    pltpu_.SemaphoreType.REGULAR,
                                    pltpu_.SemaphoreType.DMA)

    return pl_.pallas_call(
        kernel, grid=(2,),
        in_specs=[pl_.BlockSpec((8, 128), lambda i: (i, 0))],
        out_specs=pl_.BlockSpec((8, 128), lambda i: (i, 0)),
        out_shape=jax_.ShapeDtypeStruct(x.shape, x.dtype), interpret=params)(x)


@pytest.mark.parametrize("tpu_params", [False, True])
def test_run_scoped_semaphores(tpu_params):
    x = rnd(16, 128)
    want = 3 * x + 1
    close(semaphores_and_scoped(MJAX, x, pltpu.InterpretParams() if tpu_params else True),
          want)
    close(semaphores_and_scoped(JAX, x, jpltpu.InterpretParams() if tpu_params else True),
          want)


def test_sync_copy_and_scratch_smem():
    x = rnd(8, 128)

    def run(libs):
        jax_, jnp_, pl_, pltpu_ = libs

        def kernel(x_hbm, o_ref, buf, cnt):
            pltpu_.sync_copy(x_hbm, buf)
            cnt[0] = 5
            o_ref[...] = buf[...] + cnt[0].astype(jnp_.float32)
        return pl_.pallas_call(
            kernel, in_specs=[pl_.BlockSpec(memory_space=pl_.ANY)],
            scratch_shapes=[pltpu_.VMEM((8, 128), jnp_.float32),
                            pltpu_.SMEM((1,), jnp_.int32)],
            out_shape=jax_.ShapeDtypeStruct(x.shape, x.dtype), interpret=True)(x)
    close(run(MJAX), x + 5)
    close(run(JAX), x + 5)


def test_dma_shape_mismatch_is_clear():
    x = rnd(16, 128)

    def kernel(x_hbm, o_ref, buf, sem):
        pltpu.make_async_copy(x_hbm, buf, sem).start()
    with pytest.raises(ValueError, match="same shape and dtype"):
        pl.pallas_call(kernel, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                       scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32),
                                       pltpu.SemaphoreType.DMA],
                       out_shape=mjax.ShapeDtypeStruct(x.shape, x.dtype),
                       interpret=True)(x)


def test_dma_ir_records_memory_spaces():
    x = rnd(32, 128)
    jaxpr = str(mjax.make_jaxpr(lambda x: dma_double_buffer(MJAX, x))(x))
    assert "'memory_space': 'any'" in jaxpr
    assert "scratch_memory_spaces=('vmem', 'dma_semaphore')" in jaxpr


# ---- small helpers ------------------------------------------------------------------------
@pytest.mark.parametrize("stride", [None, 3])
def test_roll_differentiates_and_batches(stride):
    # (JAX's roll has no JVP or batching rule; the values are NumPy's rotations)
    x, w = rnd(8, 128), rnd(8, 128, seed=1)
    kw = {} if stride is None else {"stride": stride, "stride_axis": 0}
    shift = lambda i: 5 + (0 if stride is None else stride * i)     # noqa: E731

    def rolled(a, sign=1):
        return np.stack([np.roll(a[i], sign * shift(i)) for i in range(8)])
    grad = mjax.grad(lambda x: (pltpu.roll(x, np.int32(5), 1, **kw) * w).sum())(x)
    close(grad, rolled(w, -1))
    _, t = mjax.jvp(lambda x: pltpu.roll(x, 5, 1, **kw), (x,), (w,))
    close(t, rolled(w))
    out = mjax.vmap(lambda x, s: pltpu.roll(x, s, 1, **kw), in_axes=(0, None))(
        np.stack([x, w]), np.int32(5))
    close(out, np.stack([rolled(x), rolled(w)]))

    def kernel(s_ref, x_ref, o_ref):
        o_ref[...] = pltpu.roll(x_ref[...], s_ref[0], 1, **kw)
    call = lambda s, x: pl.pallas_call(      # noqa: E731
        kernel, in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec()],
        out_shape=mjax.ShapeDtypeStruct(x.shape, x.dtype), interpret=True)(s, x)
    close(call(np.array([5], np.int32), x), rolled(x))
    close(mjax.vmap(call, in_axes=(None, 0))(np.array([5], np.int32), np.stack([x, w])),
          np.stack([rolled(x), rolled(w)]))


def test_kernel_prng_needs_a_tpu():
    # (its Mosaic is checked against JAX's in test_mosaic_differential.py, kernel "prng")
    def kernel(o_ref):
        pltpu.prng_seed(3)
        o_ref[...] = pltpu.prng_random_bits((8, 128))
    call = pl.pallas_call(kernel, out_shape=mjax.ShapeDtypeStruct((8, 128), np.int32),
                          interpret=True)
    with pytest.raises(PassError, match="runs only in a kernel compiled for a TPU"):
        call()
    with pytest.raises(ValueError, match="only be called inside a Pallas kernel"):
        pltpu.prng_random_bits((8, 128))


def test_roll_and_bitcast_match_jax():
    x = rnd(8, 128)

    def run(libs, x):
        jax_, jnp_, pl_, pltpu_ = libs

        def kernel(x_ref, o_ref, b_ref):
            o_ref[...] = pltpu_.roll(x_ref[...], 3, 1)
            b_ref[...] = pltpu_.bitcast(x_ref[...], jnp_.int32)
        return pl_.pallas_call(kernel, out_shape=(
            jax_.ShapeDtypeStruct(x.shape, x.dtype),
            jax_.ShapeDtypeStruct(x.shape, np.int32)), interpret=True)(x)
    a, b = run(MJAX, x)
    c, d = run(JAX, x)
    close(a, c)
    np.testing.assert_array_equal(np.asarray(b), np.asarray(d))


def test_estimate_cost_gives_a_cost_estimate():
    ce = pl.estimate_cost(lambda a, b: a @ b, mjax.ShapeDtypeStruct((8, 16), np.float32),
                          mjax.ShapeDtypeStruct((16, 4), np.float32))
    assert isinstance(ce, pl.CostEstimate)
    assert ce.flops >= 2 * 8 * 16 * 4 * 0.5


def test_emit_pipeline_over_hbm_refs():
    # (JAX's emit_pipeline needs a TPU's tiling even when interpreting: NumPy decides)
    x, y = rnd(32, 256), rnd(32, 256, seed=1)

    def add_block(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...] * 2

    def kernel(x_hbm, y_hbm, o_hbm):
        spec = pl.BlockSpec((8, 128), lambda i, j: (i, j))
        pltpu.emit_pipeline(add_block, grid=(4, 2), in_specs=[spec, spec],
                            out_specs=spec)(x_hbm, y_hbm, o_hbm)
    out = pl.pallas_call(kernel, in_specs=[pl.BlockSpec(memory_space=pl.ANY)] * 2,
                         out_specs=pl.BlockSpec(memory_space=pl.ANY),
                         out_shape=mjax.ShapeDtypeStruct(x.shape, x.dtype),
                         interpret=True)(x, y)
    close(out, x + 2 * y)


def test_emit_pipeline_body_program_id_is_the_pipelines():
    """In an emit_pipeline body, pl.program_id/num_programs answer for the pipeline's
    grid, not the kernel's (JAX's scheduler grid_env): JAX's tpu_pallas_pipeline_test
    matmul zeroes its accumulator at program_id(2) == 0 (mjax had no axis 2 there)."""
    x, y = rnd(256, 256), rnd(256, 256, seed=1)

    def kernel(x_hbm, y_hbm, z_hbm, n_ref):
        def body(x_ref, y_ref, z_ref):
            @pl.when(pl.program_id(2) == 0)
            def _():
                z_ref[...] = jnp.zeros(z_ref.shape, np.float32)
            z_ref[...] += x_ref[...] @ y_ref[...]
            n_ref[0] = pl.num_programs(2) * 100 + pl.program_id(1) * 10 + pl.program_id(0)
        pltpu.emit_pipeline(body, grid=(2, 2, 2), in_specs=[
            pl.BlockSpec((128, 128), lambda i, j, k: (i, k)),
            pl.BlockSpec((128, 128), lambda i, j, k: (k, j))],
            out_specs=pl.BlockSpec((128, 128), lambda i, j, k: (i, j)))(x_hbm, y_hbm, z_hbm)
    z, n = pl.pallas_call(kernel, in_specs=[pl.BlockSpec(memory_space=pl.ANY)] * 2,
                          out_specs=(pl.BlockSpec(memory_space=pl.ANY),
                                     pl.BlockSpec(memory_space=pltpu.SMEM)),
                          out_shape=(mjax.ShapeDtypeStruct((256, 256), np.float32),
                                     mjax.ShapeDtypeStruct((1,), np.int32)),
                          interpret=True)(x, y)
    np.testing.assert_allclose(np.asarray(z), x @ y, rtol=1e-4, atol=1e-4)   # (2 partial sums)
    assert int(np.asarray(n)[0]) == 211          # (the last step: (1, 1, 1) of 2 each)
    with pytest.raises(ValueError, match="out of range for the grid"):
        pl.pallas_call(lambda o: pltpu.emit_pipeline(
            lambda o_ref: o_ref.__setitem__(..., pl.program_id(1) + o_ref[...]), grid=(2,),
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(o),
            out_specs=pl.BlockSpec(memory_space=pl.ANY), grid=(1, 1),
            out_shape=mjax.ShapeDtypeStruct((16, 128), np.int32), interpret=True)()


def test_run_state_and_small_pl_names():
    def f(refs):
        a, b = refs
        a[...] = a[...] + b[...]
    ones = np.ones(3, np.float32)
    for lib in (pl, jpl):
        a, b = lib.run_state(f)((ones, ones))
        close(a, 2 * ones)
        close(b, ones)
    assert pl.pallas_call_p.name == "pallas_call"
    assert [m.value for m in pl.RevisitMode] == [m.value for m in jpl.RevisitMode]
    with pytest.raises(NotImplementedError, match="Indirect"):
        pl.pallas_call(lambda x_ref, o_ref: None,
                       in_specs=[pl.BlockSpec((pl.Indirect(8),), lambda i: (i,))],
                       out_shape=mjax.ShapeDtypeStruct((8,), np.float32), grid=(1,),
                       interpret=True)(np.ones(8, np.float32))


def test_force_tpu_interpret_mode():
    x = rnd(8, 128)

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1
    call = pl.pallas_call(kernel, out_shape=mjax.ShapeDtypeStruct(x.shape, x.dtype))
    if mjax.default_backend() == "cpu":
        with pytest.raises(ValueError, match="interpret"):
            call(x)       # (on a CPU, as in JAX)
    else:                 # (on a TPU it compiles through Mosaic, as JAX's does)
        close(call(x), x + 1)
    with pltpu.force_tpu_interpret_mode():
        close(call(x), x + 1)


def test_vmap_of_scalar_prefetch_matches_jax():
    idx = np.array([[3, 0], [1, 1], [2, 3]], np.int32)     # batched prefetch
    scale = np.array([2, 3], np.int32)                    # unbatched prefetch
    x = rnd(3, 32, 128)                                   # batched input
    ours = mjax.vmap(lambda i, x: block_gather(MJAX, i, x, scale))(idx, x)
    theirs = jax.vmap(lambda i, x: block_gather(JAX, i, x, scale))(idx, x)
    close(ours, theirs)
    ours = mjax.jit(mjax.vmap(lambda i: block_gather(MJAX, i, x[0], scale)))(idx)
    theirs = jax.vmap(lambda i: block_gather(JAX, i, x[0], scale))(idx)
    close(ours, theirs)
    # (the prefetch unbatched: a leading grid dim, as JAX's; both interpreters agree)
    ours = mjax.jit(mjax.vmap(lambda x: block_gather(MJAX, idx[0], x, scale)))(x)
    theirs = jax.vmap(lambda x: block_gather(JAX, idx[0], x, scale))(x)
    close(ours, theirs)


def test_vmap_of_dma_kernel_and_jvp_with_smem_scratch():
    x = rnd(3, 32, 128)
    close(mjax.vmap(lambda x: dma_double_buffer(MJAX, x))(x),
          jax.vmap(lambda x: dma_double_buffer(JAX, x))(x))

    def run(libs, x):
        jax_, jnp_, pl_, pltpu_ = libs

        def kernel(x_ref, o_ref, acc_ref, cnt_ref):
            cnt_ref[0] = 2
            acc_ref[...] = jnp_.sin(x_ref[...])
            o_ref[...] = acc_ref[...] * cnt_ref[0].astype(jnp_.float32)
        return pl_.pallas_call(
            kernel, grid=(2,), in_specs=[pl_.BlockSpec((8, 128), lambda i: (i, 0))],
            out_specs=pl_.BlockSpec((8, 128), lambda i: (i, 0)),
            scratch_shapes=[pltpu_.VMEM((8, 128), jnp_.float32),
                            pltpu_.SMEM((1,), jnp_.int32)],
            out_shape=jax_.ShapeDtypeStruct((16, 128), jnp_.float32), interpret=True)(x)
    x2, t = rnd(16, 128), rnd(16, 128, seed=2)
    ours = mjax.jvp(lambda x: run(MJAX, x), (x2,), (t,))
    # (JAX's jvp of this kernel fails on its int32 SMEM scratch: NumPy decides)
    close(ours[0], 2 * np.sin(x2))
    close(ours[1], 2 * np.cos(x2) * t)
    close(run(JAX, x2), ours[0])


def test_pl_kernel_on_a_one_core_mesh():
    x = rnd(8, 128)

    def run(libs):
        jax_, jnp_, pl_, pltpu_ = libs
        mesh = pltpu_.create_tensorcore_mesh("core", num_cores=1)
        assert dict(mesh.shape) == {"core": 1}

        @pl_.kernel(out_type=jax_.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh,
                    scratch_types=[pltpu_.VMEM(x.shape, jnp_.float32)], interpret=True)
        def double(x_hbm, o_hbm, buf):
            pltpu_.sync_copy(x_hbm, buf)
            buf[...] = buf[...] * 2 + 1
            pltpu_.sync_copy(buf, o_hbm)
        return double(x)
    close(run(MJAX), 2 * x + 1)
    close(run(JAX), 2 * x + 1)
    # (meshes of several cores: test_multicore_mosaic.py; of several axes JAX refuses)
    with pytest.raises(NotImplementedError, match="more than one dimension"):
        pl.kernel(lambda o: None, mjax.ShapeDtypeStruct((8,), np.float32),
                  mesh=pltpu.TensorCoreMesh(np.empty((1, 2), object), ["a", "b"]))
