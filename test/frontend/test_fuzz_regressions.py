"""Regression tests of what the differential fuzzer (test_differential_fuzz.py) found,
each against jax: values, dtypes, weak types and error classes, eagerly and under jit,
grad and vmap."""
import numpy as np
import pytest

import jax
import mjax
from sweep_util import compare

RNG = np.random.default_rng(26)


def _complex(*shape):
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(np.complex64)


# ---- lax ---------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda L, x: L.lax.reshape(x, np.shape(x)),
    lambda L, x: L.lax.broadcast_in_dim(x, np.shape(x), tuple(range(np.ndim(x)))),
    lambda L, x: L.lax.squeeze(x, ()),
    lambda L, x: L.lax.expand_dims(x, ()),
    lambda L, x: L.lax.transpose(x, tuple(range(np.ndim(x)))),
    lambda L, x: L.lax.concatenate([x], 0) if np.ndim(x) else L.lax.select_n(True, x),
    lambda L, x: L.lax.select_n(np.int32(0), x),
], ids=["reshape", "broadcast_in_dim", "squeeze", "expand_dims", "transpose",
        "concatenate", "select_n"])
@pytest.mark.parametrize("x", [np.float32([1, 2]), np.float32(3), 2.5, 7],
                         ids=["array", "numpy_scalar", "float", "int"])
def test_unchanging_lax_ops_return_arrays(fn, x):
    # An op that leaves its operand as it is still returns an Array (weak for a Python
    # scalar), never the NumPy value it was given.
    got, want = fn(mjax, x), fn(jax, x)
    assert isinstance(got, mjax.Array) and isinstance(want, jax.Array)
    compare(lambda x: fn(mjax, x), lambda x: fn(jax, x), (x,))


def test_top_k_and_approx_k_return_lists():
    x = RNG.normal(size=(3, 5)).astype(np.float32)
    for name in ("top_k", "approx_max_k", "approx_min_k"):
        got, want = getattr(mjax.lax, name)(x, 2), getattr(jax.lax, name)(x, 2)
        assert type(got) is type(want) is list
        compare(lambda x: getattr(mjax.lax, name)(x, 2),
                lambda x: getattr(jax.lax, name)(x, 2), (x,), modes=("eager", "jit", "vmap"))


@pytest.mark.parametrize("lhs_dtype, rhs_dtype, pet", [
    (np.complex64, np.complex64, np.int32),    # the product's real part, then converted
    (np.int8, np.int8, np.int32),
    (np.float16, np.float16, np.float32),
    (np.float32, np.int32, np.float32),
])
def test_dot_general_preferred_type_computes_like_jax(lhs_dtype, rhs_dtype, pet):
    # Operands of one dtype go to XLA's dot as they are (JAX's CPU lowering); converting
    # complex operands to int first gave zeros.
    lhs = (RNG.normal(size=(2, 3, 4)) * 3).astype(lhs_dtype)
    rhs = (RNG.normal(size=(2, 4, 2)) * 3).astype(rhs_dtype)
    if np.issubdtype(lhs_dtype, np.complexfloating):
        lhs, rhs = lhs + 2.5j * lhs.real, rhs - 1.5j * rhs.real
    dims = (((2,), (1,)), ((0,), (0,)))
    compare(lambda a, b: mjax.lax.dot_general(a, b, dims, preferred_element_type=pet),
            lambda a, b: jax.lax.dot_general(a, b, dims, preferred_element_type=pet),
            (lhs, rhs), modes=("eager", "jit", "vmap"), rtol=1e-3)


@pytest.mark.parametrize("kw", [dict(window_strides=(1, 2), padding="SAME",
                                     rhs_dilation=(2, 1)),
                                dict(window_strides=(2, 1), padding=((1, 0), (0, 2)),
                                     lhs_dilation=(1, 2), feature_group_count=3)])
def test_complex_convolution_is_jaxs_three_real_ones(kw):
    # Bit for bit JAX's lowering (Gauss's product of three real convolutions), infinities
    # and NaNs included; XLA's complex convolution rounded (and propagated them) otherwise.
    x, w = _complex(2, 3, 6, 5), _complex(6, 3 // kw.get("feature_group_count", 1), 3, 2)
    x[0, 0, 0, 0], w[1, 0, 1, 1] = np.inf, np.nan + 1j
    m = lambda a, b: mjax.lax.conv_general_dilated(a, b, **kw)  # noqa: E731
    j = lambda a, b: jax.lax.conv_general_dilated(a, b, **kw)  # noqa: E731
    for got, want in ((m(x, w), j(x, w)), (mjax.jit(m)(x, w), jax.jit(j)(x, w))):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    x[0, 0, 0, 0] = 1.0
    w[1, 0, 1, 1] = 0.5j
    loss = lambda L, f: lambda a, b: L.numpy.sum(L.numpy.real(f(a, b) * (1 + 2j)))  # noqa
    got = mjax.jit(mjax.grad(loss(mjax, m), argnums=(0, 1)))(x, w)
    want = jax.jit(jax.grad(loss(jax, j), argnums=(0, 1)))(x, w)
    for g, v in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=1e-5, atol=1e-5)


# ---- vmap --------------------------------------------------------------------------

@pytest.mark.parametrize("fn, args", [
    (lambda L, x, m: x[m], (np.arange(6.0).reshape(2, 3), np.array([True, False, True]))),
    (lambda L, x, c: x * 2 if c > 0 else -x, (np.arange(6.0).reshape(2, 3), -1.5)),
    (lambda L, x, n: L.numpy.nonzero(x > n.sum())[0], (np.arange(6.0), np.float32([1, 2]))),
], ids=["boolean_mask", "python_branch", "nonzero_without_size"])
def test_vmap_keeps_unmapped_arguments_concrete(fn, args):
    # JAX passes in_axes=None arguments in unbatched: outside jit they are concrete, so a
    # boolean mask or a Python branch on them works (mjax made them tracers and raised).
    def each(L):
        return L.vmap(lambda *a: fn(L, *a), in_axes=(0, None))
    compare(lambda *a: each(mjax)(*a), lambda *a: each(jax)(*a), args, modes=("eager",))
    # Under jit they are tracers in both: the same error.
    compare(lambda *a: each(mjax)(*a), lambda *a: each(jax)(*a), args, modes=("jit",))


def test_vmap_mapped_mask_stays_abstract():
    x, m = np.arange(6.0).reshape(2, 3), np.array([[True, False, True], [False] * 3])
    compare(lambda x, m: mjax.vmap(lambda x, m: x[m])(x, m),
            lambda x, m: jax.vmap(lambda x, m: x[m])(x, m), (x, m))
