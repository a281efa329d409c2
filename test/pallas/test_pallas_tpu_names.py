"""Pallas TPU names JAX 0.10.2 has that mjax added late: pltpu.run_on_first_core,
pl.empty_ref_like, pl.get_global and the explicit MXU ops. Modules are compared with
JAX's lowered for the TPU on this CPU (told it is a v5e), values with JAX's TPU
interpreter and NumPy, refusals with JAX's errors."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle)
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402
from jax._src.pallas.mosaic import tpu_info as jax_tpu_info  # noqa: E402

import mjax  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402

from jaxlib.mlir import ir  # noqa: E402
from mjax.dialect.context import context  # noqa: E402
from mjax.experimental.pallas import tpu_info as mjax_tpu_info  # noqa: E402

from test_mosaic_differential import (ON_TPU, assert_same_mosaic, cpu_as_v5e,  # noqa: E402
                                      custom_calls, decode, jax_tpu_text)

LIBS = {"jax": (jax, jpl, jpltpu), "mjax": (mjax, pl, pltpu)}
SHAPE = (16, 128)


def _x():
    return np.random.default_rng(7).standard_normal(SHAPE).astype(np.float32)


# -- pltpu.run_on_first_core ---------------------------------------------------------

def first_core(J, P, T, **kw):
    """A core_map whose body runs on the first core of its axis (a one-core mesh: JAX
    calls the function directly), returning the decorated function's result."""
    mesh = T.create_tensorcore_mesh("core", num_cores=1)
    seen = []

    def f(x):
        x_ref, o_ref = J.new_ref(x), J.new_ref(J.lax.empty(x.shape, x.dtype))

        @P.core_map(mesh, scratch_shapes=[T.VMEM(x.shape, x.dtype)], **kw)
        def _(v):
            @T.run_on_first_core("core")
            def result():
                T.sync_copy(x_ref, v)
                v[...] = v[...] * 2.0 + 1.0
                T.sync_copy(v, o_ref)
                return 5
            seen.append(result)
        return o_ref[...]
    return f, seen


def test_run_on_first_core_mosaic_matches_jax():
    got = []
    for lib in ("jax", "mjax"):
        J, P, T = LIBS[lib]
        f, seen = first_core(J, P, T)
        avals = [J.ShapeDtypeStruct(SHAPE, np.float32)]
        info = jax_tpu_info if J is jax else mjax_tpu_info
        with cpu_as_v5e(info):
            got.append(_kernel_of(J, f, avals))
        assert seen and set(seen) == {5}   # (one core: the function's own result)
    (jconfig, jbody), (mconfig, mbody) = got
    assert mconfig == jconfig
    assert_same_mosaic(jbody, mbody)


def _kernel_of(J, f, avals):
    """(attributes, Mosaic) of the one tpu_custom_call of f lowered for the TPU."""
    text = (jax_tpu_text(f, avals) if J is jax else
            mjax.jit(f).trace(*avals).lower(lowering_platforms=("tpu",)).as_text())
    with context(), ir.Location.unknown():
        module = ir.Module.parse(text)          # (held: its ops die with it)
        calls = [c for c in custom_calls(module)
                 if "tpu_custom_call" in str(c.attributes["call_target_name"])]
        assert len(calls) == 1
        return decode(calls[0])


def test_run_on_first_core_values_match_jax_and_numpy():
    """TPU interpret mode in both libraries (compiled on the chip), and mjax's
    interpret=True, against NumPy."""
    x = _x()
    mode = (lambda T: contextlib.nullcontext()) if ON_TPU else (
        lambda T: T.force_tpu_interpret_mode())
    with mode(pltpu):
        got = np.asarray(mjax.jit(first_core(mjax, pl, pltpu)[0])(x))
    with mode(jpltpu), cpu_as_v5e(jax_tpu_info):
        want = np.asarray(jax.jit(first_core(jax, jpl, jpltpu)[0])(x))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, x * 2.0 + 1.0, rtol=1e-6)
    plain = mjax.jit(first_core(mjax, pl, pltpu, interpret=True)[0])(x)
    np.testing.assert_allclose(np.asarray(plain), x * 2.0 + 1.0, rtol=1e-6)


def test_run_on_first_core_outside_a_mesh_refused_as_jax():
    """An axis name no mesh binds: JAX's NameError, from lax.axis_size."""
    with pytest.raises(NameError) as want:
        jpltpu.run_on_first_core("nope")
    with pytest.raises(NameError) as got:
        pltpu.run_on_first_core("nope")
    assert "nope" in str(want.value) and "nope" in str(got.value)
