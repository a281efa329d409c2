"""mjax.numpy against NumPy: creation, elementwise, reductions, shapes, linear algebra."""
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from frontend_util import tol
from mjax import lax

RNG = np.random.default_rng(0)
A = RNG.uniform(-2, 2, (3, 4)).astype(np.float32)
B = RNG.uniform(-2, 2, (3, 4)).astype(np.float32)
POS = RNG.uniform(0.1, 3, (3, 4)).astype(np.float32)
UNIT = RNG.uniform(-0.9, 0.9, (3, 4)).astype(np.float32)
INTS = RNG.integers(-9, 10, (3, 4)).astype(np.int32)
NZ_INTS = np.where(INTS == 0, 3, INTS).astype(np.int32)


def check(got, want, rtol=1e-5, atol=1e-6, dtype=True):
    want = np.asarray(want)
    assert isinstance(got, mjax.Array), type(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    if dtype:
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(np.asarray(got, dtype=want.dtype), want, rtol=rtol, atol=atol)


# ---- creation -------------------------------------------------------------------
def test_creation():
    check(jnp.array([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]], np.int32))
    check(jnp.array([1.5, 2]), np.array([1.5, 2], np.float32))
    check(jnp.array([jnp.ones(2), np.zeros(2)]), np.array([[1, 1], [0, 0]], np.float32))
    check(jnp.asarray(np.arange(3, dtype=np.uint8)), np.arange(3, dtype=np.uint8))
    check(jnp.array(3, ndmin=2), np.array(3, np.int32, ndmin=2))
    check(jnp.zeros((2, 3)), np.zeros((2, 3), np.float32))
    check(jnp.ones(3, jnp.int16), np.ones(3, np.int16))
    check(jnp.full((2, 2), 7), np.full((2, 2), 7, np.int32))
    check(jnp.full((2,), 1.5, jnp.float16), np.full((2,), 1.5, np.float16))
    check(jnp.full((2, 3), np.array([1, 2, 3], np.float32)), np.full((2, 3), [1, 2, 3], np.float32))
    check(jnp.arange(5), np.arange(5, dtype=np.int32))
    check(jnp.arange(2, 11, 3), np.arange(2, 11, 3, dtype=np.int32))
    check(jnp.arange(0.0, 1.0, 0.25), np.arange(0.0, 1.0, 0.25, dtype=np.float32))
    check(jnp.arange(5, 0, -2), np.arange(5, 0, -2, dtype=np.int32))
    check(jnp.arange(3, dtype=jnp.float32), np.arange(3, dtype=np.float32))
    check(jnp.linspace(0, 1, 5), np.linspace(0, 1, 5, dtype=np.float32))
    check(jnp.linspace(-1, 2, 4, endpoint=False), np.linspace(-1, 2, 4, endpoint=False,
                                                              dtype=np.float32))
    check(jnp.linspace(0, 10, 6, dtype=jnp.int32), np.linspace(0, 10, 6).astype(np.int32))
    check(jnp.eye(3), np.eye(3, dtype=np.float32))
    check(jnp.eye(3, 4, k=1, dtype=jnp.int32), np.eye(3, 4, k=1, dtype=np.int32))
    check(jnp.eye(4, 3, k=-2), np.eye(4, 3, k=-2, dtype=np.float32))
    check(jnp.identity(2, jnp.bool_), np.identity(2, bool))
    for like in (jnp.zeros_like, jnp.ones_like):
        np_like = getattr(np, like.__name__)
        check(like(INTS), np_like(INTS))
        check(like(A, dtype=jnp.int8), np_like(A, dtype=np.int8))
    check(jnp.full_like(A, 2.5), np.full_like(A, 2.5))
    check(jnp.full_like(INTS, 3, shape=(2,)), np.full_like(INTS, 3, shape=(2,)))
    check(jnp.empty_like(A).shape and jnp.zeros_like(A), np.zeros_like(A))
    check(jnp.tri(3, k=1), np.tri(3, k=1, dtype=np.float32))
    check(jnp.tril(A), np.tril(A))
    check(jnp.triu(A, 1), np.triu(A, 1))


# ---- elementwise ----------------------------------------------------------------
UNARY = {
    "negative": A, "positive": A, "sign": A, "floor": A, "ceil": A, "trunc": A, "rint": A,
    "exp": A, "exp2": A, "expm1": A, "log": POS, "log1p": POS, "log2": POS, "log10": POS,
    "sqrt": POS, "cbrt": A, "sin": A, "cos": A, "tan": UNIT, "arcsin": UNIT,
    "arccos": UNIT, "arctan": A, "sinh": A, "cosh": A, "tanh": A, "arcsinh": A,
    "arccosh": POS + 1, "arctanh": UNIT, "isfinite": A, "isnan": A, "isinf": A,
    "square": A, "reciprocal": POS, "conjugate": A, "real": A, "imag": A, "deg2rad": A,
    "rad2deg": A, "abs": A, "absolute": INTS, "invert": INTS, "bitwise_not": INTS,
    "logical_not": INTS, "sinc": A, "round": A * 10, "fabs": A, "signbit": A,
    "floor_int": INTS, "exp_int": INTS, "square_int": INTS, "negative_int": INTS,
    "sign_int": INTS, "sqrt_int": np.abs(INTS),
}


# The ops JAX's lax_numpy_operators_test checks at 2e-4 (atol and rtol) on a TPU, whose
# transcendental functions are less exact than the host's.
TPU_WIDER = {"arccosh", "arcsinh", "sinh", "cosh", "tanh", "sin", "cos", "tan", "log",
             "log1p", "log2", "log10", "exp", "expm1", "exp2", "pow", "power", "logaddexp",
             "logaddexp2", "i0", "acosh", "asinh"}


def _tols(fn) -> dict:
    wider = fn in TPU_WIDER
    return {"rtol": tol(2e-5, 2e-4) if wider else 2e-5,
            "atol": tol(2e-6, 2e-4) if wider else 2e-6}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_numpy(name):
    fn = name.split("_int")[0] if name.endswith("_int") else name
    x = UNARY[name]
    got = getattr(jnp, fn)(x)
    want = getattr(np, fn)(x)
    if want.dtype == np.float64 and x.dtype.itemsize < 8:
        want = want.astype(np.float32)   # NumPy's int -> float64; JAX's -> float32
    check(got, want, **_tols(fn))


BINARY = {
    "add": (A, B), "subtract": (A, B), "multiply": (A, B), "divide": (A, POS),
    "true_divide": (INTS, NZ_INTS), "floor_divide": (A, POS), "floor_divide_i": (INTS, NZ_INTS),
    "remainder": (A, POS), "remainder_i": (INTS, NZ_INTS), "mod": (INTS, NZ_INTS),
    "fmod": (INTS, NZ_INTS), "power": (POS, B), "power_i": (INTS, np.abs(INTS) % 4),
    "maximum": (A, B), "minimum": (A, B), "arctan2": (A, B), "hypot": (A, B),
    "logaddexp": (A, B), "fmax": (A, B), "fmin": (A, B), "heaviside": (A, B),
    "equal": (INTS, NZ_INTS), "not_equal": (INTS, NZ_INTS), "less": (A, B),
    "less_equal": (INTS, NZ_INTS), "greater": (A, B), "greater_equal": (INTS, NZ_INTS),
    "bitwise_and": (INTS, NZ_INTS), "bitwise_or": (INTS, NZ_INTS),
    "bitwise_xor": (INTS, NZ_INTS), "left_shift": (INTS, np.abs(INTS) % 8),
    "right_shift": (INTS, np.abs(INTS) % 8), "logical_and": (INTS, A > 0),
    "logical_or": (A > 0, B > 0), "logical_xor": (A > 0, B > 0), "float_power": (POS, B),
    "copysign": (A, B), "nextafter": (A, B), "isclose": (A, A + 1e-7), "ldexp": (A, INTS % 4),
    "gcd": (INTS, NZ_INTS), "lcm": (INTS, NZ_INTS),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_matches_numpy(name):
    fn = name[:-2] if name.endswith("_i") else name
    x, y = BINARY[name]
    got = getattr(jnp, fn)(x, y)
    want = getattr(np, fn)(x, y)
    if want.dtype == np.float64:
        want = want.astype(np.float32)
    check(got, want, **_tols(fn))


def test_binary_broadcasting_and_scalars():
    check(jnp.add(A, B[0]), A + B[0])
    check(jnp.multiply(A[:, :1], B[0]), A[:, :1] * B[0])
    check(jnp.subtract(2, INTS), 2 - INTS)
    check(jnp.divide(A, 2), A / np.float32(2))
    check(jnp.power(A, 3), A ** 3, rtol=1e-5)
    check(jnp.where(A > 0, A, 0.0), np.where(A > 0, A, np.float32(0)))
    check(jnp.where(INTS > 0, INTS, A), np.where(INTS > 0, INTS, A).astype(np.float32))
    check(jnp.where(A[0] > 0, 1, -1), np.where(A[0] > 0, 1, -1).astype(np.int32))
    check(jnp.clip(A, -1, 1), np.clip(A, -1, 1))
    check(jnp.clip(INTS, max=3), np.clip(INTS, None, 3))
    check(jnp.clip(A, B[0]), np.maximum(A, B[0]))
    check(jnp.divmod(INTS, NZ_INTS)[0], np.floor_divide(INTS, NZ_INTS))


# ---- reductions -----------------------------------------------------------------
X3 = RNG.uniform(-2, 2, (2, 3, 4)).astype(np.float32)
I3 = RNG.integers(-5, 6, (2, 3, 4)).astype(np.int32)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod", "argmax", "argmin",
                                  "all", "any", "var", "std"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(name, axis, keepdims):
    if name in ("argmax", "argmin") and isinstance(axis, tuple):
        return
    for x in (X3, I3) if name not in ("all", "any") else (X3 > 0, I3):
        got = getattr(jnp, name)(x, axis=axis, keepdims=keepdims)
        want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
        if want.dtype == np.float64 or want.dtype == np.int64:
            want = want.astype(np.float32 if want.dtype == np.float64 else np.int32)
        check(got, want, rtol=1e-5, atol=1e-5)


def test_reduction_methods_and_options():
    x = jnp.asarray(X3)
    check(x.sum(axis=1), X3.sum(1))
    check(x.max(axis=(0, 1), keepdims=True), X3.max(axis=(0, 1), keepdims=True))
    check(x.argmin(axis=2), X3.argmin(2).astype(np.int32))
    check(jnp.sum(X3, where=X3 > 0), np.sum(X3, where=X3 > 0), rtol=1e-5)
    check(jnp.max(X3, axis=0, initial=0.5), np.max(X3, axis=0, initial=0.5))
    check(jnp.sum(I3.astype(np.int8), axis=0), I3.sum(0).astype(np.int32))
    check(jnp.mean(I3, axis=1), I3.mean(1).astype(np.float32))
    check(jnp.cumsum(X3, axis=1), np.cumsum(X3, axis=1), rtol=1e-5)
    check(jnp.cumprod(I3, axis=0), np.cumprod(I3, axis=0).astype(np.int32))


# ---- shapes ---------------------------------------------------------------------
def test_shape_functions():
    check(jnp.reshape(X3, (4, 6)), X3.reshape(4, 6))
    check(jnp.reshape(X3, (-1, 2)), X3.reshape(-1, 2))
    check(jnp.reshape(X3, (6, 4), order="F"), X3.reshape((6, 4), order="F"))
    check(jnp.asarray(X3).reshape(2, 12), X3.reshape(2, 12))
    check(jnp.transpose(X3), X3.T)
    check(jnp.transpose(X3, (1, 0, 2)), X3.transpose(1, 0, 2))
    check(jnp.asarray(X3).transpose(2, 0, 1), X3.transpose(2, 0, 1))
    check(jnp.swapaxes(X3, 0, 2), np.swapaxes(X3, 0, 2))
    check(jnp.moveaxis(X3, 0, -1), np.moveaxis(X3, 0, -1))
    check(jnp.expand_dims(X3, (0, 3)), np.expand_dims(X3, (0, 3)))
    check(jnp.squeeze(X3[:1, :, :1]), np.squeeze(X3[:1, :, :1]))
    check(jnp.ravel(X3), X3.ravel())
    check(jnp.concatenate([A, B]), np.concatenate([A, B]))
    check(jnp.concatenate([A, B], axis=1), np.concatenate([A, B], axis=1))
    check(jnp.concatenate([A, INTS], axis=-1), np.concatenate([A, INTS.astype(np.float32)], -1))
    check(jnp.concatenate([A, B], axis=None), np.concatenate([A, B], axis=None))
    check(jnp.stack([A, B]), np.stack([A, B]))
    check(jnp.stack([A, B], axis=-1), np.stack([A, B], axis=-1))
    check(jnp.hstack([A, B]), np.hstack([A, B]))
    check(jnp.vstack([A[0], B[0]]), np.vstack([A[0], B[0]]))
    for got, want in zip(jnp.split(X3, 2, axis=2), np.split(X3, 2, axis=2)):
        check(got, want)
    check(jnp.flip(X3, 1), np.flip(X3, 1))
    check(jnp.tile(A[0], (2, 2)), np.tile(A[0], (2, 2)))
    check(jnp.repeat(A, 2, axis=1), np.repeat(A, 2, axis=1))
    check(jnp.broadcast_to(A[0], (2, 3, 4)), np.broadcast_to(A[0], (2, 3, 4)))
    check(jnp.sort(A, axis=0), np.sort(A, axis=0))
    check(jnp.argsort(A[0]), np.argsort(A[0]).astype(np.int32))
    assert jnp.shape(X3) == (2, 3, 4) and jnp.ndim(3.0) == 0 and jnp.size(X3) == 24


# ---- linear algebra -------------------------------------------------------------
def test_matmul_dot_einsum():
    M = RNG.standard_normal((4, 5)).astype(np.float32)
    BA = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    BB = RNG.standard_normal((2, 4, 5)).astype(np.float32)
    v = RNG.standard_normal(4).astype(np.float32)
    tol = dict(rtol=1e-5, atol=1e-5)
    check(jnp.matmul(A, M), A @ M, **tol)
    check(jnp.asarray(A) @ M, A @ M, **tol)
    check(A @ jnp.asarray(M), A @ M, **tol)
    check(jnp.matmul(BA, BB), BA @ BB, **tol)
    check(jnp.matmul(BA, M), BA @ M, **tol)
    check(jnp.matmul(v, M), v @ M, **tol)
    check(jnp.matmul(A, v), A @ v, **tol)
    check(jnp.matmul(v, v), v @ v, **tol)
    check(jnp.matmul(INTS, INTS.T), INTS @ INTS.T)
    check(jnp.dot(A, M), A.dot(M), **tol)
    check(jnp.dot(BA, BB[0]), np.dot(BA, BB[0]), **tol)
    check(jnp.dot(2.0, A), 2 * A)
    check(jnp.vdot(v, v), np.vdot(v, v), **tol)
    check(jnp.inner(A, B), np.inner(A, B), **tol)
    check(jnp.outer(v, v), np.outer(v, v), **tol)
    check(jnp.tensordot(BA, BB, axes=([0, 2], [0, 1])), np.tensordot(BA, BB, ([0, 2], [0, 1])),
          **tol)
    check(jnp.trace(A), np.trace(A), **tol)
    check(jnp.diagonal(X3, 1, 1, 2), np.diagonal(X3, 1, 1, 2))
    check(jnp.diag(v), np.diag(v))
    for spec, ops in [("ij,jk->ik", (A, M)), ("bij,bjk->bik", (BA, BB)), ("ij->ji", (A,)),
                      ("ii->i", (M[:4, :4],)), ("ij,ij->", (A, B)), ("i,j->ij", (v, v)),
                      ("ijk->k", (X3,)), ("ij,jk,kl->il", (A, M, M.T)), ("ij,kj", (A, B)),
                      ("bij,jk->bk", (BA, M)), ("i,i", (v, v)),
                      ("...ij,...jk->...ik", (BA, BB)), ("...ij,...jk", (BA, BB[:1])),
                      ("i...->...", (X3,)), ("...j,j->...", (BA, v)),
                      ("ij...,jk...->ik...", (X3[0], BB[0, :, :, None] * X3[0, 0]))]:
        check(jnp.einsum(spec, *ops), np.einsum(spec, *ops), **tol)


# ---- lax ------------------------------------------------------------------------
def test_lax_functions():
    tol = dict(rtol=1e-5, atol=1e-6)
    check(lax.add(A, B), A + B)
    check(lax.add(A, 1.0), A + 1)
    check(lax.mul(INTS, 2), INTS * 2)
    check(lax.sub(A, B), A - B)
    check(lax.div(INTS, NZ_INTS), np.trunc(INTS / NZ_INTS).astype(np.int32))
    check(lax.rem(INTS, NZ_INTS), np.fmod(INTS, NZ_INTS))
    check(lax.max(A, B), np.maximum(A, B))
    check(lax.exp(A), np.exp(A), **tol)
    check(lax.integer_pow(A, 3), A ** 3, **tol)
    check(lax.dot_general(A, B, (((1,), (1,)), ((), ()))), A @ B.T, **tol)
    check(lax.dot_general(X3, X3, (((2,), (2,)), ((0,), (0,)))),
          np.einsum("bik,bjk->bij", X3, X3), **tol)
    check(lax.dot(A, B.T), A @ B.T, **tol)
    check(lax.broadcast_in_dim(A[0], (2, 3, 4), (2,)), np.broadcast_to(A[0], (2, 3, 4)))
    check(lax.broadcast(A, (2,)), np.broadcast_to(A, (2, 3, 4)))
    check(lax.reshape(A, (4, 3)), A.reshape(4, 3))
    check(lax.reshape(A, (12,), dimensions=(1, 0)), A.T.reshape(12))
    check(lax.transpose(X3, (2, 0, 1)), X3.transpose(2, 0, 1))
    check(lax.reduce_sum(X3, (0, 2)), X3.sum((0, 2)), **tol)
    check(lax.reduce_max(X3, (1,)), X3.max(1))
    check(lax.argmax(X3, 1, np.int32), X3.argmax(1).astype(np.int32))
    check(lax.slice(X3, (0, 1, 0), (2, 3, 4), (1, 1, 2)), X3[:, 1:3, ::2])
    check(lax.slice_in_dim(A, 1, 3, axis=1), A[:, 1:3])
    check(lax.index_in_dim(A, -1, 0, keepdims=False), A[-1])
    check(lax.dynamic_slice(A, (1, 2), (2, 2)), A[1:3, 2:4])
    check(lax.dynamic_slice(A, (jnp.asarray(2), 3), (2, 2)), A[1:3, 2:4])  # clamped
    check(lax.dynamic_update_slice(A, np.zeros((1, 2), np.float32), (1, 1)),
          np.where(np.isin(np.arange(12).reshape(3, 4), [5, 6]), 0, A))
    check(lax.concatenate([A, B], 1), np.concatenate([A, B], 1))
    check(lax.pad(A, 0.0, [(1, 2, 0), (0, 0, 1)]),
          np.asarray(_np_pad_interior(A)), **tol)
    check(lax.rev(A, (0, 1)), A[::-1, ::-1])
    check(lax.select(A > 0, A, B), np.where(A > 0, A, B))
    check(lax.clamp(-0.5, A, 0.5), np.clip(A, -0.5, 0.5))
    check(lax.convert_element_type(A, np.int32), A.astype(np.int32))
    check(lax.iota(np.int32, 5), np.arange(5, dtype=np.int32))
    check(lax.broadcasted_iota(np.float32, (2, 3), 1),
          np.broadcast_to(np.arange(3, dtype=np.float32), (2, 3)))
    check(lax.squeeze(A[None], (0,)), A)
    check(lax.expand_dims(A, (0, 3)), A[None, :, :, None])
    check(lax.sort(A, dimension=0), np.sort(A, 0))
    check(lax.cumsum(A, axis=1), np.cumsum(A, 1), **tol)
    check(lax.full((2, 2), 3.0, np.float32), np.full((2, 2), 3, np.float32))
    check(lax.neg(INTS), -INTS)
    check(lax.abs(INTS), np.abs(INTS))
    check(lax.shift_right_logical(INTS, np.full_like(INTS, 1)),
          (INTS.view(np.uint32) >> 1).view(np.int32))
    check(lax.bitcast_convert_type(A, np.int32), A.view(np.int32))


def _np_pad_interior(a):
    out = np.zeros((3 + 3, 4 + 3), np.float32)
    out[1:4, ::2] = a
    return out


def test_jit_matches_eager_for_a_composite():
    def f(x, y):
        z = jnp.einsum("ij,kj->ik", x, y)
        z = jnp.where(z > 0, jnp.sqrt(jnp.abs(z)), -z)
        return jnp.concatenate([z.mean(0, keepdims=True), jnp.max(z, 0, keepdims=True)]), \
            jnp.argsort(z[0])
    eager = f(jnp.asarray(A), jnp.asarray(B))
    jitted = mjax.jit(f)(A, B)
    for e, j in zip(eager, jitted):
        np.testing.assert_allclose(e, j, rtol=1e-6)
