"""The kernels of JAX 0.10.2's tests/pallas/tpu_pallas_interpret_test.py (and the two of
tpu_pallas_interpret_distributed_test.py not already in test_remote_dma_interpret.py),
written once for both libraries: each case is `case(J, P, T, *variant)` (J: jax or mjax,
P and T their pallas and pallas.tpu modules) returning (f, args): f the jitted program,
args NumPy arrays. test_jax_interpret_tests.py runs them in both and checks the values
against each other and NumPy (NUMPY below), or that both raise."""
from __future__ import annotations

import contextlib

import numpy as np


def _rand(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _hbm(T, P, space):
    return T.HBM if space == "hbm" else P.ANY


@contextlib.contextmanager
def on_v6e(J):
    """JAX's knob for buffer_bounds='padded' off the chip: an abstract mesh whose
    device is a TPU v6e (the padding follows its tiling)."""
    mesh = J.sharding.AbstractMesh((), (), abstract_device=J.sharding.AbstractDevice(
        "TPU v6e", 1, "tpu"))
    with J.sharding.use_abstract_mesh(mesh):
        yield


# ---- tpu_pallas_interpret_test.py ------------------------------------------------------
def revisiting(J, P, T, space):
    def kernel(x_ref, o1_ref, o2_ref):
        pass

    def run(x):
        return P.pallas_call(
            kernel, out_shape=[J.ShapeDtypeStruct((16, 256), np.float32)] * 2,
            grid=(4, 4), in_specs=[P.BlockSpec(memory_space=_hbm(T, P, space))],
            out_specs=[P.BlockSpec((4, 128), lambda i, j: (i, j // 2)),
                       P.BlockSpec((4, 128), lambda i, j: (j // 2, i % 2))],
            interpret=T.InterpretParams())(x)
    return J.jit(run), [np.zeros((8, 128), np.float32)]


def matmul(J, P, T, n):
    def kernel(x_ref, y_ref, z_ref):
        z_ref[...] = x_ref[...] @ y_ref[...]

    def run(x, y):
        return P.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct((x.shape[0], y.shape[1]), x.dtype),
            grid=(2, 2),
            in_specs=[P.BlockSpec((x.shape[0] // 2, x.shape[1]), lambda i, j: (i, 0)),
                      P.BlockSpec((y.shape[0], y.shape[1] // 2), lambda i, j: (0, j))],
            out_specs=P.BlockSpec((x.shape[0] // 2, y.shape[1] // 2), lambda i, j: (i, j)),
            interpret=T.InterpretParams())(x, y)
    return J.jit(run), [_rand((n, n), 1), _rand((n, n), 2)]


def oob_block_spec(J, P, T, reads, in_off, out_off):
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    def run(x):
        return P.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct((16, 128), np.float32),
            out_specs=P.BlockSpec((4, 128), lambda i: (i + out_off, 0)),
            in_specs=[P.BlockSpec((4, 128), lambda i: (i + in_off, 0))], grid=(4,),
            interpret=T.InterpretParams(out_of_bounds_reads=reads))(x)
    return J.jit(run), [np.zeros((16, 128), np.float32)]


def uneven_blocks(J, P, T):
    shape = (7, 768, 640)

    def kernel(x_ref, y_ref):
        y_ref[...] = x_ref[...] + 1.0

    def run(x):
        return P.pallas_call(
            kernel, in_specs=[P.BlockSpec((2, 512, 256), lambda i, j, k: (i, j, k))],
            out_specs=P.BlockSpec((2, 512, 256), lambda i, j, k: (i, j, k)),
            out_shape=J.ShapeDtypeStruct(shape, np.float32), grid=(4, 2, 3),
            interpret=T.InterpretParams())(x)
    return J.jit(run), [np.arange(np.prod(shape), dtype=np.float32).reshape(shape)]


def oob_read_index(J, P, T, reads, x):
    def kernel(s_ref, x_ref, o_ref):
        def body(carry):
            i, accum = carry
            return i + 1, accum + x_ref[i]
        start, stop = x_ref[s_ref[0]], x_ref[s_ref[1]]
        o_ref[0] = J.lax.while_loop(lambda c: c[0] < stop, body,
                                    (start, np.int32(0)))[1]

    def run(s, x):
        return P.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct((1,), np.int32),
            out_specs=P.BlockSpec(memory_space=T.SMEM),
            in_specs=[P.BlockSpec(memory_space=T.SMEM)] * 2,
            interpret=T.InterpretParams(out_of_bounds_reads=reads))(s, x)
    return J.jit(run), [np.array([0, 1], np.int32), np.array(x, np.int32)]


def oob_read_range(J, P, T, reads, space):
    def kernel(x_ref, o_ref, sem):
        T.async_copy(x_ref.at[P.ds(J.numpy.int32(4), 8), 1], o_ref, sem).wait()

    def run(x):
        return P.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct((8, 128), np.float32),
            out_specs=P.BlockSpec(memory_space=T.VMEM),
            in_specs=[P.BlockSpec(memory_space=_hbm(T, P, space))],
            scratch_shapes=[T.SemaphoreType.DMA],
            interpret=T.InterpretParams(out_of_bounds_reads=reads))(x)
    return J.jit(run), [np.zeros((8, 4, 128), np.float32)]


def _oob_write(J, P, T, bounds, reads, space, body, scratch_space="vmem"):
    def run(x):
        scratch = (T.SMEM if scratch_space == "smem" else T.VMEM)((10, 128), np.float32)
        return P.pallas_call(
            body, out_shape=J.ShapeDtypeStruct((8, 128), np.float32),
            out_specs=P.BlockSpec(memory_space=T.VMEM),
            in_specs=[P.BlockSpec(memory_space=_hbm(T, P, space))],
            scratch_shapes=[scratch],
            interpret=T.InterpretParams(buffer_bounds=bounds,
                                        out_of_bounds_reads=reads))(x)
    return J.jit(run), [np.zeros((8, 128), np.float32)]


def oob_write_index(J, P, T, bounds, reads, space):
    def kernel(x_ref, o_ref, s_ref):
        T.sync_copy(x_ref.at[0], s_ref.at[10])     # (row 10: padding of a (16, 128))
        o_ref[0, :] = s_ref[10, :]
    return _oob_write(J, P, T, bounds, reads, space, kernel)


def oob_write_range(J, P, T, bounds, reads, space):
    def kernel(x_ref, o_ref, s_ref):
        T.sync_copy(x_ref, s_ref.at[P.ds(J.numpy.int32(4), 8)])
        o_ref[...] = s_ref[P.ds(J.numpy.int32(4), 8)]
    return _oob_write(J, P, T, bounds, reads, space, kernel)


def smem_never_padded(J, P, T, bounds, scratch_space):
    def kernel(x_ref, o_ref, s_ref):
        T.sync_copy(x_ref.at[0], s_ref.at[10])
        o_ref[0, :] = s_ref[10, :]
    return _oob_write(J, P, T, bounds, "raise", "vmem", kernel, scratch_space)


def masked_store(J, P, T, everywhere):
    def kernel(i_ref, j_ref, x_ref, mask_ref, o_ref):
        o_ref[...] = J.numpy.zeros(o_ref.shape, o_ref.dtype)
        T.store(o_ref.at[P.ds(P.multiple_of(i_ref[0], 8), 16),
                         P.ds(P.multiple_of(j_ref[0], 128), 256)],
                x_ref[...], mask=mask_ref[...])

    def run(i, j, x, mask):
        return P.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct((16, 256), np.float32),
            grid_spec=T.PrefetchScalarGridSpec(num_scalar_prefetch=2),
            interpret=T.InterpretParams())(i, j, x, mask)
    mask = np.full((16, 256), everywhere)
    mask[0, 0] = True
    return J.jit(run), [np.array([8], np.int32), np.array([128], np.int32),
                        np.ones((16, 256), np.float32), mask]


def masked_store_padded(J, P, T):
    def kernel(i_ref, j_ref, x_ref, mask_ref, o_ref, s_ref):
        s_ref[...] = J.numpy.zeros(s_ref.shape, s_ref.dtype)
        rows = P.ds(P.multiple_of(i_ref[0], 8), 8)
        cols = P.ds(P.multiple_of(j_ref[0], 128), 128)
        T.store(s_ref.at[rows, cols], x_ref[...], mask=mask_ref[...])
        o_ref[...] = s_ref[rows, cols]

    def run(i, j, x, mask):
        return P.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct((8, 128), np.float32),
            scratch_shapes=[T.VMEM((10, 150), np.float32)],
            interpret=T.InterpretParams(buffer_bounds="padded",
                                        out_of_bounds_reads="uninitialized"))(i, j, x, mask)
    return J.jit(run), [np.array([8], np.int32), np.array([128], np.int32),
                        np.ones((8, 128), np.float32), np.full((8, 128), True)]


def scalar_prefetch(J, P, T):
    sizes = (128, 128)

    def kernel(indices, x_ref, o_ref):
        o_ref[...] = x_ref[...]

    def run(x, starts):
        spec = T.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(1, 1),
            in_specs=[P.BlockSpec(sizes, lambda i, j, b: (b[0], b[1]))],
            out_specs=P.BlockSpec(sizes, lambda *_: (0, 0)))
        call = P.pallas_call(kernel, grid_spec=spec,
                             out_shape=J.ShapeDtypeStruct(sizes, x.dtype),
                             interpret=T.InterpretParams())
        return call(J.numpy.array([starts[0] // sizes[0], starts[1] // sizes[1]]), x)
    x = np.arange(512 * 512, dtype=np.int32).reshape(512, 512)
    return J.jit(run), [x, np.array([128, 256], np.int32)]


def dynamic_grid_aliasing(J, P, T):
    def kernel(s1_ref, s2_ref, x_ref, o_ref):
        o_ref[...] = x_ref[...] + s1_ref[0].astype(x_ref.dtype)

    def run(s1, s2, x):
        iters = J.random.randint(J.random.key(0), (), 10, 20, dtype=np.int32)
        return P.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype),
            grid_spec=T.PrefetchScalarGridSpec(
                num_scalar_prefetch=2, grid=(iters,),
                in_specs=[P.BlockSpec(x.shape, lambda i, *_: (0, 0))],
                out_specs=P.BlockSpec(x.shape, lambda i, *_: (0, 0))),
            input_output_aliases={2: 0}, interpret=T.InterpretParams())(s1, s2, x)
    return J.jit(run), [np.array([1], np.int32), np.array([2], np.int32),
                        np.arange(32 * 128, dtype=np.float32).reshape(32, 128)]


def aliasing(J, P, T):
    def kernel(x_ref, o_ref, s_ref):
        @P.when((P.program_id(0) == 0) & (P.program_id(1) == 0))
        def _():
            s_ref[0] = np.int32(0)
        s = s_ref[0]
        s_ref[0] = s + 1
        o_ref[:] = x_ref[:] + s.astype(x_ref.dtype)

    def run(x):
        return P.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype), grid=(4, 4),
            in_specs=[P.BlockSpec((8, 128), lambda i, j: (i, j))],
            out_specs=P.BlockSpec((8, 128), lambda i, j: (j, i)),
            scratch_shapes=(T.SMEM((1,), np.int32),), input_output_aliases={0: 0},
            interpret=T.InterpretParams())(x)
    return J.jit(run), [np.zeros((32, 512), np.float32)]


def skip_fp_ops(J, P, T, n):
    def kernel(x_ref, y_ref, z_ref):
        z_ref[...] = x_ref[...] @ y_ref[...]

    def run(x, y):
        return P.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct((x.shape[0], y.shape[1]), x.dtype),
            interpret=T.InterpretParams(skip_floating_point_ops=True))(x, y)
    return J.jit(run), [_rand((n, n), 1), _rand((n, n), 2)]


def uninitialized_memory(J, P, T, fill):
    def kernel(o1_ref, o2_ref, o3_ref, t1_ref, t2_ref):
        o1_ref[...] = t1_ref[...]
        o2_ref[...] = t2_ref[...]

    def run():
        return P.pallas_call(
            kernel, out_shape=[J.ShapeDtypeStruct((8, 128), J.numpy.bfloat16),
                               J.ShapeDtypeStruct((8, 128), np.int16),
                               J.ShapeDtypeStruct((8, 128), np.float32)],
            in_specs=[], scratch_shapes=[T.VMEM((8, 128), J.numpy.bfloat16),
                                         T.VMEM((8, 128), np.int16)],
            interpret=T.InterpretParams(uninitialized_memory=fill))()
    return J.jit(run), []


def number_of_stores(J, P, T):
    def kernel(x_ref, s_ref, o_ref):
        s = s_ref[0]
        x_ref[:] += J.lax.full_like(x_ref, s)
        s_ref[0] = s + 1
        o_ref[:] = x_ref[:]

    def run(x, s):
        return P.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct((16, 256), np.float32), grid=(2, 2),
            in_specs=[P.BlockSpec((8, 256), lambda i, j: (i, 0)),
                      P.BlockSpec(memory_space=T.SMEM)],
            out_specs=P.BlockSpec((8, 256), lambda i, j: (i, 0)),
            interpret=T.InterpretParams())(x, s)
    return J.jit(run), [np.zeros((16, 256), np.float32), np.zeros((1,), np.int32)]


def parallel_order(J, P, T, semantics, recorder=None):
    """test_randomization_of_parallel_dimensions (semantics ('parallel', 'arbitrary'))
    and test_dimensions_arbitrary_parallel_raises (('arbitrary', 'parallel'))."""
    def kernel(s_ref, o_ref):
        s = s_ref[0]
        s_ref[0] = s + 1
        o_ref[:] = J.lax.full_like(o_ref, s)

    def run(s):
        return P.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct((32, 512), np.float32), grid=(4, 4),
            in_specs=[P.BlockSpec(memory_space=T.SMEM)],
            out_specs=P.BlockSpec((8, 128), lambda i, j: (i, j)),
            interpret=T.InterpretParams(random_seed=12345, grid_point_recorder=recorder),
            compiler_params=T.CompilerParams(dimension_semantics=semantics))(s)
    return J.jit(run), [np.zeros((1,), np.int32)]


def dynamic_parallel_dimension(J, P, T):
    def kernel(o_ref):
        o_ref[0] = 42.0

    def run():
        n = J.random.randint(J.random.key(0), (), 10, 20, dtype=np.int32)
        return P.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct((1,), np.float32), grid=(n,),
            in_specs=[], out_specs=P.BlockSpec((1,), lambda _: (0,)),
            interpret=T.InterpretParams(),
            compiler_params=T.CompilerParams(dimension_semantics=("parallel",)))()
    return J.jit(run), []


def core_map(J, P, T, num_cores, forced, device_axis=None):
    """test_core_map (and, with device_axis, the distributed file's
    test_shard_map_of_core_map): each core meets the others at a barrier, then adds
    its index (plus num_cores times its device's) and 1 to its slice."""
    mesh = T.create_tensorcore_mesh("core" if device_axis else "x", num_cores=num_cores)
    axis = "core" if device_axis else "x"
    interpret = False if forced else T.InterpretParams()

    def f(x):
        y = J.numpy.zeros_like(x)

        def inner(refs):
            x_ref, y_ref = refs

            @P.core_map(mesh, interpret=interpret)
            def _():
                n = J.lax.axis_size(axis)
                size = 16 // n

                def alloc(x_vmem, y_vmem, dma_sem, sem):
                    for i in range(n):
                        P.semaphore_signal(sem, 1, core_index=i)
                    P.semaphore_wait(sem, n)
                    c = J.lax.axis_index(axis)
                    slc = P.ds(c * size, size)
                    T.async_copy(x_ref.at[slc], x_vmem, dma_sem).wait()
                    base = n * J.lax.axis_index(device_axis) if device_axis else 0
                    y_vmem[...] = x_vmem[...] + base + c + 1
                    T.async_copy(y_vmem, y_ref.at[slc], dma_sem).wait()
                P.run_scoped(alloc, T.VMEM((size, 128), x_ref.dtype),
                             T.VMEM((size, 128), y_ref.dtype), T.SemaphoreType.DMA,
                             T.SemaphoreType.REGULAR)
        return P.run_state(inner)((x, y))[1]

    if device_axis:
        return f, []
    if forced:
        def run(x):
            with T.force_tpu_interpret_mode():
                return J.jit(f)(x)
        return run, [np.arange(16 * 128, dtype=np.int32).reshape(16, 128)]
    return J.jit(f), [np.arange(16 * 128, dtype=np.int32).reshape(16, 128)]


def core_map_exception(J, P, T):
    """test_core_map_exception_no_hang: core 1 reads out of bounds before it signals
    the semaphore core 0 waits on."""
    def run(x):
        @P.kernel(mesh=T.create_tensorcore_mesh("core", num_cores=2),
                  out_type=J.ShapeDtypeStruct((8, 128), np.float32),
                  scratch_types=[T.VMEM((8, 128), np.float32), T.SemaphoreType.REGULAR],
                  interpret=T.InterpretParams())
        def kernel(x_ref, o_ref, vmem_ref, sem):
            c = J.lax.axis_index("core")

            @P.when(c == 1)
            def _():
                vmem_ref[100, 0] = vmem_ref[100, 0]
                P.semaphore_signal(sem, 1, core_index=0)

            @P.when(c == 0)
            def _():
                P.semaphore_wait(sem, 1)
                T.sync_copy(x_ref, o_ref)
        return kernel(x)
    return J.jit(run), [np.ones((8, 128), np.float32)]


def hbm_in_run_scoped(J, P, T, space, allow=False):
    def f(x):
        y = J.numpy.zeros_like(x)

        def inner(refs):
            x_ref, y_ref = refs

            @P.core_map(T.create_tensorcore_mesh("x", num_cores=1), interpret=T.InterpretParams(
                allow_hbm_allocation_in_run_scoped=allow))
            def _():
                def copy(hbm):
                    T.sync_copy(x_ref, hbm)
                    T.sync_copy(hbm, y_ref)
                P.run_scoped(copy, _hbm(T, P, space)(x_ref.shape, x_ref.dtype))
        return P.run_state(inner)((x, y))[1]
    return J.jit(f), [np.arange(8, dtype=np.int32)]


def shared_buffer(J, P, T, first, space):
    """test_allocate_shared_buffer_in_core_map (detect_races off): the second core
    waits for the first's signal, sent after its copy through a run_scoped HBM buffer."""
    second = 1 - first

    def f(x):
        y = J.numpy.zeros_like(x)

        def inner(refs):
            x_ref, y_ref = refs

            @P.core_map(T.create_tensorcore_mesh("x", num_cores=2),
                        interpret=T.InterpretParams(
                            allow_hbm_allocation_in_run_scoped=True))
            def _():
                def body(sem):
                    @P.when(J.lax.axis_index("x") == second)
                    def _():
                        P.semaphore_wait(sem, 1)

                    def copy(x_hbm_ref):
                        T.sync_copy(x_ref, x_hbm_ref)
                        T.sync_copy(x_hbm_ref, y_ref)
                    P.run_scoped(copy, _hbm(T, P, space)(x_ref.shape, x_ref.dtype))

                    @P.when(J.lax.axis_index("x") == first)
                    def _():
                        P.semaphore_signal(sem, 1, core_index=second)
                P.run_scoped(body, T.SemaphoreType.REGULAR)
        return P.run_state(inner)((x, y))[1]
    return J.jit(f), [np.arange(16 * 128, dtype=np.int32).reshape(16, 128)]


def grid_names(J, P, T):
    def kernel(x, y):
        y[:] = (x[:] + 10.0 * J.lax.axis_index("foo").astype(x.dtype)
                + J.lax.axis_index("bar").astype(x.dtype))

    def run(x):
        return P.pallas_call(
            kernel, grid_spec=P.GridSpec(
                grid=(("foo", 2), ("bar", 4)),
                in_specs=[P.BlockSpec((8, 128), lambda i, j: (i, j))],
                out_specs=P.BlockSpec((8, 128), lambda i, j: (i, j))),
            out_shape=J.ShapeDtypeStruct((16, 512), np.float32),
            interpret=T.InterpretParams())(x)
    return J.jit(run), [np.zeros((16, 512), np.float32)]


def shared_buffer_race(J, P, T, slow, space, n):
    """test_allocate_shared_buffer_in_core_map_with_race (detect_races off): the slow
    core computes y @ y^T first; both cores copy x through a shared HBM buffer (racy:
    only the product is checked, as JAX's test does)."""
    def f(x, y):
        z = J.numpy.zeros_like(x)
        o = J.numpy.zeros((y.shape[0], y.shape[0]), y.dtype)

        def inner(refs):
            x_ref, y_ref, z_ref, o_ref = refs

            @P.core_map(T.create_tensorcore_mesh("x", num_cores=2),
                        interpret=T.InterpretParams(
                            allow_hbm_allocation_in_run_scoped=True))
            def _():
                def body(x_hbm_ref, v0, v1):
                    @P.when(J.lax.axis_index("x") == slow)
                    def _():
                        T.sync_copy(y_ref, v0)
                        v1[...] = v0[...] @ J.numpy.transpose(v0[...])
                        T.sync_copy(v1, o_ref)
                    T.sync_copy(x_ref, x_hbm_ref)
                    T.sync_copy(x_hbm_ref, z_ref)
                P.run_scoped(body, _hbm(T, P, space)(x.shape, x.dtype),
                             T.VMEM(y.shape, y.dtype), T.VMEM((n, n), y.dtype))
        return P.run_state(inner)((x, y, z, o))[3]
    y = np.random.default_rng(0).integers(-100, 100, (n, n)).astype(np.int32)
    return J.jit(f), [np.arange(16 * 128, dtype=np.int32).reshape(16, 128), y]


def _two_cores(J, P, T, rows, cores, blocked):
    def kernel(x_ref, o_ref, vmem_ref):
        vmem_ref[...] = x_ref[...]
        o_ref[...] = x_ref[...] + vmem_ref[...]
    spec = (dict(in_specs=[P.BlockSpec((8, 128), lambda i: (i, 0))],
                 out_specs=P.BlockSpec((8, 128), lambda i: (i, 0)))
            if blocked else dict(in_specs=[P.BlockSpec(memory_space=T.VMEM)]))

    def run(x):
        return P.pallas_call(
            kernel, grid=(2,), out_shape=J.ShapeDtypeStruct(x.shape, x.dtype),
            scratch_shapes=[T.VMEM((8, 128), x.dtype)],
            compiler_params=T.CompilerParams(dimension_semantics=("parallel",)),
            interpret=T.InterpretParams(num_cores_or_threads=cores), **spec)(x)
    return run, [np.ones((rows, 128), np.float32)]


def two_cores_with_race(J, P, T, cores, forced):
    """test_two_cores_along_parallel_dimension_with_race (detect_races off): run with
    num_cores_or_threads=2, or forced to `cores` by force_tpu_interpret_mode."""
    run, args = _two_cores(J, P, T, 8, 2, False)
    if not forced:
        return J.jit(run), args

    def forced_run(x):
        with T.force_tpu_interpret_mode(T.InterpretParams(num_cores_or_threads=cores)):
            return J.jit(run)(x)
    return forced_run, args


def two_cores_no_race(J, P, T):
    run, args = _two_cores(J, P, T, 16, 2, True)
    return J.jit(run), args


def parallel_and_cores(J, P, T, cores, recorder=None):
    """test_parallel_dimension_and_multiple_cores (no race detection): a counter in
    SMEM, each core's own, over a (parallel, arbitrary) grid."""
    def kernel(s_ref, in_ref, o_ref):
        diff = in_ref[...] - (4 * P.program_id(0) + P.program_id(1)).astype(np.float32)
        s = s_ref[0]
        s_ref[0] = s + 1
        o_ref[:] = J.lax.full_like(o_ref, s) + diff

    def run(s, blocks):
        return P.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct((32, 512), np.float32), grid=(4, 4),
            in_specs=[P.BlockSpec(memory_space=T.SMEM),
                      P.BlockSpec((8, 128), lambda i, j: (i, j))],
            out_specs=P.BlockSpec((8, 128), lambda i, j: (i, j)),
            interpret=T.InterpretParams(random_seed=12345, num_cores_or_threads=cores,
                                        grid_point_recorder=recorder),
            compiler_params=T.CompilerParams(
                dimension_semantics=("parallel", "arbitrary")))(s, blocks)
    blocks = np.repeat(np.repeat(np.arange(16, dtype=np.float32).reshape(4, 4), 128, 1),
                       8, 0)
    return J.jit(run), [np.zeros((1,), np.float32), blocks]


def referencing_hbm(J, P, T, space, which):
    """test_referencing_hbm_raises: `which` is (kernel, HBM side): a plain ref read or
    write ('jax') or pltpu.load / pltpu.store ('pallas') of an HBM/ANY buffer."""
    kind, side = which

    def jax_kernel(in_ref, o_ref):
        o_ref[...] = in_ref[...]

    def pallas_kernel(in_ref, o_ref):
        T.store(o_ref, T.load(in_ref))
    hbm = _hbm(T, P, space)

    def run(x):
        return P.pallas_call(
            jax_kernel if kind == "jax" else pallas_kernel,
            out_shape=J.ShapeDtypeStruct(x.shape, x.dtype), grid=(1,),
            in_specs=[P.BlockSpec(memory_space=hbm if side == "in" else T.VMEM)],
            out_specs=P.BlockSpec(memory_space=hbm if side == "out" else T.VMEM),
            interpret=T.InterpretParams())(x)
    return run, [np.zeros((8, 128), np.float32)]


def run_scoped_no_space(J, P, T, spec):
    def kernel(o_ref):
        P.run_scoped(lambda v: T.sync_copy(v, o_ref), T.VMEM((8, 128), np.float32))

    def run():
        return P.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct((8, 128), np.float32),
            out_specs=(P.BlockSpec(memory_space=None) if spec == "none"
                       else P.no_block_spec), grid=(1,),
            interpret=T.InterpretParams(allow_hbm_allocation_in_run_scoped=True,
                                        uninitialized_memory="zero"))()
    return run, []


def store_to_half(J, P, T, space):
    def kernel(x_ref, o_ref):
        T.sync_copy(x_ref.at[:8], o_ref.at[8:])

    def run(x):
        return P.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype), grid=(1,),
            out_specs=P.BlockSpec(memory_space=_hbm(T, P, space)),
            in_specs=[P.BlockSpec(memory_space=_hbm(T, P, space))],
            input_output_aliases={0: 0},
            interpret=T.InterpretParams(uninitialized_memory="zero"))(x)
    return run, [np.arange(16, dtype=np.int32)]


def side_effects(J, P, T):
    def kernel(x, y):
        y[:] = x[:] + 1.0

    def run(x):
        return P.pallas_call(
            kernel, in_specs=[P.BlockSpec(memory_space=T.VMEM)],
            out_specs=P.BlockSpec(memory_space=T.VMEM),
            out_shape=J.ShapeDtypeStruct((8, 128), np.float32),
            interpret=T.InterpretParams(),
            compiler_params=T.CompilerParams(has_side_effects=True))(x)
    return J.jit(run), [np.zeros((8, 128), np.float32)]


# ---- tpu_pallas_interpret_distributed_test.py ------------------------------------------
def exception_then_remote_copy(J, P, T, n):
    """test_that_exception_does_not_cause_dma_to_wait_forever's kernel (per device, in
    a shard_map over "x"): device 1's core 0 reads out of bounds, then every core
    copies its rows to the same core of its left neighbour."""
    @P.kernel(mesh=T.create_tensorcore_mesh("core", num_cores=2),
              out_type=J.ShapeDtypeStruct((16, 128), np.float32),
              scratch_types=[T.VMEM((8, 128), np.float32), T.SemaphoreType.DMA(2)],
              interpret=T.InterpretParams())
    def kernel(x_ref, o_ref, vmem_ref, dma_sems):
        my_id = J.lax.axis_index("x")
        left = J.lax.rem(my_id + n - 1, np.int32(n))
        c = J.lax.axis_index("core")

        @P.when((my_id == 1) & (c == 0))
        def _():
            vmem_ref[0, 0] = vmem_ref[100, 0]
        T.async_remote_copy(x_ref.at[P.ds(c, 8)], o_ref.at[P.ds(c, 8)], dma_sems.at[0],
                            dma_sems.at[1], device_id=(left,),
                            device_id_type=P.DeviceIdType.MESH).wait()
    return kernel


def dma_then_add(J, P, T, mode, space):
    """test_race_detection's kernel_without_race (run with detect_races off): a DMA
    waited on before its destination is read, under either dma_execution_mode."""
    def kernel(x_ref, o_ref, t_ref, sem):
        copy = T.make_async_copy(x_ref, t_ref, sem)
        copy.start()
        copy.wait()
        o_ref[...] = t_ref[...] + 1.0

    def run(x):
        return P.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype),
            in_specs=[P.BlockSpec(memory_space=_hbm(T, P, space))],
            scratch_shapes=[T.VMEM(x.shape, x.dtype), T.SemaphoreType.DMA],
            interpret=T.InterpretParams(dma_execution_mode=mode))(x)
    return J.jit(run), [np.zeros((8, 128), np.float32)]
