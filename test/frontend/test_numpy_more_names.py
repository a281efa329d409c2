"""frontend/numpy/more.py: the last small jax.numpy names, checked against jax.numpy."""
import io

import jax.numpy as jnp
import numpy as np
import pytest

import mjax
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


@pytest.mark.parametrize("shape,axis", [((13,), None), ((3, 10), 1), ((9, 2), 0),
                                        ((2, 3), None), ((0,), None)])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_unpackbits(shape, axis, bitorder):
    a = rng.integers(-2, 3, size=shape).astype(np.int32)
    check(mnp.packbits(a, axis=axis, bitorder=bitorder),
          jnp.packbits(a, axis=axis, bitorder=bitorder))
    check(mnp.packbits(a > 0, axis=axis, bitorder=bitorder),
          jnp.packbits(a > 0, axis=axis, bitorder=bitorder))
    u = rng.integers(0, 256, size=shape).astype(np.uint8)
    for count in (None, 3, 40):
        check(mnp.unpackbits(u, axis=axis, count=count, bitorder=bitorder),
              jnp.unpackbits(u, axis=axis, count=count, bitorder=bitorder))


def test_packbits_errors():
    with pytest.raises(TypeError, match="integer or boolean"):
        mnp.packbits(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="uint8"):
        mnp.unpackbits(np.ones(3, np.int32))
    with pytest.raises(ValueError, match="bitorder"):
        mnp.packbits(np.ones(3, np.int32), bitorder="middle")


def test_host_constructors_and_io(tmp_path):
    buf = np.arange(6, dtype=np.int32).tobytes()
    check(mnp.frombuffer(buf, dtype=np.int32, count=4, offset=4),
          jnp.frombuffer(buf, dtype=np.int32, count=4, offset=4))
    check(mnp.fromstring("1 2 3", dtype=np.int32, sep=" "),
          jnp.fromstring("1 2 3", dtype=np.int32, sep=" "))
    for name in ("fromiter", "fromfile"):
        with pytest.raises(NotImplementedError, match=name):
            getattr(mnp, name)(iter([1, 2]))
    f = io.BytesIO()
    np.save(f, np.arange(4.0, dtype=np.float32))
    f.seek(0)
    check(mnp.load(f), np.arange(4.0, dtype=np.float32))
    mnp.savez(tmp_path / "a.npz", x=np.arange(3))
    np.testing.assert_array_equal(np.load(tmp_path / "a.npz")["x"], np.arange(3))


def test_einsum_path():
    ops = [np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))]
    path, report = mnp.einsum_path("ij,jk,kl->il", *ops)
    assert path == jnp.einsum_path("ij,jk,kl->il", *ops)[0] == [(0, 1), (0, 1)]
    assert mnp.einsum_path("ij,jk,kl->il", *ops, optimize="greedy")[0] == [
        tuple(p) for p in np.einsum_path("ij,jk,kl->il", *ops, optimize="greedy")[0][1:]]
    assert isinstance(report, str)


def test_reexported_types():
    assert mnp.bool is mnp.bool_ and mnp.bool(2).dtype == np.bool_
    for name in ("generic", "character", "flexible", "object_", "ComplexWarning",
                 "array_repr", "array_str"):
        assert getattr(mnp, name) is getattr(jnp, name), name
    assert mnp.get_printoptions() == jnp.get_printoptions()
    with mnp.printoptions(precision=2):
        assert "3.14" in str(np.asarray(mnp.array([3.14159])))
    assert mnp.array_str(np.asarray(mnp.arange(3))) == "[0 1 2]"
