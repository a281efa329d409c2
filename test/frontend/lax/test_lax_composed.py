"""The jax.lax functions JAX composes from primitives (batch_matmul, collapse, split,
stack, tile, dynamic_index_in_dim, index_take, scatter_apply, ..., mulhi) against jax."""
import jax
import numpy as np
import pytest

import mjax
from mjax import lax
from frontend_util import check, tol

RNG = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---- the jax.lax names JAX composes from primitives ----------------------------------------------
def test_more_lax_names_match_jax():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    y = np.arange(40.0, dtype=np.float32).reshape(2, 4, 5)
    v = np.arange(6.0, dtype=np.float32)
    idx = np.array([[1], [1], [4]])

    def dn(L):
        return L.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                         scatter_dims_to_operand_dims=(0,))
    cases = {
        "batch_matmul": lambda L: L.batch_matmul(x, y),
        "collapse": lambda L: (L.collapse(x, 1), L.collapse(x, 0, 2)),
        "split": lambda L: L.split(x, (1, 3), axis=2),
        "stack": lambda L: L.stack([x[0], x[1]], axis=1),
        "unstack": lambda L: L.unstack(x, 1),
        "tile": lambda L: L.tile(x[0], (2, 3)),
        "dynamic_index": lambda L: L.dynamic_index_in_dim(x, -1, 1, keepdims=False),
        "dynamic_update": lambda L: L.dynamic_update_index_in_dim(
            x, np.ones((2, 4), np.float32), 1, 1),
        "index_take": lambda L: L.index_take(x, (np.array([0, 1, 1]), np.array([2, 0, 1])),
                                             (0, 2)),
        "scatter_sub": lambda L: L.scatter_sub(v, idx, np.array([1.0, 2.0, 3.0], np.float32),
                                               dn(L)),
        "scatter_apply": lambda L: L.scatter_apply(v, idx, lambda t: t * 10, dn(L),
                                                   update_shape=(3,)),
        "broadcast_like": lambda L: L.broadcast_like(np.float32(2), x),
        "empty": lambda L: L.empty((2, 3), np.int32),
        "nextafter": lambda L: L.nextafter(np.float32(1), np.float32(2)),
    }
    for name, f in cases.items():
        got, want = f(lax), f(jax.lax)
        got = got if isinstance(got, (tuple, list)) else (got,)
        want = want if isinstance(want, (tuple, list)) else (want,)
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            check(g, w)
    assert lax.broadcast_shapes((2, 1), (3,)) == jax.lax.broadcast_shapes((2, 1), (3,))
    assert lax.dtype(1.0) == jax.lax.dtype(1.0)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int8, np.uint16])
def test_mulhi_matches_jax(dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, 40, dtype=dtype, endpoint=True)
    b = RNG.integers(info.min, info.max, 40, dtype=dtype, endpoint=True)
    a[:3] = [info.min, info.max, 0]
    b[:3] = [info.min, -1 if info.min < 0 else info.max, 5]
    check(lax.mulhi(a, b), jax.lax.mulhi(a, b))


def test_broadcast_in_dim_dimensions_in_any_order():
    # (JAX allows broadcast_dimensions out of order: operand dim i goes to output dim
    # bd[i]; mjax transposes the operand first)
    x = np.arange(6.).reshape(2, 3)
    for lib in (mjax, jax):
        got = lib.lax.broadcast_in_dim(x, (3, 4, 2), (2, 0))
        np.testing.assert_array_equal(got, np.broadcast_to(x.T[:, None, :], (3, 4, 2)))
    traced = mjax.jit(lambda x: mjax.lax.broadcast_in_dim(x, (3, 4, 2), (2, 0)))(x)
    np.testing.assert_array_equal(traced, np.broadcast_to(x.T[:, None, :], (3, 4, 2)))
    # (JAX's own grad fails here on a cotangent shape check; mjax's is the transpose)
    w = np.arange(24.).reshape(3, 4, 2)
    g = mjax.grad(lambda x: (mjax.lax.broadcast_in_dim(x, (3, 4, 2), (2, 0)) * w).sum())(x)
    np.testing.assert_array_equal(g, w.sum(1).T)
    for lib in (mjax, jax):
        with pytest.raises(TypeError, match="must be a subset of output dimensions"):
            lib.lax.broadcast_in_dim(x, (3, 4, 2), (0, 5))


def test_composite_runs_its_decomposition():
    from functools import partial
    for lib in (mjax, jax):
        @partial(lib.lax.composite, name="my.softmax")
        def softmax(x, /, *, axis):
            return lib.nn.softmax(x, axis)
        x = np.arange(3.0, dtype=np.float32)
        # (against NumPy: a TPU's exp, sin and cos are not the host's, in JAX as in mjax)
        np.testing.assert_allclose(softmax(x, axis=0), np.exp(x) / np.exp(x).sum(),
                                   rtol=tol(1e-6, 1e-5))
        tangent = lib.jit(lambda x: lib.lax.composite(
            lambda x: lib.lax.sin(x) / lib.lax.cos(x), name="my.tangent")(x))
        np.testing.assert_allclose(tangent(x), np.tan(x), rtol=tol(1e-5, 1e-4))
    # (JAX has no JVP rule for composites; mjax differentiates the decomposition)
    with pytest.raises(ValueError, match="JVP rule for composite not implemented"):
        jax.grad(lambda x: jax.lax.composite(jax.numpy.sin, name="s")(x))(1.0)
    g = mjax.grad(lambda x: mjax.lax.composite(mjax.numpy.sin, name="s")(x))(1.0)
    np.testing.assert_allclose(g, np.cos(1.0), rtol=1e-6)
