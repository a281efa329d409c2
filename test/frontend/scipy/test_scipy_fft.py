"""mjax.scipy.fft (the type-2 DCT and its inverse) against jax.scipy.fft: lengths odd and
even, n cut and padded, axes, norms, complex and integer input, the n-d forms, errors,
and gradients and vmap against jax."""
import jax
import jax.scipy.fft as jfft
import numpy as np
import pytest

import mjax
import mjax.scipy.fft as mfft

RNG = np.random.default_rng(5)


@pytest.mark.parametrize("name", ["dct", "idct"])
@pytest.mark.parametrize("shape,axis", [((5,), -1), ((4,), 0), ((3, 6), 0), ((3, 7), 1),
                                        ((1,), 0)])
@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("n", [None, 3])
def test_dct_matches_jax(name, shape, axis, norm, n):
    x = RNG.standard_normal(shape).astype(np.float32)
    got = getattr(mfft, name)(x, n=n, axis=axis, norm=norm)
    want = getattr(jfft, name)(x, n=n, axis=axis, norm=norm)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["dctn", "idctn"])
@pytest.mark.parametrize("kw", [{}, {"axes": (0, 2)}, {"s": (3, 6)},
                                {"norm": "ortho", "axes": [1]}])
def test_dctn_matches_jax(name, kw):
    x = RNG.standard_normal((4, 5, 3)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(getattr(mfft, name)(x, **kw)),
                               np.asarray(getattr(jfft, name)(x, **kw)), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("x", [np.arange(4), np.ones(4, np.float16),
                               (np.arange(6) + 1j * np.arange(6)[::-1]).astype(np.complex64)])
def test_dct_dtypes_match_jax(x):
    got, want = mfft.dct(x), jfft.dct(x)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-3, atol=1e-3)


def test_dct_errors_as_jax():
    for m in (mfft, jfft):
        with pytest.raises(NotImplementedError, match="Only DCT type 2"):
            m.dct(np.ones(3), type=3)
        with pytest.raises(ValueError, match="norm='forward' is not implemented"):
            m.idct(np.ones(3), norm="forward")


def test_dct_grad_and_vmap_match_jax():
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    w = RNG.standard_normal(5).astype(np.float32)
    for name in ("dct", "idct"):
        got = mjax.grad(lambda v: (getattr(mfft, name)(v, norm="ortho") * w).sum())(x[0])
        want = jax.grad(lambda v: (getattr(jfft, name)(v, norm="ortho") * w).sum())(x[0])
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(np.asarray(mjax.jit(mjax.vmap(getattr(mfft, name)))(x)),
                                   np.asarray(jax.vmap(getattr(jfft, name))(x)),
                                   rtol=1e-4, atol=1e-4)
