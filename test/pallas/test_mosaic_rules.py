"""The MOSAIC rule table's coverage and the errors of --jaxpr-pallas-to-mosaic: every op
of the dialect has a Mosaic rule or a stated reason, and a kernel using an op without a
rule fails at the op, naming it and saying why (no silent fallback)."""
from __future__ import annotations

import numpy as np
import pytest
from jaxlib.mlir import ir

import mjax
import mjax.numpy as jnp
from mjax.dialect.context import context
from mjax.dialect.core import OPS
from mjax.experimental import pallas as pl
from mjax.passes import PassError, run_pipeline
from mjax.passes.jaxpr_pallas_to_mosaic import JaxprPallasToMosaicPass
from mjax.passes.mosaic.table import MOSAIC


def test_every_op_has_a_mosaic_rule_or_a_reason():
    undecided = sorted(cls.__name__ for cls in set(OPS.values())
                       if cls is not None and MOSAIC.get(cls) is None
                       and MOSAIC.reason(cls) is None)
    assert not undecided, f"ops with neither a Mosaic rule nor a reason: {undecided}"


def lower(f, *avals):
    text = mjax.jit(f).trace(*avals).as_text(debug_info=True)     # (with user lines)
    with context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        JaxprPallasToMosaicPass().run(module)
        return str(module)


def test_op_without_a_rule_names_the_op_and_the_reason():
    def kernel(x_ref, o_ref):
        o_ref[...] = jnp.cumsum(x_ref[...], axis=1)

    def f(x):
        return pl.pallas_call(kernel, out_shape=mjax.ShapeDtypeStruct(x.shape, x.dtype))(x)
    with pytest.raises(PassError, match=r"no Mosaic lowering rule for 'jaxpr.cumsum' in a "
                                        r"Pallas TPU kernel: cumulative reductions have no "
                                        r"Mosaic lowering \(interpret=True runs this "
                                        r"kernel\)") as e:
        lower(f, mjax.ShapeDtypeStruct((8, 128), np.float32))
    assert "test_mosaic_rules.py" in str(e.value)      # the user's line


def test_interpret_true_is_left_to_the_interpreter():
    def kernel(x_ref, o_ref):
        o_ref[...] = jnp.cumsum(x_ref[...], axis=1)

    def f(x):
        return pl.pallas_call(kernel, out_shape=mjax.ShapeDtypeStruct(x.shape, x.dtype),
                              interpret=True)(x)
    text = lower(f, mjax.ShapeDtypeStruct((8, 128), np.float32))
    assert "jaxpr.pallas_call" in text and "tpu_custom_call" not in text


def test_bad_block_shape_is_an_error_at_the_call():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    def f(x):
        return pl.pallas_call(kernel, grid=(4,),
                              in_specs=[pl.BlockSpec((4, 128), lambda i: (i, 0))],
                              out_specs=pl.BlockSpec((4, 128), lambda i: (i, 0)),
                              out_shape=mjax.ShapeDtypeStruct(x.shape, x.dtype))(x)
    with pytest.raises(PassError, match=r"divisible by 8 and 128"):
        lower(f, mjax.ShapeDtypeStruct((16, 128), np.float32))


def test_serde_version_on_chip_follows_jax():
    import datetime
    import time
    from mjax.passes.jaxpr_pallas_to_mosaic import serde_version_on_chip

    def built(y, m, d):
        stamp = int(time.mktime(datetime.date(y, m, d).timetuple()))
        return f"PJRT C API\nTFRT TPU v5 lite\nBuilt on Jan 1 2026 00:00:00 ({stamp}) cl/1"
    assert serde_version_on_chip(built(2026, 1, 10)) == 11
    assert serde_version_on_chip(built(2026, 5, 20)) == 13
    assert serde_version_on_chip(built(2026, 11, 1)) == 0       # the newest
    assert serde_version_on_chip("PJRT C API\nTFRT TPU\nno date") == 11
    assert serde_version_on_chip("cpu") == 0


def vmapped_kernel_mosaic(tmp_path) -> str:
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0

    def f(x):
        return pl.pallas_call(kernel, grid=(2,),
                              in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
                              out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
                              out_shape=mjax.ShapeDtypeStruct(x.shape, x.dtype))(x)
    text = mjax.jit(mjax.vmap(f)).trace(
        mjax.ShapeDtypeStruct((3, 16, 128), np.float32)).as_text()
    with context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        run_pipeline(module, "jaxpr-expand-transforms,jaxpr-inline")
        JaxprPallasToMosaicPass(dump_dir=str(tmp_path)).run(module)
        assert "stablehlo.custom_call @tpu_custom_call" in str(module)   # (the batched
        # kernel; the unbatched original is left dead, for symbol-dce)
    (kernel,) = tmp_path.iterdir()
    return kernel.read_text()


def test_vmap_of_a_kernel_lowers(tmp_path):
    assert "iteration_bounds = array<i64: 3, 2>" in vmapped_kernel_mosaic(tmp_path)


def test_vmap_of_a_kernel_has_a_parallel_batch_axis_as_in_jax(tmp_path):
    assert ("dimension_semantics = [#tpu.dimension_semantics<parallel>, "
            "#tpu.dimension_semantics<arbitrary>]") in vmapped_kernel_mosaic(tmp_path)
