"""Cases from the `>>>` examples of JAX's jax.numpy docstrings, compared with real jax."""
import jax
import jax.numpy as J
import numpy as np
import pytest

import mjax.numpy as jnp


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("args", [
    lambda x, y, M: (x, (0,), y, (0,), ()),
    lambda x, y, M: (x, (0,), y, (0,)),
    lambda x, y, M: (M, (0, 1), x, (1,), (0,)),
    lambda x, y, M: (M, (0, 1), x, (1,)),
    lambda x, y, M: (x, (0,), y, (1,)),
    lambda x, y, M: (M, (Ellipsis, 0), (Ellipsis,)),
    lambda x, y, M: (M, (1, 0)),
    lambda x, y, M: (M, [1, 0], M, [2, 0]),
])
def test_einsum_sublist_form(args):
    x, y = np.arange(3.0, dtype=np.float32), np.arange(1.0, 4.0, dtype=np.float32)
    M = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    _same(jnp.einsum(*args(x, y, M)), J.einsum(*args(x, y, M)))


@pytest.mark.parametrize("f, shape", [
    (lambda x: (x + 1) * np.arange(3), (2,)),
    (lambda x, y: x * 10 + y, (2, 3)),
    (lambda x, y: np.shape(x) == () and x + y, (3, 2)),
])
def test_fromfunction_vmaps_over_scalars(f, shape):
    _same(jnp.fromfunction(f, shape), J.fromfunction(f, shape))


def test_vsplit_1d():
    for a, b in zip(jnp.vsplit(jnp.arange(6), 2), J.vsplit(J.arange(6), 2)):
        _same(a, b)


@pytest.mark.parametrize("name, key", [
    ("r_", ("0,2", [1, 2, 3], [4, 5, 6])),
    ("r_", ("0,2,0", [1, 2, 3], [4, 5, 6])),
    ("r_", ("0,2,-2", [1, 2, 3], [4, 5, 6])),
    ("r_", ("r", [1, 2, 3], [4, 5, 6])),
    ("r_", ("c", [1, 2, 3], [4, 5, 6])),
    ("r_", ("-1,3,1", np.ones((2, 2)), np.zeros((2, 2)))),
    ("r_", (1, 2, [3, 4], slice(0, 3))),
    ("c_", ("0,2", [1, 2, 3], [4, 5, 6])),
    ("c_", ("0,2,-1", [1, 2, 3], [4, 5, 6])),
    ("c_", ("r", [1, 2, 3], [4, 5, 6])),
    ("c_", (np.ones((2, 2)), [1, 2], slice(0, 2))),
])
def test_r_c_directives(name, key):
    _same(getattr(jnp, name)[key], getattr(J, name)[key])


def test_r_directive_errors():
    for mod in (jnp, J):
        with pytest.raises(ValueError):
            mod.r_["0,x", [1], [2]]
        with pytest.raises(ValueError):
            mod.r_[[1], "0", [2]]
