"""Pallas TPU kernels over several TensorCores (a v4/v5p chip has 2 per device), as JAX
0.10.2 lowers them: pl.core_map and pl.kernel over pltpu.create_tensorcore_mesh of 2
cores (a grid of one point per core, `parallel`, the core index the kernel's first
argument), emit_pipeline splitting its grid over the cores (core_axis_name / core_axis),
semaphore signals and DMAs to the other core (core_index=, device_id={core_axis: c}),
pltpu.core_barrier, and the tpu/core_map guide's kernels (docs/pallas/tpu/core_map.md).

Both libraries are told the target is a v5p of 2 cores: each one's tpu_info answers for
the CPU as for a v5p core of a 2-core device (its registry of device kinds, as
test_mosaic_differential's cpu_as_v5e), the meshes made with num_cores=2. (JAX's own
knob off the chip, an abstract mesh whose abstract device is a v5p, gives
create_tensorcore_mesh 2 cores in both libraries too, but JAX then lowers a VMEM store
inside a core_map's run_scoped with two no-op vector.shape_casts, its value's sharding
not the abstract mesh's: not the module the chip gets.) Each kernel's Mosaic module and custom call
attributes are compared with JAX's lowered for the TPU on this CPU; values in TPU
interpret mode with JAX's interpreter and NumPy, and in interpret=True with NumPy.
Kernels whose cores signal or copy to each other (TALKING) are compared here as Mosaic;
their interpreted values (the cores in lockstep) are test_multicore_interpret.py's."""
from __future__ import annotations

import contextlib
import functools
import re

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle)
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402
from jax._src.pallas.mosaic import core as jax_mosaic_core  # noqa: E402
from jax._src.pallas.mosaic import tpu_info as jax_tpu_info  # noqa: E402

import mjax  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402
from mjax.experimental.pallas import tpu_info as mjax_tpu_info  # noqa: E402

from jaxlib.mlir import ir  # noqa: E402

from cpu_oracle import on_the_host_cpu  # noqa: E402
from test_mosaic_differential import (assert_same_mosaic, context, custom_calls,  # noqa: E402
                                      decode, jax_tpu_text, tpu_mosaic)

LIBS = {"jax": (jax, jpl, jpltpu), "mjax": (mjax, pl, pltpu)}
CORES = 2


@contextlib.contextmanager
def as_v5p(J):
    """`J`'s (jax or mjax) tpu_info answers for the CPU as for a core of a TPU v5p of 2
    TensorCores (its registry of device kinds), for this block only."""
    info = jax_tpu_info if J is jax else mjax_tpu_info
    added = "cpu" not in info.registry
    if added:
        info.registry["cpu"] = lambda: info.get_tpu_info_for_chip(
            info.ChipVersion.TPU_V5P, CORES)
    try:
        yield
    finally:
        if added:
            del info.registry["cpu"]
            getattr(info.get_tpu_info, "cache_clear", lambda: None)()


@contextlib.contextmanager
def interpreting_as_v5p(J):
    """as_v5p, with the CPU as the default device: on the chip too, the TPU interpreters
    run on the CPU (JAX's, over a multi-core mesh on a TPU backend, lowers core_map as
    an mpmd_map that refuses its callbacks' effects)."""
    with as_v5p(J), J.default_device(J.devices("cpu")[0]):
        yield


@contextlib.contextmanager
def abstract_v5p(J):
    """JAX's knob for a chip off the chip: an abstract mesh whose device is a v5p of 2
    cores (get_num_device_cores and create_tensorcore_mesh read it)."""
    dev = J.sharding.AbstractDevice(device_kind="TPU v5p", num_cores=CORES, platform="tpu")
    with J.sharding.use_abstract_mesh(J.sharding.AbstractMesh((1,), ("d",),
                                                              abstract_device=dev)):
        yield


# ---- the kernels (J, P, T: jax or mjax and their pallas modules) -------------------------
def core_slices(J, P, T, **kw):
    """A core_map: each core copies its half of the rows (sync_copy of views)."""
    def f(x):
        mesh = T.create_tensorcore_mesh("core", num_cores=CORES)
        x_ref, o_ref = J.new_ref(x), J.new_ref(J.lax.empty(x.shape, x.dtype))
        rows = x.shape[0] // 2

        @P.core_map(mesh, **kw)
        def _():
            c = J.lax.axis_index("core")
            T.sync_copy(x_ref.at[P.ds(c * rows, rows)], o_ref.at[P.ds(c * rows, rows)])
        return o_ref[...]
    return f, lambda x: x


def core_scratch(J, P, T, **kw):
    """A core_map through each core's VMEM scratch, adding its index and the core count."""
    def f(x):
        mesh = T.create_tensorcore_mesh("x", num_cores=CORES)
        rows = x.shape[0] // 2
        x_ref, o_ref = J.new_ref(x), J.new_ref(J.lax.empty(x.shape, x.dtype))

        @P.core_map(mesh, scratch_shapes=[T.VMEM((rows, x.shape[1]), x.dtype)], **kw)
        def _(v):
            c = J.lax.axis_index("x")
            T.sync_copy(x_ref.at[P.ds(c * rows, rows)], v)
            v[...] = v[...] * 2.0 + c.astype(v.dtype) + J.lax.axis_size("x")
            T.sync_copy(v, o_ref.at[P.ds(c * rows, rows)])
        return o_ref[...]
    return f, lambda x: x * 2.0 + np.repeat([0.0, 1.0], x.shape[0] // 2)[:, None] + 2


def kernel_halves(J, P, T, **kw):
    """pl.kernel: each core adds its index to its half, through a VMEM scratch."""
    def f(x):
        mesh = T.create_tensorcore_mesh("core", num_cores=CORES)
        rows = x.shape[0] // 2

        def k(x_hbm, o_hbm, v):
            c = J.lax.axis_index("core")
            T.sync_copy(x_hbm.at[P.ds(c * rows, rows)], v)
            v[...] = v[...] + c.astype(v.dtype)
            T.sync_copy(v, o_hbm.at[P.ds(c * rows, rows)])
        return P.kernel(k, out_type=J.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh,
                        scratch_types=[T.VMEM((rows, x.shape[1]), x.dtype)], **kw)(x)
    return f, lambda x: x + np.repeat([0.0, 1.0], x.shape[0] // 2)[:, None]


def _add_one(i_ref, o_ref):
    o_ref[...] = i_ref[...] + 1


def _split_pipeline(J, P, T, semantics, kw, rows_per_block=8):
    def f(x):
        mesh = T.create_tensorcore_mesh("core", num_cores=CORES)

        def k(x_hbm, o_hbm):
            n, m = x_hbm.shape
            spec = P.BlockSpec((rows_per_block, 128), lambda i, j: (i, j))
            T.emit_pipeline(_add_one, grid=(n // rows_per_block, m // 128),
                            in_specs=[spec], out_specs=[spec], core_axis_name="core",
                            dimension_semantics=semantics(T))(x_hbm, o_hbm)
        return P.kernel(k, out_type=J.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh,
                        scratch_types=[], **kw)(x)
    return f, lambda x: x + 1


def guide_add_one(J, P, T, **kw):
    """The guide's add_one_kernel: emit_pipeline's first (parallel) grid dim split over
    the cores (4 row blocks: 2 per core)."""
    return _split_pipeline(J, P, T, lambda T: (T.PARALLEL, T.ARBITRARY), kw)


def pipeline_uneven(J, P, T, **kw):
    """3 row blocks over 2 cores: the first core runs 2, the second 1 (traced counts)."""
    return _split_pipeline(J, P, T, lambda T: (T.PARALLEL, T.ARBITRARY), kw)


def pipeline_second_dim(J, P, T, **kw):
    """The split falls on the grid's second dim, the parallel one."""
    return _split_pipeline(J, P, T, lambda T: (T.ARBITRARY, T.PARALLEL), kw)


def pipeline_grid_axis(J, P, T, **kw):
    """emit_pipeline(core_axis=0) in a pallas_call whose grid axis 0 (of 2) stands for
    the cores: each program runs half of the pipeline's grid."""
    def f(x):
        def k(x_hbm, o_hbm):
            spec = P.BlockSpec((8, 128), lambda i: (i, 0))
            T.emit_pipeline(_add_one, grid=(x.shape[0] // 8,), in_specs=[spec],
                            out_specs=[spec], core_axis=0,
                            dimension_semantics=(T.PARALLEL,))(x_hbm, o_hbm)
        return P.pallas_call(k, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype), grid=(2,),
                             in_specs=[P.BlockSpec(memory_space=P.ANY)],
                             out_specs=P.BlockSpec(memory_space=P.ANY), **kw)(x)
    return f, lambda x: x + 1


def guide_indexed_add_one(J, P, T, **kw):
    """The guide's indexed_add_one_kernel: an SMEM scalar copied in, the work split
    among the cores by hand in the index maps, pytree arguments."""
    def f(x, index):
        mesh = T.create_tensorcore_mesh("core", num_cores=CORES)
        cores = len(mesh.devices)
        out_shape = (x.shape[0], x.shape[1] // 2)

        def k(in_refs, out_refs, i_smem):
            (x_hbm, i_hbm), o_hbm = in_refs, out_refs
            T.sync_copy(i_hbm, i_smem)
            core = J.lax.axis_index("core")
            per_core = x_hbm.shape[0] // cores
            i_map = lambda i: core * per_core // 8 + i               # noqa: E731
            j_map = lambda j: i_smem[0] // 128 + j                   # noqa: E731
            T.emit_pipeline(
                _add_one, grid=(per_core // 8, out_shape[1] // 128),
                in_specs=[P.BlockSpec((8, 128), lambda i, j: (i_map(i), j_map(j)))],
                out_specs=[P.BlockSpec((8, 128), lambda i, j: (i_map(i), j))])(x_hbm, o_hbm)
        return P.kernel(k, out_type=J.ShapeDtypeStruct(out_shape, x.dtype), mesh=mesh,
                        scratch_types=[T.SMEM((1,), np.int32)], **kw)((x, index))
    return f, lambda x, index: x[:, int(index[0]):int(index[0]) + x.shape[1] // 2] + 1


# name -> (kernel, argument shapes)
KERNELS = {
    "core_slices": (core_slices, [((16, 128), np.float32)]),
    "core_scratch": (core_scratch, [((16, 128), np.float32)]),
    "kernel_halves": (kernel_halves, [((16, 128), np.float32)]),
    "guide_add_one": (guide_add_one, [((32, 256), np.float32)]),
    "pipeline_uneven": (pipeline_uneven, [((24, 256), np.float32)]),
    "pipeline_second_dim": (pipeline_second_dim, [((16, 512), np.float32)]),
    "pipeline_grid_axis": (pipeline_grid_axis, [((32, 128), np.float32)]),
    "guide_indexed_add_one": (guide_indexed_add_one, [((32, 512), np.float32),
                                                      ((1,), np.int32)]),
}


def _mosaic(lib, make, shapes):
    J, P, T = LIBS[lib]
    with as_v5p(J):
        return tpu_mosaic(J, make(J, P, T)[0], shapes)


@pytest.mark.parametrize("name", KERNELS)
def test_mosaic_module_matches_jax(name):
    make, shapes = KERNELS[name]
    jconfig, jbody = _mosaic("jax", make, shapes)
    mconfig, mbody = _mosaic("mjax", make, shapes)
    assert mconfig == jconfig
    assert_same_mosaic(jbody, mbody)
    head = next(line for line in mbody.splitlines() if "func.func" in line)
    assert "iteration_bounds = array<i64: 2>" in head      # (one grid point per core)
    if name != "pipeline_grid_axis":                        # (a mesh's: its core axis)
        assert "dimension_semantics = [#tpu.dimension_semantics<parallel>]" in head


def _args(shapes):
    rng = np.random.default_rng(5)
    out = []
    for shape, dtype in shapes:
        out.append(rng.standard_normal(shape).astype(dtype) if dtype == np.float32
                   else np.full(shape, 128, dtype))
    return out


def _leaves(out):
    return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]


@on_the_host_cpu
def jax_interpreted(name, args):
    """JAX's TPU interpret mode's values of kernel `name` (on the chip: in a CPU-only
    child process, test/cpu_oracle.py)."""
    make, _ = KERNELS[name]
    with interpreting_as_v5p(jax):
        jf, _ = make(jax, jpl, jpltpu, interpret=jpltpu.InterpretParams())
        return _leaves(jax.jit(jf)(*args))


@pytest.mark.parametrize("name", KERNELS)
def test_tpu_interpret_values_match_jax_and_numpy(name):
    """Both libraries' TPU interpret mode (pltpu.InterpretParams), each core's instance
    run: the same values as JAX's and as NumPy's."""
    make, shapes = KERNELS[name]
    args = _args(shapes)
    with interpreting_as_v5p(mjax):
        f, want_of = make(mjax, pl, pltpu, interpret=pltpu.InterpretParams())
        got = _leaves(mjax.jit(f)(*args))
    want = jax_interpreted(name, args)
    numpy = _leaves(want_of(*args))
    assert len(got) == len(want) == len(numpy)
    for g, w, n in zip(got, want, numpy):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_allclose(g, n, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", KERNELS)
def test_interpret_true_values_match_numpy(name):
    make, shapes = KERNELS[name]
    args = _args(shapes)
    with as_v5p(mjax):
        f, want_of = make(mjax, pl, pltpu, interpret=True)
        got = _leaves(mjax.jit(f)(*args))
    for g, n in zip(got, _leaves(want_of(*args)), strict=True):
        np.testing.assert_allclose(g, n, rtol=1e-6, atol=1e-6)


# ---- kernels whose cores talk to each other ---------------------------------------------
def _swap_cores_kernel(J, P, T, in_hbm, out_hbm, in_vmem, scratch_vmem, out_vmem, sem,
                       send_sem, recv_sem):
    """The guide's swap_cores_kernel: a barrier through the barrier semaphore, then each
    core copies its slice into the other core's VMEM."""
    core_index = J.lax.axis_index("core")
    num_cores = J.lax.axis_size("core")
    slc_size = in_hbm.shape[-1] // num_cores
    slc = P.ds(core_index * slc_size, slc_size)
    T.async_copy(in_hbm.at[:, slc], in_vmem, sem).wait()
    dst_core = (core_index + 1) % num_cores
    sem0 = T.get_barrier_semaphore()
    P.semaphore_signal(sem0, 1, device_id={"core": dst_core})
    P.semaphore_wait(sem0, 1)
    copy = T.make_async_remote_copy(in_vmem, scratch_vmem, send_sem, recv_sem,
                                    device_id={"core": dst_core})
    copy.start()
    copy.wait()
    out_vmem[...] = scratch_vmem[...] * 2
    T.async_copy(out_vmem, out_hbm.at[:, slc], sem).wait()


def guide_swap_core_map(J, P, T, **kw):
    def f(x):
        mesh = T.create_tensorcore_mesh("core", num_cores=CORES)
        local = (x.shape[0], x.shape[1] // 2)
        x_ref, o_ref = J.new_ref(x), J.new_ref(J.lax.empty(x.shape, x.dtype))

        @P.core_map(mesh, compiler_params=T.CompilerParams(collective_id=0), **kw)
        def _():
            P.run_scoped(functools.partial(_swap_cores_kernel, J, P, T, x_ref, o_ref),
                         *([T.VMEM(local, x.dtype)] * 3), *([T.SemaphoreType.DMA] * 3))
        return o_ref[...]
    return f


def guide_swap_kernel(J, P, T, **kw):
    def f(x):
        mesh = T.create_tensorcore_mesh("core", num_cores=CORES)
        local = (x.shape[0], x.shape[1] // 2)
        scratch = [T.VMEM(local, x.dtype)] * 3 + [T.SemaphoreType.DMA] * 3
        return P.kernel(functools.partial(_swap_cores_kernel, J, P, T), out_type=x,
                        mesh=mesh, scratch_types=scratch,
                        compiler_params=T.CompilerParams(collective_id=0), **kw)(x)
    return f


def barrier(J, P, T, **kw):
    """pltpu.core_barrier on a regular semaphore between each core's read and write."""
    def f(x):
        mesh = T.create_tensorcore_mesh("c", num_cores=CORES)
        rows = x.shape[0] // 2

        def k(x_hbm, o_hbm, v, sem):
            c = J.lax.axis_index("c")
            T.sync_copy(x_hbm.at[P.ds(c * rows, rows)], v)
            T.core_barrier(sem, core_axis_name="c")
            v[...] = v[...] + 1.0
            T.sync_copy(v, o_hbm.at[P.ds(c * rows, rows)])
        return P.kernel(k, out_type=J.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh,
                        scratch_types=[T.VMEM((rows, x.shape[1]), x.dtype),
                                       T.SemaphoreType.REGULAR], **kw)(x)
    return f


def barrier_semaphore(J, P, T, **kw):
    """pltpu.core_barrier on the barrier semaphore; a signal with core_index=."""
    def f(x):
        mesh = T.create_tensorcore_mesh("c", num_cores=CORES)

        def k(x_hbm, o_hbm, v, sem):
            T.sync_copy(x_hbm, v)
            T.core_barrier(T.get_barrier_semaphore(), core_axis_name="c")
            c = J.lax.axis_index("c")
            P.semaphore_signal(sem, 2, core_index=1 - c)
            P.semaphore_wait(sem, 2)
            v[...] = v[...] + 1.0
            T.sync_copy(v, o_hbm)
        return P.kernel(k, out_type=J.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh,
                        scratch_types=[T.VMEM(x.shape, x.dtype), T.SemaphoreType.REGULAR],
                        compiler_params=T.CompilerParams(collective_id=1), **kw)(x)
    return f


TALKING = {"guide_swap_core_map": (guide_swap_core_map, [((8, 256), np.float32)]),
           "guide_swap_kernel": (guide_swap_kernel, [((8, 256), np.float32)]),
           "barrier": (barrier, [((16, 128), np.float32)]),
           "barrier_semaphore": (barrier_semaphore, [((8, 128), np.float32)])}


@pytest.mark.parametrize("name", TALKING)
def test_inter_core_mosaic_matches_jax(name):
    """The copies and signals to the other core carry Mosaic's core_id, as JAX's."""
    make, shapes = TALKING[name]
    J = {"jax": jax, "mjax": mjax}
    texts = {}
    for lib in ("jax", "mjax"):
        with as_v5p(J[lib]):
            texts[lib] = tpu_mosaic(J[lib], make(*LIBS[lib]), shapes)
    assert texts["mjax"][0] == texts["jax"][0]
    assert_same_mosaic(texts["jax"][1], texts["mjax"][1])
    assert " core_id" in texts["mjax"][1]


# ---- JAX's errors ----------------------------------------------------------------------
def _lower(J, f, shapes):
    avals = [J.ShapeDtypeStruct(s, d) for s, d in shapes]
    if J is jax:
        return jax_tpu_text(f, avals)
    return J.jit(f).trace(*avals).lower(lowering_platforms=("tpu",)).as_text()


def _both_raise(make, shapes, exc):
    """Both libraries refuse `make`'s kernel with `exc`; mjax's message is JAX's."""
    messages = []
    for lib in ("jax", "mjax"):
        J = LIBS[lib][0]
        with as_v5p(J), pytest.raises(exc) as err:
            _lower(J, make(*LIBS[lib]), shapes)
        messages.append(str(err.value).splitlines()[-1] if lib == "jax"
                        else str(err.value))
    return messages


def test_split_without_parallel_dims_refused_as_jax():
    def make(J, P, T):
        return _split_pipeline(J, P, T, lambda T: (T.ARBITRARY, T.ARBITRARY), {})[0]
    jmsg, mmsg = _both_raise(make, [((16, 256), np.float32)], NotImplementedError)
    assert mmsg == jmsg


def test_both_core_indices_refused_as_jax():
    def make(J, P, T):
        def f(x):
            def k(x_hbm, o_hbm, sem):
                c = J.lax.axis_index("c")
                P.semaphore_signal(sem, 1, device_id={"c": 1 - c}, core_index=1 - c)
                T.sync_copy(x_hbm, o_hbm)
            return P.kernel(k, out_type=J.ShapeDtypeStruct(x.shape, x.dtype),
                            mesh=T.create_tensorcore_mesh("c", num_cores=CORES),
                            scratch_types=[T.SemaphoreType.REGULAR])(x)
        return f
    jmsg, mmsg = _both_raise(make, [((8, 128), np.float32)], ValueError)
    assert mmsg == jmsg


def test_unknown_device_axis_refused_as_jax():
    def make(J, P, T):
        def f(x):
            def k(x_hbm, o_hbm, sem):
                P.semaphore_signal(sem, 1, device_id={"nope": 0})
                T.sync_copy(x_hbm, o_hbm)
            return P.kernel(k, out_type=J.ShapeDtypeStruct(x.shape, x.dtype),
                            mesh=T.create_tensorcore_mesh("c", num_cores=CORES),
                            scratch_types=[T.SemaphoreType.REGULAR])(x)
        return f
    jmsg, mmsg = _both_raise(make, [((8, 128), np.float32)], ValueError)
    # (JAX's names the axis's value as its lowering traced it)
    assert jmsg.startswith("Unrecognized axes in device_id: {'nope': ")
    assert mmsg == "Unrecognized axes in device_id: {'nope': 0}"


@pytest.mark.parametrize("api", ["core_map", "kernel"])
def test_several_axes_refused_as_jax(api):
    def make(J, P, T):
        core = jax_mosaic_core if J is jax else T
        mesh = core.TensorCoreMesh(np.array([[core.TensorCore(0), core.TensorCore(1)]]),
                                   ["a", "b"])

        def f(x):
            if api == "kernel":
                return P.kernel(lambda x_hbm, o_hbm: T.sync_copy(x_hbm, o_hbm),
                                out_type=J.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh)(x)
            r = J.new_ref(x)

            @P.core_map(mesh)
            def _():
                T.sync_copy(r, r)
            return r[...]
        return f
    jmsg, mmsg = _both_raise(make, [((8, 128), np.float32)], NotImplementedError)
    assert mmsg == jmsg


def test_dimension_semantics_refused_as_jax():
    def make(J, P, T):
        def f(x):
            x_ref = J.new_ref(x)

            @P.core_map(T.create_tensorcore_mesh("c", num_cores=CORES),
                        compiler_params=T.CompilerParams(dimension_semantics=("parallel",)))
            def _():
                T.sync_copy(x_ref, x_ref)
            return x_ref[...]
        return f
    jmsg, mmsg = _both_raise(make, [((8, 128), np.float32)], ValueError)
    assert mmsg == jmsg


def test_create_tensorcore_mesh_reads_the_abstract_device():
    """JAX's knob for a chip off the chip: the abstract mesh's device's core count."""
    for J, T in ((jax, jpltpu), (mjax, pltpu)):
        with abstract_v5p(J):
            assert dict(T.create_tensorcore_mesh("c").shape) == {"c": 2}
            assert T.get_tpu_info().num_cores == 2
        assert dict(T.create_tensorcore_mesh("c", num_cores=2).shape) == {"c": 2}


def test_core_copy_inside_a_shard_map():
    """Inside a shard_map, a device_id naming only the core axis is a copy to the other
    core of this device: Mosaic's device_id (this device's logical id) and core_id, as
    JAX's. The custom call differs in kernel_metadata only: JAX finds this device's mesh
    coordinates while it lowers the DMA (no named-axis effect: mesh_axes stays empty),
    mjax while it traces the kernel (mesh_axes ["d"])."""
    def make(J, P, T):
        def k(x_hbm, o_hbm, v, send, recv):
            c = J.lax.axis_index("core")
            T.sync_copy(x_hbm, v)
            copy = T.make_async_remote_copy(v, v, send, recv, device_id={"core": 1 - c})
            copy.start()
            copy.wait()
            T.sync_copy(v, o_hbm)

        def f(x):
            return P.kernel(k, out_type=J.ShapeDtypeStruct(x.shape, x.dtype),
                            mesh=T.create_tensorcore_mesh("core", num_cores=CORES),
                            scratch_types=[T.VMEM(x.shape, x.dtype), T.SemaphoreType.DMA,
                                           T.SemaphoreType.DMA])(x)
        return f

    texts = {}
    for lib, (J, P, T) in LIBS.items():
        # (the CPU's devices, on the chip too: a v5e machine may have one TPU device)
        mesh = J.make_mesh((2,), ("d",), devices=J.devices("cpu")[:2])
        spec = J.sharding.PartitionSpec("d")
        f = J.shard_map(make(J, P, T), mesh=mesh, in_specs=spec, out_specs=spec,
                        check_vma=False)
        x = J.device_put(np.zeros((16, 128), np.float32), J.sharding.NamedSharding(mesh, spec))
        with as_v5p(J):
            text = J.jit(f).trace(x).lower(lowering_platforms=("tpu",)).as_text()
        with context(), ir.Location.unknown():
            module = ir.Module.parse(text)      # (held: its ops die with it)
            (call,) = [c for c in custom_calls(module)
                       if str(c.attributes["call_target_name"]) == '"tpu_custom_call"']
            texts[lib] = decode(call)
    assert_same_mosaic(texts["jax"][1], texts["mjax"][1])
    assert "device_id(" in texts["mjax"][1] and "core_id(" in texts["mjax"][1]
    jattrs, mattrs = texts["jax"][0], texts["mjax"][0]
    assert "kernel_metadata = \"{}\"" in jattrs and "mesh_axes" in mattrs
    metadata = re.compile(r"kernel_metadata = \"(\\.|[^\"])*\"")
    assert metadata.sub("", mattrs) == metadata.sub("", jattrs)
