"""Loop carries and `%` by a scalar in Pallas TPU kernels (mosaic_corpus_loops.py): mjax's
Mosaic module against JAX 0.10.2's export for the TPU (on the CPU, names and locations
aside), the interpreted values against JAX's TPU interpret mode and NumPy; and the
kernel-only loop rewrite leaves ordinary jitted loops as they were traced."""
from __future__ import annotations

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle)
import jax.experimental.pallas.tpu  # noqa: E402,F401

import mjax  # noqa: E402
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402

from mosaic_corpus_loops import kernels  # noqa: E402
from test_mosaic_differential import _cpu_as_v5e, _diff, jax_tpu_text  # noqa: E402
from test_mosaic_forms import _decoded, _mjax_text  # noqa: E402

JAX_KERNELS, MJAX_KERNELS = kernels(jax, jpl, jpltpu), kernels(mjax, pl, pltpu)


def _args(name, shapes):
    rng = np.random.default_rng(0)
    out = []
    for i, (shape, dtype) in enumerate(shapes):
        kind = np.dtype(dtype).kind
        if shape == (1,):           # (an SMEM scalar: a trip count, a divisor, a value)
            out.append(np.array([3 if "fori" in name else -7]).astype(dtype))
        elif kind == "b":
            out.append(rng.random(shape) < 0.5)
        elif kind in "iu" and ("pow" in name or "floordiv" in name):
            # (small exponents: float32 keeps their powers; no zero divisor x + 3)
            out.append(rng.integers(0, 10 if "pow" in name else 100, shape).astype(dtype))
        elif kind in "iu":
            out.append(rng.integers(-100, 100, shape).astype(dtype))
        else:
            out.append((rng.standard_normal(shape) * 4).astype(dtype))
    if name.startswith("smem_"):    # (a nonzero divisor x[2])
        out[0][2] = 3 if "int" in name else -3.5
    return out


@pytest.mark.parametrize("name", sorted(JAX_KERNELS))
def test_mosaic_module_matches_jax(name):
    f, shapes, _ = JAX_KERNELS[name]
    with _cpu_as_v5e():
        want = _decoded(jax_tpu_text(f, [jax.ShapeDtypeStruct(s, d) for s, d in shapes]))
    got = _decoded(_mjax_text(*MJAX_KERNELS[name][:2]))
    assert got[:2] == want[:2]
    assert got[2] == want[2], _diff(want[2], got[2])


@pytest.mark.parametrize("name", sorted(JAX_KERNELS))
def test_interpreted_values(name):
    """Both libraries' TPU interpret modes give NumPy's values (floats to rounding: the
    loops add in another order than the formula)."""
    f, shapes, reference = JAX_KERNELS[name]
    args = _args(name, shapes)
    want = np.asarray(reference(*args))
    with jpltpu.force_tpu_interpret_mode():
        theirs = np.asarray(f(*args))
    with pltpu.force_tpu_interpret_mode():
        ours = np.asarray(MJAX_KERNELS[name][0](*args))
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape == want.shape
    tol = 1e-2 if theirs.dtype == jax.numpy.bfloat16 else 1e-5
    f64 = lambda a: np.asarray(a, np.float64)       # (bfloat16 compared as float64)
    np.testing.assert_allclose(f64(theirs), f64(want), rtol=tol, atol=tol)
    np.testing.assert_allclose(f64(ours), f64(want), rtol=tol, atol=tol)
    np.testing.assert_allclose(f64(ours), f64(theirs), rtol=1e-6, atol=1e-6)


def test_jitted_loops_keep_their_carries():
    """Outside kernels the rewrite does not run: a jitted fori_loop whose body returns a
    carry unchanged still carries it (mjax's StableHLO is pinned elsewhere), with the
    same values as JAX's."""
    def f(x):
        return mjax.lax.fori_loop(0, 4, lambda i, c: (c[0] + c[1], c[1]), (x, x * 2))

    text = mjax.jit(f).lower(np.ones(4, np.float32)).as_text()
    assert "stablehlo.while" in text
    assert text.count("tensor<4xf32>, tensor<4xf32>") >= 1
    x = np.arange(4, dtype=np.float32)
    jf = lambda x: jax.lax.fori_loop(0, 4, lambda i, c: (c[0] + c[1], c[1]), (x, x * 2))
    for a, b in zip(mjax.jit(f)(x), jax.jit(jf)(x)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_remainder_by_a_scalar_values():
    """jnp.remainder keeps a scalar divisor scalar (JAX's form) with NumPy's values and
    JAX's: ints (negative divisors, a zero divisor gives 0 as JAX), floats, bools, rank
    promotion and size-1 broadcasting; JAX's shape errors."""
    x = np.arange(-7, 8, dtype=np.int32)
    for d in (3, -5, 1):
        np.testing.assert_array_equal(np.asarray(mjax.jit(lambda x: x % d)(x)), x % d)
        np.testing.assert_array_equal(np.asarray(mjax.jit(lambda x: d % (x | 1))(x)),
                                      np.asarray(jax.jit(lambda x: d % (x | 1))(x)))
    np.testing.assert_array_equal(np.asarray(mjax.jit(lambda x: x % 0)(x)),
                                  np.asarray(jax.jit(lambda x: x % 0)(x)))
    y = np.linspace(-4, 4, 9, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(mjax.jit(lambda y: y % 1.5)(y)),
                                  np.asarray(jax.jit(lambda y: y % 1.5)(y)))
    b = np.array([True, False])
    np.testing.assert_array_equal(np.asarray(mjax.numpy.remainder(b, True)),
                                  np.asarray(jax.numpy.remainder(b, True)))
    a2, a1 = np.arange(1, 7, dtype=np.float32).reshape(2, 3), np.float32([2, -3, 4])
    np.testing.assert_array_equal(np.asarray(mjax.numpy.remainder(a2, a1)),
                                  np.asarray(jax.numpy.remainder(a2, a1)))
    np.testing.assert_array_equal(np.asarray(mjax.numpy.remainder(a2[:, :1], a1[None])),
                                  np.asarray(jax.numpy.remainder(a2[:, :1], a1[None])))
    with pytest.raises(TypeError, match="rem got incompatible shapes for broadcasting"):
        mjax.numpy.remainder(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        mjax.numpy.remainder(np.ones((2, 3)), np.ones(4))


def test_fori_scan_final_index_read_is_the_true_index():
    """A fori-like scan (carry i -> i + 1 first) whose final index the kernel reads: JAX's
    Mosaic rule gives that index as the constant `length` (6, where the scan started at
    x[0]); mjax's, start + length, the interpreted value of both libraries. Where nothing
    reads it (fori_loop), both emit JAX's constant (test_mosaic_differential's
    fori_unroll)."""
    from test_mosaic_differential import normalize, tpu_mosaic
    from mjax.dialect.context import context

    def f(J, P, T):
        def k(x_ref, o_ref):
            def body(carry, _):
                i, c = carry
                return (i + 1, c + i), None
            (i, c), _ = J.lax.scan(body, (x_ref[0], x_ref[1]), None, length=6)
            o_ref[0] = i
            o_ref[1] = c
        spec = P.BlockSpec(memory_space=T.SMEM)
        return lambda x: P.pallas_call(k, in_specs=[spec], out_specs=spec,
                                       out_shape=J.ShapeDtypeStruct((2,), np.int32))(x)
    with context():
        want, got = (normalize(tpu_mosaic(J, f(J, P, T), [((2,), np.int32)])[1])
                     for J, P, T in ((jax, jpl, jpltpu), (mjax, pl, pltpu)))
    assert "memref.store %c6_i32_0, %arg1[%c0_1]" in want       # (the constant 6)
    assert "%4 = arith.addi %0, %c6_i32_0 : i32" in got          # (x[0] + 6)
    assert "memref.store %4, %arg1[%c0_1]" in got
    x = np.array([2, 5], np.int32)
    with jpltpu.force_tpu_interpret_mode():
        want_v = np.asarray(f(jax, jpl, jpltpu)(x))
    with pltpu.force_tpu_interpret_mode():
        got_v = np.asarray(f(mjax, pl, pltpu)(x))
    np.testing.assert_array_equal(got_v, want_v)
    np.testing.assert_array_equal(got_v, [2 + 6, 5 + sum(range(2, 8))])
