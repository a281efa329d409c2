"""mjax.lax.linalg's tridiagonal_solve, tridiagonal, hessenberg, schur, ormqr, qdwh,
symmetric_product, cholesky_update, the linalg enums and lax.platform_dependent, against
jax, NumPy and SciPy: values, reconstructions (up to the reflectors' gauge), dtypes,
gradients (jax and finite differences), vmap, errors."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
import scipy.linalg as osl

import mjax
import mjax.numpy as jnp
import mjax.scipy.linalg as msl
from frontend_util import ON_TPU, skip_where_the_tpu_lacks, x64
from mjax import lax
from mjax.lax import linalg as ml
from mjax.test_util import check_grads

jl = jax.lax.linalg
RNG = np.random.default_rng(11)
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _mat(shape, dtype=np.float32):
    x = RNG.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.normal(size=shape)
    return x.astype(dtype)


def _tol(dtype):
    return 1e-10 if np.dtype(dtype) in (np.float64, np.complex128) else 3e-4


def _wide(dtype):
    return np.dtype(dtype) in (np.float64, np.complex128)


def _same(got, want, dtype, tol=None):
    assert isinstance(got, mjax.Array), type(got)
    assert got.dtype == np.dtype(dtype) and got.shape == np.shape(want)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol or _tol(dtype),
                               atol=tol or _tol(dtype))


def _dense(dl, d, du):
    """The tridiagonal matrices of (..., m) diagonals, as (..., m, m)."""
    m = d.shape[-1]
    return (d[..., :, None] * np.eye(m) + dl[..., :, None] * np.eye(m, k=-1)
            + du[..., :, None] * np.eye(m, k=1))


def _householders(packed, taus, below: int):
    """Q = H_1 ... H_k from reflectors stored `below` places under the diagonal."""
    n = packed.shape[-1]
    q = np.eye(n, dtype=packed.dtype)
    for i, tau in enumerate(taus):
        v = np.zeros(n, packed.dtype)
        v[i + below] = 1
        v[i + below + 1:] = packed[i + below + 1:, i]
        q = q @ (np.eye(n) - tau * np.outer(v, v.conj()))
    return q


# ---- tridiagonal_solve ---------------------------------------------------------------------
def _system(batch, m, n, dtype):
    dl, d, du = (_mat(batch + (m,), dtype) for _ in range(3))
    d = d + 4 * np.sign(d.real)          # well conditioned
    dl[..., 0] = 0
    du[..., -1] = 0
    return dl, d, du, _mat(batch + (m, n), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tridiagonal_solve_matches_jax_and_scipy(dtype):
    with x64(_wide(dtype)):
        dl, d, du, b = _system((2,), 6, 3, dtype)
        got = ml.tridiagonal_solve(dl, d, du, b)
        _same(got, jl.tridiagonal_solve(dl, d, du, b), dtype)
        ab = np.stack([np.roll(du[0], 1), d[0], np.roll(dl[0], -1)])
        _same(got[0], osl.solve_banded((1, 1), ab, b[0]), dtype)
        np.testing.assert_allclose(_dense(dl, d, du) @ np.asarray(got), b,
                                   atol=10 * _tol(dtype))


def test_tridiagonal_solve_pivoting_singular_and_perturbed():
    # d[0] = 0 needs a row exchange (gtsv pivots; a plain Thomas sweep would divide by 0).
    dl = np.array([0., 1., 1.], np.float32)
    d = np.array([0., 2., 1.], np.float32)
    du = np.array([1., 1., 0.], np.float32)
    b = np.arange(6, dtype=np.float32).reshape(3, 2)
    if ON_TPU:
        # JAX lowers tridiagonal_solve for a TPU with its generic Thomas sweep: no row
        # exchanges (d[0] = 0 divides by zero there too) and no perturb_singular.
        _same(ml.tridiagonal_solve(dl, d, du, b), jl.tridiagonal_solve(dl, d, du, b),
              np.float32)
        for lib in (ml, jl):
            with pytest.raises(NotImplementedError, match="perturb_singular"):
                lib.tridiagonal_solve(dl, d + 1, du, b, perturb_singular=True)
        return
    _same(ml.tridiagonal_solve(dl, d, du, b), np.linalg.solve(_dense(dl, d, du), b),
          np.float32)
    sing = np.zeros(3, np.float32)
    assert np.isnan(np.asarray(ml.tridiagonal_solve(sing, sing, sing, b))).all()
    want = jl.tridiagonal_solve(sing, sing + 1e-30, sing, b, perturb_singular=True)
    got = ml.tridiagonal_solve(sing, sing + 1e-30, sing, b, perturb_singular=True)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert np.isfinite(np.asarray(got)).all()


def test_tridiagonal_solve_jit_and_grads():
    dl, d, du, b = _system((), 5, 2, np.float32)

    def loss(sol):
        return lambda dl, d, du, b: (sol(dl, d, du, b) ** 2).sum()
    got = mjax.jit(mjax.grad(loss(ml.tridiagonal_solve), argnums=(0, 1, 2, 3)))(dl, d, du, b)
    want = jax.grad(loss(jl.tridiagonal_solve), argnums=(0, 1, 2, 3))(dl, d, du, b)
    for g, w in zip(got, want):
        _same(g, w, np.float32)
    with x64():
        args = [a.astype(np.float64) for a in _system((2,), 4, 2, np.float32)]
        check_grads(ml.tridiagonal_solve, args, order=1, modes=("fwd", "rev"))
        skip_where_the_tpu_lacks(np.complex128)     # (the rest is complex128)
        c = [jnp.asarray(a.astype(np.complex128) + 0.5j) for a in args]
        check_grads(lambda b: ml.tridiagonal_solve(*c[:3], b), (c[3],), order=1)


def test_tridiagonal_solve_vmap():
    dl, d, du, b = _system((3,), 5, 2, np.float32)
    # only b batched: folded into b's columns
    got = mjax.vmap(ml.tridiagonal_solve, (None, None, None, 0))(dl[0], d[0], du[0], b)
    _same(got, jax.vmap(jl.tridiagonal_solve, (None, None, None, 0))(dl[0], d[0], du[0], b),
          np.float32)
    got = mjax.vmap(ml.tridiagonal_solve, (0, 0, None, 2), 1)(dl, d, du[0],
                                                             np.moveaxis(b, 0, 2))
    want = np.stack([np.linalg.solve(_dense(dl[i], d[i], du[0]), b[i]) for i in range(3)], 1)
    _same(got, want, np.float32)


def test_tridiagonal_solve_errors():
    f = np.ones(3, np.float32)
    b = np.ones((3, 2), np.float32)
    with pytest.raises(TypeError, match="same shape"):
        ml.tridiagonal_solve(f, f, np.ones(4, np.float32), b)
    with pytest.raises(TypeError, match="leading ndim-1"):
        ml.tridiagonal_solve(f, f, f, np.ones((4, 2), np.float32))
    with pytest.raises(TypeError, match="rank at least 2"):
        ml.tridiagonal_solve(f, f, f, f)
    with pytest.raises(TypeError, match="does not accept dtype int32"):
        ml.tridiagonal_solve(*(x.astype(np.int32) for x in (f, f, f, b)))
    with x64(), pytest.raises(TypeError, match="same dtypes, got float32, float64"):
        ml.tridiagonal_solve(f, f.astype(np.float64), f, b)
    # reverse mode through the diagonals (transposes only the solve's linear rhs)
    dl, d, du, b = _system((), 4, 2, np.float32)
    _same(mjax.jacrev(lambda d: ml.tridiagonal_solve(dl, d, du, b))(d),
          jax.jacrev(lambda d: jl.tridiagonal_solve(dl, d, du, b))(d), np.float32)


def test_without_lapack_generic_forms(monkeypatch):
    # On platforms without LAPACK or GPU solvers (IREE) tridiagonal_solve and ormqr take
    # JAX's generic forms (Thomas sweep, reflectors one by one); the reductions raise.
    monkeypatch.setattr(ml, "lapack_available", lambda: False)
    monkeypatch.setattr(ml, "solver_kernels_available", lambda: False)
    dl, d, du, b = _system((2,), 5, 2, np.complex64)
    want = jl.tridiagonal_solve(dl, d, du, b)
    _same(ml.tridiagonal_solve(dl, d, du, b), want, np.complex64)
    _same(mjax.vmap(ml.tridiagonal_solve)(dl, d, du, b), want, np.complex64)
    r = [x.real.astype(np.float32) for x in (dl, d, du, b)]
    _same(mjax.grad(lambda d: (ml.tridiagonal_solve(r[0], d, r[2], r[3]) ** 2).sum())(r[1]),
          jax.grad(lambda d: (jl.tridiagonal_solve(r[0], d, r[2], r[3]) ** 2).sum())(r[1]),
          np.float32)
    one = [x[0, :1] for x in (dl, d, du)] + [b[0, :1]]
    _same(ml.tridiagonal_solve(*one), jl.tridiagonal_solve(*one), np.complex64)
    with pytest.raises(NotImplementedError, match="perturb_singular"):
        ml.tridiagonal_solve(dl, d, du, b, perturb_singular=True)
    x = _mat((2, 5, 3), np.complex64)
    h, taus = jjnp.linalg.qr(x, mode="raw")
    for left, transpose in ((True, False), (False, True)):
        c = _mat((2, 5, 4) if left else (2, 4, 5), np.complex64)
        _same(ml.ormqr(np.asarray(h.mT), np.asarray(taus), c, left=left, transpose=transpose),
              jl.ormqr(h.mT, taus, c, left=left, transpose=transpose), np.complex64)
    # (for a TPU, JAX's error: it has no rule there for these)
    message = "not found for platform tpu" if ON_TPU else "only implemented on CPU"
    for f in (ml.hessenberg, ml.schur, ml.tridiagonal):
        with pytest.raises(NotImplementedError, match=message):
            f(_mat((3, 3)))


# ---- reductions: hessenberg, tridiagonal, schur ------------------------------------------
def _same_spectrum(got, want, atol):
    """The same eigenvalues, each within atol of one of the other's (not sorted: a
    conjugate pair's real parts differ by rounding, which orders the pair either way)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    distance = np.abs(got[:, None] - want[None, :])
    assert distance.min(0).max() <= atol and distance.min(1).max() <= atol, (got, want)


def _skip_on_tpu(what):
    """JAX computes these reductions only on the CPU (LAPACK) and GPU: it has no TPU rule,
    and neither has mjax (both raising is test_tpu_lowering.py's test_no_tpu_rule_as_in_jax)."""
    if ON_TPU:
        pytest.skip(f"TPU: JAX has no TPU rule for {what} (CPU and GPU only)")


@pytest.mark.parametrize("dtype", DTYPES)
def test_hessenberg(dtype):
    _skip_on_tpu("hessenberg")
    with x64(_wide(dtype)):
        a = _mat((2, 5, 5), dtype)
        packed, taus = ml.hessenberg(a)
        for g, w in zip((packed, taus), jl.hessenberg(a)):
            _same(g, w, dtype)
        assert taus.shape == (2, 4)
        p, t = np.asarray(packed[0]), np.asarray(taus[0])
        h = np.triu(p, -1)
        q = _householders(p, t, 1)
        np.testing.assert_allclose(q @ h @ q.conj().T, a[0], atol=20 * _tol(dtype))
        want_h = osl.hessenberg(a[0])
        np.testing.assert_allclose(np.abs(h), np.abs(want_h), atol=20 * _tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal(dtype, lower):
    _skip_on_tpu("tridiagonal")
    with x64(_wide(dtype)):
        a = _mat((5, 5), dtype)
        a = a + a.conj().T
        outs = ml.tridiagonal(a, lower=lower)
        wants = jl.tridiagonal(a, lower=lower)
        for g, w, dt in zip(outs, wants, (dtype, np.real(a).dtype, np.real(a).dtype, dtype)):
            _same(g, w, dt)
        _, d, e, _ = (np.asarray(o) for o in outs)
        t = np.diag(d) + np.diag(e, -1) + np.diag(e, 1)
        np.testing.assert_allclose(np.linalg.eigvalsh(t), np.linalg.eigvalsh(a),
                                   atol=20 * _tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_schur(dtype):
    _skip_on_tpu("schur")
    with x64(_wide(dtype)):
        a = _mat((2, 4, 4), dtype)
        t, q = ml.schur(a)
        wt, wq = jl.schur(a)
        _same(t, wt, dtype)
        _same(q, wq, dtype)
        tn, qn = np.asarray(t), np.asarray(q)
        np.testing.assert_allclose(qn @ tn @ np.swapaxes(qn, -1, -2).conj(), a,
                                   atol=20 * _tol(dtype))
        st, _ = osl.schur(a[1])
        _same_spectrum(np.linalg.eigvals(tn[1]), np.linalg.eigvals(st), 20 * _tol(dtype))
        only, = ml.schur(a, compute_schur_vectors=False)
        _same(only, t, dtype)


def test_reductions_jit_vmap_and_errors():
    _skip_on_tpu("hessenberg, schur and tridiagonal")
    a = _mat((3, 4, 4))
    for f, g in ((ml.hessenberg, jl.hessenberg), (ml.schur, jl.schur),
                 (ml.tridiagonal, jl.tridiagonal)):
        for got, want in zip(mjax.vmap(mjax.jit(f))(a), g(a)):
            _same(got, want, want.dtype)
    with pytest.raises(ValueError, match="Hessenberg"):
        ml.hessenberg(np.ones((3, 4), np.float32))
    with pytest.raises(ValueError, match="square"):
        ml.tridiagonal(np.ones((3, 4), np.float32))
    with pytest.raises(ValueError, match="square"):
        ml.tridiagonal(np.ones((0, 0), np.float32))
    with pytest.raises(ValueError, match="square"):
        ml.schur(np.ones((3, 4), np.float32))
    with pytest.raises(NotImplementedError, match="sort"):
        ml.schur(a, sort_eig_vals=True)
    with pytest.raises(TypeError, match="int32"):
        ml.hessenberg(np.ones((3, 3), np.int32))
    with pytest.raises(Exception, match="hessenberg"):
        mjax.grad(lambda a: ml.hessenberg(a)[0].sum())(a[0])
    packed, taus = ml.hessenberg(np.ones((0, 0), np.float32))
    assert packed.shape == (0, 0) and taus.shape == (0,)


def test_scipy_schur_and_hessenberg():
    _skip_on_tpu("schur and hessenberg")
    a = _mat((2, 4, 4))
    for output in ("real", "complex"):
        t, z = msl.schur(a, output)
        wt, wz = jax.scipy.linalg.schur(a, output)
        _same(t, wt, wt.dtype)
        _same(z, wz, wz.dtype)
    st, _ = osl.schur(a[0].astype(np.float64), "complex")       # t is triangular now
    _same_spectrum(np.diag(np.asarray(t[0])), np.diag(st), 1e-4)
    with pytest.raises(ValueError, match="'real' or 'complex'"):
        msl.schur(a, "neither")
    h, q = msl.hessenberg(a, calc_q=True)
    wh, wq = jax.scipy.linalg.hessenberg(a, calc_q=True)
    _same(h, wh, np.float32)
    _same(q, wq, np.float32)
    np.testing.assert_allclose(np.asarray(q @ h @ np.swapaxes(q, -1, -2)), a, atol=1e-4)
    sh, _ = osl.hessenberg(a[1], calc_q=True)
    np.testing.assert_allclose(np.abs(np.asarray(h[1])), np.abs(sh), atol=1e-4)
    one = np.full((1, 1), 2., np.float32)
    assert [np.asarray(x).tolist() for x in msl.hessenberg(one, calc_q=True)] == \
        [[[2.]], [[1.]]]


# ---- ormqr ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64])
@pytest.mark.parametrize("left,transpose", [(True, False), (True, True), (False, False),
                                            (False, True)])
def test_ormqr(dtype, left, transpose):
    with x64(_wide(dtype)):
        x = _mat((2, 5, 3), dtype)
        h, taus = jjnp.linalg.qr(x, mode="raw")
        a = np.asarray(h.mT)
        c = _mat((2, 5, 4) if left else (2, 4, 5), dtype)
        got = ml.ormqr(a, np.asarray(taus), c, left=left, transpose=transpose)
        _same(got, jl.ormqr(a, taus, c, left=left, transpose=transpose), dtype)
        q = np.asarray(jjnp.linalg.qr(x, mode="complete")[0])
        q = np.swapaxes(q, -1, -2).conj() if transpose else q
        _same(got, q @ c if left else c @ q, dtype)


def test_ormqr_errors_and_vmap():
    a = _mat((5, 3))
    taus = _mat((3,))
    with pytest.raises(ValueError, match="same number of rows"):
        ml.ormqr(a, taus, _mat((4, 2)))
    with pytest.raises(ValueError, match="columns"):
        ml.ormqr(a, taus, _mat((4, 2)), left=False)
    cs = _mat((3, 5, 2))
    got = mjax.vmap(ml.ormqr, (None, None, 0))(a, taus, cs)
    _same(got, jax.vmap(jl.ormqr, (None, None, 0))(a, taus, cs), np.float32)


# ---- qdwh, symmetric_product, cholesky_update ----------------------------------------------
@pytest.mark.parametrize("shape,dtype", [((6, 4), np.float32), ((4, 4), np.complex64),
                                         ((5, 3), np.float64)])
def test_qdwh(shape, dtype):
    with x64(_wide(dtype)):
        x = _mat(shape, dtype)
        u, h, it, ok = ml.qdwh(x)
        assert it.dtype == np.int32 and ok.dtype == np.bool_ and bool(ok)
        up, hp = osl.polar(x)
        np.testing.assert_allclose(np.asarray(u), up, atol=50 * _tol(dtype))
        np.testing.assert_allclose(np.asarray(h), hp, atol=50 * _tol(dtype))
        if dtype == np.float32:      # (one jax compile: the iteration count agrees)
            wu, wh, wit, wok = jl.qdwh(x)
            _same(u, wu, dtype, tol=20 * _tol(dtype))
            _same(h, wh, dtype, tol=20 * _tol(dtype))
            assert int(it) == int(wit)


def test_qdwh_options_and_errors():
    x = np.diag([1., 1e-5, 3.]).astype(np.float32)
    got, want = ml.qdwh(x, max_iterations=2), jl.qdwh(x, max_iterations=2)
    assert int(got[2]) == int(want[2]) == 2 and not bool(got[3]) and not bool(want[3])
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), atol=1e-4)
    y = _mat((5, 3))
    u, h, _, _ = ml.qdwh(y, dynamic_shape=(4, 2))       # only y[:4, :2] counts
    up, hp = osl.polar(y[:4, :2])
    np.testing.assert_allclose(np.asarray(u), np.pad(up, ((0, 1), (0, 1))), atol=1e-4)
    np.testing.assert_allclose(np.asarray(h), np.pad(hp, ((0, 1), (0, 1))), atol=1e-4)
    with pytest.raises(ValueError, match="M >= N"):
        ml.qdwh(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="max_iterations"):
        ml.qdwh(y, max_iterations=2.5)


def test_symmetric_product():
    a, c = _mat((2, 4, 3)), _mat((2, 4, 4))
    for sym in (False, True):
        got = ml.symmetric_product(a, c, alpha=2., beta=-.5, symmetrize_output=sym)
        want = jl.symmetric_product(a, c, alpha=2., beta=-.5, symmetrize_output=sym)
        _same(got, want, np.float32)
    ref = 2 * a @ np.swapaxes(a, -1, -2) - .5 * c
    np.testing.assert_allclose(np.tril(np.asarray(got)), np.tril(ref), atol=1e-4)
    with pytest.raises(ValueError, match="shape"):
        ml.symmetric_product(a, _mat((2, 3, 3)))
    with pytest.raises(TypeError, match="complex64"):
        ml.symmetric_product(a.astype(np.complex64), c.astype(np.complex64))


def test_cholesky_update():
    x = _mat((6, 4))
    r = np.linalg.cholesky(x.T @ x).T
    w = _mat((4,))
    got = ml.cholesky_update(r, w)
    _same(got, jl.cholesky_update(r, w), np.float32)
    g = np.asarray(got)
    np.testing.assert_allclose(g.T @ g, r.T @ r + np.outer(w, w), atol=1e-3)
    z = np.zeros(4, np.float32)
    _same(mjax.jit(ml.cholesky_update)(r, z), r, np.float32)   # zero update: no NaNs
    with pytest.raises(ValueError, match="same size"):
        ml.cholesky_update(r, w[:3])
    with pytest.raises(TypeError, match="exactly 2"):
        ml.cholesky_update(r[None], w[None])


# ---- enums ---------------------------------------------------------------------------------
def test_enums():
    for name in ("EigImplementation", "EighImplementation", "SvdAlgorithm"):
        assert {m.name: m.value for m in getattr(ml, name)} == \
            {m.name: m.value for m in getattr(jl, name)}
    a = _mat((3, 3))
    s = a + a.T
    if ON_TPU:
        _enums_for_a_tpu(a, s)
        return
    w, _ = ml.eigh(s, implementation=ml.EighImplementation.QR)[::-1]
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(s), atol=1e-4)
    with pytest.raises(NotImplementedError, match="QDWH"):
        ml.eigh(s, implementation=ml.EighImplementation.QDWH)
    with pytest.raises(NotImplementedError, match="Jacobi"):
        ml.eigh(s, implementation=ml.EighImplementation.JACOBI)
    for alg in (None, ml.SvdAlgorithm.DEFAULT, ml.SvdAlgorithm.DIVIDE_AND_CONQUER,
                ml.SvdAlgorithm.QR):    # (gesdd; QR: gesvd, as JAX's)
        s_ = ml.svd(a, compute_uv=False, algorithm=alg)
        np.testing.assert_allclose(np.asarray(s_), np.linalg.svd(a, compute_uv=False),
                                   atol=1e-4)
    for alg in (ml.SvdAlgorithm.JACOBI, ml.SvdAlgorithm.POLAR):
        with pytest.raises(NotImplementedError):
            ml.svd(a, algorithm=alg)
    ml.eig(a, implementation=ml.EigImplementation.LAPACK)
    with pytest.raises(ValueError, match="lapack"):
        ml.eig(a, implementation=ml.EigImplementation.MAGMA)


def _same_outcome(mine, theirs):
    """mine() raises what theirs() raises, or gives its values (to float32 digits)."""
    try:
        want = theirs()
    except Exception as e:      # noqa: BLE001 (the class is what is compared)
        with pytest.raises(type(e)):
            mine()
        return
    np.testing.assert_allclose(np.asarray(mine()), np.asarray(want), atol=1e-4)


def _enums_for_a_tpu(a, s):
    # On a TPU the implementations are JAX's TPU ones (eigh: no QR; svd: POLAR, its
    # DEFAULT; no eig at all), not LAPACK's: each choice as JAX answers it there.
    for impl in jl.EighImplementation:
        _same_outcome(lambda: ml.eigh(s, implementation=ml.EighImplementation[impl.name])[1],
                      lambda: jl.eigh(s, implementation=impl)[1])
    for alg in (None, *jl.SvdAlgorithm):
        _same_outcome(lambda: ml.svd(a, compute_uv=False, algorithm=alg and
                                     ml.SvdAlgorithm[alg.name]),
                      lambda: jl.svd(a, compute_uv=False, algorithm=alg))
    for impl in jl.EigImplementation:
        _same_outcome(lambda: ml.eig(a, implementation=ml.EigImplementation[impl.name]),
                      lambda: jl.eig(a, implementation=impl))


# ---- platform_dependent --------------------------------------------------------------------
def _pd(x):
    return lax.platform_dependent(x, cpu=lambda x: x * 2, cuda=lambda x: x * 3,
                                  default=lambda x: x + 1)


def _jpd(x):
    return jax.lax.platform_dependent(x, cpu=lambda x: x * 2, cuda=lambda x: x * 3,
                                      default=lambda x: x + 1)


def test_platform_dependent():
    here = "tpu" if ON_TPU else "cpu"
    assert mjax.default_backend() == jax.default_backend() == here
    x = np.float32(1.5)
    xs = np.arange(3, dtype=np.float32)
    # (the cpu branch on the CPU, the default on a TPU)
    assert float(_pd(x)) == float(_jpd(x)) == (3.0 if here == "cpu" else 2.5)
    assert float(mjax.jit(_pd)(x)) == float(jax.jit(_jpd)(x))
    assert float(mjax.grad(_pd)(x)) == float(jax.grad(_jpd)(x)) == (2.0 if here == "cpu"
                                                                    else 1.0)
    np.testing.assert_array_equal(np.asarray(mjax.vmap(_pd)(xs)), jax.vmap(_jpd)(xs))
    other = lax.platform_dependent(x, tpu=lambda x: x * 5, default=lambda x: x - 1)
    assert float(other) == (0.5 if here == "cpu" else 7.5)
    elsewhere = "cuda" if here == "tpu" else "tpu"
    for fn in (mjax.jit, lambda f: f):
        with pytest.raises(NotImplementedError, match=f"platform_index.*{elsewhere}.*{here}"):
            fn(lambda x: lax.platform_dependent(x, **{elsewhere: lambda x: x}))(x)
    with pytest.raises(ValueError, match="'cuda' or 'rocm'"):
        lax.platform_dependent(x, gpu=lambda x: x)
    with pytest.raises(TypeError, match="'cpu' branch must be a callable"):
        lax.platform_dependent(x, cpu=3)
    with pytest.raises(TypeError, match="'default' branch must be a callable"):
        lax.platform_dependent(x, default=3)
    pair = lax.platform_dependent(x, xs, **{here: lambda a, b: (b, a)})
    assert pair[1] is x or float(pair[1]) == 1.5


def test_lu_pivots_to_permutation_under_x64():
    # (an int32 iota compared with a Python int was a dtype error under x64)
    pivots = np.array([2, 2, 2], np.int32)
    with jax.enable_x64(True), mjax.enable_x64(True):
        mine = mjax.lax.linalg.lu_pivots_to_permutation(pivots, 3)
        theirs = jax.lax.linalg.lu_pivots_to_permutation(pivots, 3)
        np.testing.assert_array_equal(mine, theirs)
        a = np.array([[1.0, 2.0], [3.0, 4.0]])
        if ON_TPU:
            # JAX's TPU lu is XLA's LuDecomposition, which has float32 and complex64 only:
            # a float64 solve does not compile there, in JAX either (the same error)
            match = "Only F32 and C64 types are implemented in LuDecomposition"
            with pytest.raises(Exception, match=match) as want:
                jax.numpy.linalg.solve(a, np.ones(2))
            with pytest.raises(want.type, match=match):
                mjax.numpy.linalg.solve(a, np.ones(2))
            return
        mine = mjax.numpy.linalg.solve(a, np.ones(2))
        np.testing.assert_allclose(mine, jax.numpy.linalg.solve(a, np.ones(2)), rtol=1e-12)
        np.testing.assert_allclose(mine, np.linalg.solve(a, np.ones(2)), rtol=1e-12)
