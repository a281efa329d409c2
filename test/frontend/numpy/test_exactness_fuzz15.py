"""Differences from JAX found by the fifteenth differential round (jax.numpy): quantile and
its twins stage JAX's ops (nanquantile's 'linear' was an ulp off; inverted_cdf of float16
data raises JAX's TypeError), convolve/correlate are lax.conv_general_dilated as JAX's
(a windowed dot summed in another order), interp takes 'extrapolate', promotes x with xp
and fp alone, ignores left/right under a period and reads a flat segment's left value;
lax.conv_general_dilated takes bool operands and JAX's preferred_element_type pairs."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp


def _outcome(f):
    try:
        return f()
    except Exception as e:  # noqa: BLE001 - (the error's class is compared)
        return e


def _same(got, want):
    if isinstance(want, Exception) or isinstance(got, Exception):
        assert type(got) is type(want), (got, want)
        return
    if isinstance(want, tuple):     # (several results: each alike)
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    assert g.tobytes() == w.tobytes(), (g, w)
    assert got.weak_type == want.weak_type


def _both(make, *args, jit=False):
    def run(L):
        f = make(L)
        return _outcome(lambda: (L.jit(f) if jit else f)(*args))
    _same(run(mjax), run(jax))


_METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf", "hazen"]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, jnp.bfloat16])
@pytest.mark.parametrize("name", ["quantile", "nanquantile", "percentile", "nanpercentile"])
@pytest.mark.parametrize("method", _METHODS)
def test_quantile_stages_jax_ops(dtype, name, method):
    rng = np.random.default_rng(15)
    scale = 100 if "percentile" in name else 1
    for seed in range(3):
        a = (rng.normal(size=(7, 5)) * 10).astype(dtype)
        if seed == 2 and np.dtype(dtype).kind == "f":
            a[1, 2] = a[4, 0] = np.nan
        for q in (0.3, np.array([0.1, 0.5, 0.77, 1.0], np.float32)):
            for axis, keep in ((0, False), (1, True), ((0, 1), False), (None, True)):
                _both(lambda L: (lambda x: getattr(L.numpy, name)(
                    x, q * scale, axis=axis, method=method, keepdims=keep)), a)
    _both(lambda L: (lambda x: getattr(L.numpy, name)(x, 0.25 * scale, axis=1,
                                                      method=method)), a, jit=True)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_as_jax(name):
    a = (np.random.default_rng(3).normal(size=(6, 5)) * 10).astype(np.float32)
    a[2, 1] = np.nan
    for axis in (0, 1, None, (0, 1)):
        _both(lambda L: (lambda x: getattr(L.numpy, name)(x, axis=axis)), a)


def test_weighted_quantile_as_jax():
    rng = np.random.default_rng(4)
    a = rng.normal(size=(6, 4)).astype(np.float32)
    w = rng.random((6, 4)).astype(np.float32)
    for q in (0.5, np.array([0.2, 0.9], np.float32)):
        _both(lambda L: (lambda x, v: L.numpy.quantile(x, q, axis=0, weights=v,
                                                       method="inverted_cdf")), a, w)
        _both(lambda L: (lambda x, v: L.numpy.nanquantile(x, q, axis=0, weights=v[:, 0],
                                                          method="inverted_cdf")), a, w)
    _both(lambda L: (lambda x, v: L.numpy.quantile(x, 0.5, axis=0, weights=v)), a, w)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64, np.float16, np.bool_,
                                   np.uint8])
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_convolve_is_a_convolution_as_jax(dtype, name):
    rng = np.random.default_rng(5)

    def make(k):
        v = rng.normal(size=k) * 3
        return (v + 1j * rng.normal(size=k) if dtype == np.complex64 else v).astype(dtype)
    for na, nv in ((7, 3), (3, 7), (5, 5), (1, 4), (8, 1), (0, 3), (6, 4)):
        a, v = make(na), make(nv)
        for mode in ("full", "same", "valid", "wrong"):
            for pet in (None, np.float32, np.int32):
                _both(lambda L: (lambda x, y: getattr(L.numpy, name)(
                    x, y, mode=mode, preferred_element_type=pet)), a, v)
    _both(lambda L: (lambda x, y: getattr(L.numpy, name)(x, y, mode="same")), a, v,
          jit=True)
    _both(lambda L: (lambda x, y: getattr(L.numpy, name)(x, y)), a[None], v)


def test_conv_general_dilated_takes_jax_dtypes():
    a = np.array([[[True, False, True, True]]])
    b = np.array([[[True, True]]])
    for lhs, rhs in ((a, b), (a.astype(np.uint8), b.astype(np.uint8)),
                     (a.astype(np.int8), b.astype(np.int8))):
        for pet in (None, np.int32, np.float32, np.uint8, np.int8, np.complex64):
            _both(lambda L: (lambda x, y: L.lax.conv_general_dilated(
                x, y, (1,), "VALID", preferred_element_type=pet)), lhs, rhs)


_BOUNDS = [(None, None, None), ("extrapolate", "extrapolate", None), ("extrapolate", None, None),
           (None, "extrapolate", None), (-1.0, 2.0, None), (None, None, 2.5),
           (3.0, "extrapolate", 2.5), ("wrong", None, None), (None, None, np.ones(2))]


@pytest.mark.parametrize("xdtype", [np.float32, np.int32, np.float16, np.complex64])
@pytest.mark.parametrize("fdtype", [np.float32, np.float16, np.complex64])
def test_interp_as_jax(xdtype, fdtype):
    rng = np.random.default_rng(6)
    for seed in range(3):
        xp = np.sort(rng.normal(size=6) * 3).astype(xdtype)
        if seed:
            xp[2] = xp[3]       # (a flat segment: JAX reads its left value)
        fp = (rng.normal(size=6) * 2).astype(fdtype)
        x = (rng.normal(size=9) * 5).astype(xdtype)
        for left, right, period in _BOUNDS:
            for jit in (False, True):
                _both(lambda L: (lambda u, v, w: L.numpy.interp(
                    u, v, w, left=left, right=right, period=period)), x, xp, fp, jit=jit)


@pytest.mark.parametrize("n", [4, 16, 51, 101])
def test_quantile_of_long_axes_as_jax(n):
    # (the gathers' bounds mask, absent from JAX's program, changed the fused products)
    a = np.random.default_rng(n).normal(size=(n,)).astype(np.float32)
    q = (np.arange(n) / (n - 1)).astype(np.float32)
    _both(lambda L: (lambda x, v: L.numpy.quantile(x, v)), a, q)
    _both(lambda L: (lambda x, v: L.numpy.percentile(x, v * 100)), a, q)
    _both(lambda L: (lambda x: L.numpy.percentile(x, 30)), a)
    _both(lambda L: (lambda x, v: L.numpy.nanpercentile(x, v)), a, np.arange(101, dtype=np.int32))


def test_linalg_orders_as_jax():
    rng = np.random.default_rng(7)
    a = rng.normal(size=(5, 5)).astype(np.float32)
    b = rng.normal(size=(6, 4)).astype(np.float32)
    c = (a + 1j * rng.normal(size=(5, 5))).astype(np.complex64)
    for jit in (False, True):
        for n in (2, 3, 5, -3):
            _both(lambda L: (lambda x: L.numpy.linalg.matrix_power(x, n)), a, jit=jit)
        for m in (a, b, c, np.zeros((3, 3), np.float32)):
            _both(lambda L: L.numpy.linalg.pinv, m, jit=jit)
        _both(lambda L: (lambda x: L.numpy.linalg.pinv(x, rtol=0.3)), b, jit=jit)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "fft2", "ifftn", "rfftn",
                                  "irfft2"])
@pytest.mark.parametrize("norm", ["ortho", "forward"])
def test_fft_norm_computed_as_jax(name, norm):
    rng = np.random.default_rng(8)
    a = rng.normal(size=(4, 6)).astype(np.float32)
    c = (a + 1j * rng.normal(size=(4, 6))).astype(np.complex64)
    two = name.endswith(("2", "n"))
    for x in (a, c):
        for kw in ({}, {"s": (3, 5)} if two else {"n": 7}):
            _both(lambda L: (lambda v: getattr(L.numpy.fft, name)(v, norm=norm, **kw)), x)


def test_setxor1d_with_size_traces_as_jax():
    rng = np.random.default_rng(9)
    for _ in range(12):
        a = rng.integers(-4, 4, rng.integers(0, 7)).astype(np.int32)
        b = rng.integers(-4, 4, rng.integers(0, 7)).astype(np.int32)
        for size in (1, 4, 9):
            for fill in (None, 7):
                for jit in (False, True):
                    _both(lambda L: (lambda x, y: L.numpy.setxor1d(
                        x, y, size=size, fill_value=fill)), a, b, jit=jit)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16])
def test_polyint_divides_once_as_jax(dtype):
    p = (np.random.default_rng(10).normal(size=5) * 3).astype(dtype)
    for m in (0, 1, 2, 3, -1):
        for k in (None, 2.0, [1.0, 2.0], np.array([1.0, 2.0, 3.0], np.float32),
                  np.array([5], np.int32)):
            for jit in (False, True):
                _both(lambda L: (lambda v: L.numpy.polyint(v, m, k)), p, jit=jit)


def test_power_and_square_promote_as_jax_under_x64():
    # power: only an inexact base keeps its own weak type with an integer exponent (an
    # int8 base with a uint64 exponent is a weak float64, as JAX's promotion makes it);
    # square: a bool squares as int32 under x64 too (JAX's to_numeric_dtype).
    u64 = np.arange(3, dtype=np.uint64)
    with jax.enable_x64(True), mjax.enable_x64(True):
        for x1, x2 in ((np.int8(3), u64), (np.arange(3), u64), (u64, np.arange(3, dtype=np.int16)),
                       (np.float32(2), u64), (2.5, np.arange(3))):
            _both(lambda L: (lambda: L.numpy.power(x1, x2)))
        for x in (True, np.array([True, False])):
            _both(lambda L: (lambda: L.numpy.square(x)))


def test_intersect1d_with_size_traces_as_jax():
    rng = np.random.default_rng(12)
    for _ in range(6):
        a = rng.integers(-4, 4, rng.integers(1, 8)).astype(np.int32)
        b = rng.integers(-4, 4, rng.integers(1, 8)).astype(np.int32)
        for size in (1, 4, 9):
            for fill in (None, 7):
                for indices in (False, True):
                    _both(lambda L: (lambda x, y: L.numpy.intersect1d(
                        x, y, size=size, fill_value=fill, return_indices=indices)), a, b,
                        jit=True)
    _both(lambda L: (lambda x, y: L.numpy.intersect1d(x.reshape(2, -1), y, size=3,
                                                      return_indices=True)),
          np.array([3, 1, 3, 2], np.int32), np.array([2, 3, 5], np.int32))
