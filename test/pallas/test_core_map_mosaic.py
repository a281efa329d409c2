"""pl.core_map and pl.kernel over a mesh of one TensorCore (a v5e's) lower to JAX 0.10.2's
Mosaic module: a kernel over a grid of one point whose first argument is the core index
(iteration_bounds [1], `parallel`, window_params of whole pl.ANY refs, core_type tc) and
whose `lax.axis_index` of the core axis is that index. Each kernel's module and custom
call attributes are compared with JAX's lowered for the TPU on this CPU (told it is a
v5e); its values in TPU interpret mode with NumPy and with JAX's TPU interpreter, and in
mjax's interpret=True with NumPy."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle)
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402
from jax._src.pallas.mosaic import tpu_info as jax_tpu_info  # noqa: E402

import mjax  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402

from test_mosaic_differential import (ON_TPU, assert_same_mosaic, cpu_as_v5e,  # noqa: E402
                                      jax_tpu_text, tpu_mosaic)

SHAPE = (16, 128)
LIBS = {"jax": (jax, jpl, jpltpu), "mjax": (mjax, pl, pltpu)}


def copy(J, P, T, **kw):
    """A core_map copying one ref into another with sync_copy."""
    mesh = T.create_tensorcore_mesh("core", num_cores=1)

    def f(x):
        x_ref, o_ref = J.new_ref(x), J.new_ref(J.lax.empty(x.shape, x.dtype))

        @P.core_map(mesh, **kw)
        def _():
            T.sync_copy(x_ref, o_ref)
        return o_ref[...]
    return f, lambda x: x


def axis_index(J, P, T, **kw):
    """A core_map through a VMEM scratch, adding the core's index and the core count."""
    mesh = T.create_tensorcore_mesh("x", num_cores=1)

    def f(x):
        x_ref, o_ref = J.new_ref(x), J.new_ref(J.lax.empty(x.shape, x.dtype))

        @P.core_map(mesh, scratch_shapes=[T.VMEM(x.shape, x.dtype)], **kw)
        def _(v):
            T.sync_copy(x_ref, v)
            core = J.lax.axis_index("x").astype(x.dtype)
            v[...] = v[...] * 2.0 + core + J.lax.axis_size("x")
            T.sync_copy(v, o_ref)
        return o_ref[...]
    return f, lambda x: x * 2.0 + 0 + 1


def _pipeline(P, T, rows, body):
    return T.emit_pipeline(body, grid=(rows // 8,),
                           in_specs=[P.BlockSpec((8, 128), lambda i: (i, 0))],
                           out_specs=[P.BlockSpec((8, 128), lambda i: (i, 0))])


def pipeline(J, P, T, **kw):
    """A core_map running an emit_pipeline over blocks of 8 rows of the refs."""
    mesh = T.create_tensorcore_mesh("core", num_cores=1)

    def f(x):
        x_ref, o_ref = J.new_ref(x), J.new_ref(J.lax.empty(x.shape, x.dtype))

        def body(i_ref, out):
            out[...] = i_ref[...] * 2.0

        @P.core_map(mesh, **kw)
        def _():
            _pipeline(P, T, x.shape[0], body)(x_ref, o_ref)
        return o_ref[...]
    return f, lambda x: x * 2.0


def kernel(J, P, T, **kw):
    """pl.kernel on an array with an out_type: the refs whole in HBM, a VMEM scratch."""
    mesh = T.create_tensorcore_mesh("core", num_cores=1)

    def f(x):
        @P.kernel(out_type=J.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh,
                  scratch_types=[T.VMEM(x.shape, x.dtype)], **kw)
        def k(x_hbm, o_hbm, v):
            T.sync_copy(x_hbm, v)
            v[...] = v[...] + 1.0
            T.sync_copy(v, o_hbm)
        return k(x)
    return f, lambda x: x + 1.0


def kernel_axis_index(J, P, T, **kw):
    """pl.kernel with two outputs, compiler parameters and the core axis's index/size."""
    mesh = T.create_tensorcore_mesh("c", num_cores=1)

    def k(x_hbm, o_hbm, copy_hbm, v):
        T.sync_copy(x_hbm, v)
        v[...] = v[...] * 3.0 + J.lax.axis_index("c").astype(v.dtype) + J.lax.axis_size("c")
        T.sync_copy(v, o_hbm)
        T.sync_copy(x_hbm, copy_hbm)

    def f(x):
        out = J.ShapeDtypeStruct(x.shape, x.dtype)
        return P.kernel(k, out_type=(out, out), mesh=mesh,
                        scratch_types=[T.VMEM(x.shape, x.dtype)],
                        compiler_params=T.CompilerParams(vmem_limit_bytes=1 << 24), **kw)(x)
    return f, lambda x: (x * 3.0 + 0 + 1, x)


def kernel_pipeline(J, P, T, **kw):
    """pl.kernel whose body is an emit_pipeline over its input and output refs."""
    mesh = T.create_tensorcore_mesh("core", num_cores=1)

    def f(x):
        def body(i_ref, out):
            out[...] = i_ref[...] + 3.0

        @P.kernel(out_type=J.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh, **kw)
        def k(x_hbm, o_hbm):
            _pipeline(P, T, x.shape[0], body)(x_hbm, o_hbm)
        return k(x)
    return f, lambda x: x + 3.0


def kernel_on_refs(J, P, T, **kw):
    """pl.kernel given a ref that its body writes: one operand, results the out_type
    array then the ref (aliased to it), the kernel named new_body as JAX's."""
    mesh = T.create_tensorcore_mesh("core", num_cores=1)

    def k(x_hbm, o_hbm, v):
        T.sync_copy(x_hbm, v)
        v[...] = v[...] * 2.0
        T.sync_copy(v, o_hbm)
        v[...] = v[...] - 1.0
        T.sync_copy(v, x_hbm)

    def f(x):
        r = J.new_ref(x)
        out = P.kernel(k, out_type=J.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh,
                       scratch_types=[T.VMEM(x.shape, x.dtype)], **kw)(r)
        return out, r[...]
    return f, lambda x: (x * 2.0, x * 2.0 - 1.0)


def scalar_capture(J, P, T, **kw):
    """A core_map closing over a traced scalar: JAX passes it as an SMEM ref of shape
    (1,), the kernel's first operand (its window the mesh lowering's: the affine map
    (d0) -> (0), no transform function), and reads its element 0."""
    mesh = T.create_tensorcore_mesh("core", num_cores=1)

    def f(x):
        s = x[0, 0] * 2.0
        x_ref, o_ref = J.new_ref(x), J.new_ref(J.lax.empty(x.shape, x.dtype))

        @P.core_map(mesh, scratch_shapes=[T.VMEM(x.shape, x.dtype)], **kw)
        def _(v):
            T.sync_copy(x_ref, v)
            v[...] = v[...] + s
            T.sync_copy(v, o_ref)
        return o_ref[...]
    return f, lambda x: x + x[0, 0] * 2.0


KERNELS = {k.__name__: k for k in (copy, axis_index, pipeline, kernel, kernel_axis_index,
                                    kernel_pipeline, kernel_on_refs, scalar_capture)}
# kernel -> JAX 0.10.2's TPU interpreter's refusal of it (mjax's is checked with NumPy)
JAX_INTERPRETER_REFUSES = {"scalar_capture": "Unsupported memory space: smem"}


def _mosaic(lib: str, name: str) -> tuple[str, str]:
    """(custom call attributes and backend_config, Mosaic text) of the kernel's one TPU
    custom call, lowered for the TPU by `lib` (JAX's module also has other custom calls:
    its refs' allocations)."""
    J, P, T = LIBS[lib]
    f, _ = KERNELS[name](J, P, T)
    return tpu_mosaic(J, f, [(SHAPE, np.float32)], v5e=True)


@pytest.mark.parametrize("name", KERNELS)
def test_mosaic_module_matches_jax(name):
    jconfig, jbody = _mosaic("jax", name)
    mconfig, mbody = _mosaic("mjax", name)
    assert mconfig == jconfig
    assert_same_mosaic(jbody, mbody)


@pytest.mark.parametrize("name", KERNELS)
def test_kernel_takes_the_core_index_first(name):
    """The wrapper JAX gives the kernel: a grid of one core whose index is an i32 first
    argument (not a scalar-prefetch operand), the refs' window params empty."""
    _, body = _mosaic("mjax", name)
    head = next(line for line in body.splitlines() if "func.func" in line)
    assert "(%arg0: i32, %arg1: memref<" in head
    for part in ("iteration_bounds = array<i64: 1>", "scalar_prefetch = 0",
                 "dimension_semantics = [#tpu.dimension_semantics<parallel>]",
                 "tpu.core_type = #tpu.core_type<tc>"):
        assert part in head, (part, head)


def _x():
    return np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32)


def _leaves(out):
    return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("name", KERNELS)
def test_tpu_interpret_values_match_jax_and_numpy(name):
    """TPU interpret mode (both libraries' force_tpu_interpret_mode) on the CPU; on the
    chip the kernels compile instead, where JAX's interpreter refuses core_map. JAX's
    interpreter asks the chip's tiling for emit_pipeline: the CPU answers as a v5e."""
    x = _x()
    mode = (lambda T: contextlib.nullcontext()) if ON_TPU else (
        lambda T: T.force_tpu_interpret_mode())
    f, want_of = KERNELS[name](mjax, pl, pltpu)
    with mode(pltpu):
        got = _leaves(mjax.jit(f)(x))
    jf, _ = KERNELS[name](jax, jpl, jpltpu)
    numpy = _leaves(want_of(x))
    with mode(jpltpu), cpu_as_v5e(jax_tpu_info):
        if name in JAX_INTERPRETER_REFUSES and not ON_TPU:
            with pytest.raises(NotImplementedError, match=JAX_INTERPRETER_REFUSES[name]):
                jax.jit(jf)(x)
            want = numpy
        else:
            want = _leaves(jax.jit(jf)(x))
    assert len(got) == len(want) == len(numpy)
    for g, w, n in zip(got, want, numpy):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_allclose(g, n, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", KERNELS)
def test_interpret_true_values_match_numpy(name):
    x = _x()
    f, want_of = KERNELS[name](mjax, pl, pltpu, interpret=True)
    got = _leaves(mjax.jit(f)(x))
    for g, n in zip(got, _leaves(want_of(x)), strict=True):
        np.testing.assert_allclose(g, n, rtol=1e-6, atol=1e-6)


def test_kernel_dimension_semantics_refused_as_jax():
    """JAX's TPU lowering of pl.kernel refuses dimension_semantics (the mesh sets them);
    mjax refuses them when it traces the call, with JAX's error."""
    def make(J, P, T):
        mesh = T.create_tensorcore_mesh("c", num_cores=1)
        return P.kernel(lambda x, o: T.sync_copy(x, o),
                        out_type=J.ShapeDtypeStruct(SHAPE, np.float32), mesh=mesh,
                        compiler_params=T.CompilerParams(dimension_semantics=("arbitrary",)))
    avals = [jax.ShapeDtypeStruct(SHAPE, np.float32)]
    with pytest.raises(ValueError) as jerr:
        jax_tpu_text(make(jax, jpl, jpltpu), avals)
    with pytest.raises(ValueError) as merr:
        mjax.jit(make(mjax, pl, pltpu)).trace(
            mjax.ShapeDtypeStruct(SHAPE, np.float32)).lower(lowering_platforms=("tpu",))
    assert str(merr.value) == str(jerr.value).splitlines()[-1]


@pytest.mark.parametrize("name", ["copy", "kernel", "kernel_on_refs"])
def test_metadata_is_the_custom_calls_kernel_metadata_as_jax(name):
    """pl.core_map's and pl.kernel's `metadata=` reaches the TPU custom call's
    kernel_metadata (as pallas_call's), the custom call then JAX's."""
    configs = {}
    for lib, (J, P, T) in LIBS.items():
        f, _ = KERNELS[name](J, P, T, metadata={"who": "core", "n": "3"})
        configs[lib] = tpu_mosaic(J, f, [(SHAPE, np.float32)], v5e=True)
    assert "who" in configs["jax"][0] and "kernel_metadata" in configs["jax"][0]
    assert configs["mjax"][0] == configs["jax"][0]
    assert_same_mosaic(configs["jax"][1], configs["mjax"][1])
