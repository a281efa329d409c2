"""pltpu.emit_pipeline over pl.ANY / HBM refs against JAX 0.10.2 (pipeline_corpus.py):
mjax's Mosaic module is JAX's (exported for the TPU on this CPU; both bodies decoded as
test_mosaic_differential.py decodes them, SSA names aside): VMEM buffers of
`buffer_count` slots with DMA semaphores, the prefetches, waits and write-backs JAX's
pipeline schedules, copies skipped where a block index repeats. The interpreted values
are JAX's TPU interpret mode's and NumPy's, in mjax's TPU interpret mode and
interpret=True.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle, from the test extra)
import jax.experimental.pallas.tpu  # noqa: E402,F401

import mjax  # noqa: E402
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402

from pipeline_corpus import gather_scatter_corpus, pipeline_corpus  # noqa: E402
from test_mosaic_differential import (_cpu_as_v5e, assert_compiled_as_jax,  # noqa: E402
                                      assert_same_mosaic, tpu_mosaic)



def _corpus(J, P, T) -> dict:
    """name -> (f, [(shape, dtype)], NumPy's function, the last argument's fixed value
    (an SMEM array of block indices) or None)."""
    out = {k: (*v, None) for k, v in pipeline_corpus(J, P, T).items()}
    out.update(gather_scatter_corpus(J, P, T))
    return out


JAX_KERNELS = _corpus(jax, jpl, jpltpu)
MJAX_KERNELS = _corpus(mjax, pl, pltpu)


def _module(J, kernels, name) -> str:
    f, shapes, _, _ = kernels[name]
    # (JAX's pipeline asks the chip for its tiling: the CPU answers as a v5e)
    return tpu_mosaic(J, f, shapes, v5e=J is jax)[1]


@pytest.mark.parametrize("name", sorted(JAX_KERNELS))
def test_pipeline_module_matches_jax(name):
    assert_same_mosaic(_module(jax, JAX_KERNELS, name), _module(mjax, MJAX_KERNELS, name))


def _args(name):
    rng = np.random.default_rng(0)
    _, shapes, _, fixed = JAX_KERNELS[name]
    args = [rng.integers(-100, 100, s).astype(d) if np.dtype(d).kind == "i"
            else rng.standard_normal(s).astype(d) for s, d in shapes]
    if fixed is not None:
        args[-1] = fixed()
    return args


def assert_interpreted_as_jax(jax_f, mjax_f, reference, args) -> None:
    """In both libraries' TPU interpret mode (JAX's pipeline asks the chip's tiling: the
    CPU answers as a v5e), mjax's outputs are JAX's and the NumPy reference's."""
    with _cpu_as_v5e(), jpltpu.force_tpu_interpret_mode():
        want = [np.asarray(w) for w in jax.tree.leaves(jax_f(*args))]
    with pltpu.force_tpu_interpret_mode():
        got = [np.asarray(g) for g in mjax.tree.leaves(mjax_f(*args))]
    ref = reference(*args)
    ref = list(ref) if isinstance(ref, tuple) else [ref]
    assert len(got) == len(want) == len(ref)
    for g, w, r in zip(got, want, ref):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("name", sorted(JAX_KERNELS))
def test_pipeline_values_match_jax_and_numpy(name):
    assert_interpreted_as_jax(JAX_KERNELS[name][0], MJAX_KERNELS[name][0],
                              MJAX_KERNELS[name][2], _args(name))


@pytest.mark.parametrize("name", sorted(JAX_KERNELS))
def test_compiled_pipeline_matches_jax(name):
    assert_compiled_as_jax(JAX_KERNELS[name][0], MJAX_KERNELS[name][0], _args(name))


def test_pipeline_dma_structure():
    """What the module holds for the matmul (4 x 4 x 4 steps of 128 x 128 blocks): two
    slots per ref, a semaphore per slot, one prefetch per input before the loop, the
    loop's input copies, waits and output write-backs, the final waits after it."""
    text = _module(mjax, MJAX_KERNELS, "matmul")
    assert len(re.findall(r"memref\.alloca\(\) : memref<2x128x128xf32, "
                          r"#tpu\.memory_space<vmem>>", text)) == 3
    assert len(re.findall(r"tpu\.sem_alloc : memref<2x!tpu\.dma_semaphore", text)) == 3
    loop = text.index("scf.for")
    before, inside = text[:loop], text[loop:text.index("ep_finalize")]
    assert before.count("tpu.enqueue_dma") == 2                 # (x's and y's first blocks)
    assert inside.count("tpu.enqueue_dma") == 3                 # (next x, next y, z out)
    assert inside.count("tpu.wait_dma2") == 3
    assert text[text.index("ep_finalize"):].count("tpu.wait_dma2") == 1


def test_buffered_slots_and_errors():
    """pl.Buffered(4) gives an input 4 slots and 3 prefetches before the loop; more than
    two slots for an output is refused, as JAX refuses it."""
    text = _module(mjax, MJAX_KERNELS, "buffered_copy")
    assert "memref<4x128x128xi32, #tpu.memory_space<vmem>>" in text
    assert "memref<4x!tpu.dma_semaphore" in text
    assert text[:text.index("scf.for")].count("tpu.enqueue_dma") == 3

    def kernel(x_hbm, o_hbm):
        pltpu.emit_pipeline(lambda x, o: None, grid=(2,),
                            in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
                            out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0),
                                                   pipeline_mode=pl.Buffered(3)))(x_hbm, o_hbm)
    f = pl.pallas_call(kernel, out_shape=mjax.ShapeDtypeStruct((16, 128), np.float32),
                       in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                       out_specs=pl.BlockSpec(memory_space=pl.ANY), interpret=True)
    with pytest.raises(NotImplementedError, match="Buffer count >2 not supported"):
        f(np.zeros((16, 128), np.float32))
    with pytest.raises(ValueError, match="strictly positive"):
        pltpu.emit_pipeline(lambda o: None, grid=(0, 2))
    with pytest.raises(ValueError, match="cannot both be provided"):
        pltpu.emit_pipeline(lambda o: None, grid=(2,), core_axis=0, core_axis_name="core")

    def two_cores(x_hbm, o_hbm):
        spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
        pltpu.emit_pipeline(lambda x, o: None, grid=(2,), in_specs=[spec], out_specs=spec,
                            core_axis=0, dimension_semantics=(pltpu.ARBITRARY,))(x_hbm, o_hbm)
    h = pl.pallas_call(two_cores, out_shape=mjax.ShapeDtypeStruct((16, 128), np.float32),
                       in_specs=[pl.BlockSpec(memory_space=pl.ANY)], grid=(2,),
                       out_specs=pl.BlockSpec(memory_space=pl.ANY), interpret=True)
    # (split over the grid's 2 "cores", as JAX's: it needs a parallel dimension)
    with pytest.raises(NotImplementedError, match="without parallel grid dimensions"):
        h(np.zeros((16, 128), np.float32))

    def prologue(x_hbm, o_hbm):
        spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
        pltpu.emit_pipeline(lambda x, o: None, grid=(2,), in_specs=[spec], out_specs=spec)(
            x_hbm, o_hbm, body_prologue=lambda: None)
    g = pl.pallas_call(prologue, out_shape=mjax.ShapeDtypeStruct((16, 128), np.float32),
                       in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                       out_specs=pl.BlockSpec(memory_space=pl.ANY), interpret=True)
    with pytest.raises(NotImplementedError, match="body_prologue"):
        g(np.zeros((16, 128), np.float32))
