"""mjax.experimental.sparse's BCOO (the part libraries use: numpyro's CAR distribution)
against jax.experimental.sparse: built from dense arrays (with and without nse) and SciPy
matrices, back to dense, and sparse @ dense eagerly, under jit and under grad."""
import jax
import jax.experimental.sparse as jsparse
import numpy as np
import pytest
import scipy.sparse

import mjax
import mjax.experimental.sparse as msparse

A = np.array([[0, 1.5, 0], [2, 0, 0], [0, 0, 3], [1, 0, 1]], np.float32)
X = np.arange(6, dtype=np.float32).reshape(3, 2)


def _built(mod, how):
    if how == "dense":
        return mod.BCOO.fromdense(A)
    if how == "nse":
        return mod.BCOO.fromdense(A, nse=7)
    return mod.BCOO.from_scipy_sparse(scipy.sparse.csr_matrix(A))


@pytest.mark.parametrize("how", ["dense", "nse", "scipy"])
def test_bcoo_matches_jax(how):
    ours, theirs = _built(msparse, how), _built(jsparse, how)
    assert (ours.shape, ours.dtype, ours.nse) == (theirs.shape, theirs.dtype, theirs.nse)
    np.testing.assert_array_equal(np.asarray(ours.indices), np.asarray(theirs.indices))
    np.testing.assert_array_equal(np.asarray(ours.data), np.asarray(theirs.data))
    np.testing.assert_array_equal(np.asarray(msparse.todense(ours)), A)
    for v in (X, X[:, 0]):
        np.testing.assert_allclose(np.asarray(ours @ v), np.asarray(theirs @ v))
    np.testing.assert_allclose(np.asarray(mjax.jit(lambda s, v: s @ v)(ours, X)),
                               np.asarray(jax.jit(lambda s, v: s @ v)(theirs, X)))
    np.testing.assert_allclose(np.asarray(mjax.grad(lambda v: (ours @ v).sum())(X)),
                               np.asarray(jax.grad(lambda v: (theirs @ v).sum())(X)))


def test_bcoo_refuses_what_it_lacks():
    with pytest.raises(NotImplementedError, match="lobpcg"):
        msparse.linalg.lobpcg_standard(None, None)
    with pytest.raises(TypeError, match=r"\(4, 3\) and \(2,\)"):
        msparse.BCOO.fromdense(A) @ np.ones(2, np.float32)
