"""JAX's race detection in TPU interpret mode (pltpu.InterpretParams(detect_races=True))
is not built in mjax: its interpreter runs a DMA at its start and the devices' and
cores' instances in lockstep, keeping no record of concurrent accesses. A kernel traced
with detect_races=True (given or forced) is refused with a NotImplementedError naming
it, where JAX's interpreter records the race (its private `races` state; JAX exposes
no public reader)."""
from __future__ import annotations

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle)
from jax._src.pallas.mosaic.interpret import (  # noqa: E402
    interpret_pallas_call as jax_interpret)
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402

import mjax  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402


def _racy(J, P, T, params):
    """A read of the DMA's destination before its wait (JAX's test_race_detection)."""
    def kernel(x_ref, o_ref, t_ref, sem):
        copy = T.make_async_copy(x_ref, t_ref, sem)
        copy.start()
        o_ref[...] = t_ref[...] + 1.0
        copy.wait()
    x = np.zeros((8, 128), np.float32)
    return P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype),
                         in_specs=[P.BlockSpec(memory_space=P.ANY)],
                         scratch_shapes=[T.VMEM(x.shape, x.dtype), T.SemaphoreType.DMA],
                         interpret=params), x


def test_jax_records_the_race():
    f, x = _racy(jax, jpl, jpltpu, jpltpu.InterpretParams(detect_races=True))
    f(x).block_until_ready()
    assert jax_interpret.races.races_found


def test_detect_races_refused():
    f, x = _racy(mjax, pl, pltpu, pltpu.InterpretParams(detect_races=True))
    with pytest.raises(NotImplementedError, match=r"detect_races=True\) is not supported"):
        f(x)
    g, _ = _racy(mjax, pl, pltpu, None)
    with pltpu.force_tpu_interpret_mode(pltpu.InterpretParams(detect_races=True)), \
            pytest.raises(NotImplementedError, match="detect_races"):
        mjax.jit(g)(x)
    # (without it the kernel runs: the DMA lands at its start)
    h, _ = _racy(mjax, pl, pltpu, pltpu.InterpretParams())
    np.testing.assert_array_equal(np.asarray(h(x)), x + 1.0)
