"""mjax.experimental.sparse's BCSR, COO, CSR and CSC against jax.experimental.sparse and
NumPy: construction, conversion, products eagerly, under jit, grad (w.r.t. data) and vmap;
and the public names against JAX's module."""
import jax
import jax.experimental.sparse as jsparse
import jax.numpy as jjnp
import numpy as np
import pytest
import scipy.sparse

import mjax
import mjax.experimental.sparse as msparse
import mjax.numpy as mjnp

RNG = np.random.RandomState(1)
A = (RNG.randn(4, 5) * (RNG.rand(4, 5) < 0.4)).astype(np.float32)
A[1] = 0.
V = RNG.randn(5).astype(np.float32)
B = RNG.randn(5, 3).astype(np.float32)


def test_every_public_name_of_jax_is_there():
    # (JAX's test_util submodule is an attribute only once another test imported it)
    theirs = {n for n in dir(jsparse) if not n.startswith("_") and n != "test_util"}
    ours = {n for n in dir(msparse) if not n.startswith("_")}
    assert theirs <= ours, sorted(theirs - ours)


@pytest.mark.parametrize("n_batch", [0, 1])
def test_bcsr_matches_jax(n_batch):
    x = np.stack([A, A[::-1]]) if n_batch else A
    ours = msparse.BCSR.fromdense(x, n_batch=n_batch)
    theirs = jsparse.BCSR.fromdense(x, n_batch=n_batch)
    assert (ours.shape, ours.nse, ours.n_batch) == (theirs.shape, theirs.nse, theirs.n_batch)
    np.testing.assert_array_equal(np.asarray(ours.indptr), np.asarray(theirs.indptr))
    np.testing.assert_array_equal(np.asarray(ours.todense()), x)
    np.testing.assert_array_equal(np.asarray(ours.to_bcoo().todense()), x)
    back = msparse.BCSR.from_bcoo(msparse.BCOO.fromdense(x, n_batch=n_batch))
    np.testing.assert_array_equal(np.asarray(back.todense()), x)
    if not n_batch:
        np.testing.assert_allclose(np.asarray(ours @ B), np.asarray(theirs @ B), rtol=1e-5)
        np.testing.assert_allclose(np.asarray(mjax.jit(lambda m: m @ V)(ours)), A @ V,
                                   rtol=1e-5, atol=1e-6)
        g = mjax.grad(lambda d: (msparse.BCSR((d, ours.indices, ours.indptr), shape=A.shape)
                                 @ B).sum())(ours.data)
        ref = jax.grad(lambda d: (jsparse.BCSR((d, theirs.indices, theirs.indptr),
                                               shape=A.shape) @ B).sum())(theirs.data)
        np.testing.assert_allclose(np.asarray(g), np.asarray(ref), rtol=1e-5)
        s = scipy.sparse.csr_matrix(A)
        np.testing.assert_array_equal(
            np.asarray(msparse.BCSR.from_scipy_sparse(s).todense()), A)
        ext = msparse.bcsr_extract(ours.indices, ours.indptr, A * 2)
        np.testing.assert_array_equal(np.asarray(ext), np.asarray(
            jsparse.bcsr_extract(theirs.indices, theirs.indptr, A * 2)))


@pytest.mark.parametrize("fmt", ["COO", "CSR", "CSC"])
def test_2d_formats_match_jax(fmt):
    ours, theirs = getattr(msparse, fmt).fromdense(A), getattr(jsparse, fmt).fromdense(A)
    np.testing.assert_array_equal(np.asarray(ours.todense()), A)
    for v in (V, B):
        np.testing.assert_allclose(np.asarray(ours @ v), np.asarray(theirs @ jjnp.asarray(v)),
                                   rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(A.T @ ours), A.T @ A, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(ours.T.todense()), A.T)
    got = mjax.jit(lambda m, v: m @ v)(ours, B)
    np.testing.assert_allclose(np.asarray(got), A @ B, rtol=1e-5, atol=1e-5)
    got = mjax.vmap(lambda v: ours @ v)(B.T)
    np.testing.assert_allclose(np.asarray(got), (A @ B).T, rtol=1e-5, atol=1e-5)
    g = mjax.grad(lambda d: (type(ours).tree_unflatten(
        ours.tree_flatten()[1], (d,) + ours.tree_flatten()[0][1:]) @ V).sum())(ours.data)
    # (oracle: JAX's todense, then a dense product; JAX's own CSC @ v gradient is off)
    ref = jax.grad(lambda d: (type(theirs).tree_unflatten(
        theirs.tree_flatten()[1], (d,) + theirs.tree_flatten()[0][1:]).todense() @ V).sum())(
        theirs.data)
    np.testing.assert_allclose(np.asarray(g), np.asarray(ref), rtol=1e-5)


def test_coo_csr_functions():
    c = msparse.coo_fromdense(A, nse=9)
    np.testing.assert_array_equal(np.asarray(msparse.coo_todense(c)), A)
    np.testing.assert_allclose(np.asarray(msparse.coo_matvec(c, np.ones(4, np.float32),
                                                             transpose=True)), A.sum(0),
                               rtol=1e-5)
    np.testing.assert_allclose(np.asarray(msparse.coo_matmat(c, B)), A @ B, rtol=1e-5,
                               atol=1e-5)
    r = msparse.csr_fromdense(A)
    np.testing.assert_array_equal(np.asarray(msparse.csr_todense(r)), A)
    np.testing.assert_allclose(np.asarray(msparse.csr_matvec(r, V)), A @ V, rtol=1e-5,
                               atol=1e-6)
    for fmt in ("bcoo", "bcsr", "coo", "csr", "csc"):
        np.testing.assert_array_equal(
            np.asarray(msparse.eye(3, 4, k=1, sparse_format=fmt).todense()), np.eye(3, 4, 1))
        assert np.asarray(msparse.empty((3, 4), sparse_format=fmt).todense()).sum() == 0


def test_spsolve():
    m = (A[:4, :4] + 5 * np.eye(4)).astype(np.float32)
    csr = msparse.BCSR.fromdense(m)
    got = msparse.linalg.spsolve(csr.data, csr.indices, csr.indptr, V[:4])
    np.testing.assert_allclose(np.asarray(got), np.linalg.solve(m, V[:4]), rtol=1e-4)
