"""More kernels of the Mosaic differential corpus (mosaic_corpus.py): forms found in JAX
0.10.2's own Pallas TPU tests (tests/pallas/tpu_pallas_test.py, tpu_ops_test.py) that
mjax lowered differently or not at all, written once against a `jax`-like module.

`from_jax_tests(J, pl, pltpu)` -> {name: (f, [(shape, dtype), ...])}.
"""
from __future__ import annotations

import numpy as np


def from_jax_tests(J, pl, pltpu) -> dict:
    jnp = J.numpy
    K = {}

    def tpu_bitcast_kernel(x_ref, y_ref, o_ref, w_ref, b_ref):   # pltpu.bitcast: tpu.bitcast
        x = pltpu.bitcast(x_ref[...].astype(jnp.float32), jnp.int32)
        y = pltpu.bitcast(y_ref[...].astype(jnp.float32), jnp.int32)
        o_ref[...] = pltpu.bitcast(y | J.lax.shift_right_logical(x, 16), jnp.bfloat16)
        w_ref[...] = pltpu.bitcast(x_ref[...], jnp.uint32)          # 2 rows -> 1 word
        b_ref[...] = pltpu.bitcast(pltpu.bitcast(y_ref[...], jnp.int16), jnp.uint8)

    def tpu_bitcast(x, y):        # (JAX's tpu_ops_test interleave and bitcast kernels)
        return pl.pallas_call(tpu_bitcast_kernel, out_shape=(
            J.ShapeDtypeStruct((32, 128), jnp.bfloat16),
            J.ShapeDtypeStruct((8, 128), jnp.uint32),
            J.ShapeDtypeStruct((32, 128), jnp.uint8)))(x, y)
    K["tpu_bitcast"] = (tpu_bitcast, [((16, 128), "bfloat16")] * 2)
    def load_store_views_kernel(x_ref, y_ref, o_ref):   # pltpu.load/store of views
        pltpu.store(y_ref, pltpu.load(x_ref.bitcast(jnp.int16)))
        pltpu.store(o_ref.bitcast(jnp.bfloat16), pltpu.load(x_ref.reshape(2, 8, 128))[1]
                    .astype(jnp.bfloat16).reshape(8, 128).repeat(2, 0))

    def load_store_views(x):      # (JAX's tpu_pallas_test bitcast ref tests, primitive io)
        return pl.pallas_call(load_store_views_kernel, out_shape=(
            J.ShapeDtypeStruct((32, 128), jnp.int16),
            J.ShapeDtypeStruct((8, 128), jnp.int32)))(x)
    K["pltpu_load_store_views"] = (load_store_views, [((16, 128), np.int32)])
    def fori_unroll_kernel(x_ref, o_ref, s_ref):   # fori_loop(unroll=...) as JAX unrolls
        o_ref[...] = x_ref[...]

        def body(i, _):
            o_ref[...] += pl.program_id(0) + i
        J.lax.fori_loop(0, 5, body, None, unroll=2)      # 2 per trip, 1 after the loop
        J.lax.fori_loop(0, 3, body, None, unroll=True)   # no loop
        s_ref[0] = J.lax.fori_loop(0, 1, lambda i, c: c + (i + 1) * 2, 1)    # no loop
        s_ref[1] = J.lax.fori_loop(2, 8, lambda i, c: c + i, s_ref[0], unroll=3)

    def fori_unroll(x):       # (JAX's tpu_pallas_test fori_loop unroll tests)
        return pl.pallas_call(
            fori_unroll_kernel, grid=(2,),
            in_specs=[pl.BlockSpec((256,), lambda i: (i,))],
            out_specs=(pl.BlockSpec((256,), lambda i: (i,)),
                       pl.BlockSpec(memory_space=pltpu.SMEM)),
            out_shape=(J.ShapeDtypeStruct((512,), jnp.int32),
                       J.ShapeDtypeStruct((2,), jnp.int32)))(x)
    K["fori_unroll"] = (fori_unroll, [((512,), np.int32)])
    def scalar_reductions_kernel(x_ref, y_ref, o_ref, p_ref, b_ref):   # as JAX's rules
        o_ref[0, 0] = jnp.sum(x_ref[...])                  # (a unit dim added, extracted)
        p_ref[0] = jnp.max(y_ref[...])
        p_ref[1] = jnp.min(y_ref[3])
        p_ref[2] = jnp.all(x_ref[...] > -3.0).astype(jnp.int32)   # (booleans: 1.0/0.0)
        b_ref[...] = jnp.any(x_ref[...] > 1.0, axis=1, keepdims=True).astype(jnp.float32)

    def scalar_reductions(x, y):    # (JAX's tpu_pallas_test replicated reductions)
        smem = pl.BlockSpec(memory_space=pltpu.SMEM)
        return pl.pallas_call(scalar_reductions_kernel, out_specs=(smem, smem, pl.BlockSpec()),
                              out_shape=(J.ShapeDtypeStruct((1, 1), jnp.float32),
                                         J.ShapeDtypeStruct((3,), jnp.int32),
                                         J.ShapeDtypeStruct((8, 1), jnp.float32)))(x, y)
    K["scalar_reductions"] = (scalar_reductions, [((8, 128), np.float32),
                                                  ((16, 128), np.int32)])
    def int_mask_kernel(x_ref, m_ref, n_ref, o_ref, p_ref):   # jnp.where of an int mask
        o_ref[...] = jnp.where(m_ref[...], x_ref[...], jnp.zeros_like(x_ref))   # (m != 0)
        p_ref[...] = jnp.where(n_ref[...] - 1, n_ref[...], jnp.ones_like(n_ref))

    def int_mask(x, m, n):      # (JAX's tpu_ops_test cast_vector_to_mask/i1_relayout)
        return pl.pallas_call(int_mask_kernel, out_shape=(
            J.ShapeDtypeStruct((128, 128), jnp.int8),
            J.ShapeDtypeStruct((1024,), jnp.int16)))(x, m, n)
    K["int_mask"] = (int_mask, [((128, 128), np.int8), ((128, 128), np.int8),
                                ((1024,), np.int16)])
    def view_windows_kernel(x_ref, y_ref, o_ref, p_ref, q_ref):   # .at of reshaped views
        i = pl.program_id(0)
        o_ref[...] = x_ref.bitcast(jnp.int16).at[:16, :128][...]
        p_ref[...] = y_ref.reshape(32, 128).at[pl.ds(i * 8, 8)][...]
        q_ref[...] = jnp.zeros((16, 256), jnp.int32)
        pltpu.store(q_ref.bitcast(jnp.int16).at[pl.ds(8, 16), 128:], o_ref[...])
        q_ref.reshape(2, 8, 256).at[1, pl.ds(2, 1)][...] = x_ref[pl.ds(3, 1)]

    def view_windows(x, y):     # (JAX's tpu_pallas_test load/store_bitcasted_ref)
        return pl.pallas_call(view_windows_kernel, grid=(2,), out_shape=(
            J.ShapeDtypeStruct((16, 128), jnp.int16),
            J.ShapeDtypeStruct((8, 128), jnp.float32),
            J.ShapeDtypeStruct((16, 256), jnp.int32)))(x, y)
    K["view_windows"] = (view_windows, [((16, 256), np.int32), ((2, 16, 128), np.float32)])
    def with_scoped_kernel(x_ref, y_ref):     # pl.with_scoped: a function of the refs
        @pl.with_scoped(pltpu.VMEM((8, 128), jnp.float32),
                        w_ref=pltpu.VMEM((8, 128), jnp.float32))
        def body(y_ref, x_ref2, w_ref):
            x_ref2[...] = x_ref[...] + 1.0
            w_ref[...] = jnp.full_like(w_ref, 2.0)
            y_ref[...] = 4 * x_ref2[...] * w_ref[...]
            return x_ref2[...]
        v = body(y_ref)
        y_ref[...] += v

    def with_scoped(x):         # (JAX's tpu_pallas_test with_scoped_allocation)
        return pl.pallas_call(with_scoped_kernel,
                              out_shape=J.ShapeDtypeStruct((8, 128), jnp.float32))(x)
    K["with_scoped"] = (with_scoped, [((8, 128), np.float32)])
    def float_prefetch_kernel(s_ref, b_ref, x_ref, o_ref):   # float scalar prefetch
        o_ref[...] = (x_ref[...] + jnp.broadcast_to(s_ref[0], x_ref.shape)
                      + jnp.broadcast_to(b_ref[129], x_ref.shape).astype(jnp.float32))

    def float_prefetch(s, b, x):    # (JAX's tpu_pallas_test f32/narrow scalar prefetch)
        return pl.pallas_call(
            float_prefetch_kernel, out_shape=J.ShapeDtypeStruct((8, 128), jnp.float32),
            grid_spec=pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=2))(s, b, x)
    K["float_scalar_prefetch"] = (float_prefetch, [((1,), np.float32), ((256,), "bfloat16"),
                                                   ((8, 128), np.float32)])
    def sem_int_shape_kernel(x_hbm_ref, y_ref):   # SemaphoreType.DMA(2): an int shape
        def body(sems):
            for i in range(2):
                pltpu.async_copy(x_hbm_ref.at[i], y_ref.at[i], sems.at[i]).wait()
        pl.run_scoped(body, pltpu.SemaphoreType.DMA(2))

    def sem_int_shape(x):       # (JAX's tpu_pallas_test select_ref kernels' semaphores)
        return pl.pallas_call(sem_int_shape_kernel,
                              in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                              out_shape=J.ShapeDtypeStruct((2, 8, 128), jnp.float32))(x)
    K["semaphore_int_shape"] = (sem_int_shape, [((2, 8, 128), np.float32)])
    def matvec_kernel(x_ref, y_ref, o_ref, p_ref):   # (1, k) x (1, k)^T: JAX's reduction
        dims = (((1,), (1,)), ((), ()))
        o_ref[...] = J.lax.dot_general(x_ref[...], jnp.ones((1, 1024), jnp.bfloat16), dims,
                                       preferred_element_type=jnp.float32)
        p_ref[...] = J.lax.dot_general(y_ref[...], y_ref[...], dims)

    def matvec(x, y):           # (JAX's tpu_ops_test reduce_with_const)
        return pl.pallas_call(matvec_kernel, out_shape=(
            J.ShapeDtypeStruct((1, 1), jnp.float32),
            J.ShapeDtypeStruct((1, 1), jnp.bfloat16)))(x, y)
    K["matrix_vector_dot"] = (matvec, [((1, 1024), "bfloat16"), ((1, 256), "bfloat16")])

    @J.jit
    def jitted_kernel(x_ref, y_ref, o_ref):    # a jit as the kernel, and one called in it
        i = pl.program_id(0).astype(x_ref.dtype)
        o_ref[...] = x_ref[...] + i
        add_rows(o_ref.at[0:8], y_ref[...] * 2, scale=3)

    @J.jit(static_argnames="scale")
    def add_rows(o_ref, y, scale):              # refs and a value: the refs stay refs
        o_ref[...] += y * scale + pl.program_id(0)

    def jitted(x, y):           # (JAX's tpu_pallas_test jitted kernel with program_id)
        return pl.pallas_call(
            jitted_kernel, grid=(2,),
            in_specs=[pl.BlockSpec((16, 128), lambda i: (i, 0)),
                      pl.BlockSpec((8, 128), lambda i: (0, 0))],
            out_specs=pl.BlockSpec((16, 128), lambda i: (i, 0)),
            out_shape=J.ShapeDtypeStruct((32, 128), jnp.int32))(x, y)
    K["jitted_kernel"] = (jitted, [((32, 128), np.int32), ((8, 128), np.int32)])
    return K
