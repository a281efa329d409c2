"""DMAs (pltpu.make_async_copy / sync_copy) of reshaped and bitcast ref views
(`ref.reshape(...)`, `ref.bitcast(dtype)`, `.at[...]` before and after them) against JAX
0.10.2: mjax's Mosaic module is JAX's (tpu.memref_reshape / tpu.memref_bitcast between
the views' slices, before tpu.enqueue_dma / tpu.wait_dma2), and mjax's interpreted values
are NumPy's (JAX's TPU interpreter cannot run these DMAs: its transforms have no
`indices`; its interpret=True path refuses them too).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import jax  # noqa: E402  (the oracle, from the test extra)
import jax.experimental.pallas.tpu  # noqa: E402,F401

import mjax  # noqa: E402
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402

from test_mosaic_differential import (_np_bitcast, assert_compiled_as_jax,  # noqa: E402
                                      assert_same_mosaic, tpu_mosaic)

BF16 = ml_dtypes.bfloat16
SHAPES = [((2, 8, 128), np.float32), ((16, 128), BF16)]


def kernels(J, pl, pltpu, **call) -> dict:
    jnp = J.numpy
    ANY = pl.BlockSpec(memory_space=pl.ANY)
    outs = (J.ShapeDtypeStruct((16, 128), jnp.float32),
            J.ShapeDtypeStruct((4, 128), jnp.uint32),
            J.ShapeDtypeStruct((16, 128), jnp.bfloat16))

    def copies(x_hbm, y_hbm, o_ref, p_ref, q_hbm, sem):
        def copy(src, dst):
            c = pltpu.make_async_copy(src, dst, sem)
            c.start()
            c.wait()
        copy(x_hbm.reshape(16, 128), o_ref)                          # a reshaped source
        copy(y_hbm.bitcast(jnp.uint32).at[pl.ds(4, 4)], p_ref)       # bitcast, then a window
        copy(x_hbm.at[1].reshape(1, 1024).at[:, pl.ds(0, 512)],      # window, reshape, window
             o_ref.reshape(4, 1, 512).at[1])                         # into a reshaped dest
        copy(y_hbm, q_hbm)
        copy(p_ref, q_hbm.bitcast(jnp.uint32).at[pl.ds(2, 4)])      # into a bitcast HBM ref

    def synced(x_hbm, y_hbm, o_ref, p_ref, q_hbm):
        pltpu.sync_copy(x_hbm.reshape(16, 128), o_ref)
        pltpu.sync_copy(y_hbm.bitcast(jnp.uint32).at[pl.ds(4, 4)], p_ref)
        pltpu.sync_copy(x_hbm.at[1].reshape(1, 1024).at[:, pl.ds(0, 512)],
                        o_ref.reshape(4, 1, 512).at[1])
        pltpu.sync_copy(y_hbm, q_hbm)
        pltpu.sync_copy(p_ref, q_hbm.bitcast(jnp.uint32).at[pl.ds(2, 4)])

    specs = dict(out_shape=outs, in_specs=[ANY, ANY],
                 out_specs=(pl.BlockSpec(memory_space=pltpu.VMEM),
                            pl.BlockSpec(memory_space=pltpu.VMEM), ANY), **call)
    return {"async": pl.pallas_call(copies, scratch_shapes=[pltpu.SemaphoreType.DMA],
                                    **specs),
            "sync": pl.pallas_call(synced, **specs)}


JAX_KERNELS = kernels(jax, jpl, jpltpu)
MJAX_KERNELS = kernels(mjax, pl, pltpu)


@pytest.mark.parametrize("name", ["async", "sync"])
def test_dma_view_module_matches_jax(name):
    """Both print as JAX's; in `sync`, the squeezed window's index (the 1 of
    `x_hbm.at[1]`) is a constant made before sync_copy's scoped semaphore region."""
    want = tpu_mosaic(jax, JAX_KERNELS[name], SHAPES)[1]
    got = tpu_mosaic(mjax, MJAX_KERNELS[name], SHAPES)[1]
    assert "tpu.memref_reshape" in got and "tpu.memref_bitcast" in got
    assert_same_mosaic(want, got)


@pytest.mark.parametrize("name", ["async", "sync"])
@pytest.mark.parametrize("interpret", ["tpu_interpret_mode", "interpret=True"])
def test_dma_view_values_match_numpy(name, interpret):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(SHAPES[0][0]).astype(np.float32)
    y = rng.standard_normal(SHAPES[1][0]).astype(BF16)
    if interpret == "interpret=True":
        o, p, q = (np.asarray(v) for v in kernels(mjax, pl, pltpu, interpret=True)[name](x, y))
    else:
        with pltpu.force_tpu_interpret_mode():
            o, p, q = (np.asarray(v) for v in MJAX_KERNELS[name](x, y))
    want_o = x.reshape(16, 128).copy()
    want_o[4:8] = x[1].reshape(1, 1024)[:, :512].reshape(4, 128)
    bits = _np_bitcast(y, np.uint32)
    np.testing.assert_array_equal(o, want_o)
    np.testing.assert_array_equal(p, bits[4:8])
    bits[2:6] = bits[4:8]
    np.testing.assert_array_equal(q.view(np.uint16), _np_bitcast(bits, np.uint16))


@pytest.mark.parametrize("name", ["async", "sync"])
def test_compiled_dma_views_match_jax(name):
    rng = np.random.default_rng(7)
    args = [rng.standard_normal(s).astype(d) for s, d in SHAPES]
    assert_compiled_as_jax(JAX_KERNELS[name], MJAX_KERNELS[name], args)


def test_dma_view_errors():
    """A reshape that changes the element count is refused where the view is made; a DMA
    between views of different shapes names both."""
    def kernel(x_hbm, o_ref):
        pltpu.sync_copy(x_hbm.reshape(8, 256), o_ref)
    f = pl.pallas_call(kernel, out_shape=mjax.ShapeDtypeStruct((16, 128), np.float32),
                       in_specs=[pl.BlockSpec(memory_space=pl.ANY)], interpret=True)
    with pytest.raises(ValueError, match="same shape and dtype"):
        f(np.zeros((16, 128), np.float32))

    def bad(x_hbm, o_ref):
        pltpu.sync_copy(x_hbm.reshape(3, 128), o_ref)
    g = pl.pallas_call(bad, out_shape=mjax.ShapeDtypeStruct((16, 128), np.float32),
                       in_specs=[pl.BlockSpec(memory_space=pl.ANY)], interpret=True)
    with pytest.raises(ValueError, match="cannot reshape"):
        g(np.zeros((16, 128), np.float32))
