"""mjax.scipy.linalg's rsf2csf, funm, solve_sylvester and eigh_tridiagonal (the functions
whose JAX docstring examples did not run on mjax) compared with real jax: values, dtypes,
batching, options and the exception class of bad input."""
import os

import jax
import jax.numpy as jjnp
import jax.scipy.linalg as jlin
import numpy as np
import pytest
import scipy.linalg as sp_linalg

import mjax
import mjax.numpy as mjnp
import mjax.scipy.linalg as mlin

RNG = np.random.default_rng(0)
FULL = os.environ.get("MJAX_TEST_TIER") == "full"
# On a TPU JAX has no rule for LAPACK's Schur and nonsymmetric eigen decompositions, and
# its tridiagonal_solve has no perturb_singular (eigh_tridiagonal's eigenvectors): there
# mjax must raise what JAX raises.
ON_TPU = os.environ.get("MJAX_TEST_TPU", "") not in ("", "0")
NO_TPU_SCHUR = "MLIR translation rule for primitive 'schur' not found for platform tpu"
NO_TPU_EIG = "MLIR translation rule for primitive 'eig' not found for platform tpu"
NO_TPU_PERTURB = "perturb_singular=True is not supported on this platform"


def _same(got, want, tol=1e-4):
    got = tuple(got) if isinstance(got, (tuple, list)) else (got,)
    want = tuple(want) if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_allclose(g, w, atol=tol, rtol=tol, equal_nan=True)


def _raises_as_jax(fm, fj, *args, match=None, **kw):
    with pytest.raises(Exception, match=match) as want:
        fj(*args, **kw)
    with pytest.raises(want.type, match=match):
        fm(*args, **kw)


def _schur(a):
    """JAX's real Schur form of a float32 matrix; SciPy's on a TPU, where JAX has none."""
    return sp_linalg.schur(a) if ON_TPU else jlin.schur(a)


def _schur_forms(batch, n):
    a = RNG.standard_normal(batch + (n, n)).astype(np.float32)
    tz = [_schur(m) for m in a.reshape((-1, n, n))]
    t, z = (np.stack([np.asarray(f[i]) for f in tz]) for i in (0, 1))
    return t.reshape(a.shape), z.reshape(a.shape)


@pytest.mark.parametrize("batch,n", [((), 1), ((), 6), ((2,), 4)])
def test_rsf2csf(batch, n):
    t, z = _schur_forms(batch, n)
    if ON_TPU and n > 1:    # (JAX's rotations take the eigenvalues of 2x2 blocks: eig)
        _raises_as_jax(mlin.rsf2csf, jlin.rsf2csf, t, z, match=NO_TPU_EIG)
        return
    got, want = mlin.rsf2csf(t, z), jlin.rsf2csf(t, z)
    _same(got, want)
    assert np.allclose(np.tril(np.asarray(got[0]), -1), 0)


def test_rsf2csf_docstring_matrix_and_errors():
    a = np.array([[0., 3., 3.], [0., 1., 2.], [2., 0., 1.]], np.float32)
    t, z = (np.asarray(x) for x in _schur(a))
    if ON_TPU:
        _raises_as_jax(mlin.rsf2csf, jlin.rsf2csf, t, z, match=NO_TPU_EIG)
    else:
        _same(mlin.rsf2csf(t, z), jlin.rsf2csf(t, z))
    _raises_as_jax(mlin.rsf2csf, jlin.rsf2csf, t, z[:2, :2])
    _raises_as_jax(mlin.rsf2csf, jlin.rsf2csf, t[0], z)


def test_funm():
    """The docstring's exp, a random matrix with disp=False, a Jordan block (equal
    eigenvalues: nothing divided), a complex matrix (SciPy's values; JAX's complex dtype,
    and its error estimate); bad input as JAX."""
    a = np.array([[1., 2., 3.], [3., 4., 0.], [1., 0., -1.]], np.float32)
    jordan = np.array([[2., 1., 0.], [0., 2., 1.], [0., 0., 2.]], np.float32)
    c = (RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))).astype(np.complex64)
    for x, fm, fs in [(a, mjnp.exp, np.exp), (jordan, mjnp.exp, np.exp), (c, mjnp.sin, np.sin)]:
        if ON_TPU:      # (funm starts from a Schur form)
            _raises_as_jax(lambda x: mlin.funm(x, fm), lambda x: jlin.funm(x, getattr(
                jjnp, fs.__name__)), x, match=NO_TPU_SCHUR)
            continue
        got = mlin.funm(x, fm)
        assert got.dtype == np.complex64
        np.testing.assert_allclose(np.asarray(got), sp_linalg.funm(x.astype(np.complex128), fs),
                                   rtol=1e-4, atol=1e-4)
    if not ON_TPU:
        _same(mlin.funm(a, mjnp.sin, disp=False), jlin.funm(a, jjnp.sin, disp=False), tol=2e-4)
    _raises_as_jax(lambda a: mlin.funm(a, mjnp.exp), lambda a: jlin.funm(a, jjnp.exp),
                   np.ones((2, 3, 3), np.float32))
    _raises_as_jax(lambda a: mlin.funm(a, mjnp.exp), lambda a: jlin.funm(a, jjnp.exp),
                   np.eye(2, dtype=np.int32))


def _sylvester_scipy(a, b, c):
    if a.ndim == 2:
        return sp_linalg.solve_sylvester(a, b, c)
    return np.stack([sp_linalg.solve_sylvester(ai, b, ci) for ai, ci in zip(a, c)])


@pytest.mark.parametrize("method", ["schur", "eigen"])
def test_solve_sylvester(method):
    """The docstring's integer matrices, a batch (B broadcast), a complex C: SciPy's
    values in JAX's dtypes."""
    a, b, c = np.array([[1, 2], [3, 4]]), np.array([[5, 6], [7, 8]]), np.array([[6, 8], [10, 12]])
    ab = RNG.standard_normal((2, 3, 3)).astype(np.float32) + 3 * np.eye(3, dtype=np.float32)
    bb = RNG.standard_normal((2, 2)).astype(np.float32) + 3 * np.eye(2, dtype=np.float32)
    cb = RNG.standard_normal((2, 3, 2)).astype(np.float32)
    cc = cb[0] + 1j * cb[1]
    for args, dtype in [((a, b, c), np.float32), ((ab, bb, cb), np.float32),
                        ((ab[0], bb, cc), np.complex64)]:
        if ON_TPU:      # (the Schur form, or the eigenvectors of A and B)
            _raises_as_jax(mlin.solve_sylvester, jlin.solve_sylvester, *args, method=method,
                           match=NO_TPU_SCHUR if method == "schur" else NO_TPU_EIG)
            continue
        got = mlin.solve_sylvester(*args, method=method)
        assert got.dtype == dtype
        want = _sylvester_scipy(*[np.asarray(x, np.complex128 if dtype == np.complex64
                                              else np.float64) for x in args])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-3, atol=1e-3)


def test_solve_sylvester_singular_and_errors():
    eye = np.eye(2, dtype=np.float32)
    ones = np.ones((2, 2), np.float32)
    if ON_TPU:
        _raises_as_jax(mlin.solve_sylvester, jlin.solve_sylvester, eye, -eye, ones,
                       match=NO_TPU_SCHUR)
    else:
        _same(mlin.solve_sylvester(eye, -eye, ones), jlin.solve_sylvester(eye, -eye, ones))
        _same(mlin.solve_sylvester(eye, -0.9 * eye, ones, tol=0.5),
              jlin.solve_sylvester(eye, -0.9 * eye, ones, tol=0.5))
    _raises_as_jax(mlin.solve_sylvester, jlin.solve_sylvester, eye, eye, ones[:1])
    _raises_as_jax(mlin.solve_sylvester, jlin.solve_sylvester, eye, eye, ones, method="lu")


D, E = np.array([1., 2., 3., 4.], np.float32), np.array([1., 1., 1.], np.float32)


@pytest.mark.parametrize("kw", [{}, {"tol": 1e-3}, {"select": "i", "select_range": (1, 2)}])
def test_eigh_tridiagonal_eigenvalues(kw):
    got = mlin.eigh_tridiagonal(D, E, eigvals_only=True, **kw)
    sel = {k: v for k, v in kw.items() if k != "tol"}
    want = sp_linalg.eigh_tridiagonal(D.astype(np.float64), E.astype(np.float64),
                                      eigvals_only=True, **sel)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, atol=kw.get("tol", 1e-5))


def test_eigh_tridiagonal_eigenvectors():
    """The docstring's matrix, a cluster of equal eigenvalues (orthonormalized; one shape,
    so one compilation), n = 1 (no inverse iteration: on a TPU too)."""
    d, e = np.ones(4, np.float32), np.array([1e-9, 0, 1e-9], np.float32)
    if ON_TPU:      # (inverse iteration: tridiagonal_solve with perturb_singular)
        _raises_as_jax(mlin.eigh_tridiagonal, jlin.eigh_tridiagonal, D, E,
                       match=NO_TPU_PERTURB)
    else:
        _same(mlin.eigh_tridiagonal(D, E), jlin.eigh_tridiagonal(D, E))
        _same(mlin.eigh_tridiagonal(d, e), jlin.eigh_tridiagonal(d, e))
    _same(mlin.eigh_tridiagonal(D[:1], E[:0]), jlin.eigh_tridiagonal(D[:1], E[:0]))


@pytest.mark.skipif(not FULL, reason="full tier (MJAX_TEST_TIER=full): one more compilation")
def test_eigh_tridiagonal_complex_hermitian_and_key():
    _same(mlin.eigh_tridiagonal(D, E[::-1] * 2, key=mjax.random.key(3)),
          jlin.eigh_tridiagonal(D, E[::-1] * 2, key=jax.random.key(3)))
    dc, ec = np.array([1., 2., 3.], np.complex64), np.array([1 + 1j, 2 - 1j], np.complex64)
    _same(mlin.eigh_tridiagonal(dc, ec), jlin.eigh_tridiagonal(dc, ec))


def test_eigh_tridiagonal_errors():
    for args, kw in [((D, E.astype(np.int32)), {}),
                     ((D.astype(np.int32), E.astype(np.int32)), {}),
                     ((D, E), {"select": "v"}), ((D, E), {"select": "q"}),
                     ((D, E), {"select": "i"}), ((D, E), {"select": "i", "select_range": (2, 1)})]:
        _raises_as_jax(mlin.eigh_tridiagonal, jlin.eigh_tridiagonal, *args, **kw)
