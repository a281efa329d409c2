"""Kernel forms of JAX 0.10.2's own Pallas TPU tests (mosaic_corpus_forms.py): mjax's
Mosaic module against JAX's export for the TPU (on the CPU, names and locations aside, as
test_mosaic_differential.py compares them), the interpreted values against JAX's TPU
interpret mode and NumPy, and JAX's refusals."""
from __future__ import annotations

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle)
import jax.experimental.pallas.tpu  # noqa: E402,F401

import mjax  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402
from mjax.dialect.context import context  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402

from mosaic_corpus_forms import bitcast_vmap_axis1, forms, refused  # noqa: E402
from test_mosaic_differential import (_cpu_as_v5e, _diff, custom_calls, decode,  # noqa: E402
                                      jax_tpu_text, normalize)

JAX_FORMS, MJAX_FORMS = forms(jax, jpl, jpltpu), forms(mjax, pl, pltpu)
JAX_REFUSED, MJAX_REFUSED = refused(jax, jpl, jpltpu), refused(mjax, pl, pltpu)


def _decoded(text: str):
    with context(), ir.Location.unknown():
        module = ir.Module.parse(text)          # (held: its ops die with it)
        (call,) = custom_calls(module)
        config, body = decode(call)
        return str(call.attributes["kernel_name"]), config, normalize(body)


def _mjax_text(f, shapes) -> str:
    avals = [mjax.ShapeDtypeStruct(s, d) for s, d in shapes]
    return mjax.jit(f).trace(*avals).lower(lowering_platforms=("tpu",)).as_text()


def _args(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, s).astype(d) if np.dtype(d).kind == "i"
            else rng.standard_normal(s).astype(d) for s, d in shapes]


@pytest.mark.parametrize("name", sorted(JAX_FORMS))
def test_mosaic_module_matches_jax(name):
    f, shapes = JAX_FORMS[name]
    with _cpu_as_v5e():        # (JAX checks rank-1 blocks against the chip's tiling)
        want = _decoded(jax_tpu_text(f, [jax.ShapeDtypeStruct(s, d) for s, d in shapes]))
    got = _decoded(_mjax_text(*MJAX_FORMS[name]))
    assert got[:2] == want[:2]
    assert got[2] == want[2], _diff(want[2], got[2])


def _gather_indices(name, shapes):
    """In-range indices along the gathered axis (negative ones too where jnp wraps them;
    the chip answers out-of-range ones as it likes)."""
    (x_shape, _), (i_shape, _) = shapes
    axis = -2 if "axis-2" in name else -1
    n = x_shape[axis]
    rng = np.random.default_rng(1)
    low = 0 if "promise" in name else -n
    return rng.integers(low, n, i_shape).astype(np.int32), axis


@pytest.mark.parametrize("name", sorted(n for n in JAX_FORMS if n.startswith("take_")))
def test_gathers_interpreted_values(name):
    """take_along_axis in both libraries' TPU interpret modes: NumPy's values."""
    _, shapes = JAX_FORMS[name]
    x = _args(shapes)[0]
    if name == "take_along_axis_f32":
        i = np.random.default_rng(1).integers(0, 128, (8, 128)).astype(np.int32)
        want = np.take_along_axis(x, 127 - i, axis=1) * 2.0
    else:
        i, axis = _gather_indices(name, shapes)
        want = np.take_along_axis(x, np.where(i < 0, i + x.shape[axis], i), axis=axis)
    with jpltpu.force_tpu_interpret_mode():
        theirs = np.asarray(JAX_FORMS[name][0](x, i))
    with pltpu.force_tpu_interpret_mode():
        ours = np.asarray(MJAX_FORMS[name][0](x, i))
    np.testing.assert_array_equal(theirs, want)
    np.testing.assert_array_equal(ours, want)


@pytest.mark.parametrize("name", sorted(JAX_REFUSED))
def test_gathers_refused_as_in_jax(name):
    """The gathers JAX's Mosaic lowering refuses: mjax's refuses them with JAX's
    message (a NotImplementedError at the kernel's line), and runs them interpreted."""
    f, shapes, message = JAX_REFUSED[name]
    with pytest.raises(Exception, match=message):
        jax_tpu_text(f, [jax.ShapeDtypeStruct(s, d) for s, d in shapes])
    with pytest.raises(NotImplementedError, match=message):
        _mjax_text(*MJAX_REFUSED[name][:2])
    x, i = _args(shapes)
    i = np.abs(i) % 2              # (in range for each form's axis)
    with jpltpu.force_tpu_interpret_mode():
        want = np.asarray(f(x, i))
    with pltpu.force_tpu_interpret_mode():
        np.testing.assert_array_equal(np.asarray(MJAX_REFUSED[name][0](x, i)), want)


def test_empty_ref_interpreted_values():
    """jax.empty_ref in VMEM and SMEM: JAX's interpret=True, mjax's and mjax's TPU
    interpret mode give NumPy's values (each buffer is written before it is read). JAX's
    TPU interpret mode cannot run these kernels ("No state discharge rule implemented
    for primitive: io_callback")."""
    x8 = np.arange(8, dtype=np.int32)
    x = np.random.default_rng(0).standard_normal((16, 128)).astype(np.float32)
    cases = [("empty_ref", (), np.full((8, 128), 4.0, np.float32)),
             ("empty_ref_columns", (x8,), x8[:, None] + np.arange(4)[None, :]),
             ("empty_ref_smem", (x,), x * np.repeat(np.float32([3, 6]), 8)[:, None])]
    for name, args, want in cases:
        np.testing.assert_array_equal(
            np.asarray(JAX_FORMS[name][0](*args, interpret=True)), want)
        np.testing.assert_array_equal(
            np.asarray(MJAX_FORMS[name][0](*args, interpret=True)), want)
        with pltpu.force_tpu_interpret_mode():
            np.testing.assert_array_equal(np.asarray(MJAX_FORMS[name][0](*args)), want)
    with jpltpu.force_tpu_interpret_mode(), pytest.raises(
            NotImplementedError, match="No state discharge rule implemented for primitive"):
        JAX_FORMS["empty_ref"][0]()


def test_jit_closure_interpreted_values():
    """jits closing over the kernel's refs, in both libraries' TPU interpret modes:
    NumPy's values."""
    x = np.random.default_rng(0).standard_normal((8, 128)).astype(np.float32)
    want = x + np.arange(8, dtype=np.float32)[:, None]
    with jpltpu.force_tpu_interpret_mode():
        np.testing.assert_array_equal(np.asarray(JAX_FORMS["jit_closure"][0](x)), want)
    with pltpu.force_tpu_interpret_mode():
        np.testing.assert_array_equal(np.asarray(MJAX_FORMS["jit_closure"][0](x)), want)


def _np_bitcast_u8(x):
    """NumPy's pltpu.bitcast of u32 (.., m, n) to u8 (.., 4m, n): each row's words give
    4 rows of bytes, the lowest first."""
    b = x[..., None].view(np.uint8)                      # (.., m, n, 4)
    return np.moveaxis(b, -1, -2).reshape(*x.shape[:-2], 4 * x.shape[-2], x.shape[-1])


def test_vmap_in_kernels_interpreted_values():
    """vmap inside kernels (scopes, nested, in a vmapped kernel, of pltpu.bitcast) in both
    libraries' TPU interpret modes: NumPy's values."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 128)).astype(np.float32)
    x3 = rng.standard_normal((2, 8, 128)).astype(np.float32)
    w = rng.integers(0, 2**32, (2, 16, 128), dtype=np.uint64).astype(np.uint32)
    cases = [("vmap_in_kernel_scopes", x, x * 2 + 1), ("vmap_in_vmapped_kernel", x3, x3 * 3),
             ("bitcast_vmap", w, _np_bitcast_u8(w))]
    for name, arg, want in cases:
        with jpltpu.force_tpu_interpret_mode():
            np.testing.assert_array_equal(np.asarray(JAX_FORMS[name][0](arg)), want)
        with pltpu.force_tpu_interpret_mode():
            np.testing.assert_array_equal(np.asarray(MJAX_FORMS[name][0](arg)), want)


def test_bitcast_vmap_over_a_minor_dim():
    """vmap of pltpu.bitcast over the second-minor dim (JAX's test_bitcast_vmap, axis 1):
    JAX's batching rule bitcasts the batched array as it is, so the batch dim grows from
    16 to 64 and the result is (2, 64, 128), the bytes of each example's rows mixed with
    the batch; mjax's vmap keeps its meaning, each example (2, 128) bitcast alone to
    (8, 128), the batch of 16 at axis 1: (8, 16, 128), as NumPy per example."""
    w = np.random.default_rng(1).integers(0, 2**32, (2, 16, 128),
                                          dtype=np.uint64).astype(np.uint32)
    with jpltpu.force_tpu_interpret_mode():
        theirs = np.asarray(bitcast_vmap_axis1(jax, jpl, jpltpu, (2, 64, 128))(w))
    np.testing.assert_array_equal(theirs, _np_bitcast_u8(w))     # (JAX's batch rule)
    with pltpu.force_tpu_interpret_mode():
        ours = np.asarray(bitcast_vmap_axis1(mjax, pl, pltpu, (8, 16, 128))(w))
    want = np.stack([_np_bitcast_u8(w[:, b]) for b in range(16)], axis=1)
    np.testing.assert_array_equal(ours, want)
    with pytest.raises(ValueError, match="Invalid shape for `swap`"):     # (its shape)
        bitcast_vmap_axis1(mjax, pl, pltpu, (2, 64, 128))(w)
