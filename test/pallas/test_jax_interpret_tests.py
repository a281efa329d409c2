"""JAX 0.10.2's own TPU interpret-mode tests (tests/pallas/tpu_pallas_interpret_test.py
and tpu_pallas_interpret_distributed_test.py) run on mjax: each kernel
(jax_interpret_kernels.py, written once for both libraries) runs in both libraries'
TPU interpret mode (pltpu.InterpretParams) on the CPU, its values compared exactly with
JAX's and with NumPy's (the check JAX's test makes), or both libraries raise.

Not ported here: the distributed file's ring kernels (right permute, all-gather,
all-reduce, reduce-scatter with and without emit_pipeline, the race-free run of
test_race_detection, test_that_barrier_does_not_hang_after_exception): they are
test_remote_dma_interpret.py's. Out of scope: race detection (detect_races=True: mjax
raises NotImplementedError, test_interpret_races.py), what only JAX's private
interpreter state shows (the store-callback count of test_correct_number_of_stores, the
grid point recorder's order, `is_range_out_of_bounds_for_shape`); their kernels' values
are checked here with race detection off."""
from __future__ import annotations

import os

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle)
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402

import mjax  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402
from mjax.experimental.pallas.lockstep import PallasDeadlockError  # noqa: E402

import jax_interpret_kernels as K  # noqa: E402
from cpu_oracle import on_the_host_cpu  # noqa: E402
from test_multicore_mosaic import interpreting_as_v5p  # noqa: E402

LIBS = {"jax": (jax, jpl, jpltpu), "mjax": (mjax, pl, pltpu)}
# (the full tier, MJAX_TEST_TIER=full, also runs JAX's large sizes)
FULL = os.environ.get("MJAX_TEST_TIER") == "full"
SLOW = pytest.mark.skipif(not FULL, reason="full tier (MJAX_TEST_TIER=full): a large kernel")


def _leaves(out):
    return [np.asarray(o) for o in (out if isinstance(out, (tuple, list)) else (out,))]


def _call(lib, name, variant, ctx):
    J, P, T = LIBS[lib]
    f, args = getattr(K, name)(J, P, T, *variant)
    with ctx(J):
        return _leaves(f(*args)), args


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_CTX = {"plain": lambda J: _null(), "v5p": interpreting_as_v5p, "v6e": K.on_v6e}


@on_the_host_cpu
def _jax(name, variant, ctx):
    """JAX's values (on the chip: in a CPU-only child process, test/cpu_oracle.py)."""
    return _call("jax", name, variant, _CTX[ctx])[0]


def _check(name, variant, numpy, ctx="plain"):
    got, args = _call("mjax", name, variant, _CTX[ctx])
    want = _jax(name, variant, ctx)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if g.dtype.kind == "V":         # (bfloat16: NumPy compares NaNs as float32)
            g, w = g.astype(np.float32), w.astype(np.float32)
        np.testing.assert_array_equal(g, w)
    numpy(got, *args)


def _raises(name, variant, jax_exc, mjax_exc, match, ctx="plain"):
    """Both libraries raise (JAX's run-time errors are its JaxRuntimeError)."""
    with pytest.raises(jax_exc, match=match):
        _call("jax", name, variant, _CTX[ctx])
    jpltpu.reset_tpu_interpret_mode_state()
    with pytest.raises(mjax_exc, match=match):
        _call("mjax", name, variant, _CTX[ctx])


def _eq(want):
    def check(got, *args):
        for g, w in zip(got, _leaves(want(*args)), strict=True):
            np.testing.assert_array_equal(g, w)
    return check


def _nan_after(rows):
    def check(got, *args):
        np.testing.assert_array_equal(got[0][:rows], 0.0)
        assert np.isnan(got[0][rows:]).all()
    return check


def _blocks(got, want):
    """JAX's check of a (32, 512) output: one value per (8, 128) block."""
    def check(out, *args):
        np.testing.assert_array_equal(out[0][::8, ::128], np.array(want, np.float32))
        np.testing.assert_array_equal(out[0], np.repeat(np.repeat(
            np.array(want, np.float32), 8, 0), 128, 1))
    return check


# ---- tpu_pallas_interpret_test.py: values ----------------------------------------------
def _aliasing_expected(*_):
    blocks = np.zeros((4, 4))
    t = 0
    for i in range(4):
        for j in range(4):
            blocks[j, i] = blocks[i, j] + t
            t += 1
    return np.repeat(np.repeat(blocks.astype(np.float32), 8, 0), 128, 1)


def _uninit(fill):
    def check(out):
        if fill == "nan":
            assert np.isnan(out[0].astype(np.float32)).all()
            np.testing.assert_array_equal(out[1], 32767)
            assert np.isnan(out[2]).all()
        else:
            for o in out:
                np.testing.assert_array_equal(o.astype(np.float32), 0)
    return lambda out: check(out)


def _core_map_expected(num_cores):
    def want(x):
        return (x.reshape(num_cores, -1, 128) + 1 +
                np.arange(num_cores, dtype=np.int32)[:, None, None]).reshape(x.shape)
    return _eq(want)


def _one_at(shape, where):
    out = np.zeros(shape, np.float32)
    out[where] = 1.0
    return out


_ORDER = [[8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0], [0.0, 1.0, 2.0, 3.0],
          [4.0, 5.0, 6.0, 7.0]]
_TWO = [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]] * 2
_FOUR = [[0.0, 1.0, 2.0, 3.0]] * 4

VALUES = [
    # (JAX test, kernel, variant, NumPy's check, context, full tier only)
    ("test_matmul_example", "matmul", (256,),
     lambda o, x, y: np.testing.assert_allclose(o[0], x @ y, atol=1e-3), "plain", False),
    ("test_matmul_example", "matmul", (1024,),
     lambda o, x, y: np.testing.assert_allclose(o[0], x @ y, atol=1e-3), "plain", True),
    ("test_out_of_bounds_block_spec", "oob_block_spec", ("uninitialized", 1, 0),
     _nan_after(12), "plain", False),
    ("test_inputs_and_outputs_not_evenly_divisible_by_block_shape", "uneven_blocks", (),
     _eq(lambda x: x + 1.0), "plain", True),
    ("test_out_of_bounds_read_index", "oob_read_index", ("raise", (2, 5, 9, 15, 17)),
     _eq(lambda s, x: np.array([9 + 15 + 17], np.int32)), "plain", False),
    ("test_out_of_bounds_read_index", "oob_read_index",
     ("uninitialized", (2, 5, 9, 15, 17)),
     _eq(lambda s, x: np.array([9 + 15 + 17], np.int32)), "plain", False),
    ("test_out_of_bounds_read_index", "oob_read_index",
     ("uninitialized", (2, 6, 9, 15, 17)),
     lambda o, s, x: np.testing.assert_array_less(o[0], 0), "plain", False),
    ("test_masked_store", "masked_store", (False,),
     _eq(lambda i, j, x, m: _one_at((16, 256), (8, 128))), "plain", False),
    ("test_scalar_prefetch_example", "scalar_prefetch", (),
     _eq(lambda x, starts: x[128:256, 256:384]), "plain", False),
    ("test_dynamic_grid_and_aliasing", "dynamic_grid_aliasing", (),
     _eq(lambda s1, s2, x: x + 1.0), "plain", False),
    ("test_aliasing", "aliasing", (), _eq(_aliasing_expected), "plain", False),
    ("test_uninitialized_memory", "uninitialized_memory", ("nan",),
     _uninit("nan"), "plain", False),
    ("test_uninitialized_memory", "uninitialized_memory", ("zero",),
     _uninit("zero"), "plain", False),
    ("test_correct_number_of_stores", "number_of_stores", (),
     _eq(lambda x, s: np.repeat(np.array([[1.0], [5.0]], np.float32), 8, 0)
         .repeat(256, 1)), "plain", False),
    ("test_randomization_of_parallel_dimensions", "parallel_order",
     (("parallel", "arbitrary"),), _blocks(None, _ORDER), "plain", False),
    *[("test_core_map", "core_map", (n, forced), _core_map_expected(n), "v5p", False)
      for n in (1, 2, 4) for forced in (False, True)],
    ("test_grid_names", "grid_names", (),
     _eq(lambda x: np.repeat(np.repeat(np.array([[0, 1, 2, 3], [10, 11, 12, 13]],
                                                np.float32), 8, 0), 128, 1)),
     "plain", False),
    *[("test_allocate_shared_buffer_in_core_map_with_race", "shared_buffer_race",
       (slow, space, n), lambda o, x, y: np.testing.assert_array_equal(o[0], y @ y.T),
       "v5p", n > 256)
      for slow in (0, 1) for space in ("hbm", "any") for n in (256, 1024)],
    ("test_two_cores_along_parallel_dimension_with_race", "two_cores_with_race",
     (2, False), _eq(lambda x: 2 * x), "plain", False),
    *[("test_two_cores_along_parallel_dimension_with_race", "two_cores_with_race",
       (n, True), _eq(lambda x: 2 * x), "plain", False) for n in (1, 2)],
    ("test_two_cores_along_parallel_dimension_no_race", "two_cores_no_race", (),
     _eq(lambda x: 2 * x), "plain", False),
    *[("test_parallel_dimension_and_multiple_cores", "parallel_and_cores", (n,),
       _blocks(None, _ORDER if n == 1 else _TWO if n < 4 else _FOUR), "plain", False)
      for n in range(1, 7)],
    *[("test_run_scoped_with_memory_space_is_none", "run_scoped_no_space", (spec,),
       _eq(lambda: np.zeros((8, 128), np.float32)), "plain", False)
      for spec in ("none", "no_block_spec")],
    *[("test_store_to_half_of_hbm_output_buffer", "store_to_half", (space,),
       _eq(lambda x: np.concatenate([x[:8], x[:8]])), "plain", False)
      for space in ("hbm", "any")],
    ("test_pallas_call_compiles_with_has_side_effects_true", "side_effects", (),
     _eq(lambda x: x + 1.0), "plain", False),
]


# What mjax does not match yet: {(kernel, variant): why}
NOT_YET = {
    ("oob_block_spec", ("uninitialized", 1, 0)):
        "a block index past the end reads the last block (clamped), not NaN",
    ("oob_read_index", ("uninitialized", (2, 6, 9, 15, 17))):
        "an out-of-bounds scalar read is clamped, not the uninitialized value"}


def _params(cases):
    out = []
    for test, name, variant, check, ctx, slow in cases:
        marks = [SLOW] if slow else []
        why = NOT_YET.get((name, variant))
        if why:
            marks.append(pytest.mark.xfail(raises=AssertionError, strict=True, reason=why))
        out.append(pytest.param(name, variant, check, ctx,
                                id=f"{test}-{name}{list(variant)}", marks=marks))
    return out


@pytest.mark.parametrize("name,variant,check,ctx", _params(VALUES))
def test_values_match_jax_and_numpy(name, variant, check, ctx):
    _check(name, variant, check, ctx)
