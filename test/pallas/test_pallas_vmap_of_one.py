"""vmap of a pallas_call over an axis of size 1, against JAX 0.10.2: as JAX's batching
rule, the call is not batched (its batched operands squeezed, its results given a leading
axis of 1), so its Mosaic module is the unbatched kernel's (the grid as it was), even with
batched scalar prefetch (which a larger batch runs as a loop over the batch). Modules are
compared with JAX's exactly; values in TPU interpret mode with NumPy, in both libraries."""
from __future__ import annotations

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle)
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402

import mjax  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402

from test_mosaic_differential import assert_same_mosaic, tpu_mosaic  # noqa: E402

LIBS = {"jax": (jax, jpl, jpltpu), "mjax": (mjax, pl, pltpu)}
IDX, X = ((4,), np.int32), ((32, 128), np.float32)


def block_gather(J, P, T):
    """A block gather by scalar-prefetched block indices (grid of 4)."""
    def kernel(idx_ref, x_ref, o_ref):
        o_ref[...] = x_ref[...] + idx_ref[P.program_id(0)].astype(np.float32)

    def f(idx, x):
        return P.pallas_call(
            kernel,
            grid_spec=T.PrefetchScalarGridSpec(
                num_scalar_prefetch=1, grid=(4,),
                in_specs=[P.BlockSpec((8, 128), lambda i, idx_ref: (idx_ref[i], 0))],
                out_specs=P.BlockSpec((8, 128), lambda i, idx_ref: (i, 0))),
            out_shape=J.ShapeDtypeStruct((32, 128), x.dtype))(idx, x)
    return f


def doubled(J, P, T):
    """No scalar prefetch: a grid of 4 blocks."""
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0

    def f(idx, x):
        del idx
        return P.pallas_call(kernel, grid=(4,), in_specs=[P.BlockSpec((8, 128),
                                                                     lambda i: (i, 0))],
                             out_specs=P.BlockSpec((8, 128), lambda i: (i, 0)),
                             out_shape=J.ShapeDtypeStruct((32, 128), x.dtype))(x)
    return f


# case -> (kernel, vmap in_axes, operand shapes)
CASES = {
    "prefetch_and_x_batched": (block_gather, (0, 0), [((1,) + IDX[0], IDX[1]),
                                                      ((1,) + X[0], X[1])]),
    "prefetch_batched": (block_gather, (0, None), [((1,) + IDX[0], IDX[1]), X]),
    "prefetch_batched_axis_1": (block_gather, (1, 2), [((4, 1), np.int32),
                                                        ((32, 128, 1), np.float32)]),
    "no_prefetch": (doubled, (None, 0), [IDX, ((1,) + X[0], X[1])]),
}


def _f(lib, name):
    J, P, T = LIBS[lib]
    make, in_axes, _ = CASES[name]
    return J.vmap(make(J, P, T), in_axes=in_axes)


@pytest.mark.parametrize("name", CASES)
def test_module_is_the_unbatched_kernels_as_jax(name):
    shapes = CASES[name][2]
    want_config, want = tpu_mosaic(jax, _f("jax", name), shapes)
    got_config, got = tpu_mosaic(mjax, _f("mjax", name), shapes)
    assert got_config == want_config
    assert_same_mosaic(want, got)
    assert "iteration_bounds = array<i64: 4>" in got


@pytest.mark.parametrize("name", CASES)
def test_no_loop_over_the_batch(name):
    """mjax's program is one kernel call, no loop over the batch of one (JAX's)."""
    avals = [mjax.ShapeDtypeStruct(s, d) for s, d in CASES[name][2]]
    text = mjax.jit(_f("mjax", name)).trace(*avals).lower(
        lowering_platforms=("tpu",)).as_text()
    assert "stablehlo.while" not in text and text.count("tpu_custom_call") >= 1


def _args(name):
    rng = np.random.default_rng(5)
    out = []
    for shape, dtype in CASES[name][2]:
        if dtype == np.int32:
            out.append(rng.integers(0, 4, shape).astype(np.int32))
        else:
            out.append(rng.standard_normal(shape).astype(np.float32))
    return out


def _numpy(name, idx, x):
    _, in_axes, _ = CASES[name]
    idx = np.moveaxis(idx, in_axes[0], 0)[0] if in_axes[0] is not None else idx
    x = np.moveaxis(x, in_axes[1], 0)[0] if in_axes[1] is not None else x
    if CASES[name][0] is doubled:
        return (x * 2.0)[None]
    blocks = x.reshape(4, 8, 128)
    return np.concatenate([blocks[idx[i]] + np.float32(idx[i]) for i in range(4)])[None]


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("lib", LIBS)
def test_interpreted_values_match_numpy(name, lib):
    args = _args(name)
    T = LIBS[lib][2]
    with T.force_tpu_interpret_mode():
        got = np.asarray(_f(lib, name)(*args))
    np.testing.assert_allclose(got, _numpy(name, *args), rtol=1e-6)
