"""Host-side constructors, I/O and NumPy's re-exported types and printing, against
jax.numpy."""
import io
import jax.numpy as jnp
import numpy as np
import pytest
import mjax.numpy as mnp
from frontend_util import check


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
    for dtype in (np.float32, mnp.bfloat16, np.int8):    # jnp.save of an mjax array
        g = io.BytesIO()
        mnp.save(g, mnp.arange(5).astype(dtype))
        g.seek(0)
        back = mnp.load(g)
        assert back.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(back, np.float32), np.arange(5.0))


def test_reexported_types():
    assert mnp.bool is mnp.bool_ and mnp.bool(2).dtype == np.bool_
    for name in ("generic", "character", "flexible", "object_", "ComplexWarning",
                 "array_repr", "array_str"):
        assert getattr(mnp, name) is getattr(jnp, name), name
    assert mnp.get_printoptions() == jnp.get_printoptions()
    with mnp.printoptions(precision=2):
        assert "3.14" in str(np.asarray(mnp.array([3.14159])))
    assert mnp.array_str(np.asarray(mnp.arange(3))) == "[0 1 2]"
