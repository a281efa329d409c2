"""mjax.scipy.signal's spectral functions and the newer mjax.scipy.linalg functions,
compared with real jax (and SciPy)."""
import warnings

import jax
import jax.scipy.linalg as jlin
import jax.scipy.signal as jsig
import numpy as np
import pytest

import mjax
import mjax.scipy.linalg as mlin
import mjax.scipy.signal as msig
from frontend_util import ON_TPU, skip_where_the_tpu_lacks

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 64)).astype(np.float32)
Y = RNG.standard_normal((2, 64)).astype(np.float32)


def _same(got, want, tol=1e-4):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, atol=tol, rtol=1e-3)


@pytest.mark.parametrize("kw", [{}, {"type": "constant"}, {"bp": [20, 40]}, {"axis": 0}])
def test_detrend(kw):
    _same(msig.detrend(X, **kw), jsig.detrend(X, **kw))


@pytest.mark.parametrize("kw", [
    {"nperseg": 16}, {"nperseg": 20, "noverlap": 5, "nfft": 40},
    {"window": "hamming", "nperseg": 16}, {"return_onesided": False, "nperseg": 16},
    {"boundary": None, "padded": False, "nperseg": 30}, {"boundary": "odd", "nperseg": 16},
    {"boundary": "even", "nperseg": 16}, {"detrend": "linear", "nperseg": 16},
    {"axis": 0, "nperseg": 2}])
def test_stft(kw):
    _same(msig.stft(X, **kw), jsig.stft(X, **kw))


@pytest.mark.parametrize("kw", [
    {}, {"nperseg": 16, "average": "median"}, {"scaling": "spectrum", "nperseg": 20},
    {"window": ("tukey", 0.3), "nperseg": 25}, {"detrend": False, "nperseg": 16},
    {"return_onesided": False, "nperseg": 16}, {"axis": 0}])
def test_welch_csd(kw):
    _same(msig.welch(X, **kw), jsig.welch(X, **kw))
    _same(msig.csd(X, Y, **kw), jsig.csd(X, Y, **kw))


@pytest.mark.parametrize("kw", [{"nperseg": 16}, {"nperseg": 20, "noverlap": 15},
                                {"window": "hamming", "nperseg": 16}])
def test_istft_roundtrip(kw):
    _, _, z = jsig.stft(X, **kw)
    _same(msig.istft(np.asarray(z), **kw), jsig.istft(z, **kw))
    t, x = msig.istft(msig.stft(X, **kw)[2], **kw)
    np.testing.assert_allclose(np.asarray(x)[:, :64], X, atol=1e-4)


def test_complex_and_int_inputs():
    xc = (X + 1j * Y).astype(np.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(msig.welch(xc, nperseg=16), jsig.welch(xc, nperseg=16))
    xi = np.arange(50)
    _same(msig.welch(xi, nperseg=8), jsig.welch(xi, nperseg=8))


@pytest.mark.parametrize("call", [
    lambda m: m.detrend(X, type="quadratic"),
    lambda m: m.welch(X, nperseg=16, noverlap=16),
    lambda m: m.welch(X, nperseg=16, nfft=8),
    lambda m: m.welch(X, scaling="bogus"),
    lambda m: m.welch(X, nperseg=16, average="mode"),
    lambda m: m.stft(X, boundary="wrap"),
    lambda m: m.istft(X[0]),
])
def test_errors(call):
    with pytest.raises(Exception) as want:
        call(jsig)
    with pytest.raises(type(want.value)):
        call(msig)


def test_x64():
    # (welch of float64 computes its FFTs and scale in complex128)
    skip_where_the_tpu_lacks(np.complex128)
    with jax.enable_x64(True), mjax.enable_x64(True):
        x = X.astype(np.float64)
        _same(msig.welch(x, nperseg=16), jsig.welch(x, nperseg=16), tol=1e-10)


@pytest.mark.parametrize("a", [[1.0, 2, 3, 4, 5], [[1.0, 2, 3], [2.0, -1, 4]], [2.0], [3, 4]])
def test_fiedler_companion(a):
    a = np.asarray(a)
    _same(mlin.fiedler_companion(a), jlin.fiedler_companion(a))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
@pytest.mark.parametrize("mode", ["right", "left"])
def test_qr_multiply(shape, mode):
    m, n = shape
    a = RNG.standard_normal(shape).astype(np.float32)
    c = RNG.standard_normal((2, m) if mode == "right" else (min(m, n), 2)).astype(np.float32)
    _same(mlin.qr_multiply(a, c, mode=mode), jlin.qr_multiply(a, c, mode=mode))


@pytest.mark.parametrize("shape,side,method", [
    ((4, 3), "right", "qdwh"), ((3, 4), "left", "qdwh"), ((4, 3), "right", "svd"),
    ((3, 4), "left", "svd"), ((2, 4, 4), "right", "qdwh")])
def test_polar(shape, side, method):
    a = RNG.standard_normal(shape).astype(np.float32)
    _same(mlin.polar(a, side, method=method), jlin.polar(a, side, method=method))


@pytest.mark.parametrize("shape,method,err", [((3, 4), "qdwh", NotImplementedError),
                                              ((4, 4), "foo", ValueError),
                                              ((4,), "svd", ValueError)])
def test_polar_errors(shape, method, err):
    a = np.ones(shape, np.float32)
    with pytest.raises(err):
        jlin.polar(a, method=method)
    with pytest.raises(err):
        mlin.polar(a, method=method)


@pytest.mark.parametrize("a", [
    RNG.standard_normal((4, 4)).astype(np.float32), np.array([[4.0, 1], [0, 9]], np.float32),
    (RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))).astype(np.complex64)])
def test_sqrtm(a):
    if ON_TPU:      # (XLA has the Schur decomposition on the CPU alone: JAX's raises too)
        for sqrtm in (jlin.sqrtm, mlin.sqrtm):
            with pytest.raises(NotImplementedError):
                sqrtm(a)
        pytest.skip("TPU: sqrtm needs the Schur decomposition, which XLA has on the CPU "
                    "only (JAX raises NotImplementedError there, as mjax does)")
    _same(mlin.sqrtm(a), jlin.sqrtm(a), tol=1e-3)
    got = np.asarray(mlin.sqrtm(a))
    np.testing.assert_allclose(got @ got, a, atol=1e-3)
