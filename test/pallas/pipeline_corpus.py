"""pltpu.emit_pipeline kernels written once against a `jax`-like module (jax or mjax), for
test_pipeline_mosaic.py: most from JAX 0.10.2's tests/pallas/tpu_pallas_pipeline_test.py
(pipelines over pl.ANY / HBM refs, several steps, multiple buffering, nested pipelines).

`pipeline_corpus(J, pl, pltpu)` -> {name: (f, [(shape, dtype), ...], numpy_reference)}.
"""
from __future__ import annotations

import numpy as np


def pipeline_corpus(J, pl, pltpu) -> dict:
    jnp = J.numpy
    K = {}
    ANY = pl.BlockSpec(memory_space=pl.ANY)

    def call(kernel, out_shape, n_in, **kw):
        return pl.pallas_call(kernel, out_shape=out_shape, in_specs=[ANY] * n_in,
                              out_specs=ANY, **kw)

    # -- a block per step, in and out --------------------------------------------------
    def add_one(x):
        def body(x_ref, o_ref):
            o_ref[...] = x_ref[...] + 1.0

        def kernel(x_hbm, o_hbm):
            spec = pl.BlockSpec((8, 128), lambda i, j: (i, j))
            pltpu.emit_pipeline(body, grid=(2, 2), in_specs=[spec],
                                out_specs=spec)(x_hbm, o_hbm)
        return call(kernel, J.ShapeDtypeStruct((16, 256), jnp.float32), 1)(x)
    K["add_one"] = (add_one, [((16, 256), np.float32)], lambda x: x + 1)

    # -- a grid size given as an array (traced: the step count and its checks are ops) ----
    def dynamic_grid(x):
        def body(x_ref, o_ref):
            o_ref[...] = x_ref[...] * 2.0

        def kernel(x_hbm, o_hbm):
            spec = pl.BlockSpec((8, 128), lambda i, j: (i, j))
            pltpu.emit_pipeline(body, grid=(jnp.array(2), 2), in_specs=[spec],
                                out_specs=spec)(x_hbm, o_hbm)
        return call(kernel, J.ShapeDtypeStruct((16, 256), jnp.float32), 1)(x)
    K["dynamic_grid"] = (dynamic_grid, [((16, 256), np.float32)], lambda x: x * 2)

    # -- PallasCallMegacoreTest's test_megacore_mul on one core (a v5e): the grid is left
    # whole --------------------------------------------------------------------------
    def one_core(x):
        def body(x_ref, y_ref):
            y_ref[...] = x_ref[...] * 2

        def kernel(x_ref, y_ref):
            pltpu.emit_pipeline(
                body, grid=(4, 4), in_specs=[pl.BlockSpec((128, 128), lambda i, j: (i, j))],
                out_specs=pl.BlockSpec((128, 128), lambda i, j: (i, j)), core_axis=0,
                dimension_semantics=(pltpu.ARBITRARY, pltpu.PARALLEL))(x_ref, y_ref)
        return call(kernel, J.ShapeDtypeStruct((512, 512), jnp.float32), 1, grid=(1,),
                    compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",)))(x)
    K["one_core"] = (one_core, [((512, 512), np.float32)], lambda x: x * 2)

    # -- tpu_pallas_pipeline_test: test_pipeline_matmul (no_pipelining False and True) ----
    def matmul(no_pipelining):
        def body(x_ref, y_ref, z_ref):
            @pl.when(pl.program_id(2) == 0)
            def _():
                z_ref[...] = jnp.zeros(z_ref.shape, jnp.float32)
            z_ref[...] += x_ref[...] @ y_ref[...]

        def kernel(x_ref, y_ref, z_ref):
            pltpu.emit_pipeline(
                body, grid=(4, 4, 4),
                in_specs=[pl.BlockSpec((128, 128), lambda i, j, k: (i, k)),
                          pl.BlockSpec((128, 128), lambda i, j, k: (k, j))],
                out_specs=pl.BlockSpec((128, 128), lambda i, j, k: (i, j)),
                no_pipelining=no_pipelining)(x_ref, y_ref, z_ref)
        return lambda x, y: call(kernel, J.ShapeDtypeStruct((512, 512), jnp.float32),
                                 2)(x, y)
    mm = [((512, 512), np.float32)] * 2
    K["matmul"] = (matmul(False), mm, lambda x, y: x @ y)
    K["matmul_no_pipelining"] = (matmul(True), mm, lambda x, y: x @ y)

    # -- PallasCallMultipleBufferedPipelineTest: test_copy and test_matmul ------------------
    def buffered_copy(x):
        def body(x_ref, o_ref):
            o_ref[...] = x_ref[...]

        def kernel(x_hbm, o_hbm):
            pltpu.emit_pipeline(
                body, grid=(4, 4),
                in_specs=[pl.BlockSpec((128, 128), lambda i, j: (i, j),
                                       pipeline_mode=pl.Buffered(buffer_count=4))],
                out_specs=pl.BlockSpec((128, 128), lambda i, j: (i, j),
                                       pipeline_mode=pl.Buffered(buffer_count=2)),
            )(x_hbm, o_hbm)
        return call(kernel, J.ShapeDtypeStruct((512, 512), jnp.int32), 1)(x)
    K["buffered_copy"] = (buffered_copy, [((512, 512), np.int32)], lambda x: x)

    def buffered_matmul(x, y):
        def body(x_ref, y_ref, o_ref):
            @pl.when(pl.program_id(2) == 0)
            def _():
                o_ref[...] = jnp.zeros(o_ref.shape, jnp.float32)
            o_ref[...] += x_ref[...] @ y_ref[...]

        def kernel(x_hbm, y_hbm, o_hbm):
            b = (128, 128)
            pltpu.emit_pipeline(
                body, grid=(2, 2, 2),
                in_specs=[pl.BlockSpec(b, lambda i, j, k: (i, k),
                                       pipeline_mode=pl.Buffered(buffer_count=4)),
                          pl.BlockSpec(b, lambda i, j, k: (k, j),
                                       pipeline_mode=pl.Buffered(buffer_count=2))],
                out_specs=pl.BlockSpec(b, lambda i, j, k: (i, j),
                                       pipeline_mode=pl.Buffered(buffer_count=2)),
            )(x_hbm, y_hbm, o_hbm)
        return call(kernel, J.ShapeDtypeStruct((256, 256), jnp.float32), 2)(x, y)
    K["buffered_matmul"] = (buffered_matmul, [((256, 256), np.float32)] * 2,
                            lambda x, y: x @ y)

    # -- test_hbm_output: an output left in HBM (used in place), DMA'd into by the body --
    def hbm_output(x):
        def kernel(x_hbm_ref, o_hbm_ref):
            def body(x_ref, o_ref):
                i = pl.program_id(0)
                pltpu.sync_copy(x_ref, o_ref.at[:, pl.ds(i * 128, 128)])
            pltpu.emit_pipeline(
                body, grid=(4,), in_specs=pl.BlockSpec((8, 128), lambda i: (0, i)),
                out_specs=pl.BlockSpec((8, 512), lambda i: (0, 0), memory_space=pltpu.HBM),
            )(x_hbm_ref, o_hbm_ref)
        return pl.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((8, 512), jnp.int32),
                              in_specs=[pl.BlockSpec(memory_space=pltpu.HBM)],
                              out_specs=pl.BlockSpec(memory_space=pltpu.HBM))(x)
    K["hbm_output"] = (hbm_output, [((8, 512), np.int32)], lambda x: x)

    # -- test_trivial_windowing_elides_double_buffering: y is one block, copied once ----
    def trivial_window(x, y):
        def body(x_ref, y_ref, o_ref):
            o_ref[...] = x_ref[...] + y_ref[...]

        def kernel(x_hbm, y_hbm, o_hbm):
            pltpu.emit_pipeline(
                body, grid=(4, 1),
                in_specs=[pl.BlockSpec((8, 128), lambda i, j: (0, i)),
                          pl.BlockSpec((8, 128), lambda i, j: (0, j))],
                out_specs=pl.BlockSpec((8, 128), lambda i, j: (0, i)),
            )(x_hbm, y_hbm, o_hbm)
        return call(kernel, J.ShapeDtypeStruct((8, 512), jnp.float32), 2)(x, y)
    K["trivial_window"] = (trivial_window, [((8, 512), np.float32), ((8, 128), np.float32)],
                           lambda x, y: x + np.tile(y, (1, 4)))

    # -- test_trivial_windowing_matched_vmem: VMEM refs with VMEM specs, used in place ---
    def matched_vmem(x):
        def body(x_ref, o_ref):
            o_ref[...] = x_ref[...] * 2

        def kernel(x_hbm_ref, o_hbm_ref):
            def scoped(x_vmem, o_vmem):
                pltpu.sync_copy(x_hbm_ref, x_vmem)
                pltpu.emit_pipeline(
                    body, grid=(4,),
                    in_specs=pl.BlockSpec((8, 512), lambda i: (0, 0),
                                          memory_space=pltpu.VMEM),
                    out_specs=pl.BlockSpec((8, 512), lambda i: (0, 0),
                                           memory_space=pltpu.VMEM),
                )(x_vmem, o_vmem)
                pltpu.sync_copy(o_vmem, o_hbm_ref)
            pl.run_scoped(scoped, pltpu.VMEM((8, 512), jnp.int32),
                          pltpu.VMEM((8, 512), jnp.int32))
        return pl.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((8, 512), jnp.int32))(x)
    K["matched_vmem"] = (matched_vmem, [((8, 512), np.int32)], lambda x: x * 2)

    # -- VMEM refs windowed per step (no copies), as JAX's pipeline aliases them --------
    def vmem_windows(x):
        def body(x_ref, o_ref):
            o_ref[...] = x_ref[...] - 3

        def kernel(x_ref, o_ref):
            def scoped(x_vmem, o_vmem):
                pltpu.sync_copy(x_ref, x_vmem)
                spec = pl.BlockSpec((8, 128), lambda i: (i, 0), memory_space=pltpu.VMEM)
                pltpu.emit_pipeline(body, grid=(2,), in_specs=[spec],
                                    out_specs=[spec])(x_vmem, o_vmem)
                pltpu.sync_copy(o_vmem, o_ref)
            pl.run_scoped(scoped, pltpu.VMEM((16, 128), jnp.int32),
                          pltpu.VMEM((16, 128), jnp.int32))
        return call(kernel, J.ShapeDtypeStruct((16, 128), jnp.int32), 1)(x)
    K["vmem_windows"] = (vmem_windows, [((16, 128), np.int32)], lambda x: x - 3)

    # -- a nested pipeline: the inner one windows the outer's VMEM slots in place ----------
    def nested(x):
        def inner_body(x_ref, o_ref):
            o_ref[...] = x_ref[...] * 3

        def outer_body(x_ref, o_ref):
            spec = pl.BlockSpec((16, 128), lambda i: (0, i))
            pltpu.emit_pipeline(inner_body, grid=(2,), in_specs=[spec],
                                out_specs=[spec])(x_ref, o_ref)

        def kernel(x_hbm, o_hbm):
            spec = pl.BlockSpec((16, 256), lambda i: (0, i))
            pltpu.emit_pipeline(outer_body, grid=(2,), in_specs=[spec],
                                out_specs=[spec])(x_hbm, o_hbm)
        return call(kernel, J.ShapeDtypeStruct((16, 512), jnp.float32), 1)(x)
    K["nested"] = (nested, [((16, 512), np.float32)], lambda x: x * 3)

    # -- squeezed block dims and a block index that repeats (the copy skipped) ------------
    def squeezed_repeat(x, y):
        def body(x_ref, y_ref, o_ref):
            o_ref[...] = x_ref[...] + y_ref[...]

        def kernel(x_hbm, y_hbm, o_hbm):
            pltpu.emit_pipeline(
                body, grid=(2, 3),
                in_specs=[pl.BlockSpec((None, 8, 128), lambda i, j: (i, j, 0)),
                          pl.BlockSpec((8, 128), lambda i, j: (i, 0))],
                out_specs=pl.BlockSpec((None, 8, 128), lambda i, j: (i, j, 0)),
            )(x_hbm, y_hbm, o_hbm)
        return call(kernel, J.ShapeDtypeStruct((2, 24, 128), jnp.float32), 2)(x, y)
    K["squeezed_repeat"] = (squeezed_repeat, [((2, 24, 128), np.float32),
                                              ((16, 128), np.float32)],
                            lambda x, y: x + np.repeat(y.reshape(2, 1, 8, 128), 3,
                                                       1).reshape(2, 24, 128))

    # -- PallasCallPipelineNonFlatArgsTest: pytrees of refs and specs (1-D blocks) -------
    def non_flat(x, y, z):
        def body(in_refs, out_refs):
            out_refs[1][0][...] = in_refs[0][0][...] + in_refs[2][0][...]
            out_refs[1][1][...] = in_refs[2][1][...]

        def kernel(x_ref, y_ref, z_ref, o1_ref, o2_ref):
            b = pl.BlockSpec((256,), lambda i: (i,))
            pltpu.emit_pipeline(body, grid=(2,), in_specs=([(b,), (), (b, b)],),
                                out_specs=([(), (b, b)],))(
                [(x_ref,), (), (y_ref, z_ref)], [(), (o1_ref, o2_ref)])
        s = J.ShapeDtypeStruct((512,), jnp.float32)
        return pl.pallas_call(kernel, out_shape=(s, s), in_specs=[ANY] * 3,
                              out_specs=(ANY, ANY))(x, y, z)
    K["non_flat"] = (non_flat, [((512,), np.float32)] * 3, lambda x, y, z: (x + y, z))
    return K


def gather_scatter_corpus(J, pl, pltpu) -> dict:
    """PallasCallMultipleBufferedPipelineTest's block gather and scatter (index maps that
    read an SMEM ref: repeated block indices skip copies) and single-buffered refs."""
    jnp = J.numpy
    K = {}
    ANY = pl.BlockSpec(memory_space=pl.ANY)
    SMEM = pl.BlockSpec(memory_space=pltpu.SMEM)
    idx = [0, 0, 2, 3, 3, 3, 1, 7, 6, 6]

    def gather(count, lookahead=False):
        def kernel(x_hbm_ref, blk_ref, o_hbm_ref):
            def body(x_ref, o_ref):
                o_ref[...] = x_ref[...]
            pltpu.emit_pipeline(
                body, grid=(len(idx),),
                in_specs=[pl.BlockSpec((128, 128), index_map=lambda i: (blk_ref[i], 0),
                                       pipeline_mode=pl.Buffered(buffer_count=count,
                                                                 use_lookahead=lookahead))],
                out_specs=pl.BlockSpec((128, 128), lambda i: (i, 0),
                                       pipeline_mode=pl.Buffered(buffer_count=2)),
            )(x_hbm_ref, o_hbm_ref)
        return lambda x, b: pl.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct((len(idx) * 128, 128), jnp.int32),
            in_specs=[ANY, SMEM], out_specs=ANY)(x, b)
    rows = np.concatenate([np.arange(b * 128, b * 128 + 128) for b in idx])
    for count in (2, 4):
        for la in (False, True):
            K[f"gather{count}{'_lookahead' if la else ''}"] = (
                gather(count, la), [((1024, 128), np.int32), ((10,), np.int32)],
                lambda x, b: x[rows], lambda: np.asarray(idx, np.int32))

    out_idx = [0, 0, 2, 2, 2, 5, 3, 3]

    def scatter(x, b):
        def kernel(x_hbm_ref, blk_ref, o_hbm_ref):
            def zero(o_vmem):
                o_vmem[...] = jnp.zeros(o_vmem.shape, jnp.int32)
                pltpu.sync_copy(o_vmem, o_hbm_ref)
            pl.run_scoped(zero, pltpu.VMEM((1024, 128), jnp.int32))

            def body(x_ref, o_ref):
                o_ref[...] = x_ref[...]
            pltpu.emit_pipeline(
                body, grid=(8,),
                in_specs=[pl.BlockSpec((128, 128), lambda i: (i, 0))],
                out_specs=pl.BlockSpec((128, 128), lambda i: (blk_ref[i], 0)),
            )(x_hbm_ref, o_hbm_ref)
        return pl.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((1024, 128), jnp.int32),
                              in_specs=[ANY, SMEM], out_specs=ANY)(x, b)

    def scattered(x, b):
        out = np.zeros((1024, 128), np.int32)
        for i, k in enumerate(out_idx):
            out[k * 128:(k + 1) * 128] = x[i * 128:(i + 1) * 128]
        return out
    K["scatter"] = (scatter, [((1024, 128), np.int32), ((8,), np.int32)], scattered,
                    lambda: np.asarray(out_idx, np.int32))

    def single(x):
        def kernel(x_hbm, o_hbm):
            def body(x_ref, o_ref):
                @pl.when(pl.program_id(1) == 0)
                def _():
                    o_ref[...] = jnp.zeros_like(o_ref)
                o_ref[...] += x_ref[...]
            one = pl.Buffered(buffer_count=1)
            pltpu.emit_pipeline(
                body, grid=(2, 3),
                in_specs=[pl.BlockSpec((8, 128), lambda i, j: (i, j), pipeline_mode=one)],
                out_specs=pl.BlockSpec((8, 128), lambda i, j: (i, 0), pipeline_mode=one),
            )(x_hbm, o_hbm)
        return pl.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((16, 128), jnp.float32),
                              in_specs=[ANY], out_specs=ANY)(x)
    K["single_buffered"] = (single, [((16, 384), np.float32)],
                            lambda x: x.reshape(2, 8, 3, 128).sum(2).reshape(16, 128), None)
    return K
