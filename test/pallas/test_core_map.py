"""pl.core_map over a mesh of one TensorCore (JAX's docs/pallas/tpu/core_map.md kernel,
without its shard_map and inter-core copies): values in interpret mode against NumPy and
JAX's TPU interpreter, the Mosaic module lowered for the TPU against JAX's, refs closed
over written back (eager and under jit), pl.kernel given refs, and the refusals."""
from __future__ import annotations

import contextlib
import inspect
import os
from functools import partial

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle)
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402

import mjax  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402
from mjax.dialect.context import context  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402

from test_mosaic_differential import (_diff, custom_calls, decode,  # noqa: E402
                                      normalize)

SHAPE = (8, 128)
ON_TPU = os.environ.get("MJAX_TEST_TPU", "") not in ("", "0")


def _interpreted(pltpu_):
    """TPU interpret mode on the CPU; on the chip the kernels compile instead (through
    Mosaic in both libraries): JAX 0.10.2's TPU interpreter fails there on core_map
    ("Lowering rule for `mpmd_map` needs to set `tokens_out`"), the chip being what
    interpret mode stands in for."""
    return contextlib.nullcontext() if ON_TPU else pltpu_.force_tpu_interpret_mode()


def guide(jx, jpl_, jpltpu_, interpret=False):
    """The guide's per-core kernel for one core: copy in, x * 2 + core index + cores,
    copy out, inside a core_map closing over two refs."""
    mesh = jpltpu_.create_tensorcore_mesh("core", num_cores=1)

    def kernel(in_hbm, out_hbm, in_vmem, out_vmem, sem):
        core = jx.lax.axis_index("core")
        cores = jx.lax.axis_size("core")
        jpltpu_.async_copy(in_hbm, in_vmem, sem).wait()
        out_vmem[...] = in_vmem[...] * 2 + core + cores
        jpltpu_.async_copy(out_vmem, out_hbm, sem).wait()

    def f(x):
        x_ref = jx.new_ref(x)
        o_ref = jx.new_ref(jx.lax.empty(x.shape, x.dtype))

        @jpl_.core_map(mesh, compiler_params=jpltpu_.CompilerParams(), interpret=interpret)
        def _():
            jpl_.run_scoped(partial(kernel, x_ref, o_ref), jpltpu_.VMEM(x.shape, x.dtype),
                            jpltpu_.VMEM(x.shape, x.dtype), jpltpu_.SemaphoreType.DMA)
        return o_ref[...]
    return f


def _x():
    return np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)


def test_signature_is_jaxs():
    assert inspect.signature(pl.core_map) == inspect.signature(jpl.core_map).replace(
        parameters=[p.replace(annotation=inspect.Parameter.empty)
                    for p in inspect.signature(jpl.core_map).parameters.values()])


def test_interpret_values_match_numpy():
    x = _x()
    got = mjax.jit(guide(mjax, pl, pltpu, interpret=True))(x)
    np.testing.assert_array_equal(np.asarray(got), x * 2 + 0 + 1)


def test_tpu_interpret_mode_matches_jax():
    """JAX's TPU interpreter runs the core_map (its interpret=True, the HLO interpreter,
    refuses the core axis); mjax's, the same values."""
    x = _x()
    with _interpreted(jpltpu):
        want = np.asarray(jax.jit(guide(jax, jpl, jpltpu))(x))
    with _interpreted(pltpu):
        got = np.asarray(mjax.jit(guide(mjax, pl, pltpu))(x))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, x * 2 + 1)


def _tpu_call(text):
    module = ir.Module.parse(text)
    calls = [c for c in custom_calls(module)
             if "tpu_custom_call" in str(c.attributes["call_target_name"])]
    assert len(calls) == 1
    return decode(calls[0])


def test_mosaic_module_matches_jax():
    spec = jax.ShapeDtypeStruct(SHAPE, np.float32)
    jtext = jax.jit(guide(jax, jpl, jpltpu)).trace(spec).lower(
        lowering_platforms=("tpu",)).as_text()
    mtext = mjax.jit(guide(mjax, pl, pltpu)).trace(
        mjax.ShapeDtypeStruct(SHAPE, np.float32)).lower(lowering_platforms=("tpu",)).as_text()
    with context(), ir.Location.unknown():
        jconfig, jbody = _tpu_call(jtext)
        mconfig, mbody = _tpu_call(mtext)
        # (the read-only input is not aliased; the output ref is operand 1's buffer)
        assert "operand_index = 1" in mconfig
        assert mconfig == jconfig
        a, b = normalize(jbody), normalize(mbody)
        assert a == b, _diff(a, b)


def test_read_only_ref_is_not_an_output():
    text = mjax.jit(guide(mjax, pl, pltpu, interpret=True)).trace(
        mjax.ShapeDtypeStruct(SHAPE, np.float32)).as_text()
    call = next(line for line in text.splitlines() if '"jaxpr.pallas_call"' in line)
    assert "input_output_aliases = array<i64: 1, 0>" in call
    assert call.rstrip().endswith("-> tensor<8x128xf32>")


def test_eager_core_map_writes_the_refs():
    """Outside jit the core_map runs at once and writes the Refs it closes over; a ref
    written with ref[...] and one read-modified-written through VMEM."""
    mesh = pltpu.create_tensorcore_mesh("core", num_cores=1)
    x = _x()
    a = mjax.new_ref(x)
    b = mjax.new_ref(np.zeros(SHAPE, np.float32))

    @pl.core_map(mesh, interpret=True, scratch_shapes=[pltpu.VMEM(SHAPE, np.float32)])
    def _(scratch):
        pltpu.sync_copy(a, scratch)
        scratch[...] = scratch[...] + 1.0
        pltpu.sync_copy(scratch, a)
        b[...] = scratch[...] * 3.0

    np.testing.assert_allclose(np.asarray(a[...]), x + 1.0)
    np.testing.assert_allclose(np.asarray(b[...]), (x + 1.0) * 3.0)


def test_kernel_takes_refs():
    """pl.kernel given a ref writes it in place and returns its outputs."""
    mesh = pltpu.create_tensorcore_mesh("core", num_cores=1)
    x = _x()
    r = mjax.new_ref(x)

    def body(x_hbm, o_hbm, vmem):
        pltpu.sync_copy(x_hbm, vmem)
        vmem[...] = vmem[...] * 2.0
        pltpu.sync_copy(vmem, o_hbm)
        pltpu.sync_copy(vmem, x_hbm)

    out = pl.kernel(body, out_type=jax.ShapeDtypeStruct(SHAPE, np.float32), mesh=mesh,
                    scratch_types=[pltpu.VMEM(SHAPE, np.float32)], interpret=True)(r)
    np.testing.assert_allclose(np.asarray(out), x * 2.0)
    np.testing.assert_allclose(np.asarray(r[...]), x * 2.0)


def test_several_axes_are_refused():
    # (meshes of several cores: test_multicore_mosaic.py; of several axes JAX refuses)
    mesh = pltpu.TensorCoreMesh(np.empty((1, 2), object), ["a", "b"])
    with pytest.raises(NotImplementedError, match="Mesh must be 1D"):
        pl.core_map(mesh)


def test_captured_array_is_refused():
    mesh = pltpu.create_tensorcore_mesh("core", num_cores=1)
    c = mjax.numpy.arange(8.0)
    r = mjax.new_ref(np.zeros(8, np.float32))

    def f():
        @pl.core_map(mesh, interpret=True)
        def _():
            r[...] = c
    with pytest.raises(ValueError, match="captures non-scalar constants"):
        mjax.jit(f)()


def chunked(jx, jpl_, jpltpu_):
    """Rows copied in chunks of 8 by a fori_loop of DMAs through .at[pl.ds] views, the
    core index added; x only read (an input), o written (an aliased output)."""
    mesh = jpltpu_.create_tensorcore_mesh("core", num_cores=1)

    def f(x):
        x_ref = jx.new_ref(x)
        o_ref = jx.new_ref(jx.lax.empty(x.shape, x.dtype))

        @jpl_.core_map(mesh)
        def _():
            def kernel(buf, sem):
                def step(i, carry):
                    rows = jpl_.ds(i * 8, 8)
                    jpltpu_.async_copy(x_ref.at[rows], buf, sem).wait()
                    buf[...] = buf[...] + jx.lax.axis_index("core").astype(x.dtype) + 1.0
                    jpltpu_.async_copy(buf, o_ref.at[rows], sem).wait()
                    return carry
                jx.lax.fori_loop(0, x.shape[0] // 8, step, 0)
            jpl_.run_scoped(kernel, jpltpu_.VMEM((8, x.shape[1]), x.dtype),
                            jpltpu_.SemaphoreType.DMA)
        return o_ref[...]
    return f


def test_chunked_loop_values_and_module_match_jax():
    x = np.random.default_rng(1).standard_normal((32, 128)).astype(np.float32)
    with _interpreted(jpltpu):
        want = np.asarray(jax.jit(chunked(jax, jpl, jpltpu))(x))
    with _interpreted(pltpu):
        got = np.asarray(mjax.jit(chunked(mjax, pl, pltpu))(x))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, x + 1.0)
    spec = ((32, 128), np.float32)
    jtext = jax.jit(chunked(jax, jpl, jpltpu)).trace(jax.ShapeDtypeStruct(*spec)).lower(
        lowering_platforms=("tpu",)).as_text()
    mtext = mjax.jit(chunked(mjax, pl, pltpu)).trace(mjax.ShapeDtypeStruct(*spec)).lower(
        lowering_platforms=("tpu",)).as_text()
    with context(), ir.Location.unknown():
        jconfig, jbody = _tpu_call(jtext)
        mconfig, mbody = _tpu_call(mtext)
        assert mconfig == jconfig
        a, b = normalize(jbody), normalize(mbody)
        assert a == b, _diff(a, b)


def test_plain_pallas_call_keeps_aliased_buffers_apart_in_interpret_mode():
    # (core_map's calls share an aliased operand's buffer with its result; a plain
    # pallas_call's interpret=True keeps them apart, as JAX's: a kernel that writes only
    # the aliased input ref returns the input's value)
    def call(J, pl_):
        def k(x_ref, o_ref):
            x_ref[...] = x_ref[...] + 10
        return J.jit(lambda x: pl_.pallas_call(
            k, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype), input_output_aliases={0: 0},
            interpret=True)(x))
    x = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE)
    want = np.asarray(call(jax, jpl)(x))
    np.testing.assert_array_equal(want, x)
    np.testing.assert_array_equal(np.asarray(call(mjax, pl)(x)), want)
