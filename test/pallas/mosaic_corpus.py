"""Pallas TPU kernels written once against a `jax`-like module (jax or mjax), for the
Mosaic differential test (test_mosaic_differential.py) and benchmarks/mosaic_on_tpu.py.

`corpus(J, pl, pltpu)` -> {name: (f, [(shape, dtype), ...])}; `f` calls pallas_call.
"""
from __future__ import annotations

import importlib

import numpy as np

from mosaic_corpus_jax_tests import from_jax_tests


def corpus(J, pl, pltpu) -> dict:
    jnp = J.numpy
    K = {}

    def add_kernel(x, y, o):
        o[...] = x[...] + y[...]

    def add(x, y):
        return pl.pallas_call(
            add_kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype), grid=(2,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))] * 2,
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x, y)
    K["add"] = (add, [((16, 128), np.float32)] * 2)

    def matmul_kernel(x, y, o):
        o[...] = jnp.dot(x[...], y[...], preferred_element_type=jnp.float32)

    def matmul(x, y):
        return pl.pallas_call(
            matmul_kernel, out_shape=J.ShapeDtypeStruct((256, 256), jnp.float32),
            grid=(2, 2),
            in_specs=[pl.BlockSpec((128, 256), lambda i, j: (i, 0)),
                      pl.BlockSpec((256, 128), lambda i, j: (0, j))],
            out_specs=pl.BlockSpec((128, 128), lambda i, j: (i, j)))(x, y)
    K["matmul"] = (matmul, [((256, 256), np.float32)] * 2)

    def matmul_nt_kernel(x, y, o):         # x @ y.T: contracting dims (1, 1)
        o[...] = J.lax.dot_general(x[...], y[...], (((1,), (1,)), ((), ())),
                                   preferred_element_type=jnp.float32)

    def matmul_nt(x, y):
        return pl.pallas_call(
            matmul_nt_kernel, out_shape=J.ShapeDtypeStruct((128, 128), jnp.float32))(x, y)
    K["matmul_transposed_rhs"] = (matmul_nt, [((128, 256), "bfloat16")] * 2)

    def acc_kernel(x, y, o, acc):          # the Pallas TPU guide's matmul
        @pl.when(pl.program_id(2) == 0)
        def _():
            acc[...] = jnp.zeros(acc.shape, jnp.float32)
        acc[...] += jnp.dot(x[...], y[...], preferred_element_type=jnp.float32)

        @pl.when(pl.program_id(2) == 3)
        def _():
            o[...] = acc[...].astype(o.dtype)

    def guide_matmul(x, y):
        return pl.pallas_call(
            acc_kernel, out_shape=J.ShapeDtypeStruct((512, 512), x.dtype), grid=(2, 2, 4),
            in_specs=[pl.BlockSpec((256, 128), lambda i, j, k: (i, k)),
                      pl.BlockSpec((128, 256), lambda i, j, k: (k, j))],
            out_specs=pl.BlockSpec((256, 256), lambda i, j, k: (i, j)),
            scratch_shapes=[pltpu.VMEM((256, 256), jnp.float32)])(x, y)
    K["acc_matmul"] = (guide_matmul, [((512, 512), "bfloat16")] * 2)

    def guide_kernel(x, y, o, acc):        # as the guide writes it
        @pl.when(pl.program_id(2) == 0)
        def _():
            acc[...] = jnp.zeros_like(acc)
        acc[...] += jnp.dot(x[...], y[...], preferred_element_type=jnp.float32)

        @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
        def _():
            o[...] = acc[...].astype(o.dtype)

    def guide_matmul_exact(x, y):
        return pl.pallas_call(
            guide_kernel, out_shape=J.ShapeDtypeStruct((512, 512), x.dtype),
            grid=(2, 2, 4),
            in_specs=[pl.BlockSpec((256, 128), lambda i, j, k: (i, k)),
                      pl.BlockSpec((128, 256), lambda i, j, k: (k, j))],
            out_specs=pl.BlockSpec((256, 256), lambda i, j, k: (i, j)),
            scratch_shapes=[pltpu.VMEM((256, 256), jnp.float32)])(x, y)
    K["guide_matmul"] = (guide_matmul_exact, [((512, 512), "bfloat16")] * 2)

    def softmax_kernel(x, o):
        v = x[...]
        m = jnp.max(v, axis=-1, keepdims=True)
        e = jnp.exp(v - m)
        o[...] = e / jnp.sum(e, axis=-1, keepdims=True)

    def softmax(x):
        return pl.pallas_call(
            softmax_kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype), grid=(4,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x)
    K["softmax"] = (softmax, [((32, 128), np.float32)])

    def pid_kernel(x, o):
        i = pl.program_id(0)
        o[...] = x[...] * (i + 1).astype(jnp.float32)

    def pid(x):
        return pl.pallas_call(
            pid_kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype), grid=(4,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x)
    K["program_id"] = (pid, [((32, 128), np.float32)])

    def fori_kernel(x, o):
        def body(k, acc):
            return acc + x[pl.ds(k * 8, 8), :]
        o[...] = J.lax.fori_loop(0, 4, body, jnp.zeros((8, 128), jnp.float32))

    def fori(x):
        return pl.pallas_call(fori_kernel, out_shape=J.ShapeDtypeStruct((8, 128), x.dtype))(x)
    K["fori_loop"] = (fori, [((32, 128), np.float32)])

    def cond_kernel(x, o):
        v = x[...]
        o[...] = J.lax.cond(pl.program_id(0) < 2, lambda: v * 2.0, lambda: v - 1.0)

    def cond(x):
        return pl.pallas_call(
            cond_kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype), grid=(4,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x)
    K["cond"] = (cond, [((32, 128), np.float32)])

    def elementwise_kernel(x, y, o):
        a, b = x[...], y[...]
        z = jnp.where(a > b, jnp.tanh(a), jnp.sqrt(jnp.abs(b)))
        o[...] = (jnp.maximum(z, 0.5) * jnp.log(jnp.abs(a) + 1.0)).astype(o.dtype)

    def elementwise(x, y):
        return pl.pallas_call(
            elementwise_kernel, out_shape=J.ShapeDtypeStruct(x.shape, jnp.bfloat16),
            grid=(2,), in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))] * 2,
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x, y)
    K["elementwise"] = (elementwise, [((16, 128), np.float32)] * 2)

    def transpose_iota_kernel(x, o):
        v = x[...].T
        o[...] = v + J.lax.broadcasted_iota(jnp.int32, v.shape, 1).astype(jnp.float32)

    def transpose_iota(x):
        return pl.pallas_call(transpose_iota_kernel,
                              out_shape=J.ShapeDtypeStruct((128, 8), x.dtype))(x)
    K["transpose_iota"] = (transpose_iota, [((8, 128), np.float32)])

    def gather_kernel(idx_ref, x_ref, o_ref):          # scalar prefetch, in SMEM
        i = pl.program_id(0)
        o_ref[...] = x_ref[...] + idx_ref[i].astype(jnp.float32)

    def block_gather(idx, x):
        return pl.pallas_call(
            gather_kernel,
            grid_spec=pltpu.PrefetchScalarGridSpec(
                num_scalar_prefetch=1, grid=(4,),
                in_specs=[pl.BlockSpec((8, 128), lambda i, idx_ref: (idx_ref[i], 0))],
                out_specs=pl.BlockSpec((8, 128), lambda i, idx_ref: (i, 0))),
            out_shape=J.ShapeDtypeStruct((32, 128), x.dtype),
            compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",)))(idx, x)
    K["scalar_prefetch_gather"] = (block_gather, [((4,), np.int32), ((32, 128), np.float32)])
    # vmap with the scalar prefetch unbatched: the batch is a leading grid dim, every
    # index map gets the batch index first and the prefetch refs after the grid's
    K["vmap_scalar_prefetch"] = (J.vmap(block_gather, in_axes=(None, 0)),
                                 [((4,), np.int32), ((3, 32, 128), np.float32)])

    def dma_kernel(x_hbm, o_ref, buf, sems):            # x stays in HBM (pl.ANY)
        i = pl.program_id(0)
        c0 = pltpu.make_async_copy(x_hbm.at[pl.ds(i * 8, 8)], buf.at[0], sems.at[0])
        c0.start()
        c0.wait()
        o_ref[...] = buf[0] * 2.0

    def dma(x):
        return pl.pallas_call(
            dma_kernel, grid=(4,), in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
            scratch_shapes=[pltpu.VMEM((2, 8, 128), jnp.float32),
                            pltpu.SemaphoreType.DMA((2,))],
            out_shape=J.ShapeDtypeStruct(x.shape, x.dtype))(x)
    K["dma"] = (dma, [((32, 128), np.float32)])

    def scoped_kernel(x_ref, o_ref):
        def body(tmp, sem):
            tmp[...] = x_ref[...] * 3.0
            pl.semaphore_signal(sem, 2)
            pl.semaphore_wait(sem, 2)
            return tmp[...] + 1.0
        o_ref[...] = pl.run_scoped(body, pltpu.VMEM((8, 128), jnp.float32),
                                   pltpu.SemaphoreType.REGULAR)

    def scoped(x):
        return pl.pallas_call(
            scoped_kernel, grid=(2,), in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
            out_shape=J.ShapeDtypeStruct(x.shape, x.dtype))(x)
    K["run_scoped_semaphore"] = (scoped, [((16, 128), np.float32)])

    def smem_kernel(x_hbm, o_ref, buf, cnt):
        pltpu.sync_copy(x_hbm, buf)
        cnt[0] = 5
        o_ref[...] = buf[...] + cnt[0].astype(jnp.float32)

    def smem(x):
        return pl.pallas_call(
            smem_kernel, in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
            scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32), pltpu.SMEM((1,), jnp.int32)],
            out_shape=J.ShapeDtypeStruct(x.shape, x.dtype))(x)
    K["sync_copy_smem_scratch"] = (smem, [((8, 128), np.float32)])

    def scale_kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0

    def params(x):                 # compiler params, a cost estimate, an alias
        return pl.pallas_call(
            scale_kernel, grid=(2,), in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
            out_shape=J.ShapeDtypeStruct(x.shape, x.dtype),
            input_output_aliases={0: 0},
            cost_estimate=pl.CostEstimate(flops=2048, transcendentals=0,
                                          bytes_accessed=16384),
            compiler_params=pltpu.CompilerParams(
                dimension_semantics=("parallel",), vmem_limit_bytes=32 * 1024 * 1024,
                allow_input_fusion=[True]))(x)
    K["compiler_params"] = (params, [((16, 128), np.float32)])

    def argmax_kernel(x_ref, o_ref):
        v = x_ref[...]
        i = jnp.argmax(v, axis=1).astype(jnp.int32)
        bits = J.lax.bitcast_convert_type(v, jnp.int32)
        o_ref[...] = bits + i[:, None]

    def argmax(x):
        return pl.pallas_call(argmax_kernel,
                              out_shape=J.ShapeDtypeStruct(x.shape, jnp.int32))(x)
    K["argmax_bitcast"] = (argmax, [((8, 128), np.float32)])

    def effects(x):
        return pl.pallas_call(
            scale_kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype),
            compiler_params=pltpu.CompilerParams(
                has_side_effects=pltpu.SideEffectType.DATAFLOW_SIDE_EFFECTING))(x)
    K["side_effects"] = (effects, [((8, 128), np.float32)])

    def bias_kernel(x_ref, b_ref, o_ref):
        o_ref[...] = x_ref[...] + b_ref[...]

    def trivial_window(x, b):       # b is one whole block at (0, 0): single-buffered
        return pl.pallas_call(
            bias_kernel, grid=(2,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0)),
                      pl.BlockSpec((8, 128), lambda i: (0, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
            out_shape=J.ShapeDtypeStruct(x.shape, x.dtype))(x, b)
    K["trivial_window"] = (trivial_window, [((16, 128), np.float32), ((8, 128), np.float32)])

    def buffered(x, b):
        return pl.pallas_call(
            bias_kernel, grid=(2,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0),
                                   pipeline_mode=pl.Buffered(buffer_count=1)),
                      pl.BlockSpec((8, 128), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
            out_shape=J.ShapeDtypeStruct(x.shape, x.dtype))(x, b)
    K["buffered"] = (buffered, [((16, 128), np.float32)] * 2)

    def stencil_kernel(x_ref, o_ref):
        o_ref[...] = x_ref[pl.ds(0, 8), :] + x_ref[pl.ds(8, 8), :]

    def stencil(x):                   # overlapping windows of rows: pl.Element
        return pl.pallas_call(
            stencil_kernel, grid=(2,),
            in_specs=[pl.BlockSpec((pl.Element(16, (0, 8)), pl.Element(128)),
                                   lambda i: (i * 8, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
            out_shape=J.ShapeDtypeStruct((16, 128), x.dtype))(x)
    K["element_window"] = (stencil, [((16, 128), np.float32)])

    @J.jit
    def inner(v):
        return J.nn.relu(v) * 2.0

    def calls_kernel(x_ref, o_ref):        # a jit and a custom_jvp function inside
        o_ref[...] = inner(x_ref[...]) + J.nn.sigmoid(x_ref[...])

    def calls(x):
        return pl.pallas_call(calls_kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype))(x)
    K["nested_calls"] = (calls, [((8, 128), np.float32)])

    def mask_kernel(x_ref, m_ref, o_ref, p_ref):   # booleans in and out (i32 in memory)
        m = m_ref[...]
        o_ref[...] = jnp.where(m, x_ref[...], 0.0)
        p_ref[...] = jnp.logical_not(m)

    def masks(x, m):
        return pl.pallas_call(
            mask_kernel, grid=(2,), in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))] * 2,
            out_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))] * 2,
            out_shape=[J.ShapeDtypeStruct(x.shape, x.dtype),
                       J.ShapeDtypeStruct(x.shape, jnp.bool_)])(x, m)
    K["bool_refs"] = (masks, [((16, 128), np.float32), ((16, 128), np.bool_)])

    def shapes_kernel(x_ref, o_ref):        # split, stack, unstack, pad
        v = x_ref[...]
        a, b = jnp.split(v, 2, axis=0)
        s = jnp.stack([a, b], axis=0).sum(axis=0)
        r0, r1 = list(jnp.reshape(v, (2, 8, 128)))
        p = jnp.pad(s, ((8, 0), (0, 0)), constant_values=1.0)
        o_ref[...] = p + jnp.concatenate([r0, r1], axis=0)

    def shapes(x):
        return pl.pallas_call(shapes_kernel, out_shape=J.ShapeDtypeStruct((16, 128), x.dtype))(x)
    K["split_stack_pad"] = (shapes, [((16, 128), np.float32)])

    def erf_inv_kernel(x_ref, o_ref):
        o_ref[...] = J.lax.erf_inv(x_ref[...])

    def erf_inv(x):
        return pl.pallas_call(erf_inv_kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype))(x)
    K["erf_inv"] = (erf_inv, [((8, 128), np.float32)])

    def tile_kernel(x_ref, o_ref):          # jnp.tile: lax.tile's tile op (tpu.concatenate)
        v = x_ref[...]
        o_ref[...] = jnp.tile(v * jnp.tile(v[:, :64], (1, 1, 2))[0], (2, 1))

    def tile(x):
        return pl.pallas_call(tile_kernel, out_shape=J.ShapeDtypeStruct((16, 128), x.dtype))(x)
    K["tile"] = (tile, [((8, 128), np.float32)])

    def chained_dma_kernel(x_hbm, o_ref, buf, sems):     # paged attention's DMAs
        h = pl.program_id(0)
        b = J.lax.rem(h, 2)
        pages, slot, sem = x_hbm.at[h], buf.at[b], sems.at[b]
        copies = [pltpu.make_async_copy(pages.at[J.lax.rem(h + j, 4)], slot.at[j], sem)
                  for j in range(2)]
        for c in copies:
            c.start()
        for c in copies:
            c.wait()
        o_ref[...] = slot[...].reshape(16, 128)

    def chained_dma(x):
        return pl.pallas_call(
            chained_dma_kernel, grid=(2,), in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
            out_specs=pl.BlockSpec((16, 128), lambda h: (h, 0)),
            scratch_shapes=[pltpu.VMEM((2, 2, 8, 128), jnp.float32),
                            pltpu.SemaphoreType.DMA((2,))],
            out_shape=J.ShapeDtypeStruct((32, 128), x.dtype))(x)
    K["chained_dma"] = (chained_dma, [((2, 4, 8, 128), np.float32)])

    def scopes_kernel(x_ref, y_ref, o_ref):   # named scopes: tpu.trace_start/stop
        with J.named_scope("outer"):
            a = x_ref[pl.ds(0, 8), :] * 2.0
            with J.named_scope("inner"):
                a = a + 1.0
            a = J.lax.fori_loop(0, 2, lambda i, acc: acc * 0.5 + x_ref[pl.ds(i * 8, 8), :],
                                a)              # (its body: no scope)
        # einsum names its ops by its subscripts; an f32 by bf16 dot stays mixed
        o_ref[...] = jnp.einsum("ij,kj->ik", a, y_ref[...],
                                preferred_element_type=jnp.float32)

    def scopes(x, y):
        return pl.pallas_call(scopes_kernel,
                              out_shape=J.ShapeDtypeStruct((8, 8), jnp.float32))(x, y)
    K["named_scopes"] = (scopes, [((16, 128), np.float32), ((8, 128), jnp.bfloat16)])

    def scaled_kernel(x_ref, o_ref):
        with J.named_scope("kernel"):
            o_ref[...] = x_ref[...] * 2.0

    def scaled(x):             # (a scope around the call is none of the kernel's)
        with J.named_scope("caller"):
            return pl.pallas_call(scaled_kernel,
                                  out_shape=J.ShapeDtypeStruct((8, 128), x.dtype))(x)
    # vmap: a leading "parallel" grid dim; the kernel keeps its scopes
    K["vmap_scopes"] = (J.vmap(scaled), [((3, 8, 128), np.float32)])

    def aligned_kernel(x_ref, o_ref):          # pl.multiple_of: tpu.assume_multiple
        start = pl.multiple_of(pl.program_id(0) * 8, (8, 4))
        o_ref[...] = x_ref[pl.ds(start, 8), :] * 2.0

    def aligned(x):
        return pl.pallas_call(
            aligned_kernel, grid=(2,), in_specs=[pl.BlockSpec((16, 128), lambda i: (0, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
            out_shape=J.ShapeDtypeStruct((16, 128), x.dtype))(x)
    K["multiple_of"] = (aligned, [((16, 128), np.float32)])

    def roll_kernel(s_ref, x_ref, o_ref):      # pltpu.roll: tpu.dynamic_rotate
        v = x_ref[...]
        o_ref[...] = (pltpu.roll(v, s_ref[0], 1) + pltpu.roll(v, 3, 0)
                      + pltpu.roll(v, 1, 1, stride=2, stride_axis=0))

    def rolls(s, x):
        return pl.pallas_call(
            roll_kernel, in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec()],
            out_shape=J.ShapeDtypeStruct(x.shape, x.dtype))(s, x)
    K["roll"] = (rolls, [((1,), np.int32), ((8, 128), np.float32)])

    def prng_kernel(s_ref, o_ref):       # the kernel PRNG: tpu.prng_set_seed_32 / bits
        pltpu.prng_seed(s_ref[0], pl.program_id(0))
        o_ref[...] = pltpu.prng_random_bits((8, 128))

    def prng(s):
        return pl.pallas_call(
            prng_kernel, grid=(2,), in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
            out_shape=J.ShapeDtypeStruct((16, 128), jnp.int32))(s)
    K["prng"] = (prng, [((1,), np.int32)])

    def dynamic_dma_kernel(s_ref, x_hbm, o_hbm, buf, sem):   # pl.ds with a traced size
        start, size = s_ref[0], s_ref[1]
        rows = buf.at[pl.ds(0, size)]                          # memref<?x128xf32>
        pltpu.sync_copy(x_hbm.at[pl.ds(start, size)], rows)
        buf[...] = buf[...] * 2.0
        c = pltpu.make_async_copy(rows, o_hbm.at[pl.ds(start, size)], sem)
        c.start()
        c.wait()

    def dynamic_dma(s, x):
        return pl.pallas_call(
            dynamic_dma_kernel,
            in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec(memory_space=pl.ANY)],
            out_specs=pl.BlockSpec(memory_space=pl.ANY),
            scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA],
            input_output_aliases={1: 0},
            out_shape=J.ShapeDtypeStruct(x.shape, x.dtype))(s, x)
    K["dynamic_dma"] = (dynamic_dma, [((2,), np.int32), ((16, 128), np.float32)])

    def pallas_key_kernel(key_ref, o_ref):     # jax.random on a pltpu.to_pallas_key key
        key = J.random.fold_in(key_ref[...], pl.program_id(0))
        o_ref[0] = J.random.bits(key, (8, 128))
        o_ref[1] = J.random.bits(J.random.fold_in(key, 7), (8, 128))

    def pallas_key(seed):
        key = pltpu.to_pallas_key(J.random.key(seed[0]))
        return pl.pallas_call(
            pallas_key_kernel, grid=(2,), in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
            out_specs=pl.BlockSpec((2, 8, 128), lambda i: (0, i, 0)),
            out_shape=J.ShapeDtypeStruct((2, 16, 128), jnp.uint32))(key)
    K["pallas_key"] = (pallas_key, [((1,), np.int32)])

    def pallas_key_samplers_kernel(keys_ref, u_ref, n_ref, b_ref):
        key = keys_ref[...]
        u_ref[...] = J.random.uniform(key, (8, 128), minval=-1.0, maxval=2.0)
        n_ref[...] = J.random.normal(J.random.fold_in(key, 1), (8, 128))
        b_ref[...] = J.random.bernoulli(J.random.fold_in(key, 2), 0.25,
                                        (8, 128)).astype(jnp.int32)

    def pallas_key_samplers(seed):
        keys = pltpu.to_pallas_key(J.random.key(seed[0]))
        out = J.ShapeDtypeStruct((8, 128), jnp.float32)
        return pl.pallas_call(
            pallas_key_samplers_kernel, in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
            out_shape=(out, out, J.ShapeDtypeStruct((8, 128), jnp.int32)))(keys)
    K["pallas_key_samplers"] = (pallas_key_samplers, [((1,), np.int32)])

    def chained_sems_kernel(x_ref, o_ref, sems):   # semaphores named by chained .at[]s
        b = pl.program_id(0)
        sem = sems.at[b].at[1]
        pl.semaphore_signal(sem, 2)
        pl.semaphore_wait(sem, 2)
        count = pl.semaphore_read(sems.at[1].at[b])
        o_ref[...] = x_ref[...] + count.astype(jnp.float32)

    def chained_sems(x):
        return pl.pallas_call(
            chained_sems_kernel, grid=(2,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
            scratch_shapes=[pltpu.SemaphoreType.REGULAR((2, 2))],
            out_shape=J.ShapeDtypeStruct(x.shape, x.dtype))(x)
    K["chained_semaphores"] = (chained_sems, [((16, 128), np.float32)])

    def sample_block_kernel(key_ref, o_ref):   # the TPU PRNG guide's block-invariant draw
        o_ref[...] = pltpu.sample_block(J.random.uniform, key_ref[...],
                                        block_size=o_ref.shape, tile_size=(8, 128),
                                        total_size=(32, 512),
                                        block_index=(pl.program_id(1), pl.program_id(0)),
                                        minval=0.0, maxval=1.0)

    def sample_blocks(seed):
        key = pltpu.to_pallas_key(J.random.key(seed[0]))
        return pl.pallas_call(
            sample_block_kernel, grid=(2, 2), in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
            out_specs=pl.BlockSpec((16, 256), lambda i, j: (j, i)),
            out_shape=J.ShapeDtypeStruct((32, 512), jnp.float32))(key)
    K["sample_block"] = (sample_blocks, [((1,), np.int32)])

    def stateful_kernel(s_ref, u_ref, n_ref, b_ref, bits_ref):   # pltpu.stateful_*
        pltpu.prng_seed(s_ref[0])
        u_ref[...] = pltpu.stateful_uniform(shape=u_ref.shape, minval=0.0, maxval=1.0)
        n_ref[...] = pltpu.stateful_normal(shape=n_ref.shape)
        b_ref[...] = pltpu.stateful_bernoulli(shape=b_ref.shape, p=0.3).astype(jnp.int32)
        bits_ref[...] = pltpu.stateful_bits(shape=bits_ref.shape)

    def stateful(s):
        f32 = J.ShapeDtypeStruct((8, 128), jnp.float32)
        return pl.pallas_call(
            stateful_kernel, in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
            out_shape=(f32, f32, J.ShapeDtypeStruct((8, 128), jnp.int32),
                       J.ShapeDtypeStruct((8, 128), jnp.uint32)))(s)
    K["stateful"] = (stateful, [((1,), np.int32)])

    def dma_sems_kernel(x_hbm, o_ref, buf, sems):   # a DMA's semaphore by chained .at[]s
        b = pl.program_id(0)
        c = pltpu.make_async_copy(x_hbm.at[b], buf.at[1], sems.at[b].at[1])
        c.start()
        c.wait()
        o_ref[...] = buf[1] + 1.0

    def dma_sems(x):
        return pl.pallas_call(
            dma_sems_kernel, grid=(2,), in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
            scratch_shapes=[pltpu.VMEM((2, 8, 128), jnp.float32),
                            pltpu.SemaphoreType.DMA((2, 2))],
            out_shape=J.ShapeDtypeStruct((16, 128), jnp.float32))(x)
    K["chained_dma_semaphores"] = (dma_sems, [((2, 8, 128), np.float32)])

    def threefry_guide_kernel(key_ref, o_ref):   # the TPU PRNG guide's first cell
        key = key_ref[...]
        o_ref[...] = J.random.uniform(key, shape=o_ref[...].shape, minval=0.0, maxval=1.0)

    def threefry_guide(seed):   # (a threefry key array's block in VMEM: its data, (2,))
        key = J.random.key(seed[0], impl="threefry2x32")
        return pl.pallas_call(
            threefry_guide_kernel, in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
            out_shape=J.ShapeDtypeStruct((16, 256), jnp.float32))(key)
    K["threefry_guide"] = (threefry_guide, [((1,), np.int32)])

    def threefry_kernel(d_ref, o_ref, p_ref):   # threefry key data, wrapped in the kernel
        key = J.random.wrap_key_data(d_ref[0])
        key = J.random.fold_in(J.random.wrap_key_data(J.random.key_data(key)),
                               pl.program_id(0))
        o_ref[...] = J.random.bits(key, (8, 128))
        p_ref[...] = J.random.bits(key, (2, 8, 128))

    def threefry_keys(d):
        return pl.pallas_call(
            threefry_kernel, grid=(2,), in_specs=[pl.BlockSpec((1, 2), lambda i: (0, 0))],
            out_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0)),
                       pl.BlockSpec((2, 8, 128), lambda i: (i, 0, 0))],
            out_shape=(J.ShapeDtypeStruct((16, 128), jnp.uint32),
                       J.ShapeDtypeStruct((4, 8, 128), jnp.uint32)))(d)
    K["threefry_keys"] = (threefry_keys, [((1, 2), np.uint32)])

    def threefry_seed_kernel(s_ref, b_ref, n_ref, m_ref):   # jax.random.key in the kernel
        key = J.random.key(s_ref[0])
        b_ref[...] = J.random.bits(J.random.fold_in(key, 7), (8, 128))
        n_ref[...] = J.random.normal(key, (8, 128))
        m_ref[...] = J.random.bernoulli(J.random.fold_in(key, 3), 0.25,
                                        (8, 128)).astype(jnp.int32)

    def threefry_seed(s):
        return pl.pallas_call(
            threefry_seed_kernel, in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
            out_shape=(J.ShapeDtypeStruct((8, 128), jnp.uint32),
                       J.ShapeDtypeStruct((8, 128), jnp.float32),
                       J.ShapeDtypeStruct((8, 128), jnp.int32)))(s)
    K["threefry_seed"] = (threefry_seed, [((1,), np.int32)])

    def dead_read_kernel(x_ref, o_ref):   # a read only its shape and dtype use
        o_ref[...] = jnp.zeros_like(o_ref[...])
        o_ref[...] += x_ref[...]

    def dead_read(x):           # (JAX's kernel jaxpr is DCE'd: the first read is gone)
        return pl.pallas_call(dead_read_kernel,
                              out_shape=J.ShapeDtypeStruct((8, 128), jnp.float32))(x)
    K["dead_read"] = (dead_read, [((8, 128), np.float32)])

    def dead_operand_kernel(idx_ref, x_ref, o_ref, r_ref):   # splash attention's pattern
        j = idx_ref[0, pl.program_id(0)].astype(jnp.int32)    # (read, used in dead code)

        def body(c, carry):
            del carry
            offset = j * 128 + c * 128                         # noqa: F841  (dead)
            o_ref[...] = x_ref[...] + 1.0
            return j + c                                       # (a result nothing reads)

        @pl.when(pl.program_id(0) >= 0)
        def _():
            J.lax.fori_loop(0, 2, body, j, unroll=True)

        r = J.lax.cond(pl.program_id(0) == 0, lambda: (j * 2, 1.0), lambda: (j, 2.0))
        r_ref[...] = jnp.full((8, 128), r[1], jnp.float32)    # (r[0] unused: dropped)

    def dead_cond_operand(idx, x):   # (JAX's cond DCE drops unused operands and results)
        return pl.pallas_call(dead_operand_kernel, grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(2,),
            in_specs=[pl.BlockSpec((8, 128), lambda i, idx: (i, 0))],
            out_specs=[pl.BlockSpec((8, 128), lambda i, idx: (i, 0))] * 2),
            out_shape=[J.ShapeDtypeStruct((16, 128), jnp.float32)] * 2)(idx, x)
    K["dead_cond_operand"] = (dead_cond_operand, [((1, 2), np.int8), ((16, 128), np.float32)])

    def chained_kernel(x_ref, s_ref, o_ref):   # loads and stores through chained .at[]s
        i = pl.program_id(0)
        a = x_ref.at[1][i]                                       # a .at, then an index
        b = x_ref.at[:, pl.ds(0, 2)].at[0, 1][pl.ds(8, 8), :]    # a whole view; starts add
        c = s_ref.at[i].at[pl.ds(i, 8)][...]      # traced starts in two windows' dims
        d = x_ref.at[pl.ds(i, 1)].at[0][1]        # three windows
        o_ref.at[0][...] = a
        o_ref.at[1].at[pl.ds(8, 8)][...] = b
        o_ref.at[2].at[pl.ds(0, 8), :][...] = c[:8] + d[:8]
        o_ref.at[3][...] = x_ref.at[pl.ds(0, 1)].at[0].at[0][...]

    def chained(x, s):
        return pl.pallas_call(
            chained_kernel, grid=(2,),
            in_specs=[pl.BlockSpec((2, 2, 16, 128), lambda i: (0, 0, 0, 0)),
                      pl.BlockSpec((2, 24, 128), lambda i: (0, 0, 0))],
            out_specs=pl.BlockSpec((4, 16, 128), lambda i: (i, 0, 0)),
            out_shape=J.ShapeDtypeStruct((8, 16, 128), jnp.float32))(x, s)
    K["chained_views"] = (chained, [((2, 2, 16, 128), np.float32), ((2, 24, 128), np.float32)])

    def chained_squeezed_kernel(x_ref, o_ref):   # chains on blocks with squeezed dims
        v = x_ref.at[1].at[pl.ds(8, 8)][...]
        m = J.lax.broadcasted_iota(jnp.int32, (8, 128), 1) < 64
        o_ref.at[pl.ds(0, 8)].at[:, pl.ds(0, 128)][...] = jnp.where(m, v, 0.0)
        o_ref.at[pl.ds(8, 8)][pl.ds(0, 8), :] = x_ref.at[0][pl.ds(0, 8)]
        pltpu.store(o_ref.at[pl.ds(8, 8)].at[pl.ds(0, 8)], v, mask=m)   # masked
        o_ref.at[pl.ds(0, 8)][...] += pltpu.load(x_ref.at[0].at[pl.ds(8, 8)])

    def chained_squeezed(x):
        return pl.pallas_call(
            chained_squeezed_kernel, grid=(2,),
            in_specs=[pl.BlockSpec((None, 2, 16, 128), lambda i: (i, 0, 0, 0))],
            out_specs=pl.BlockSpec((None, 16, 128), lambda i: (i, 0, 0)),
            out_shape=J.ShapeDtypeStruct((2, 16, 128), jnp.float32))(x)
    K["chained_views_squeezed"] = (chained_squeezed, [((2, 2, 16, 128), np.float32)])

    def traced_chain_kernel(x_ref, o_ref):   # views' starts meeting on a dim, some traced
        i, j = pl.program_id(0), pl.program_id(1)
        a = x_ref.at[pl.ds(i * 8, 16)].at[pl.ds(2, 8)][...]
        b = x_ref.at[pl.ds(3, 24)].at[pl.ds(i, 16)].at[pl.ds(2, 12)].at[pl.ds(j, 8)][...]
        c = x_ref.at[pl.ds(1, 30)].at[pl.ds(2, 20)][pl.ds(i, 8)]     # static, then traced
        d = x_ref.at[pl.ds(i, 16), pl.ds(0, 128)][pl.ds(j, 8), :]    # two traced
        e = x_ref.at[2 * i + 1].at[pl.ds(0, 128)][...]
        o_ref[pl.ds(0, 8)] = a + b + c + d + e[None, :]
        o_ref.at[pl.ds(i, 8)].at[pl.ds(4, 4)][...] = a[:4]
        m = J.lax.broadcasted_iota(jnp.int32, (4, 128), 1) < 64
        pltpu.store(o_ref.at[pl.ds(j + 4, 8)].at[pl.ds(1, 4)], c[:4], mask=m)

    def traced_chain(x):
        return pl.pallas_call(
            traced_chain_kernel, grid=(2, 2),
            in_specs=[pl.BlockSpec((32, 128), lambda i, j: (0, 0))],
            out_specs=pl.BlockSpec((16, 128), lambda i, j: (i, 0)),
            out_shape=J.ShapeDtypeStruct((32, 128), jnp.float32))(x)
    K["chained_traced_views"] = (traced_chain, [((32, 128), np.float32)])

    def traced_dma_chain_kernel(x_hbm, o_ref, buf, sem):   # a DMA of such a view
        i = pl.program_id(0)
        copy = pltpu.make_async_copy(x_hbm.at[pl.ds(i * 8, 16)].at[pl.ds(2, 8)], buf, sem)
        copy.start()
        copy.wait()
        o_ref[...] = buf[...]

    def traced_dma_chain(x):
        return pl.pallas_call(
            traced_dma_chain_kernel, grid=(2,), in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
            scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA(())],
            out_shape=J.ShapeDtypeStruct((16, 128), jnp.float32))(x)
    K["chained_dma_traced_view"] = (traced_dma_chain, [((32, 128), np.float32)])

    extend_random = importlib.import_module(J.__name__ + ".extend.random")

    def threefry_raw_kernel(d_ref, c_ref, o_ref):   # jax.extend.random.threefry_2x32
        o_ref[...] = extend_random.threefry_2x32(d_ref[0], c_ref[...])

    def threefry_raw(d, c):     # (the key words stay scalars: JAX binds them so)
        return pl.pallas_call(
            threefry_raw_kernel, out_shape=J.ShapeDtypeStruct((8, 128), jnp.uint32))(d, c)
    K["threefry_raw"] = (threefry_raw, [((1, 2), np.uint32), ((8, 128), np.uint32)])

    def ref_functions_kernel(x_ref, o_ref):   # jax.ref's functions on a kernel's refs
        old = J.ref.swap(o_ref, (), J.ref.get(x_ref, ()) * 2.0)
        J.ref.set(o_ref, (), J.ref.get(o_ref, ()) + old)
        J.ref.set(o_ref.at[1], (pl.ds(0, 128),), J.ref.get(x_ref, (2, slice(None))))
        J.ref.set(o_ref, (pl.ds(3, 2, stride=3),), J.ref.get(x_ref, (pl.ds(0, 2, stride=4),)))

    def ref_functions(x):
        return pl.pallas_call(ref_functions_kernel,
                              out_shape=J.ShapeDtypeStruct((8, 128), jnp.float32))(x)
    K["jax_ref_functions"] = (ref_functions, [((8, 128), np.float32)])

    def ref_bitcast_kernel(x_ref, y_ref, z_ref, a_ref, b_ref, c_ref):   # Ref.bitcast reads
        a_ref[...] = x_ref.bitcast(jnp.uint32)[...]           # bf16 (16, 128) -> (8, 128)
        b_ref[...] = y_ref.bitcast(jnp.bfloat16)[...]         # u32 (8, 128) -> (16, 128)
        c_ref[0] = z_ref.at[1].bitcast(jnp.int32)[2:6, :]     # int8 (2, 32, 128) -> (8, 128)
        c_ref[1] = x_ref.bitcast(jnp.int32)[pl.ds(4, 4), :]
        c_ref[2] = y_ref.bitcast(jnp.int32)[1:5]              # (same bitwidth)

    def ref_bitcast(x, y, z):
        return pl.pallas_call(ref_bitcast_kernel, out_shape=(
            J.ShapeDtypeStruct((8, 128), jnp.uint32),
            J.ShapeDtypeStruct((16, 128), jnp.bfloat16),
            J.ShapeDtypeStruct((3, 4, 128), jnp.int32)))(x, y, z)
    K["ref_bitcast"] = (ref_bitcast, [((16, 128), "bfloat16"), ((8, 128), np.uint32),
                                      ((2, 32, 128), np.int8)])

    def bitcast_strided_kernel(kv_ref, o_ref):   # ragged paged attention's strided_load_kv
        i = pl.program_id(0)
        kv = kv_ref.at[i].reshape(2 * 16 * 4, 128)          # (pages, page, heads, dim)
        for h in range(2):                       # K/V heads interleaved: 2 bf16 rows a word
            b = kv.bitcast(jnp.uint32)[h::2, :]              # (the rows 4 * t + 2h, +1)
            k = pltpu.bitcast(b << 16, jnp.float32)
            v = pltpu.bitcast(b & jnp.uint32(0xFFFF0000), jnp.float32)
            o_ref[0, h] = k.astype(jnp.bfloat16).astype(jnp.float32)
            o_ref[1, h] = v.astype(jnp.bfloat16).astype(jnp.float32)
        w = kv_ref.at[i, 1].reshape(64, 128).bitcast(jnp.uint32)[pl.ds(0, 32), :]
        o_ref[2, 0] = pltpu.bitcast(w, jnp.float32)
        o_ref[2, 1] = pltpu.bitcast(kv.bitcast(jnp.int32)[pl.ds(i, 32, stride=2), :],
                                    jnp.float32)

    def bitcast_strided(kv):
        return pl.pallas_call(
            bitcast_strided_kernel, grid=(2,),
            in_specs=[pl.BlockSpec((2, 2, 16, 4, 128), lambda i: (0, 0, 0, 0, 0))],
            out_specs=pl.BlockSpec((None, 3, 2, 32, 128), lambda i: (i, 0, 0, 0, 0)),
            out_shape=J.ShapeDtypeStruct((2, 3, 2, 32, 128), jnp.float32))(kv)
    K["ref_bitcast_strided"] = (bitcast_strided, [((2, 2, 16, 4, 128), "bfloat16")])
    def reshape_store_kernel(x_ref, o_ref, p_ref):   # writes through Ref.reshape/.bitcast
        i = pl.program_id(0)
        o_ref.reshape(16, 256)[...] = x_ref.reshape(16, 256)[...]
        o_ref.at[1].reshape(64, 32)[pl.ds(i * 8, 8), :] = x_ref[0, pl.ds(0, 8), pl.ds(0, 32)]
        o_ref.reshape(4, 8, 128)[3] += x_ref[1, pl.ds(0, 8)]      # (a load and a store)
        o_ref.reshape(2, 16, 128)[:, i, :] = x_ref[:, 2, :] * 2.0
        p_ref.bitcast(jnp.bfloat16)[...] = x_ref[...].astype(jnp.bfloat16)
        p_ref.reshape(16, 128).bitcast(jnp.int8)[pl.ds(4, 8), :] = jnp.full((8, 128), 3,
                                                                             jnp.int8)

    def reshape_store(x):
        return pl.pallas_call(reshape_store_kernel, grid=(2,), out_shape=(
            J.ShapeDtypeStruct((2, 16, 128), jnp.float32),
            J.ShapeDtypeStruct((2, 8, 128), jnp.uint32)))(x)
    K["ref_reshape_store"] = (reshape_store, [((2, 16, 128), np.float32)])

    def strided_store_kernel(x_ref, m_ref, o_ref, b_ref, p_ref):   # tpu.strided_store
        i = pl.program_id(0)
        o_ref[...] = jnp.zeros((16, 128), jnp.float32)
        p_ref[...] = jnp.zeros((32, 128), jnp.float32)
        o_ref[pl.ds(1, 8, stride=2), :] = x_ref[pl.ds(0, 8), :]
        o_ref[pl.ds(i, 4, stride=4), pl.ds(0, 64)] += x_ref[pl.ds(8, 4), pl.ds(64, 64)]
        o_ref[::2, :] = o_ref[::2, :] * 3.0
        b_ref[...] = jnp.zeros((16, 128), jnp.int32) == 1
        b_ref[1::2] = m_ref[...] > 0.0                            # (booleans: i32)
        p_ref.reshape(2, 16, 128)[1, pl.ds(i, 8, stride=2), :] = x_ref[pl.ds(0, 8), :]
        p_ref.bitcast(jnp.uint32)[pl.ds(0, 4, stride=2), :] = jnp.full((4, 128), 7,
                                                                       jnp.uint32)

    def strided_store(x, m):
        return pl.pallas_call(strided_store_kernel, grid=(2,), out_shape=(
            J.ShapeDtypeStruct((16, 128), jnp.float32),
            J.ShapeDtypeStruct((16, 128), jnp.bool_),
            J.ShapeDtypeStruct((32, 128), jnp.float32)))(x, m)
    K["strided_store"] = (strided_store, [((16, 128), np.float32), ((8, 128), np.float32)])

    def squeezed_reshape_kernel(x_ref, o_ref):   # a block with a squeezed dim, reshaped
        o_ref.reshape(32, 64)[...] = x_ref.reshape(32, 64)[...]

    def squeezed_reshape(x):     # (JAX reshapes the block's memref, its size-1 dim too)
        spec = pl.BlockSpec((None, 16, 128), lambda i: (i, 0, 0))
        return pl.pallas_call(squeezed_reshape_kernel, grid=(2,), in_specs=[spec],
                              out_specs=spec,
                              out_shape=J.ShapeDtypeStruct((2, 16, 128), jnp.float32))(x)
    K["ref_reshape_squeezed_block"] = (squeezed_reshape, [((2, 16, 128), np.float32)])
    K.update(from_jax_tests(J, pl, pltpu))
    return K
