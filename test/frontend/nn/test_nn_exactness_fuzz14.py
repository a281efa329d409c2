"""Differences from jax.nn found by a differential fuzz (fuzz 14), checked bitwise
against real jax: activations JAX jits run as one fused program when called eagerly
(the CPU's fused multiply-adds round once), integer inputs of hard_sigmoid/hard_silu/
sparse_plus/sparse_sigmoid give weakly typed floats, and the complex truncated-normal
initializer scales as JAX's."""
import numpy as np
import pytest

import jax
import mjax

X = (np.random.default_rng(0).standard_normal((4, 6)) * 3).astype(np.float32)


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes(), (a, b)


@pytest.mark.parametrize("name", ["squareplus", "softplus", "silu", "mish", "log_sigmoid",
                                  "elu", "celu", "selu", "soft_sign", "hard_silu",
                                  "sparse_plus", "glu"])
def test_eager_activation_bitwise(name):
    _same(getattr(jax.nn, name)(X), getattr(mjax.nn, name)(X))


def test_squareplus_b_bitwise():
    _same(jax.nn.squareplus(X, 2.), mjax.nn.squareplus(X, 2.))


@pytest.mark.parametrize("name", ["hard_sigmoid", "hard_silu", "hard_swish",
                                  "sparse_plus", "sparse_sigmoid"])
@pytest.mark.parametrize("x", [np.arange(-3, 3), np.array([True, False]),
                               np.array([1, 2], np.uint8)], ids=["i32", "bool", "u8"])
def test_integer_input_weak_float(name, x):
    a, b = getattr(jax.nn, name)(x), getattr(mjax.nn, name)(x)
    _same(a, b)
    assert a.weak_type == b.weak_type


@pytest.mark.parametrize("init", ["glorot_normal", "lecun_normal", "he_normal"])
@pytest.mark.parametrize("dtype", [np.complex64, np.float32])
def test_truncated_normal_initializer(init, dtype):
    a = getattr(jax.nn.initializers, init)()(jax.random.key(0), (3, 4), dtype)
    b = getattr(mjax.nn.initializers, init)()(mjax.random.key(0), (3, 4), dtype)
    _same(a, b)
