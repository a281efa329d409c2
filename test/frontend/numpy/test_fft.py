"""mjax.numpy.fft against NumPy and jax: every transform with n/s, axes and norm, dtypes,
helpers, errors; gradients (the transposes of the linear jaxpr.fft) against jax and finite
differences; vmap against a loop."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from frontend_util import skip_where_the_tpu_lacks, x64
from mjax.test_util import check_grads

RNG = np.random.default_rng(3)
REAL = RNG.normal(size=(3, 4, 6)).astype(np.float32)
CPLX = (REAL + 1j * RNG.normal(size=REAL.shape)).astype(np.complex64)
NORMS = [None, "backward", "ortho", "forward"]


def _close(got, want, dtype, rtol=2e-4):
    assert isinstance(got, mjax.Array)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol,
                               atol=rtol * max(1.0, float(np.abs(want).max(initial=0))))


ONE_D = [("fft", CPLX, {}), ("fft", CPLX, {"n": 4, "axis": 0}), ("ifft", CPLX, {"n": 9}),
         ("rfft", REAL, {}), ("rfft", REAL, {"n": 5, "axis": 1}), ("irfft", CPLX, {}),
         ("irfft", CPLX, {"n": 7, "axis": -2}), ("hfft", CPLX, {}), ("hfft", CPLX, {"n": 5}),
         ("ihfft", REAL, {}), ("ihfft", REAL, {"n": 8, "axis": 0})]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name,x,kw", ONE_D, ids=[f"{n}-{sorted(k)}" for n, _, k in ONE_D])
def test_one_dimensional(name, x, kw, norm):
    want = getattr(np.fft, name)(x, norm=norm, **kw)
    dtype = np.complex64 if np.iscomplexobj(want) else np.float32
    _close(getattr(jnp.fft, name)(x, norm=norm, **kw), want, dtype)


ND = [("fft2", CPLX, {}), ("fft2", CPLX, {"axes": (0, 2), "s": (2, 8)}),
      ("ifft2", CPLX, {"axes": (-1, 0)}), ("rfft2", REAL, {"s": (3, 5)}),
      ("irfft2", CPLX, {}), ("irfft2", CPLX, {"s": (4, 9), "axes": (0, 1)}),
      ("fftn", CPLX, {}), ("fftn", CPLX, {"axes": (2, 0)}), ("ifftn", CPLX, {"s": (2, 3)}),
      ("rfftn", REAL, {}), ("rfftn", REAL, {"axes": (1,)}),
      ("irfftn", CPLX, {"s": (4, 4, 6)}), ("irfftn", CPLX, {"axes": (0, 2)})]


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("name,x,kw", ND, ids=[f"{n}-{sorted(k)}" for n, _, k in ND])
def test_multi_dimensional(name, x, kw, norm):
    if "s" in kw and "axes" not in kw:
        kw = dict(kw, axes=tuple(range(x.ndim - len(kw["s"]), x.ndim)))
    want = getattr(np.fft, name)(x, norm=norm, **kw)
    dtype = np.complex64 if np.iscomplexobj(want) else np.float32
    _close(getattr(jnp.fft, name)(x, norm=norm, **kw), want, dtype)


def test_more_than_three_axes_run_in_passes():
    x = RNG.normal(size=(2, 3, 2, 4, 2)).astype(np.float32)
    _close(jnp.fft.fftn(x), np.fft.fftn(x), np.complex64)
    _close(jnp.fft.rfftn(x, axes=(0, 1, 2, 3)), np.fft.rfftn(x, axes=(0, 1, 2, 3)),
           np.complex64)
    _close(jnp.fft.irfftn(x.astype(np.complex64)), np.fft.irfftn(x), np.float32, 1e-3)


def test_dtypes_follow_jax():
    ints = np.arange(6)
    for name in ("fft", "rfft", "ihfft"):
        got = getattr(jnp.fft, name)(ints)
        assert got.dtype == getattr(jjnp.fft, name)(ints).dtype
    assert jnp.fft.fft(np.ones(4, np.float16)).dtype == np.complex64
    skip_where_the_tpu_lacks(np.complex128)       # (the rest computes in complex128)
    with x64():
        assert jnp.fft.fft(np.ones(4)).dtype == np.complex128
        assert jnp.fft.rfft(np.ones(4)).dtype == np.complex128
        assert jnp.fft.irfft(np.ones(3, np.complex128)).dtype == np.float64
        _close(jnp.fft.fft(CPLX.astype(np.complex128)), np.fft.fft(CPLX.astype(np.complex128)),
               np.complex128, 1e-10)


def test_frequencies_and_shifts():
    for n, d in ((7, 1.0), (8, 0.25)):
        _close(jnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d).astype(np.float32), np.float32)
        _close(jnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d).astype(np.float32), np.float32)
    assert jnp.fft.fftfreq(4, dtype=np.float32).dtype == np.float32
    for axes in (None, 1, (0, 2)):
        _close(jnp.fft.fftshift(REAL, axes), np.fft.fftshift(REAL, axes), np.float32)
        _close(jnp.fft.ifftshift(REAL, axes), np.fft.ifftshift(REAL, axes), np.float32)
    _close(jnp.fft.ifftshift(jnp.fft.fftshift(REAL[0, 0, :5])), REAL[0, 0, :5], np.float32)


def test_errors_match_jax():
    with pytest.raises(ValueError, match="Invalid norm value"):
        jnp.fft.fft(CPLX, norm="bogus")
    with pytest.raises(ValueError, match="does not support multiple axes"):
        jnp.fft.fft(CPLX, axis=(0, 1))
    with pytest.raises(ValueError, match="only supports 2 axes"):
        jnp.fft.fft2(CPLX, axes=(0, 1, 2))
    with pytest.raises(ValueError, match="repeated axes"):
        jnp.fft.fftn(CPLX, axes=(0, 0))
    with pytest.raises(ValueError, match="Shape and axes have different lengths"):
        jnp.fft.fftn(CPLX, s=(2, 2), axes=(0,))
    with pytest.raises(ValueError, match="Shape should be positive"):
        jnp.fft.fftn(CPLX, s=(0, 2))
    with pytest.raises(ValueError, match="only real valued inputs"):
        jnp.fft.rfft(CPLX)
    with pytest.raises(ValueError, match="only takes an int"):
        jnp.fft.fftfreq([4])


def test_lax_fft_and_lowering():
    got = mjax.lax.fft(CPLX, mjax.lax.FftType.IFFT, (4, 6))
    want = jax.lax.fft(CPLX, jax.lax.FftType.IFFT, (4, 6))
    _close(got, np.asarray(want), np.complex64)
    text = mjax.jit(lambda x: jnp.fft.rfft2(x)).lower(REAL).as_text()
    assert "stablehlo.fft" in text and "RFFT" in text
    with pytest.raises(ValueError, match="unknown fft_type"):
        mjax.lax.fft(CPLX, "DCT", (6,))


# ---- gradients ---------------------------------------------------------------------------
X = REAL[0]
GRADS = {
    "rfft": lambda np_: lambda x: np_.sum(np_.abs(np_.fft.rfft(x)) ** 2 * np.arange(4)),
    "irfft_even": lambda np_: lambda x: np_.sum(
        np_.fft.irfft(np_.fft.rfft(x) * (1 + 1j * np.arange(4)), n=6) * x),
    "irfft_odd": lambda np_: lambda x: np_.sum(np_.fft.irfft(np_.fft.rfft(x, n=5) * 2j,
                                                             n=5) ** 2),
    "fft": lambda np_: lambda x: np_.sum(np_.real(np_.fft.fft(x * (1 + 2j))) * x),
    "ifft2_ortho": lambda np_: lambda x: np_.sum(np_.imag(np_.fft.ifft2(x + 1j,
                                                                        norm="ortho")) ** 3),
    "hfft": lambda np_: lambda x: np_.sum(np_.fft.hfft(x * (1 - 1j)) * np.arange(10)),
    "fftn_forward": lambda np_: lambda x: np_.sum(np_.abs(np_.fft.fftn(x, norm="forward"))),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_grad_matches_jax(name):
    got = mjax.grad(GRADS[name](jnp))(X)
    want = jax.grad(GRADS[name](jjnp))(X)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["rfft", "irfft_even", "irfft_odd", "fft"])
def test_grads_match_finite_differences(name):
    with x64():
        check_grads(GRADS[name](jnp), (X.astype(np.float64),), order=2)


def test_complex_input_grad_matches_jax():
    def f(np_):
        return lambda z: np_.sum(np_.abs(np_.fft.ifft(z, n=8)) ** 2)
    got = mjax.grad(f(jnp))(CPLX[0, 0])
    want = jax.grad(f(jjnp))(CPLX[0, 0])
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-6)


def test_vmap_matches_loop():
    for f, x, axis in ((lambda v: jnp.fft.rfft(v), REAL, 1),
                       (lambda v: jnp.fft.fft2(v), CPLX, 2),
                       (lambda v: jnp.fft.irfft(v, n=5), CPLX, 0)):
        want = np.stack([np.asarray(f(np.take(x, i, axis=axis)))
                         for i in range(x.shape[axis])])
        np.testing.assert_allclose(np.asarray(mjax.vmap(f, in_axes=axis)(x)), want,
                                   rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(mjax.jit(mjax.vmap(f, in_axes=axis))(x)), want,
                                   rtol=1e-5, atol=1e-5)
