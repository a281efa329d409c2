"""mjax.numpy.linalg and mjax.scipy.linalg against NumPy, SciPy and jax: values, dtypes,
batches, edge cases, errors; gradients against jax and finite differences; vmap against a
loop."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
import scipy.linalg as osl

import mjax
import mjax.numpy as jnp
import mjax.scipy.linalg as msl
from frontend_util import ON_TPU, check, skip_where_the_tpu_lacks, x64
from mjax.test_util import check_grads

RNG = np.random.default_rng(7)


def _mat(shape, dtype=np.float32, rng=RNG):
    x = rng.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.normal(size=shape)
    return x.astype(dtype)


def _spd(shape, dtype=np.float32):
    a = _mat(shape, dtype)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def _tol(dtype):
    return 1e-9 if np.dtype(dtype) in (np.float64, np.complex128) else 2e-4


def _close(got, want, dtype, scale=1.0):
    """got has the expected dtype and is close to want (computed in float64 by NumPy)."""
    assert isinstance(got, mjax.Array), type(got)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    tol = _tol(dtype) * scale
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol * 10, atol=tol * 10)


DTYPES = [np.float32, np.float64, np.complex64]


@pytest.fixture(params=DTYPES, ids=lambda d: np.dtype(d).name)
def dtype(request):
    wide = np.dtype(request.param) in (np.float64, np.complex128)
    with x64(wide):
        yield request.param


def _real(dtype):
    return np.finfo(dtype).dtype


# On a TPU JAX has no rule for LAPACK's nonsymmetric eigensolver (jnp.linalg.eig, eigvals,
# roots) and lowers lu to XLA's LuDecomposition, which takes float32 and complex64 only.
NO_TPU_EIG = "MLIR translation rule for primitive 'eig' not found for platform tpu"
NO_TPU_LU64 = "Only F32 and C64 types are implemented in LuDecomposition"


def _raises_as_jax(m, j, match):
    """JAX's call `j` raises an error matching `match`; mjax's `m` raises the same class
    with the same message."""
    with pytest.raises(Exception, match=match) as want:
        j()
    with pytest.raises(want.type, match=match):
        m()


# ---- decompositions -------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_det_slogdet_inv(dtype, shape):
    a = _mat(shape, dtype)
    _close(jnp.linalg.det(a), np.linalg.det(a), dtype, 10)
    sign, logdet = jnp.linalg.slogdet(a)
    want_sign, want_logdet = np.linalg.slogdet(a)
    _close(sign, want_sign, dtype, 10)
    _close(logdet, want_logdet, _real(dtype), 10)
    _close(jnp.linalg.inv(a), np.linalg.inv(a), dtype, 100)


def test_det_edge_cases():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    assert float(jnp.linalg.det(singular)) == 0.0
    sign, logdet = jnp.linalg.slogdet(singular)
    assert float(sign) == 0.0 and float(logdet) == -np.inf
    check(jnp.linalg.det(np.zeros((2, 0, 0), np.float32)), np.ones(2, np.float32))
    check(jnp.linalg.det(np.array([[1, 2], [3, 4]])), np.float32(-2.0))  # ints promote
    assert isinstance(jnp.linalg.slogdet(np.eye(2)), tuple)
    assert jnp.linalg.slogdet(np.eye(2)).logabsdet.shape == ()


@pytest.mark.parametrize("b_shape", [(4,), (4, 2), (3, 4, 2), (1, 4, 2)])
def test_solve_shapes_and_broadcasting(dtype, b_shape):
    a = _mat((3, 4, 4), dtype) + 4 * np.eye(4, dtype=dtype)
    b = _mat(b_shape, dtype)
    got = jnp.linalg.solve(a, b)
    want = np.linalg.solve(a, b)
    _close(got, want, dtype, 10)


def test_solve_errors_match_jax():
    a = np.eye(3, dtype=np.float32)[None].repeat(2, 0)
    with pytest.raises(ValueError, match="Prior to JAX v0.5.0"):
        jnp.linalg.solve(a, np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="at least two dimensional"):
        jnp.linalg.solve(np.ones(3, np.float32), np.ones(3, np.float32))
    with pytest.raises(ValueError, match="square"):
        jnp.linalg.solve(np.ones((2, 3), np.float32), np.ones(2, np.float32))
    with pytest.raises(ValueError, match="rank >= 2"):
        jnp.linalg.eigvals(np.ones(3, np.float32))


def test_cholesky(dtype):
    a = _spd((2, 4, 4), dtype)
    _close(jnp.linalg.cholesky(a), np.linalg.cholesky(a), dtype, 10)
    _close(jnp.linalg.cholesky(a, upper=True), np.linalg.cholesky(a, upper=True), dtype, 10)
    not_pd = -np.eye(3, dtype=dtype)
    assert np.isnan(np.asarray(jnp.linalg.cholesky(not_pd))).any()


@pytest.mark.parametrize("shape", [(5, 3), (2, 3, 5)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_modes(dtype, shape, mode):
    a = _mat(shape, dtype)
    out = jnp.linalg.qr(a, mode=mode)
    want = np.linalg.qr(a, mode=mode)
    if mode == "r":
        assert out.shape == want.shape
        np.testing.assert_allclose(np.abs(np.asarray(out)), np.abs(want), rtol=1e-3, atol=1e-3)
        return
    q, r = out
    assert isinstance(out, jnp.linalg.QRResult)
    assert q.shape == want[0].shape and r.shape == want[1].shape
    _close(q @ r, a, dtype, 10)
    eye = np.eye(q.shape[-1])
    _close(jnp.conj(jnp.swapaxes(q, -1, -2)) @ q, np.broadcast_to(eye, q.shape[:-2] + eye.shape),
           dtype, 10)
    np.testing.assert_array_equal(np.asarray(r), np.triu(np.asarray(r)))


def test_qr_raw_matches_numpy():
    a = _mat((5, 3))
    h, tau = jnp.linalg.qr(a, mode="raw")
    want_h, want_tau = np.linalg.qr(a.astype(np.float64), mode="raw")
    np.testing.assert_allclose(np.asarray(h), want_h, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(tau), want_tau, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode"):
        jnp.linalg.qr(a, mode="bogus")


@pytest.mark.parametrize("shape", [(5, 3), (2, 3, 5)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd(dtype, shape, full_matrices):
    a = _mat(shape, dtype)
    u, s, vh = jnp.linalg.svd(a, full_matrices=full_matrices)
    wu, ws, wvh = np.linalg.svd(a, full_matrices=full_matrices)
    assert (u.shape, s.shape, vh.shape) == (wu.shape, ws.shape, wvh.shape)
    _close(s, ws, _real(dtype), 10)
    k = s.shape[-1]
    rebuilt = (u[..., :, :k] * s[..., None, :].astype(dtype)) @ vh[..., :k, :]
    _close(rebuilt, a, dtype, 10)
    _close(jnp.linalg.svdvals(a), ws, _real(dtype), 10)
    _close(jnp.linalg.svd(a, compute_uv=False), ws, _real(dtype), 10)


def test_svd_hermitian():
    a = _mat((4, 4))
    h = (a + a.T) / 2
    u, s, vh = jnp.linalg.svd(h, hermitian=True)
    np.testing.assert_allclose(np.asarray(s), np.linalg.svd(h, compute_uv=False), rtol=1e-4)
    np.testing.assert_allclose(np.asarray((u * s[None, :]) @ vh), h, atol=1e-4)


@pytest.mark.parametrize("uplo", [None, "L", "U"])
def test_eigh(dtype, uplo):
    a = _mat((2, 4, 4), dtype)
    h = a + np.conj(np.swapaxes(a, -1, -2))
    w, v = jnp.linalg.eigh(h, UPLO=uplo)
    assert isinstance(jnp.linalg.eigh(h), jnp.linalg.EighResult)
    _close(w, np.linalg.eigvalsh(h), _real(dtype), 10)
    _close(v @ (w[..., :, None] * jnp.conj(jnp.swapaxes(v, -1, -2))), h, dtype, 10)
    _close(jnp.linalg.eigvalsh(h), np.linalg.eigvalsh(h), _real(dtype), 10)


def test_eigh_reads_one_triangle_without_symmetrize():
    a = _mat((3, 3))
    h = np.tril(a) + np.tril(a, -1).T
    w = jnp.linalg.eigh(np.tril(a), UPLO="L", symmetrize_input=False).eigenvalues
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(h), rtol=1e-4, atol=1e-5)


def test_eig_and_eigvals():
    a = _mat((2, 4, 4))
    if ON_TPU:      # (JAX's error there: eig is LAPACK's, CPU only)
        _raises_as_jax(lambda: jnp.linalg.eig(a), lambda: jjnp.linalg.eig(a), NO_TPU_EIG)
        _raises_as_jax(lambda: jnp.linalg.eigvals(a), lambda: jjnp.linalg.eigvals(a),
                       NO_TPU_EIG)
        return
    w, v = jnp.linalg.eig(a)
    assert w.dtype == np.complex64 and v.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(a @ v), np.asarray(v * w[..., None, :]), atol=1e-4)
    want = np.linalg.eigvals(a)
    got = np.asarray(jnp.linalg.eigvals(a))
    np.testing.assert_allclose(np.sort_complex(got), np.sort_complex(want), atol=1e-4)


# ---- derived functions -------------------------------------------------------------------
def test_pinv_lstsq_rank(dtype):
    b = _mat((5, 3), dtype)
    _close(jnp.linalg.pinv(b), np.linalg.pinv(b), dtype, 10)
    low_rank = (b[:, :2] @ _mat((2, 3), dtype)).astype(dtype)
    check(jnp.linalg.matrix_rank(low_rank), np.asarray(2, np.int32 if dtype != np.float64
                                                             else np.int64))
    y = _mat((5,), dtype)
    x, resid, rank, s = jnp.linalg.lstsq(b, y)
    wx, wresid, wrank, ws = np.linalg.lstsq(b, y)
    _close(x, wx, dtype, 10)
    _close(resid, wresid, _real(dtype), 10)
    assert int(rank) == wrank
    _close(s, ws, _real(dtype), 10)


def test_matrix_power_multi_dot_tensor_functions():
    a = _mat((2, 3, 3))
    for n in (0, 1, 2, 5, -1, -3):
        np.testing.assert_allclose(np.asarray(jnp.linalg.matrix_power(a, n)),
                                   np.linalg.matrix_power(a, n), rtol=2e-3, atol=2e-3)
    x, y, z = _mat((3,)), _mat((3, 4)), _mat((4, 2))
    np.testing.assert_allclose(np.asarray(jnp.linalg.multi_dot([x, y, z])),
                               np.linalg.multi_dot([x, y, z]), rtol=1e-4)
    t = _mat((2, 3, 6))
    np.testing.assert_allclose(np.asarray(jnp.linalg.tensorinv(t, ind=2)),
                               np.linalg.tensorinv(t, ind=2), rtol=1e-3, atol=1e-3)
    t4, rhs = _mat((2, 3, 2, 3)), _mat((2, 3))
    np.testing.assert_allclose(np.asarray(jnp.linalg.tensorsolve(t4, rhs)),
                               np.linalg.tensorsolve(t4, rhs), rtol=1e-3, atol=1e-3)
    with pytest.raises(TypeError, match="integer"):
        jnp.linalg.matrix_power(a, 1.5)


def test_array_api_helpers():
    u, v = _mat((2, 3)), _mat((2, 3))
    check(jnp.linalg.cross(u, v), np.cross(u, v))
    check(jnp.linalg.cross(u.T, v.T, axis=0), np.cross(u.T, v.T, axis=0))
    check(jnp.linalg.outer(u[0], v[1]), np.outer(u[0], v[1]))
    c = _mat((2, 3), np.complex64)
    check(jnp.linalg.vecdot(c, c), np.sum(np.conj(c) * c, axis=-1))
    m = _mat((2, 3, 4))
    check(jnp.linalg.matrix_transpose(m), np.swapaxes(m, -1, -2))
    check(jnp.linalg.trace(m, offset=1), np.trace(m, offset=1, axis1=-2, axis2=-1))
    check(jnp.linalg.diagonal(m), np.diagonal(m, axis1=-2, axis2=-1))
    check(jnp.linalg.matmul(m, m.swapaxes(-1, -2)), m @ m.swapaxes(-1, -2), rtol=1e-5)
    with pytest.raises(ValueError, match="3-dimensional vectors"):
        jnp.linalg.cross(m, m)


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norms_every_ord(ord):
    a = _mat((2, 3, 4))
    np.testing.assert_allclose(np.asarray(jnp.linalg.norm(a, ord=ord, axis=(1, 2))),
                               np.linalg.norm(a, ord=ord, axis=(1, 2)), rtol=1e-4)
    np.testing.assert_allclose(np.asarray(jnp.linalg.norm(a[0], ord=ord, keepdims=True)),
                               np.linalg.norm(a[0], ord=ord, keepdims=True), rtol=1e-4)
    np.testing.assert_allclose(np.asarray(jnp.linalg.norm(a, ord=ord, axis=(2, 0))),
                               np.linalg.norm(a, ord=ord, axis=(2, 0)), rtol=1e-4)


@pytest.mark.parametrize("p", [None, 1, -1, 2, -2, "fro", np.inf])
def test_cond(p):
    a = _mat((2, 3, 3))
    np.testing.assert_allclose(np.asarray(jnp.linalg.cond(a, p)), np.linalg.cond(a, p),
                               rtol=1e-3)


# ---- scipy.linalg --------------------------------------------------------------------------
@pytest.mark.parametrize("trans", [0, 1, 2, "T", "C"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_triangular(trans, lower):
    a = _mat((4, 4), np.complex64) + 4 * np.eye(4, dtype=np.complex64)
    b = _mat((4, 2), np.complex64)
    tri = np.tril(a) if lower else np.triu(a)
    got = msl.solve_triangular(tri, b, trans=trans, lower=lower)
    np.testing.assert_allclose(np.asarray(got), osl.solve_triangular(tri, b, trans=trans,
                                                                     lower=lower), atol=1e-5)
    got = msl.solve_triangular(tri, b[:, 0], trans=trans, lower=lower, unit_diagonal=True)
    want = osl.solve_triangular(tri, b[:, 0], trans=trans, lower=lower, unit_diagonal=True)
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-4)


def test_solve_triangular_batched_and_bad_trans():
    a = np.tril(_mat((3, 4, 4))) + 4 * np.eye(4, dtype=np.float32)
    b = _mat((4, 2))
    got = msl.solve_triangular(a, b, lower=True)
    want = np.stack([osl.solve_triangular(x, b, lower=True) for x in a])
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-5)
    with pytest.raises(ValueError, match="Invalid 'trans'"):
        msl.solve_triangular(a, b, trans=3)


@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_family(lower):
    a = _spd((4, 4), np.float64).astype(np.float32)
    b = _mat((4, 3))
    np.testing.assert_allclose(np.asarray(msl.cholesky(a, lower=lower)),
                               osl.cholesky(a, lower=lower), rtol=1e-4, atol=1e-5)
    c = msl.cho_factor(a, lower=lower)
    assert c[1] is lower
    np.testing.assert_allclose(np.asarray(msl.cho_solve(c, b)),
                               osl.cho_solve(osl.cho_factor(a, lower=lower), b), atol=1e-5)
    np.testing.assert_allclose(np.asarray(msl.solve(a, b, assume_a="pos", lower=lower)),
                               osl.solve(a, b, assume_a="pos", lower=lower), atol=1e-5)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_lu_family(shape):
    a = _mat(shape)
    for got, want in zip(msl.lu(a), osl.lu(a)):
        np.testing.assert_allclose(np.asarray(got), want, atol=1e-5)
    for got, want in zip(msl.lu(a, permute_l=True), osl.lu(a, permute_l=True)):
        np.testing.assert_allclose(np.asarray(got), want, atol=1e-5)
    if shape[0] == shape[1]:
        lu, piv = msl.lu_factor(a)
        wlu, wpiv = osl.lu_factor(a)
        np.testing.assert_allclose(np.asarray(lu), wlu, atol=1e-5)
        np.testing.assert_array_equal(np.asarray(piv), wpiv)
        b = _mat((4, 2))
        for trans in (0, 1, 2):
            np.testing.assert_allclose(np.asarray(msl.lu_solve((lu, piv), b, trans=trans)),
                                       osl.lu_solve((wlu, wpiv), b, trans=trans), atol=1e-4)


def test_lax_lu_pivots_and_permutation_batched():
    a = _mat((3, 5, 4))
    lu, pivots, perm = mjax.lax.linalg.lu(a)
    jlu, jpiv, jperm = jax.lax.linalg.lu(a)
    np.testing.assert_array_equal(np.asarray(pivots), np.asarray(jpiv))
    np.testing.assert_array_equal(np.asarray(perm), np.asarray(jperm))
    np.testing.assert_allclose(np.asarray(lu), np.asarray(jlu), atol=1e-5)
    np.testing.assert_array_equal(
        np.asarray(mjax.lax.linalg.lu_pivots_to_permutation(pivots, 5)), np.asarray(jperm))


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex64])
def test_expm(dt):
    with x64(np.dtype(dt) == np.float64):
        for scale in (0.1, 1.0, 20.0):
            a = (scale * _mat((3, 3), dt)).astype(dt)
            want = osl.expm(a.astype(np.complex128 if np.dtype(dt).kind == "c" else np.float64))
            got = msl.expm(a)
            assert got.dtype == np.dtype(dt)
            np.testing.assert_allclose(np.asarray(got), want, rtol=_tol(dt) * 50,
                                       atol=_tol(dt) * 50 * np.abs(want).max())
    a = _mat((2, 3, 3))
    np.testing.assert_allclose(np.asarray(msl.expm(a)), np.stack([osl.expm(x) for x in a]),
                               rtol=1e-3, atol=1e-4)
    t = np.triu(_mat((3, 3)))
    np.testing.assert_allclose(np.asarray(msl.expm(t, upper_triangular=True)), osl.expm(t),
                               rtol=1e-3, atol=1e-4)


def test_scipy_eigh_qr_svd_inv_det_solve_block_diag():
    a, b = _mat((4, 4)), _mat((4, 2))
    h = a + a.T
    w, v = msl.eigh(h)
    np.testing.assert_allclose(np.asarray(w), osl.eigh(h)[0], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(msl.eigh(h, eigvals_only=True, lower=False)),
                               osl.eigh(h, eigvals_only=True, lower=False), rtol=1e-4,
                               atol=1e-4)
    q, r = msl.qr(b)
    assert q.shape == (4, 4) and r.shape == (4, 2)
    q, r = msl.qr(b, mode="economic")
    assert q.shape == (4, 2) and r.shape == (2, 2)
    (r,) = msl.qr(b, mode="r")
    assert r.shape == (4, 2)
    np.testing.assert_allclose(np.asarray(msl.svd(b, compute_uv=False)),
                               osl.svd(b, compute_uv=False), rtol=1e-4)
    assert len(msl.svd(b)) == 3
    np.testing.assert_allclose(np.asarray(msl.inv(a)), osl.inv(a), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(np.asarray(msl.det(a)), osl.det(a), rtol=1e-4)
    for assume_a in ("gen", "sym", "her"):
        np.testing.assert_allclose(np.asarray(msl.solve(h, b, assume_a=assume_a)),
                                   osl.solve(h, b, assume_a=assume_a), rtol=1e-3, atol=1e-4)
    with pytest.raises(ValueError, match="assume_a"):
        msl.solve(h, b, assume_a="banded")
    with pytest.raises(NotImplementedError):
        msl.eigh(h, b=h)
    check(msl.block_diag(a[:2, :3], b, 7.0, np.ones(2, np.float32)),
          osl.block_diag(a[:2, :3], b, 7.0, np.ones(2)).astype(np.float32))


# ---- gradients -----------------------------------------------------------------------------
A = _mat((3, 3))
TALL = _mat((4, 3))
SPD = _spd((3, 3), np.float64).astype(np.float32)
W9 = np.arange(9, dtype=np.float32).reshape(3, 3) / 9
W12 = np.arange(12, dtype=np.float32).reshape(4, 3) / 12

GRAD_CASES = {
    "det": (lambda L: lambda x: L.det(x), A),
    "slogdet": (lambda L: lambda x: L.slogdet(x)[1], A),
    "inv": (lambda L: lambda x: (L.inv(x) * W9).sum(), A),
    "solve": (lambda L: lambda x: (L.solve(x, W9) ** 2).sum(), A),
    "cholesky": (lambda L: lambda x: (L.cholesky(x) * W9).sum(), SPD),
    "eigh": (lambda L: lambda x: (L.eigh(x)[0] * W9[0]).sum()
             + (L.eigh(x)[1][0] ** 2 * W9[1]).sum(), SPD),
    "svdvals": (lambda L: lambda x: (L.svd(x, compute_uv=False) * W9[0]).sum(), TALL),
    "svd": (lambda L: lambda x: (lambda u, s, vh: (u[:, 0] * u[:, 1]).sum()
                                 + (vh ** 2 * W9).sum() + s.sum())(
        *L.svd(x, full_matrices=False)), TALL),
    "qr": (lambda L: lambda x: (lambda q, r: (q * W12).sum() + (r ** 2).sum())(*L.qr(x)), TALL),
    "qr_wide": (lambda L: lambda x: (lambda q, r: (q * W9).sum() + (r * W12.T).sum())(
        *L.qr(x)), TALL.T.copy()),
    "pinv": (lambda L: lambda x: (L.pinv(x) * W12.T).sum(), TALL),
    "norm2": (lambda L: lambda x: L.norm(x, 2), TALL),
    "nuc": (lambda L: lambda x: L.norm(x, "nuc"), TALL),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grad_matches_jax(name):
    make, x = GRAD_CASES[name]
    got = mjax.grad(make(jnp.linalg))(x)
    want = jax.grad(make(jjnp.linalg))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-3, atol=2e-4)
    np.testing.assert_allclose(np.asarray(mjax.jit(mjax.grad(make(jnp.linalg)))(x)),
                               np.asarray(want), rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("name", ["det", "inv", "solve", "cholesky", "eigh", "svd", "qr"])
def test_grads_match_finite_differences(name):
    make, x = GRAD_CASES[name]
    if ON_TPU and name in ("inv", "solve"):
        # (JAX's TPU lu is XLA's LuDecomposition, float32 only: float64 fails to compile
        # there, in JAX too; float32 differences are coarse, hence the tolerances)
        with x64():
            x64_ = x.astype(np.float64)
            _raises_as_jax(lambda: make(jnp.linalg)(x64_), lambda: make(jjnp.linalg)(x64_),
                           NO_TPU_LU64)
        check_grads(make(jnp.linalg), (x,), order=1, modes=("fwd", "rev"), eps=1e-3,
                    atol=2e-2, rtol=2e-2)
        return
    with x64():
        check_grads(make(jnp.linalg), (x.astype(np.float64),), order=1, modes=("fwd", "rev"))


def test_grads_of_triangular_solve_and_lu_match_finite_differences():
    tri = np.tril(_mat((3, 3))) + 3 * np.eye(3, dtype=np.float32)
    b = _mat((3, 2))
    with x64():
        def f(a, rhs):
            return msl.solve_triangular(a, rhs, lower=True, trans=1)
        check_grads(f, (tri.astype(np.float64), b.astype(np.float64)), order=1)

        def g(a):
            p, l, u = msl.lu(a)
            return (l * W12[:3]).sum() + (u ** 2).sum()
        check_grads(g, (_mat((3, 3)).astype(np.float64),), order=1)
        check_grads(lambda a: msl.expm(a), (0.5 * A.astype(np.float64),), order=1,
                    modes=("rev",))


def test_complex_grads_match_jax():
    c = _mat((3, 3), np.complex64) + 3 * np.eye(3, dtype=np.complex64)

    def f(L):
        return lambda x: jnp_abs(L, L.det(x)) + (jnp_abs(L, L.inv(x)) ** 2).sum()

    def jnp_abs(L, v):
        return (v * v.conj()).real

    got = mjax.grad(f(jnp.linalg))(c)
    want = jax.grad(f(jjnp.linalg))(c)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-3, atol=1e-3)


def test_svd_full_matrices_jvp_not_implemented_as_jax():
    with pytest.raises(NotImplementedError, match="full matrices"):
        mjax.grad(lambda x: jnp.linalg.svd(x, full_matrices=True)[0].sum())(TALL)


# ---- vmap ------------------------------------------------------------------------------------
VMAP_CASES = {
    "det": (lambda x: jnp.linalg.det(x), (_mat((5, 3, 3)),), 0),
    "solve": (lambda a, b: jnp.linalg.solve(a, b), (_mat((3, 5, 3)), _mat((3, 2))), (1, None)),
    "solve_b": (lambda a, b: jnp.linalg.solve(a, b), (A, _mat((3, 2, 5))), (None, 2)),
    "cholesky": (lambda x: jnp.linalg.cholesky(x), (_spd((5, 3, 3)),), 0),
    "eigh": (lambda x: jnp.linalg.eigh(x)[0], (_spd((5, 3, 3)),), 0),
    "svd": (lambda x: jnp.linalg.svd(x)[1], (_mat((5, 4, 3)),), 0),
    "qr": (lambda x: jnp.abs(jnp.linalg.qr(x)[1]), (_mat((5, 4, 3)),), 0),
    "eigvals": (lambda x: jnp.linalg.eigvals(x), (_mat((5, 3, 3)),), 0),
    "solve_triangular": (lambda a, b: msl.solve_triangular(a, b, lower=True),
                         (np.tril(_mat((5, 3, 3))) + 3 * np.eye(3, dtype=np.float32),
                          _mat((3, 2))), (0, None)),
    "solve_triangular_b": (lambda a, b: msl.solve_triangular(a, b, lower=True, trans=1),
                           (np.tril(A) + 3 * np.eye(3, dtype=np.float32), _mat((3, 5, 2))),
                           (None, 1)),
    "triangular_solve_right_b": (
        lambda a, b: mjax.lax.linalg.triangular_solve(a, b, left_side=False, lower=True),
        (np.tril(_mat((2, 3, 3))) + 3 * np.eye(3, dtype=np.float32), _mat((2, 4, 3, 5))),
        (None, 3)),
    "grad_det": (mjax.grad(lambda x: jnp.linalg.det(x)), (_mat((5, 3, 3)),), 0),
}


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap_matches_loop(name):
    f, args, in_axes = VMAP_CASES[name]
    if ON_TPU and name == "eigvals":    # (JAX's error there: eig is LAPACK's, CPU only)
        with pytest.raises(NotImplementedError, match=NO_TPU_EIG):
            mjax.vmap(f, in_axes=in_axes)(*args)
        return
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,)
    n = next(x.shape[d] for x, d in zip(args, axes) if d is not None)
    want = np.stack([np.asarray(f(*[x if d is None else np.take(x, i, axis=d)
                                     for x, d in zip(args, axes)])) for i in range(n)])
    np.testing.assert_allclose(np.asarray(mjax.vmap(f, in_axes=in_axes)(*args)), want,
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(mjax.jit(mjax.vmap(f, in_axes=in_axes))(*args)),
                               want, rtol=1e-4, atol=1e-5)


# ---- staging -----------------------------------------------------------------------------------
def _lowered_for(lib, platform, f, *args):
    return lib.jit(f).trace(*args).lower(lowering_platforms=(platform,)).as_text()


def test_lowering_uses_lapack_custom_calls_and_stablehlo_ops():
    # (slogdet: det of a 3x3 matrix is JAX's closed form, no LU)
    def f(np_):
        return lambda a: (np_.linalg.slogdet(a)[1], np_.linalg.cholesky(a @ a.T),
                          np_.linalg.eigh(a)[0])
    # (lowered for the CPU wherever this runs: the chip's lowering is checked below)
    text = _lowered_for(mjax, "cpu", f(jnp), A)
    assert "lapack_sgetrf_ffi" in text and "lapack_ssyevd_ffi" in text
    # (cholesky and triangular solves: LAPACK on a CPU, as JAX's; StableHLO's ops under
    # IREE, which test_iree runs)
    assert "lapack_spotrf_ffi" in text and "stablehlo.cholesky" not in text
    text = _lowered_for(mjax, "cpu", lambda a, b: msl.solve_triangular(a, b, lower=True), A, A)
    assert "lapack_strsm_ffi" in text and "stablehlo.triangular_solve" not in text
    # For a TPU, as JAX's: XLA's LuDecomposition and Eigh, StableHLO's cholesky.
    for lib, np_ in ((mjax, jnp), (jax, jjnp)):
        text = _lowered_for(lib, "tpu", f(np_), A)
        assert "@LuDecomposition" in text and "@Eigh" in text, lib
        assert "stablehlo.cholesky" in text and "lapack" not in text, lib
    jaxpr = str(mjax.make_jaxpr(lambda a: jnp.linalg.svd(a))(A))
    assert "svd" in jaxpr


def test_eigvals_grad_matches_jax_and_eigenvectors_raise():
    a = _mat((2, 4, 4))

    def f(np_):
        return lambda x: np_.sum(np_.real(np_.linalg.eigvals(x)) ** 2
                                 + np_.imag(np_.linalg.eigvals(x)) * np.arange(4))
    if ON_TPU:      # (JAX's error there: eig is LAPACK's, CPU only)
        _raises_as_jax(lambda: mjax.grad(f(jnp))(a), lambda: jax.grad(f(jjnp))(a),
                       NO_TPU_EIG)
    else:
        np.testing.assert_allclose(np.asarray(mjax.grad(f(jnp))(a)),
                                   np.asarray(jax.grad(f(jjnp))(a)), rtol=1e-3, atol=1e-4)
    # (raised by the derivative rule, before any lowering: on a TPU too)
    with pytest.raises(NotImplementedError, match="non-symmetric eigenvectors"):
        mjax.grad(lambda x: jnp.real(jnp.linalg.eig(x)[1]).sum())(a)


def test_half_precision_as_jax():
    # JAX's det of a 2x2 or 3x3 matrix is a closed form, computed in float16; larger
    # matrices go through LU, which LAPACK has no half floats for: jaxlib's error when
    # lowered for the CPU (for a TPU, XLA's factorizations take float16 as it is).
    a = _mat((3, 3)).astype(np.float16)
    got, want = jnp.linalg.det(a), jjnp.linalg.det(a)
    assert got.dtype == want.dtype == np.float16
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    if ON_TPU:
        return      # (the rest is the CPU's: LAPACK refuses half floats)
    b = _mat((4, 4)).astype(np.float16)
    for f in (lambda L: L.svd(b, compute_uv=False), lambda L: L.inv(b),
              lambda L: L.det(b)):
        with pytest.raises(NotImplementedError) as theirs:
            f(jjnp.linalg)
        with pytest.raises(NotImplementedError) as mine:
            f(jnp.linalg)
        assert str(mine.value) == str(theirs.value) == (
            "(KeyError(<class 'numpy.float16'>), 'Unsupported dtype float16.')")


def test_slogdet_qr_method_matches_jax():
    a = _mat((2, 4, 4))
    for got, want in zip(jnp.linalg.slogdet(a, method="qr"), jjnp.linalg.slogdet(a, method="qr")):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="Unknown slogdet method"):
        jnp.linalg.slogdet(a, method="svd")


@pytest.mark.parametrize("call,exc,match", [
    (lambda L: L.norm(np.ones((2, 2, 2), np.float32), ord=2), ValueError,
     "Improper number of axes"),
    (lambda L: L.cross(np.ones(2, np.float32), np.ones(2, np.float32)), ValueError,
     "3-dimensional vectors"),
    (lambda L: L.vecdot(np.ones(2, np.float32), np.ones(3, np.float32)), ValueError,
     "axes must match"),
    (lambda L: L.matrix_power(np.ones((2, 3), np.float32), 2), TypeError, "must be square"),
    (lambda L: L.det(np.ones((2, 3), np.float32)), ValueError, r"shape \[\.\.\., n, n\]"),
    (lambda L: L.inv(np.ones((2, 3), np.float32)), ValueError, r"shape \[\.\.\., n, n\]"),
    (lambda L: L.lstsq(np.ones((2, 3), np.float32), np.ones(3, np.float32)), ValueError,
     "Leading dimensions"),
    (lambda L: L.outer(np.ones((2, 2), np.float32), np.ones(2, np.float32)), ValueError,
     "one-dimensional"),
    (lambda L: L.eigh(np.eye(2, dtype=np.float32), UPLO="X"), ValueError, "UPLO"),
])
def test_errors_match_jax(call, exc, match):
    with pytest.raises(exc, match=match):
        call(jjnp.linalg)
    with pytest.raises(exc, match=match):
        call(jnp.linalg)


@pytest.mark.parametrize("name", ["det", "slogdet", "inv", "cholesky", "eigh", "svdvals", "qr"])
def test_hessian_matches_jax(name):
    # Second order: JVP rules whose tangent parts (triangular solves, masks, products)
    # must themselves linearize and transpose.
    make, x = GRAD_CASES[name]
    got = mjax.hessian(make(jnp.linalg))(x)
    want = jax.hessian(make(jjnp.linalg))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=5e-3,
                               atol=5e-3 * max(1.0, float(np.abs(np.asarray(want)).max())))


_C4 = _mat((4,))
_R3 = _mat((3,))
_CB = _mat((2, 4))
SPECIAL = [("toeplitz", (_C4, _R3)), ("toeplitz", (_C4,)), ("toeplitz", (_CB, _R3)),
           ("toeplitz", (_mat((4,), np.complex64),)), ("hankel", (_C4, _R3)),
           ("hankel", (_CB,)), ("circulant", (_CB,)), ("hilbert", (4,)), ("fiedler", (_CB,)),
           ("companion", (_CB,)), ("leslie", (_CB, _R3)), ("dft", (5,)), ("dft", (4, "sqrtn")),
           ("helmert", (5,)), ("helmert", (4, True))]


@pytest.mark.parametrize("name,args", SPECIAL, ids=[f"{n}{i}" for i, (n, _) in enumerate(SPECIAL)])
def test_special_matrices_match_jax(name, args):
    got = getattr(msl, name)(*args)
    want = getattr(jax.scipy.linalg, name)(*args)
    check(got, np.asarray(want), rtol=1e-5, atol=1e-6)


def test_geqrf_householder_product_match_jax():
    a = _mat((2, 5, 3))
    h, taus = mjax.lax.linalg.geqrf(a)
    q = mjax.lax.linalg.householder_product(h, taus)
    want = jax.lax.linalg.householder_product(np.asarray(h), np.asarray(taus))
    np.testing.assert_allclose(np.asarray(q), np.asarray(want), atol=1e-6)
    np.testing.assert_allclose(np.asarray(q), np.linalg.qr(a)[0], atol=1e-5)
    batched = mjax.vmap(mjax.lax.linalg.householder_product, in_axes=(0, 1))(h, np.asarray(taus).T)
    np.testing.assert_allclose(np.asarray(batched), np.asarray(want), atol=1e-6)


def test_expm_complex128():
    skip_where_the_tpu_lacks(np.complex128)
    a = _mat((3, 3), np.complex128) * 2
    with x64():
        got = msl.expm(a)
        assert got.dtype == np.complex128
        np.testing.assert_allclose(np.asarray(got), osl.expm(a), rtol=1e-9, atol=1e-9)


def test_multi_dot_multiplies_in_the_cheapest_order():
    # (10x100)(100x10)(10x100): (xy)z costs 20,000 multiplies, x(yz) 200,000
    rng = np.random.default_rng(0)
    x, y, z = rng.random((10, 100)), rng.random((100, 10)), rng.random((10, 100))
    flops = []
    for lib in (mjax, jax):
        lowered = lib.jit(lib.numpy.linalg.multi_dot).lower([x, y, z])
        # (xy first: a 10x10 product, then with z; never yz, 100x100)
        text = lowered.as_text()
        assert "-> tensor<10x10xf32>" in text and "tensor<100x100xf32>" not in text, lib
        cost = lowered.cost_analysis()
        flops.append(None if cost is None else cost["flops"])
    # (None where the backend has no estimate before compiling, a PJRT plugin's, the
    # chip's: JAX's too)
    assert flops[0] == flops[1] and flops[0] in ((None, 40000.0) if ON_TPU else (40000.0,))
    v = rng.random(10)
    np.testing.assert_allclose(mjax.numpy.linalg.multi_dot([v, y.T, x.T, v]),
                               np.linalg.multi_dot([v, y.T, x.T, v]), rtol=1e-5)


def test_cholesky_and_triangular_solve_on_lapack_match_jax():
    """potrf/trsm (the CPU lowering): a matrix potrf cannot factor is NaN in its batch
    only, complex and conjugated/unit-diagonal solves, empty right-hand sides."""
    a = np.array([[1., 2.], [2., 1.]], np.float32)
    b = np.stack([a, np.eye(2, dtype=np.float32) * 4])
    c = np.array([[2, 0], [1j, 3]], np.complex64)
    cases = [
        lambda np_, sl, lax: np_.linalg.cholesky(b),
        lambda np_, sl, lax: np_.linalg.cholesky(np.array([[4 + 0j, 1j], [-1j, 2]],
                                                          np.complex64)),
        lambda np_, sl, lax: sl.solve_triangular(np.tril(b) + 3 * np.eye(2), np.ones((2, 2, 3)),
                                                 lower=True, trans="C", unit_diagonal=True),
        lambda np_, sl, lax: sl.solve_triangular(c, np.ones((2,), np.complex64), lower=True,
                                                 trans=2),
        lambda np_, sl, lax: lax.linalg.triangular_solve(
            c, np.ones((3, 2), np.complex64), left_side=False, lower=True, transpose_a=False,
            conjugate_a=True),
        lambda np_, sl, lax: sl.solve_triangular(np.eye(3, dtype=np.float32),
                                                 np.ones((3, 0), np.float32)),
    ]
    for case in cases:
        got = mjax.jit(lambda: case(jnp, msl, mjax.lax))()
        want = jax.jit(lambda: case(jjnp, jax.scipy.linalg, jax.lax))()
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n", [2, 3, 4, 16])
def test_det_is_jaxs_bit_for_bit(n):
    # JAX's formulas (closed forms for 2x2 and 3x3, sign * exp(log|det|) beyond) and its
    # cofactor derivative, singular matrices included: the same bits on the CPU
    import jax
    import jax.numpy as jjnp
    rng = np.random.default_rng(n)
    a = rng.standard_normal((2, n, n)).astype(np.float32)
    sing = np.ones((n, n), np.float32)
    sing[0, 0] = 2.0        # rank 2 (n-1 for n = 3)
    for x in (a, sing):
        pairs = [(jnp.linalg.det(x), jjnp.linalg.det(x)),
                 (mjax.grad(lambda t: jnp.sum(jnp.linalg.det(t)))(x),
                  jax.grad(lambda t: jjnp.sum(jjnp.linalg.det(t)))(x))]
        for mine, theirs in pairs:
            assert np.asarray(mine).tobytes() == np.asarray(theirs).tobytes(), (n, mine, theirs)
