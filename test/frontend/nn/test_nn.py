"""mjax.nn against jax.nn: values and dtypes, eager and under one jit, and gradients."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp

RNG = np.random.default_rng(0)
# Includes the kinks (0, 6, +-1) and values large enough to overflow a naive exp.
X = np.concatenate([RNG.uniform(-8, 8, 12), [0.0, 6.0, 1.0, -1.0, -3.0, 3.0, 90.0, -90.0]]
                   ).astype(np.float32).reshape(4, 5)

UNARY = ["relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "silu", "swish", "gelu",
         "elu", "leaky_relu", "celu", "selu", "hard_tanh", "hard_sigmoid", "hard_silu",
         "soft_sign", "mish"]


def check(got, want, rtol=2e-6, atol=1e-6):
    want = np.asarray(want)
    assert isinstance(got, mjax.Array), type(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", UNARY)
def test_activation_eager(name):
    check(getattr(mjax.nn, name)(X), getattr(jax.nn, name)(X))


def _all_outputs(nn, x, mask):
    out = {name: getattr(nn, name)(x) for name in UNARY}
    out.update(
        gelu_exact=nn.gelu(x, approximate=False), elu2=nn.elu(x, 2.0),
        leaky=nn.leaky_relu(x, 0.3), celu=nn.celu(x, 0.5),
        softmax=nn.softmax(x), softmax0=nn.softmax(x, axis=0),
        softmax_both=nn.softmax(x, axis=(0, 1)),
        softmax_where=nn.softmax(x, where=mask),
        log_softmax=nn.log_softmax(x), log_softmax0=nn.log_softmax(x, axis=0),
        log_softmax_where=nn.log_softmax(x, where=mask),
        logsumexp=nn.logsumexp(x, axis=1), glu=nn.glu(x[:, :4]),
        standardize=nn.standardize(x), standardize0=nn.standardize(x, axis=0),
        standardize_given=nn.standardize(x, mean=1.0, variance=4.0, epsilon=0.0))
    return out


def test_all_under_one_jit_match_jax():
    mask = X > -2
    got = mjax.jit(lambda x, m: _all_outputs(mjax.nn, x, m))(X, mask)
    want = _all_outputs(jax.nn, jjnp.asarray(X), mask)
    assert sorted(got) == sorted(want)
    for k in want:
        check(got[k], want[k], rtol=2e-5, atol=2e-6)


def test_softmax_is_stable_and_masks():
    big = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1000.0, -1000.0]], np.float32)
    check(mjax.nn.softmax(big), jax.nn.softmax(big))
    check(mjax.nn.log_softmax(big), jax.nn.log_softmax(big))
    mask = np.array([[True, False, True], [False, False, True]])
    out = np.asarray(mjax.nn.softmax(big, where=mask))
    assert out[0, 1] == 0 and out[1, 0] == 0 and out[1, 2] == 1
    assert np.asarray(mjax.nn.log_softmax(big, where=mask))[0, 1] == -np.inf


def test_one_hot():
    labels = np.array([[0, 2], [-1, 5]], np.int32)
    check(mjax.nn.one_hot(labels, 3), jax.nn.one_hot(labels, 3))
    check(mjax.nn.one_hot(labels, 4, axis=0), jax.nn.one_hot(labels, 4, axis=0))
    check(mjax.nn.one_hot(labels, 3, dtype=jnp.int32, axis=1),
          jax.nn.one_hot(labels, 3, dtype=jjnp.int32, axis=1))
    check(mjax.jit(lambda y: mjax.nn.one_hot(y, 6, dtype=jnp.bfloat16))(labels),
          jax.nn.one_hot(labels, 6, dtype=jjnp.bfloat16))
    # a concrete array is a size, as JAX's concrete_dim_or_error takes it
    check(mjax.nn.one_hot(labels, jnp.asarray(3)), jax.nn.one_hot(labels, jjnp.asarray(3)))
    with pytest.raises(TypeError, match="num_classes must be a static int"):
        mjax.nn.one_hot(labels, 3.5)


def test_integer_inputs_keep_or_promote_dtype_like_jax():
    ints = np.array([-2, 0, 3, 7], np.int32)
    for name in ("relu", "relu6", "softplus", "gelu", "leaky_relu", "elu", "hard_tanh"):
        check(getattr(mjax.nn, name)(ints), getattr(jax.nn, name)(ints))


def test_gradients_match_jax():
    fns = UNARY + ["softmax", "log_softmax", "logsumexp", "standardize"]

    def grads(nn, grad, x):
        return [grad(lambda y, f=getattr(nn, n): (f(y) * (1 + y)).sum())(x) for n in fns]
    got = mjax.jit(lambda x: grads(mjax.nn, mjax.grad, x))(X)
    want = grads(jax.nn, jax.grad, jjnp.asarray(X))
    for name, g, w in zip(fns, got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=2e-5,
                                   err_msg=name)


def test_kink_derivatives_are_zero_like_jax():
    pts = np.array([0.0, 6.0, -1.0, 3.0], np.float32)
    for name in ("relu", "relu6"):
        g = mjax.grad(lambda x, f=getattr(mjax.nn, name): f(x).sum())(pts)
        want = jax.grad(lambda x, f=getattr(jax.nn, name): f(x).sum())(pts)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(want), err_msg=name)
    assert np.isnan(np.asarray(mjax.nn.relu(np.float32(np.nan))))


@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "uniform"])
@pytest.mark.parametrize("dtype", [np.complex64, np.float32])
def test_variance_scaling_of_complex_dtypes_as_jax(distribution, dtype):
    # (flax's Dense with param_dtype=complex64 initializes its kernel so)
    init = (mjax.nn.initializers.variance_scaling(2.0, "fan_in", distribution),
            jax.nn.initializers.variance_scaling(2.0, "fan_in", distribution))
    got = init[0](mjax.random.key(3), (3, 4), dtype)
    want = init[1](jax.random.key(3), (3, 4), dtype)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
