"""JAX 0.10.2's tests/pallas/ops_test.py (OpsInterpretTest) and indexing_test.py
(IndexerOpsInterpretTest, AdvancedIndexerOpsInterpretTest) run on mjax: each kernel
(jax_ops_kernels.py, written once for both libraries; the cases in jax_ops_cases.py) runs
with `interpret=True` on the CPU in both libraries, and mjax's values must equal JAX's
exactly (bit for bit, NaNs included) and agree with NumPy where the kernel is a NumPy
function of its inputs (test_numpy).

Not here: test_advanced_indexer's cases 10-20, array indices mixed with strided slices
on a kernel's Ref, which mjax refuses with a NotImplementedError naming them.
The fast tier keeps a sixth of each test's cases (test/conftest.py)."""
from __future__ import annotations

import numpy as np
import pytest

import jax  # (the oracle)
from jax.experimental import pallas as jpl
from jax.experimental.pallas import tpu as jpltpu

import mjax
from mjax.experimental import pallas as pl
from mjax.experimental.pallas import tpu as pltpu

import jax_ops_cases as C
import jax_ops_kernels as K

LIBS = {"jax": (jax, jpl, jpltpu), "mjax": (mjax, pl, pltpu)}
# (indexing_test's array indices mixed with strided slices in a kernel: the module
# docstring)
_ADVANCED_STRIDED = set(range(10, 21))
_LEFT_OUT: set = set()


def _ids(cases):
    seen: dict[str, int] = {}
    out = []
    for test, *_ in cases:
        seen[test] = seen.get(test, -1) + 1
        out.append(f"{test}-{seen[test]}")
    return out


_OPS = [c for c in C.cases() if c[0] not in _LEFT_OUT]
_INDEXING = [c for c in C.indexing_cases()
             if not (c[1] == "advanced_indexer" and c[2][0] in _ADVANCED_STRIDED)]


def _run(lib, kernel, args):
    J, P, T = LIBS[lib]
    f, xs = getattr(K, kernel)(J, P, T, *args)
    out = f(*xs)
    return [np.asarray(o) for o in (out if isinstance(out, (tuple, list)) else (out,))], xs


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        if g.dtype.kind in "fV":            # (bit for bit; NaN payloads aside)
            g64, w64 = g.astype(np.float64), w.astype(np.float64)
            np.testing.assert_array_equal(np.isnan(g64), np.isnan(w64))
            np.testing.assert_array_equal(np.where(np.isnan(g64), 0, g64),
                                          np.where(np.isnan(w64), 0, w64))
            np.testing.assert_array_equal(np.signbit(g64), np.signbit(w64))
        else:
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("test,kernel,args", _OPS, ids=_ids(_OPS))
def test_ops(test, kernel, args):
    got, _ = _run("mjax", kernel, args)
    want, _ = _run("jax", kernel, args)
    _same(got, want)


@pytest.mark.parametrize("test,kernel,args", _INDEXING, ids=_ids(_INDEXING))
def test_indexing(test, kernel, args):
    got, _ = _run("mjax", kernel, args)
    want, _ = _run("jax", kernel, args)
    _same(got, want)


# ---- NumPy's values (the checks JAX's tests make against jnp, made with NumPy) ----------
def _np_fn(name):
    attr = name.split(".")[1]
    return {"rsqrt": lambda x: 1 / np.sqrt(x), "population_count": None, "clz": None,
            "erf_inv": None, "is_finite": np.isfinite}.get(attr, getattr(np, attr, None))


def _f32(a):
    a = np.asarray(a)
    return a.astype(np.float32) if a.dtype.kind in "fV" else a


def _numpy_cases():
    """(test, kernel, args, NumPy's function of the inputs, rtol)."""
    out = []
    for test, kernel, args in _OPS:
        if kernel == "unary" and isinstance(args[0], str) and _np_fn(args[0]):
            dt = args[1]
            rtol = 1e-2 if dt in ("bfloat16", "float16") else 2e-6
            f = _np_fn(args[0])
            out.append((test, kernel, args,
                        lambda x, f=f: f(_f32(x)), rtol))
        elif kernel == "block_op":
            op = args[0]
            out.append((test, kernel, args, lambda x=None, op=op: _block_np(op, x),
                        1e-2 if test == "test_cumsum" else 0))   # (float16 sums' order)
        elif kernel == "binary" and args[0] in ("jnp.add", "jnp.subtract", "jnp.multiply",
                                                  "jnp.bitwise_and", "jnp.bitwise_or",
                                                  "jnp.bitwise_xor", "jnp.floor_divide"):
            f = getattr(np, args[0].split(".")[1])
            out.append((test, kernel, args, lambda x, y, f=f: f(x, y), 1e-3))
        elif kernel == "binary" and args[0].split(".")[1] in C._COMPARE:
            f = getattr(np, args[0].split(".")[1])
            out.append((test, kernel, args,
                        lambda x, y, f=f: f(_f32(x), _f32(y)).astype(np.int32), 0))
    return out


def _block_np(op, x):
    """A block_op kernel's op run with NumPy for jnp (the ops there are NumPy's too)."""
    class _Lax:
        @staticmethod
        def broadcasted_iota(dt, shape, dim):
            return np.broadcast_to(np.arange(shape[dim]).reshape(
                [-1 if d == dim else 1 for d in range(len(shape))]), shape).astype(dt)

        @staticmethod
        def broadcast_in_dim(v, shape, dims):
            v = np.asarray(v)
            return np.broadcast_to(v.reshape([v.shape[dims.index(d)] if d in dims else 1
                                              for d in range(len(shape))]), shape)

        @staticmethod
        def bitcast_convert_type(v, dt):
            return np.asarray(v).view(dt)
    return op(np, _Lax, x)


_NP = _numpy_cases()


@pytest.mark.parametrize("test,kernel,args,numpy,rtol", _NP, ids=_ids(_NP))
def test_numpy(test, kernel, args, numpy, rtol):
    got, xs = _run("mjax", kernel, args)
    with np.errstate(invalid="ignore", divide="ignore"):    # (acos(2.4) is NaN, as JAX's)
        want = np.asarray(numpy(*xs))
    g = _f32(got[0])
    assert g.shape == want.shape
    if rtol:
        np.testing.assert_allclose(g, _f32(want), rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(g, _f32(want))


# ---- the fixes ---------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["wrap", "edge"])
def test_pad_by_slices_in_a_kernel(mode):
    """jnp.pad's wrap and edge modes inside a kernel (JAX's test_arbitrary_padding_jnp_pad):
    they gathered from a table of source indices, an array constant the kernel captured
    (mjax raised ValueError); now slices, concatenated, equal to NumPy's for every width."""
    x = np.arange(17 * 9, dtype=np.float32).reshape(17, 9)
    for widths in (((5, 8), (0, 0)), ((0, 0), (5, 100)), ((1, 1), (1, 1)),
                   ((20, 3), (0, 2)), ((0, 40), (9, 9))):
        def kernel(x_ref, o_ref):
            o_ref[...] = mjax.numpy.pad(x_ref[...], widths, mode=mode)
        want = np.pad(x, widths, mode=mode)
        got = pl.pallas_call(kernel, out_shape=mjax.ShapeDtypeStruct(want.shape, x.dtype),
                             interpret=True)(x)
        np.testing.assert_array_equal(np.asarray(got), want)
        np.testing.assert_array_equal(np.asarray(mjax.numpy.pad(x, widths, mode=mode)), want)


def test_debug_print(capfd):
    """OpsInterpretTest.test_debug_print: the ref's value printed, as JAX prints it."""
    f, xs = K.debug_print(mjax, pl, pltpu)
    mjax.block_until_ready(f(*xs))
    mjax.effects_barrier()
    assert "x = [4.2 2.4]" in capfd.readouterr().out


def test_cases_cover_both_files():
    """The ported tests are all listed (a case list that lost a test fails here)."""
    names = {c[0] for c in _OPS} | {c[0] for c in _INDEXING}
    assert len(names) == 69, sorted(names)
