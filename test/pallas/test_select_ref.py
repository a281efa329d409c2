"""pl.select_ref against JAX 0.10.2 (its tpu_pallas_test test_select_ref,
test_select_ref_smem_index, test_select_ref_nested): a DMA whose source or semaphore is a
selection prints as JAX's Mosaic (the DMA repeated in a chain of `scf.if`s on
`idx == 0`, `idx - 1` in each else) and interprets as NumPy in both interpret modes (JAX's
TPU interpreter cannot run these kernels: it has no rule for SelectTransform). Loads and
stores of a selection are refused.

Each prints exactly as JAX's: the DMA's literal operands (the semaphore indices of
`sem.at[0]`/`sem.at[1]`, the nested selections' index 0) are made before the chain of
`scf.if`s, once per DMA, in the DMA's operand order.
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

N = 4


def kernels(J, pl, pltpu, **call) -> dict:
    jnp = J.numpy
    HBM = pl.BlockSpec(memory_space=pltpu.HBM)
    SMEM = pl.BlockSpec(memory_space=pltpu.SMEM)

    def select_kernel(*hbm_refs):            # the source and the semaphore selected
        *xs, y = hbm_refs
        def body(sem):
            @pl.loop(0, N)
            def _(i):
                pltpu.async_copy(pl.select_ref(i, *xs), y.at[pl.ds(8 * i, 8)],
                                 pl.select_ref(i, sem.at[0], sem.at[1])).wait()
        pl.run_scoped(body, pltpu.SemaphoreType.DMA(2))

    def smem_kernel(idx_ref, x0, x1, y):      # an index loaded from SMEM; a view option
        def body(sem):
            x = pl.select_ref(idx_ref[...], x0.at[0:8], x1)
            pltpu.async_copy(x, y, sem).wait()
        pl.run_scoped(body, pltpu.SemaphoreType.DMA)

    def nested_kernel(*hbm_refs):             # selections of selections, then a reshape
        *xs, y = hbm_refs
        def body(sem):
            @pl.loop(0, N)
            def _(i):
                nested = (pl.select_ref(0, r.at[:, :128], r.at[:, 128:]) for r in xs)
                pltpu.async_copy(pl.select_ref(i, *nested).reshape(8, 128),
                                 y.at[pl.ds(8 * i, 8), :128], sem.at[0]).wait()
        pl.run_scoped(body, pltpu.SemaphoreType.DMA(2))

    def call_(kernel, in_specs, out_shape):
        return pl.pallas_call(kernel, in_specs=in_specs, out_specs=HBM,
                              out_shape=J.ShapeDtypeStruct(*out_shape), **call)

    return {
        "select": (call_(select_kernel, [HBM] * N, ((8 * N, 128), jnp.int32)),
                   [((8, 128), np.int32)] * N),
        "smem_index": (call_(smem_kernel, [SMEM, HBM, HBM], ((8, 128), jnp.float32)),
                       [((), np.int32), ((16, 128), np.float32), ((8, 128), np.float32)]),
        "nested": (call_(nested_kernel, [HBM] * N, ((8 * N, 256), jnp.int32)),
                   [((8, 256), np.int32)] * N),
    }


JAX_KERNELS = kernels(jax, jpl, jpltpu)
MJAX_KERNELS = kernels(mjax, pl, pltpu)


@pytest.mark.parametrize("name", sorted(MJAX_KERNELS))
def test_select_ref_module_matches_jax(name):
    f, shapes = JAX_KERNELS[name]
    want_config, want = tpu_mosaic(jax, f, shapes)
    g, _ = MJAX_KERNELS[name]
    got_config, got = tpu_mosaic(mjax, g, shapes)
    assert got_config == want_config
    assert got.count("tpu.enqueue_dma") == want.count("tpu.enqueue_dma") > 1
    assert_same_mosaic(want, got)


def _inputs(name, idx=1):
    if name == "select":
        xs = [np.arange(1024 * i, 1024 * (i + 1), dtype=np.int32).reshape(8, 128)
              for i in range(N)]
        return xs, lambda y: np.testing.assert_array_equal(y, np.concatenate(xs))
    if name == "smem_index":
        x0 = np.arange(16 * 128, dtype=np.float32).reshape(16, 128)
        x1 = -np.arange(8 * 128, dtype=np.float32).reshape(8, 128) - 1
        want = x0[:8] if idx == 0 else x1      # (any index but 0: the else branch)
        return [np.int32(idx), x0, x1], lambda y: np.testing.assert_array_equal(y, want)
    x = np.arange(N * 8 * 256, dtype=np.int32).reshape(N * 8, 256)
    return np.split(x, N), lambda y: np.testing.assert_array_equal(y[:, :128], x[:, :128])


CASES = [("select", 1), ("nested", 1), ("smem_index", 0), ("smem_index", 1),
         ("smem_index", 3), ("smem_index", -1)]


@pytest.mark.parametrize("name,idx", CASES)
@pytest.mark.parametrize("interpret", ["tpu_interpret_mode", "interpret=True"])
def test_select_ref_values_match_numpy(name, idx, interpret):
    args, check = _inputs(name, idx)
    if interpret == "interpret=True":
        check(np.asarray(kernels(mjax, pl, pltpu, interpret=True)[name][0](*args)))
    else:
        with pltpu.force_tpu_interpret_mode():
            check(np.asarray(MJAX_KERNELS[name][0](*args)))


@pytest.mark.parametrize("name,idx", CASES)
def test_compiled_select_ref_matches_jax(name, idx):
    assert_compiled_as_jax(JAX_KERNELS[name][0], MJAX_KERNELS[name][0], _inputs(name, idx)[0])


def test_jax_tpu_interpreter_cannot_run_select_ref():
    """Why the values are checked against NumPy only: JAX's TPU interpreter refuses."""
    f, shapes = kernels(jax, jpl, jpltpu, interpret=jpltpu.InterpretParams())["select"]
    args, _ = _inputs("select")
    with pytest.raises(NotImplementedError, match="SelectTransform"):
        f(*args)


def _call(kernel, *shapes, **kw):
    HBM = pl.BlockSpec(memory_space=pltpu.HBM)
    return pl.pallas_call(kernel, in_specs=[HBM] * len(shapes), out_specs=HBM,
                          out_shape=mjax.ShapeDtypeStruct((8, 128), np.float32),
                          interpret=True, **kw)(*[np.zeros(s, np.float32) for s in shapes])


def test_select_ref_errors():
    """A selection is for DMA ends and semaphores only; it needs two refs of one type."""
    def load(a, b, o):
        o[...] = pl.select_ref(0, a, b)[...]

    def store(a, b, o):
        pl.select_ref(0, a, b)[...] = o[...]

    def signal(a, b, o):
        def body(sems):
            pl.semaphore_signal(pl.select_ref(0, sems.at[0], sems.at[1]))
        pl.run_scoped(body, pltpu.SemaphoreType.REGULAR((2,)))

    for kernel, what in ((load, "loading"), (store, "storing"),
                         (signal, "semaphore_signal")):
        with pytest.raises(NotImplementedError, match=f"{what} of a selected ref"):
            _call(kernel, (8, 128), (8, 128))

    def one(a, o):
        pl.select_ref(0, a)

    with pytest.raises(ValueError, match="At least two refs are required"):
        _call(one, (8, 128))

    def mixed(a, b, o):
        pl.select_ref(0, a, b)

    with pytest.raises(TypeError, match="Cannot select from Refs of different types"):
        _call(mixed, (8, 128), (16, 128))
