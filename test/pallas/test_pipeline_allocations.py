"""pltpu.emit_pipeline over buffers made beforehand (pltpu.BufferedRef; the allocations of
pltpu.emit_pipeline_with_allocations, made once in a pl.run_scoped and passed to several
pipelines; body_prologue) against JAX 0.10.2: mjax's Mosaic module is JAX's (exported for
the TPU on this CPU), and the values are JAX's TPU interpret mode's and NumPy's. Kernels
from JAX's tests/pallas/tpu_pallas_pipeline_test.py (test_matmul_with_input_output) and
written for the allocations' uses (shared by two pipelines, a prologue per step).
"""
from __future__ import annotations

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle, from the test extra)
import jax.experimental.pallas.tpu  # noqa: E402,F401

import mjax  # noqa: E402
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402

from test_mosaic_differential import (assert_compiled_as_jax, assert_same_mosaic,  # noqa: E402
                                      tpu_mosaic)
from test_pipeline_mosaic import assert_interpreted_as_jax  # noqa: E402


def corpus(J, pl, pltpu) -> dict:
    """name -> (f, [(shape, dtype)], NumPy's function)."""
    jnp = J.numpy
    K = {}
    ANY = pl.BlockSpec(memory_space=pl.ANY)

    # -- test_matmul_with_input_output: BufferedRefs as pallas_call scratch, the output an
    # input_output buffer (its blocks copied in and written back) ------------------------
    def matmul_in_out(x, y):
        m = n = k = 256
        bm = bn = bk = 128
        allocs = [
            pltpu.BufferedRef.input(pl.BlockSpec((bm, bk), lambda n, m, k: (m, k)),
                                    jnp.float32),
            pltpu.BufferedRef.input(pl.BlockSpec((bk, bn), lambda n, m, k: (k, n)),
                                    jnp.float32),
            pltpu.BufferedRef.input_output(pl.BlockSpec((bm, bn), lambda n, m, k: (m, n)),
                                           jnp.float32)]

        def kernel(x_hbm, y_hbm, o_hbm, x_bref, y_bref, o_bref):
            def inner(x_ref, y_ref, o_ref):
                @pl.when(pl.program_id(2) == 0)
                def _():
                    o_ref[...] = jnp.zeros_like(o_ref)
                o_ref[...] += x_ref[...] @ y_ref[...]

            pltpu.emit_pipeline(inner, grid=(m // bm, n // bn, k // bk))(
                x_hbm, y_hbm, o_hbm, allocations=[x_bref, y_bref, o_bref])
        return pl.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((m, n), jnp.float32),
                              in_specs=[ANY, ANY], out_specs=ANY,
                              scratch_shapes=allocs)(x, y)
    K["matmul_in_out"] = (matmul_in_out, [((256, 256), np.float32)] * 2,
                          lambda x, y: x @ y)

    # -- emit_pipeline_with_allocations: the buffers made once, used by two pipelines;
    # body_prologue counts the steps in SMEM before each body -----------------------------
    def shared(x, y):
        spec = pl.BlockSpec((8, 128), lambda i, j: (i, j))

        def kernel(x_hbm, y_hbm, o_hbm, p_hbm, count):
            def body(x_ref, o_ref):
                o_ref[...] = x_ref[...] + count[0].astype(jnp.float32)

            def prologue():
                count[0] += 1

            pipeline, make = pltpu.emit_pipeline_with_allocations(
                body, grid=(2, 2), in_specs=[spec], out_specs=[spec])
            count[0] = 0

            def scoped(allocs):
                pipeline(x_hbm, o_hbm, allocations=allocs, body_prologue=prologue)
                pipeline(y_hbm, p_hbm, allocations=allocs, body_prologue=prologue)
            pl.run_scoped(scoped, make(x_hbm, o_hbm))
        out = J.ShapeDtypeStruct((16, 256), jnp.float32)
        return pl.pallas_call(kernel, out_shape=(out, out), in_specs=[ANY, ANY],
                              out_specs=(ANY, ANY),
                              scratch_shapes=[pltpu.SMEM((1,), jnp.int32)])(x, y)

    def shared_ref(x, y):
        steps = np.repeat(np.repeat(np.arange(1, 5, dtype=np.float32).reshape(2, 2), 8, 0),
                          128, 1)
        return x + steps, y + steps + 4
    K["shared"] = (shared, [((16, 256), np.float32)] * 2, shared_ref)

    # -- allocations with no_pipelining (each block copied synchronously), an input with
    # three slots and an output used twice (its block index ignores j) -------------------
    def sync(x):
        def kernel(x_hbm, o_hbm):
            xs = pl.BlockSpec((8, 128), lambda i, j: (i, j))
            os_ = pl.BlockSpec((8, 128), lambda i, j: (i, 0))

            def body(x_ref, o_ref):
                @pl.when(pl.program_id(1) == 0)
                def _():
                    o_ref[...] = jnp.zeros_like(o_ref)
                o_ref[...] += x_ref[...]

            allocs = (pltpu.BufferedRef.input(xs, jnp.float32, buffer_count=3),
                      pltpu.BufferedRef.output(os_, jnp.float32))
            pl.run_scoped(lambda a: pltpu.emit_pipeline(body, grid=(2, 2),
                                                        no_pipelining=True)(
                x_hbm, o_hbm, allocations=a), allocs)
        return pl.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((16, 128), jnp.float32),
                              in_specs=[ANY], out_specs=ANY)(x)
    K["sync"] = (sync, [((16, 256), np.float32)], lambda x: x[:, :128] + x[:, 128:])

    # -- make_allocations with a lookahead input (pl.Buffered(3, use_lookahead=True)) and
    # an output in VMEM used in place ------------------------------------------------------
    def lookahead(x):
        def kernel(x_hbm, o_vmem):
            xs = pl.BlockSpec((8, 128), lambda i: (i, 0),
                              pipeline_mode=pl.Buffered(3, use_lookahead=True))
            os_ = pl.BlockSpec((8, 128), lambda i: (i, 0))

            def body(x_ref, o_ref):
                o_ref[...] = x_ref[...] * 3.0

            pipeline, make = pltpu.emit_pipeline_with_allocations(
                body, grid=(4,), in_specs=[xs], out_specs=[os_])
            pl.run_scoped(lambda a: pipeline(x_hbm, o_vmem, allocations=a),
                          make(x_hbm, o_vmem))
        return pl.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((32, 128), jnp.float32),
                              in_specs=[ANY])(x)
    K["lookahead"] = (lookahead, [((32, 128), np.float32)], lambda x: x * 3)

    # -- make_allocations where each step sees the whole ref (trivial windowing: a buffer
    # of the ref's shape, copied in once before the loop and out once after it) ----------
    def whole(x):
        def kernel(x_hbm, o_hbm):
            spec = pl.BlockSpec((16, 128), lambda i: (0, 0))

            def body(x_ref, o_ref):
                o_ref[...] += x_ref[...]

            pipeline, make = pltpu.emit_pipeline_with_allocations(
                body, grid=(3,), in_specs=[spec], out_specs=[spec])

            def scoped(allocs):
                allocs[1].window_ref[...] = jnp.zeros((16, 128), jnp.float32)
                pipeline(x_hbm, o_hbm, allocations=allocs)
            pl.run_scoped(scoped, make(x_hbm, o_hbm))
        return pl.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((16, 128), jnp.float32),
                              in_specs=[ANY], out_specs=ANY)(x)
    K["whole"] = (whole, [((16, 128), np.float32)], lambda x: x * 3)
    return K


JAX_KERNELS = corpus(jax, jpl, jpltpu)
MJAX_KERNELS = corpus(mjax, pl, pltpu)


def _module(J, kernels, name) -> str:
    f, shapes, _ = kernels[name]
    return tpu_mosaic(J, f, shapes, v5e=J is jax)[1]


@pytest.mark.parametrize("name", sorted(JAX_KERNELS))
def test_allocations_module_matches_jax(name):
    assert_same_mosaic(_module(jax, JAX_KERNELS, name), _module(mjax, MJAX_KERNELS, name))


def _args(name):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(d) for s, d in JAX_KERNELS[name][1]]


@pytest.mark.parametrize("name", sorted(JAX_KERNELS))
def test_allocations_values_match_jax_and_numpy(name):
    assert_interpreted_as_jax(JAX_KERNELS[name][0], MJAX_KERNELS[name][0],
                              MJAX_KERNELS[name][2], _args(name))


@pytest.mark.parametrize("name", sorted(JAX_KERNELS))
def test_compiled_allocations_match_jax(name):
    assert_compiled_as_jax(JAX_KERNELS[name][0], MJAX_KERNELS[name][0], _args(name))


def _errors(J, pl, pltpu) -> dict:
    """What each library raises (an exception type and message) for misused
    allocations."""
    jnp = J.numpy
    spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
    out = {}

    def catch(key, f):
        try:
            f()
            out[key] = None
        except Exception as e:  # noqa: BLE001  (the exception is what is compared)
            out[key] = (type(e).__name__, str(e))

    catch("output_3_slots", lambda: pltpu.BufferedRef.output(spec, jnp.float32,
                                                             buffer_count=3))
    catch("lookahead_rank", lambda: pltpu.BufferedRef.input(spec, jnp.float32,
                                                            use_lookahead=True))
    catch("accumulate_kwarg", lambda: pltpu.emit_pipeline_with_allocations(
        lambda x: None, grid=(2,), in_specs=[spec], should_accumulate_out=True))
    b = pltpu.BufferedRef.input_output(spec, jnp.float32)
    out["flags"] = (b.is_input, b.is_output, b.is_input_output, b.is_buffered,
                    b.buffer_count, b.use_lookahead)
    return out


def test_allocation_errors_match_jax():
    """BufferedRef's checks and roles are JAX's (more than two slots for an output, a
    lookahead without the grid's rank, an argument JAX 0.10.2 does not take)."""
    want, got = _errors(jax, jpl, jpltpu), _errors(mjax, pl, pltpu)
    assert want["flags"] == got["flags"] == (True, True, True, True, 2, False)
    for key in ("output_3_slots", "lookahead_rank"):
        assert got[key] == want[key] and want[key] is not None
    assert got["accumulate_kwarg"][0] == want["accumulate_kwarg"][0] == "TypeError"


def test_allocations_refused_by_mjax():
    """What mjax does not support, or what is misused, raises a clear error."""
    spec = pl.BlockSpec((8, 128), lambda i: (i, 0))

    def run(kernel):
        f = pl.pallas_call(kernel, out_shape=mjax.ShapeDtypeStruct((16, 128), np.float32),
                           in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                           out_specs=pl.BlockSpec(memory_space=pl.ANY), interpret=True)
        return f(np.zeros((16, 128), np.float32))

    def too_few(x_hbm, o_hbm):
        pipeline, make = pltpu.emit_pipeline_with_allocations(
            lambda x, o: None, grid=(2,), in_specs=[spec], out_specs=[spec])
        pl.run_scoped(lambda a: pipeline(x_hbm, o_hbm, allocations=a[:1]),
                      make(x_hbm, o_hbm))
    with pytest.raises(ValueError, match="1 allocation"):
        run(too_few)

    def unallocated(x_hbm, o_hbm):
        pipeline, make = pltpu.emit_pipeline_with_allocations(
            lambda x, o: None, grid=(2,), in_specs=[spec], out_specs=[spec])
        pipeline(x_hbm, o_hbm, allocations=make(x_hbm, o_hbm))
    with pytest.raises(ValueError, match="allocated first"):
        run(unallocated)

    # (a pltpu.Tiling is taken: test_tiling_export.py)
    with pytest.raises(TypeError, match="tiling"):
        pltpu.BufferedRef.input(spec, np.float32, tiling=object())
