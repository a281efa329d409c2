"""vecdot, matvec, vecmat, cross and einsum_path against jax.numpy."""
import jax.numpy as jnp
import numpy as np
import pytest
import mjax.numpy as mnp
from frontend_util import check


rng = np.random.default_rng(0)


def test_vecdot_matvec_vecmat():
    a = rng.normal(size=(2, 3, 4)) + 1j * rng.normal(size=(2, 3, 4))
    v = rng.normal(size=(4,)) + 1j * rng.normal(size=(4,))
    w = rng.normal(size=(2, 3)).astype(np.float32)
    a, v = a.astype(np.complex64), v.astype(np.complex64)
    check(mnp.vecdot(a, v), jnp.vecdot(a, v), rtol=1e-5)
    check(mnp.vecdot(a, a, axis=1), jnp.vecdot(a, a, axis=1), rtol=1e-5)
    check(mnp.matvec(a, v), jnp.matvec(a, v), rtol=1e-5)
    check(mnp.vecmat(v[:3], a), jnp.vecmat(v[:3], a), rtol=1e-5)
    check(mnp.vecmat(w, a), jnp.vecmat(w, a), rtol=1e-5)
    with pytest.raises(ValueError, match="matvec"):
        mnp.matvec(a, v[:3])


@pytest.mark.parametrize("na,nb", [(3, 3), (2, 3), (3, 2), (2, 2)])
def test_cross(na, nb):
    a = rng.normal(size=(5, na)).astype(np.float32)
    b = rng.normal(size=(nb,)).astype(np.float32)
    check(mnp.cross(a, b), jnp.cross(a, b))
    check(mnp.cross(a.T, b, axisa=0), jnp.cross(a.T, b, axisa=0))
    if na == nb == 3:
        check(mnp.cross(a.T, b[:, None], axis=0), jnp.cross(a.T, b[:, None], axis=0))
        check(mnp.cross(a, b, axisc=0), jnp.cross(a, b, axisc=0))
    with pytest.raises(ValueError, match="dimension must be 2 or 3"):
        mnp.cross(np.ones(4), np.ones(3))


def test_einsum_path():
    ops = [np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))]
    path, report = mnp.einsum_path("ij,jk,kl->il", *ops)
    assert path == jnp.einsum_path("ij,jk,kl->il", *ops)[0] == [(0, 1), (0, 1)]
    assert mnp.einsum_path("ij,jk,kl->il", *ops, optimize="greedy")[0] == [
        tuple(p) for p in np.einsum_path("ij,jk,kl->il", *ops, optimize="greedy")[0][1:]]
    assert isinstance(report, str)
