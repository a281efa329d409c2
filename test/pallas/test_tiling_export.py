"""pltpu.Tiling (emit_pipeline's and pltpu.BufferedRef's tiling) and
pl.pallas_export_experimental as JAX 0.10.2 defines them.

A pipeline's tiling decides how a 1-D block's buffer slots are laid out (COMPACT or none:
end to end, SPARSE_CORE: one row per slot); JAX also rounds a last partial block to it
(blocks that do not divide the ref, which mjax's pipeline refuses). The kernels' Mosaic
is compared with JAX's lowered for the TPU on this CPU (told it is a v5e), their values
in TPU interpret mode with JAX's interpreter and NumPy.

pallas_export_experimental(dynamic_shapes) is a context: with static shapes a kernel
lowers as without it; a block of symbolic shape (jax.export's shape polymorphism) is
JAX's ValueError without it, and with it JAX lowers the block with a dynamic size where
mjax refuses (NotImplementedError)."""
from __future__ import annotations

import contextlib
import re

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle)
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402
from jax._src.pallas.mosaic import tpu_info as jax_tpu_info  # noqa: E402

import mjax  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402
from mjax.experimental.pallas.core import dynamic_shapes_export_enabled  # noqa: E402

from test_mosaic_differential import (assert_same_mosaic, cpu_as_v5e,  # noqa: E402
                                      tpu_mosaic)

LIBS = {"jax": (jax, jpl, jpltpu), "mjax": (mjax, pl, pltpu)}
TILINGS = {"none": lambda T: None, "compact": lambda T: T.Tiling.COMPACT,
           "sparse_core": lambda T: T.Tiling.SPARSE_CORE}


def test_tiling_is_jax_enum():
    assert [(t.name, t.shape) for t in pltpu.Tiling] == [(t.name, t.shape)
                                                         for t in jpltpu.Tiling]


def _double(i_ref, o_ref):
    o_ref[...] = i_ref[...] * 2.0


def pipeline(J, P, T, tiling, **kw):
    """emit_pipeline(tiling=...) over 1-D blocks of 128 or 2-D blocks of (8, 128)."""
    def f(x):
        def k(x_hbm, o_hbm):
            if x.ndim == 1:
                spec, grid = P.BlockSpec((128,), lambda i: (i,)), (x.shape[0] // 128,)
            else:
                spec, grid = P.BlockSpec((8, 128), lambda i: (i, 0)), (x.shape[0] // 8,)
            T.emit_pipeline(_double, grid=grid, in_specs=[spec], out_specs=[spec],
                            tiling=tiling)(x_hbm, o_hbm)
        return P.pallas_call(k, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype),
                             in_specs=[P.BlockSpec(memory_space=P.ANY)],
                             out_specs=P.BlockSpec(memory_space=P.ANY), **kw)(x)
    return f


SHAPES = {"1d": (512,), "2d": (32, 128)}


@pytest.mark.parametrize("tiling", TILINGS)
@pytest.mark.parametrize("shape", SHAPES)
def test_pipeline_tiling_mosaic_matches_jax(tiling, shape):
    texts = {}
    for lib, (J, P, T) in LIBS.items():
        texts[lib] = tpu_mosaic(J, pipeline(J, P, T, TILINGS[tiling](T)),
                                [(SHAPES[shape], np.float32)], v5e=True)
    assert texts["mjax"][0] == texts["jax"][0]
    assert_same_mosaic(texts["jax"][1], texts["mjax"][1])
    buffer = ("memref<2x128xf32" if (shape, tiling) == ("1d", "sparse_core") else
              "memref<256xf32" if shape == "1d" else "memref<2x8x128xf32")
    assert f"memref.alloca() : {buffer}" in texts["mjax"][1]


@pytest.mark.parametrize("tiling", TILINGS)
@pytest.mark.parametrize("shape", SHAPES)
def test_pipeline_tiling_values_match_jax_and_numpy(tiling, shape):
    x = np.random.default_rng(1).standard_normal(SHAPES[shape]).astype(np.float32)
    got = mjax.jit(pipeline(mjax, pl, pltpu, TILINGS[tiling](pltpu),
                            interpret=pltpu.InterpretParams()))(x)
    with cpu_as_v5e(jax_tpu_info):
        want = jax.jit(pipeline(jax, jpl, jpltpu, TILINGS[tiling](jpltpu),
                                interpret=jpltpu.InterpretParams()))(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(got), x * 2.0)
    got = mjax.jit(pipeline(mjax, pl, pltpu, TILINGS[tiling](pltpu), interpret=True))(x)
    np.testing.assert_array_equal(np.asarray(got), x * 2.0)


def _shapes(brefs):
    return [tuple(b.window_ref.shape) for b in brefs]


@pytest.mark.parametrize("tiling", TILINGS)
def test_buffered_ref_tiling_shapes_match_jax(tiling):
    """BufferedRef.input/output(..., tiling=) and make_pipeline_allocations' buffers."""
    shapes = []
    for J, P, T in LIBS.values():
        spec, ty = P.BlockSpec((128,), lambda i: (i,)), J.ShapeDtypeStruct((512,), np.float32)
        shapes.append(_shapes([T.BufferedRef.input(spec, ty, 2, tiling=TILINGS[tiling](T)),
                               T.BufferedRef.output(spec, ty, 2, tiling=TILINGS[tiling](T))]))
    assert shapes[1] == shapes[0]


def test_pipeline_allocations_with_tiling_match_jax():
    """make_pipeline_allocations(tiling=SPARSE_CORE), allocated with run_scoped and
    passed to the pipeline: JAX's Mosaic."""
    def make(J, P, T):
        def f(x):
            def k(x_hbm, o_hbm):
                spec = P.BlockSpec((128,), lambda i: (i,))
                pipe, alloc = T.emit_pipeline_with_allocations(
                    _double, grid=(x.shape[0] // 128,), in_specs=[spec], out_specs=[spec])
                brefs = alloc(x_hbm, o_hbm, tiling=T.Tiling.SPARSE_CORE)
                P.run_scoped(lambda a: pipe(x_hbm, o_hbm, allocations=a), brefs)
            return P.pallas_call(k, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype),
                                 in_specs=[P.BlockSpec(memory_space=P.ANY)],
                                 out_specs=P.BlockSpec(memory_space=P.ANY))(x)
        return f
    texts = {lib: tpu_mosaic(J, make(J, P, T), [((512,), np.float32)], v5e=True)
             for lib, (J, P, T) in LIBS.items()}
    assert texts["mjax"][0] == texts["jax"][0]
    assert_same_mosaic(texts["jax"][1], texts["mjax"][1])
    assert "memref<2x128xf32" in texts["mjax"][1]


def test_buffered_ref_tiling_type_checked():
    with pytest.raises(TypeError, match="pltpu.Tiling"):
        pltpu.BufferedRef.input(pl.BlockSpec((128,), lambda i: (i,)), np.float32, 2,
                                tiling=(8, 128))


# ---- pl.pallas_export_experimental --------------------------------------------------------
def _add_one(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1.0


def _kernel(J, P):
    def f(x):
        return P.pallas_call(_add_one, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype))(x)
    return f


def _export(J, P, shape, dynamic):
    ctx = P.pallas_export_experimental(dynamic) if dynamic is not None else \
        contextlib.nullcontext()
    with ctx:
        text = J.export.export(J.jit(_kernel(J, P)), platforms=["tpu"])(
            J.ShapeDtypeStruct(shape, np.float32)).mlir_module()
    # (source locations aside: the calls come from different lines)
    return re.sub(r" loc\(#loc\d*\)", "", "\n".join(
        line for line in text.splitlines() if not line.startswith("#loc")))


@pytest.mark.parametrize("dynamic", [None, False, True])
def test_export_static_shapes_unchanged(dynamic):
    """With static shapes the context changes nothing: each library's module is the one
    it exports without it, and mjax's Mosaic is JAX's."""
    for J, P, _ in LIBS.values():
        assert _export(J, P, (16, 128), dynamic) == _export(J, P, (16, 128), None)
    want = tpu_mosaic(jax, _kernel(jax, jpl), [((16, 128), np.float32)])
    with pl.pallas_export_experimental(dynamic_shapes=bool(dynamic)):
        got = tpu_mosaic(mjax, _kernel(mjax, pl), [((16, 128), np.float32)])
    assert got[0] == want[0]
    assert_same_mosaic(want[1], got[1])


def test_export_context_restores_the_mode():
    assert not dynamic_shapes_export_enabled()
    with pl.pallas_export_experimental(dynamic_shapes=True):
        assert dynamic_shapes_export_enabled()
        with pl.pallas_export_experimental(dynamic_shapes=False):
            assert not dynamic_shapes_export_enabled()
        assert dynamic_shapes_export_enabled()
    assert not dynamic_shapes_export_enabled()


def test_symbolic_block_refused_as_jax_without_the_context():
    errors = []
    for J, P, _ in LIBS.values():
        with pytest.raises(ValueError) as err:
            _export(J, P, J.export.symbolic_shape("n, 128"), None)
        errors.append(str(err.value).splitlines()[-1] if J is jax else str(err.value))
    assert errors[1] == errors[0]
    assert "pallas_export_experimental(dynamic_shapes=True)" in errors[1]


def test_symbolic_block_with_the_context():
    """JAX lowers the dynamically shaped block; mjax refuses it, naming what is missing."""
    text = _export(jax, jpl, jax.export.symbolic_shape("n, 128"), True)
    assert "tpu_custom_call" in text
    with pytest.raises(NotImplementedError, match="dynamically shaped block"):
        _export(mjax, pl, mjax.export.symbolic_shape("n, 128"), True)
