"""vecdot, matvec, vecmat, cross and einsum_path against jax.numpy; the precision of
dot-like functions reaching the HLO as in jax."""
import re

import jax
import mjax
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


@pytest.mark.parametrize("name,shapes", [
    ("dot", [(2, 3), (3, 4)]), ("dot", [(2, 2, 3), (3, 2)]), ("matmul", [(2, 2, 3), (3,)]),
    ("vdot", [(3,), (3,)]), ("inner", [(2, 3), (4, 3)]), ("tensordot", [(2, 3), (3, 4)]),
    ("einsum", [(2, 3), (3, 4)])])
@pytest.mark.parametrize("precision", ["HIGH", "HIGHEST"])
def test_precision_reaches_the_hlo_as_jax(name, shapes, precision):
    # (haiku's Linear test reads operand_precision in jit(...).lower().compiler_ir('hlo'))
    def operand_precisions(m):
        def f(a, b):
            p = getattr(m.lax.Precision, precision)
            if name == "einsum":
                return m.numpy.einsum("ij,jk->ik", a, b, precision=p)
            if name == "tensordot":
                return m.numpy.tensordot(a, b, 1, precision=p)
            return getattr(m.numpy, name)(a, b, precision=p)
        args = [np.ones(s, np.float32) for s in shapes]
        text = m.jit(f).lower(*args).compiler_ir("hlo").as_hlo_text()
        return sorted(set(re.findall(r"operand_precision=\{[a-z,]*\}", text)))
    got = operand_precisions(mjax)
    assert got == operand_precisions(jax) and got
